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

/**
 * The runtime's factory a generated JSON endpoint calls: the core's own for a plain service;
 * for A2A's, the A2A profile's, which turns A2A's options into the profile and puts 0.3's layer
 * in front with `compat.v0_3` (D21, D110).
 */
export function endpointFactory(s: ServiceModel, core: string, a2a: string): string {
  return s.a2a === undefined ? core : a2a;
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

/** Lists longer than this are printed in parts (printList). */
const longList = 64;
const part = 16;

/**
 * Prints `doc` and `export const <name>: readonly <type>[]` of one entry per item (`print` writes
 * an item's lines). tsc compares the entries of an array literal with each other (subtype
 * reduction), so checking one costs the square of its length, and past about 1,000 entries tsc
 * gives up (TS2590, a union type too complex to represent). A list longer than 64 is therefore
 * built from parts of 16, each a `const <name>_<i>` of the same type, spread into it: the check
 * then grows with the list's length.
 */
export function printList<T>(
  f: GeneratedFile,
  list: { readonly doc: Printable; readonly name: string; readonly type: Printable; readonly items: readonly T[] },
  print: (item: T) => void,
): void {
  const { doc, name, type, items } = list;
  if (items.length <= longList) {
    f.print(doc);
    f.print(f.export("const", name), ": readonly ", type, "[] = [");
    for (const item of items) print(item);
    f.print("];");
    return;
  }
  const parts: string[] = [];
  f.print(`// ${name} in parts of ${part}: tsc compares the entries of one array literal with each other.`);
  for (let i = 0; i < items.length; i += part) {
    const partName = names.listPart(name, parts.length);
    parts.push(partName);
    f.print("const ", partName, ": readonly ", type, "[] = [");
    for (const item of items.slice(i, i + part)) print(item);
    f.print("];");
  }
  f.print();
  f.print(doc);
  f.print(f.export("const", name), ": readonly ", type, "[] = [");
  for (const partName of parts) f.print("  ...", partName, ",");
  f.print("];");
}
