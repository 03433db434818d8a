#!/usr/bin/env node
import { runNodeJs } from "@bufbuild/protoplugin";
import { protocGenA2a } from "../dist/plugin/plugin.js";

runNodeJs(protocGenA2a);
