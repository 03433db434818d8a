#!/usr/bin/env node
// Modules are imported, not loaded up front, so that what runs decides what loads
// (plugin/protoplugin.ts: no TypeScript compiler unless a request asks for js or dts).
const [{ runNodeJs }, { protocGenA2a }] = await Promise.all([
  import("../dist/plugin/protoplugin.js"),
  import("../dist/plugin/plugin.js"),
]);
runNodeJs(protocGenA2a);
