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

/** A JSDoc block of fixed lines, laid out as protoplugin lays out every block. */
export function docLines(f: GeneratedFile, lines: readonly string[]): Printable {
  return f.jsDoc(lines.join("\n"));
}

/** `create<Service><Binding>Listener`: the endpoint factory's result as a node:http request listener. */
export function printListener(
  f: GeneratedFile,
  internal: string,
  parts: { readonly serviceName: string; readonly binding: string; readonly listener: string; readonly endpoint: string; readonly handler: Printable; readonly options: Printable },
): void {
  f.print(docLines(f, [`Serves ${parts.serviceName} over ${parts.binding} as a node:http request listener.`]));
  f.print(f.export("function", parts.listener), "(handler: ", parts.handler, ", options: ", parts.options, " = {}): ", f.import("NodeListener", internal, true), " {");
  f.print("  return ", f.import("createNodeListener", internal), "(", parts.endpoint, "(handler, options));");
  f.print("}");
  f.print();
}
