import type { GeneratedFile, Printable } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { names } from "../names.js";

/** An import of a name another file of ours declares; protoplugin spells the path from this file. */
export function localImport(f: GeneratedFile, name: string, generatedFile: string, typeOnly = false): Printable {
  return f.import(name, names.importPath(generatedFile), typeOnly);
}

/**
 * What a generated factory hands the runtime as the core's options: a
 * plain service's options as given; A2A's turned into the A2A profile (D21).
 */
export function coreOptions(f: GeneratedFile, s: ServiceModel, internal: string): Printable {
  return s.a2a === undefined ? "options" : [f.import("withA2AProfile", internal), "(options)"];
}
