import { ScalarType, type DescEnum, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";
import type { GeneratedFile, ImportSymbol, Printable } from "@bufbuild/protoplugin";
import { names } from "../names.js";
import type { CodecFilePlan, CodecNames, CodecPlan } from "./codec-plan.js";
import { importSchema, importShape } from "./type-imports.js";

/** What the parts of the codec emitter share while they write one codec file. */
export interface CodecContext {
  readonly f: GeneratedFile;
  readonly plan: CodecPlan;
  readonly file: CodecFilePlan;
  /** A helper of the runtime's codec entry. */
  rt(name: string, typeOnly?: boolean): ImportSymbol;
  /** A symbol of @bufbuild/protobuf/wire. */
  wire(name: string, typeOnly?: boolean): ImportSymbol;
  /** A symbol of @bufbuild/protobuf. */
  pb(name: string, typeOnly?: boolean): ImportSymbol;
  /** One of a message's codec functions: its name here, or imported from the message's codec file. */
  fn(message: DescMessage, which: keyof CodecNames): Printable;
  /** f.importSchema and f.importShape, in constant time (./type-imports.ts). */
  schema(desc: DescMessage | DescEnum): ImportSymbol;
  shape(desc: DescMessage | DescEnum): ImportSymbol;
}

export function createCodecContext(f: GeneratedFile, plan: CodecPlan, file: CodecFilePlan, runtimeImport: string): CodecContext {
  const runtime = names.internalRuntime(runtimeImport);
  const shape = (desc: DescMessage | DescEnum) => importShape(f, desc);
  const shapeName = (desc: DescMessage) => shape(desc).name;
  return {
    schema: (desc) => importSchema(f, desc),
    shape,
    f,
    plan,
    file,
    rt: (name, typeOnly = false) => f.import(name, runtime, typeOnly),
    wire: (name, typeOnly = false) => f.import(name, "@bufbuild/protobuf/wire", typeOnly),
    pb: (name, typeOnly = false) => f.import(name, "@bufbuild/protobuf", typeOnly),
    fn(message, which) {
      const home = plan.homeOf(message, file);
      const name = plan.namesOf(message, home, f, shapeName)[which];
      return home === file ? name : f.import(name, names.importPath(names.codecFile(home.file)));
    },
  };
}

/** Lines of code, each a list of printables, indented by two spaces a level. */
export class Lines {
  readonly #lines: Printable[][] = [];

  add(indent: number, ...parts: Printable[]): this {
    this.#lines.push(["  ".repeat(indent), ...parts]);
    return this;
  }

  /** Appends `other`'s lines, `indent` levels deeper. */
  addAll(indent: number, other: Lines): this {
    for (const line of other.#lines) this.#lines.push(["  ".repeat(indent), ...line]);
    return this;
  }

  /**
   * `if (condition) statement;` when `body` is one line, else the body in
   * braces; with `otherwise`, an else branch the same way.
   */
  addIf(indent: number, condition: Printable[], body: Lines, otherwise?: Lines): this {
    const single = body.#lines.length === 1 && (otherwise === undefined || otherwise.#lines.length === 1);
    if (single) {
      this.add(indent, "if (", ...condition, ") ", ...(body.#lines[0] as Printable[]));
      if (otherwise !== undefined) this.add(indent, "else ", ...(otherwise.#lines[0] as Printable[]));
      return this;
    }
    this.add(indent, "if (", ...condition, ") {");
    this.addAll(indent + 1, body);
    if (otherwise !== undefined) {
      this.add(indent, "} else {");
      this.addAll(indent + 1, otherwise);
    }
    return this.add(indent, "}");
  }

  print(f: GeneratedFile): void {
    for (const line of this.#lines) f.print(...line);
  }
}

export const scalarMethod: Record<ScalarType, string> = {
  [ScalarType.DOUBLE]: "double",
  [ScalarType.FLOAT]: "float",
  [ScalarType.INT64]: "int64",
  [ScalarType.UINT64]: "uint64",
  [ScalarType.INT32]: "int32",
  [ScalarType.FIXED64]: "fixed64",
  [ScalarType.FIXED32]: "fixed32",
  [ScalarType.BOOL]: "bool",
  [ScalarType.STRING]: "string",
  [ScalarType.BYTES]: "bytes",
  [ScalarType.UINT32]: "uint32",
  [ScalarType.SFIXED32]: "sfixed32",
  [ScalarType.SFIXED64]: "sfixed64",
  [ScalarType.SINT32]: "sint32",
  [ScalarType.SINT64]: "sint64",
};

export function wireTypeOf(type: ScalarType): WireType {
  switch (type) {
    case ScalarType.BYTES:
    case ScalarType.STRING:
      return WireType.LengthDelimited;
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return WireType.Bit64;
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
    case ScalarType.FLOAT:
      return WireType.Bit32;
    default:
      return WireType.Varint;
  }
}

export function is64Bit(type: ScalarType): boolean {
  switch (type) {
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return true;
    default:
      return false;
  }
}

/** A tag as the number written before a field's value. */
export function tagOf(fieldNo: number, wireType: WireType): number {
  return ((fieldNo << 3) | wireType) >>> 0;
}

/** The scalar type a field's values are written as (enums as int32). */
export function scalarTypeOf(field: DescField): ScalarType {
  return field.enum !== undefined ? ScalarType.INT32 : (field.scalar as ScalarType);
}

/** A message field held as protobuf-es holds it: a Struct field outside a Value is a JsonObject. */
export function isJsonStruct(field: DescField): boolean {
  return field.message?.typeName === "google.protobuf.Struct" && field.parent.typeName !== "google.protobuf.Value";
}

/** A singular wrapper field outside a oneof: held unboxed (a string for StringValue). */
export function isUnboxedWrapper(field: DescField): boolean {
  return field.fieldKind === "message" && field.oneof === undefined && isWrapperDesc(field.message);
}

/** Whether a field's message values are groups (editions' delimited encoding, proto2 groups). */
export function isDelimited(field: DescField): boolean {
  return (field as { delimitedEncoding?: boolean }).delimitedEncoding === true;
}

/** `value.name` for a field's local name (always an identifier protobuf-es made safe as a property). */
export function prop(owner: string, localName: string): string {
  return `${owner}.${localName}`;
}
