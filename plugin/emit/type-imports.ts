/**
 * f.importSchema() and f.importShape() in constant time. protoplugin 2.17 works out one name by
 * naming every type of the file again (allNames in its names.ts), so asking for the names of a
 * file of n types costs n²: at 300 RPCs it was 2.5 s of the plugin's 3.5 s, and it grows with the
 * square of the proto (protoc-gen-es pays it too). Here a file's names are worked out once, in
 * protoplugin's order and by its rules, and protoplugin itself is asked once per file: its answer
 * gives the file's import path and checks that the names agree. Every symbol is made by
 * protoplugin's createImportSymbol, as its own are, so the output is the same byte for byte;
 * test/plugin/type-imports.test.ts compares every name with protoplugin's.
 */
import type { DescEnum, DescExtension, DescFile, DescMessage, DescService } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import type { GeneratedFile, ImportSymbol } from "@bufbuild/protoplugin";
import { createImportSymbol, safeIdentifier } from "../protoplugin.js";

type Named = DescFile | DescMessage | DescEnum | DescExtension | DescService;

interface FileNames {
  /** Message and enum types: `Task`, `Task_Status`. */
  readonly shapes: Map<Named, string>;
  /** Every type and the file: `TaskSchema`, `A2AService`, `file_a2a`. */
  readonly descs: Map<Named, string>;
  /** Where the file's generated code is imported from, as protoplugin says. */
  from?: string;
}

// Descriptors are made anew for each request, so one run's names never serve another.
const byFile = new WeakMap<DescFile, FileNames>();

/** f.importSchema(desc, typeOnly). */
export function importSchema(f: GeneratedFile, desc: Named, typeOnly = false): ImportSymbol {
  const names = namesOf(desc.kind === "file" ? desc : desc.file);
  const name = names.descs.get(desc) as string;
  if (names.from === undefined) return learn(names, f.importSchema(desc, typeOnly), name);
  return createImportSymbol(name, names.from, typeOnly);
}

/** f.importShape(desc). */
export function importShape(f: GeneratedFile, desc: DescMessage | DescEnum): ImportSymbol {
  const names = namesOf(desc.file);
  const name = names.shapes.get(desc) as string;
  if (names.from === undefined) return learn(names, f.importShape(desc), name);
  return createImportSymbol(name, names.from, true);
}

function learn(names: FileNames, symbol: ImportSymbol, expected: string): ImportSymbol {
  if (symbol.name !== expected) {
    throw new Error(`protoc-gen-a2a: @bufbuild/protoplugin names ${symbol.name} what protoc-gen-a2a names ${expected}: its naming is not the one protoc-gen-a2a pins`);
  }
  names.from = symbol.from;
  return symbol;
}

/** protoplugin's allNames, its first two passes (shapes, then descriptors), once per file. */
function namesOf(file: DescFile): FileNames {
  let names = byFile.get(file);
  if (names !== undefined) return names;
  const taken = new Set<string>();
  const claim = (ideal: (salt: string) => string) => {
    for (let i = 0; ; i++) {
      const name = ideal(i === 0 ? "" : i === 1 ? "$" : `$${i - 1}`);
      if (!taken.has(name)) {
        taken.add(name);
        return name;
      }
    }
  };
  const types = [...nestedTypes(file)];
  names = { shapes: new Map(), descs: new Map() };
  for (const desc of types) {
    if (desc.kind === "enum" || desc.kind === "message") names.shapes.set(desc, claim((salt) => safeIdentifier(identifier(desc) + salt)));
  }
  names.descs.set(file, claim((salt) => safeIdentifier(`file_${file.name.replace(/[^a-zA-Z0-9_]+/g, "_")}${salt}`)));
  for (const desc of types) {
    const suffix = desc.kind === "enum" || desc.kind === "message" ? "Schema" : "";
    names.descs.set(desc, claim((salt) => safeIdentifier(identifier(desc) + suffix + salt)));
  }
  byFile.set(file, names);
  return names;
}

/** The type name without its package, `.` made `_`: `Task.Status` -> `Task_Status`. */
function identifier(desc: Exclude<Named, DescFile>): string {
  const pkg = desc.file.proto.package;
  return desc.typeName.substring(pkg.length > 0 ? pkg.length + 1 : 0).replace(/\./g, "_");
}
