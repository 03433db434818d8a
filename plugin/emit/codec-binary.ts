/**
 * The binary half of a message's codec: a writer that takes a message or
 * its init shape and writes what `toBinary(create(desc, value))` writes,
 * and a reader that builds what `fromBinary` builds. The rules are the
 * ones protobuf-es applies per field (its to-binary.ts and from-binary.ts),
 * decided here once, at build time, from the descriptors:
 *
 * - presence: implicit fields are written when not their zero (with
 *   protobuf-es's checks: -0 is written, 64-bit zeros are loose), explicit
 *   ones when set (a created message's own property where defaults live on
 *   its prototype: proto2, editions), oneof members when selected, required
 *   fields or an error;
 * - values as protobuf-es holds them: bytes given as number[], a Struct
 *   field as a JsonObject, a singular wrapper field unboxed, map keys as
 *   strings;
 * - reading: by field number whatever the wire type (as fromBinary), packed
 *   and unpacked lists both, a repeated singular message merging into the
 *   one before, closed enums keeping unknown numbers as unknown fields,
 *   groups to their end tag, unknown fields kept, the recursion limit.
 */
import { ScalarType, create, protoInt64, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import type { Printable } from "@bufbuild/protoplugin";
import { WireType } from "@bufbuild/protobuf/wire";
import { globals } from "../names.js";
import {
  Lines,
  is64Bit,
  isDelimited,
  isJsonStruct,
  isUnboxedWrapper,
  prop,
  scalarMethod,
  scalarTypeOf,
  tagOf,
  wireTypeOf,
  type CodecContext,
} from "./codec-context.js";

const IMPLICIT = FeatureSet_FieldPresence.IMPLICIT;
const LEGACY_REQUIRED = FeatureSet_FieldPresence.LEGACY_REQUIRED;

/** Whether create(desc) puts defaults on a prototype (proto2, editions with explicit presence), so presence is an own property. */
export function hasPrototype(desc: DescMessage): boolean {
  return Object.getPrototypeOf(create(desc)) !== Object.prototype;
}

// ---------------------------------------------------------------------------
// Writing

export function emitWriter(ctx: CodecContext, desc: DescMessage): void {
  const { f } = ctx;
  const names = ctx.plan.namesOf(desc, ctx.file, ctx.f, (m) => ctx.shape(m).name);
  const schema = ctx.schema(desc);
  const byNumber = [...desc.fields].sort((a, b) => a.number - b.number);
  const prototype = hasPrototype(desc);
  const body = new Lines();
  const needsIsMessage = prototype && byNumber.some((field) => field.oneof === undefined && isExplicit(field));
  if (needsIsMessage) body.add(1, "const isMessage = value.$typeName === ", f.string(desc.typeName), ";");
  for (const field of byNumber) body.addAll(1, writeField(ctx, field, prototype));
  if (desc.typeName === "google.protobuf.Value") {
    // A plain object given for a Value (its keys are not a Value's) has no kind: ProtoJSON refuses it (toJson
    // throws), and so does this, where toBinary would write it empty. A Value that merely has no kind is
    // written as toBinary writes it.
    body.add(1, "if (value.kind?.case === undefined) {");
    body.add(2, "for (const key in value) if (key !== \"kind\" && key !== \"$typeName\" && key !== \"$unknown\") throw new ", globals.Error, "(", f.string(valueWithoutKind), ");");
    body.add(1, "}");
  }
  body.add(1, "if (value.$typeName === ", f.string(desc.typeName), ") ", ctx.rt("writeUnknownFields"), "(w, value.$unknown);");

  f.print(f.jsDoc(`Writes ${desc.typeName}, a message or its init shape, as\ntoBinary(${schema.name}, create(${schema.name}, value)) writes it.`));
  f.print(f.export("function", names.write), "(w: ", ctx.wire("BinaryWriter", true), ", value: ", ctx.pb("MessageInitShape", true), "<typeof ", schema, ">): void {");
  body.print(f);
  f.print("}");
  f.print();
}

const valueWithoutKind =
  "google.protobuf.Value must have a kind (nullValue, numberValue, stringValue, boolValue, structValue or listValue): a plain object is not a Value";

function isExplicit(field: DescField): boolean {
  return (field.fieldKind === "scalar" || field.fieldKind === "enum" || field.fieldKind === "message") && field.presence !== IMPLICIT;
}

function writeField(ctx: CodecContext, field: DescField, prototype: boolean): Lines {
  const { f } = ctx;
  const v = prop("value", field.localName);
  const lines = new Lines();
  if (field.oneof !== undefined) {
    const oneof = prop("value", field.oneof.localName);
    return lines.addIf(0, [oneof, "?.case === ", f.string(field.localName)], writeValue(ctx, field, `${oneof}.value`));
  }
  switch (field.fieldKind) {
    case "list":
      return writeList(ctx, field, v);
    case "map":
      return writeMap(ctx, field, v);
    case "scalar":
    case "enum":
      if (field.presence === IMPLICIT) return lines.addIf(0, [v, " != null && ", ...implicitIsSet(ctx, field, v)], writeValue(ctx, field, v));
      break;
    case "message":
      break;
  }
  // Explicit presence: set when not null, and, for a created message whose
  // defaults live on a prototype, when its own property.
  const set = prototype ? [v, " != null && (!isMessage || Object.hasOwn(value, ", f.string(field.localName), "))"] : [v, " != null"];
  const otherwise = field.presence === LEGACY_REQUIRED ? new Lines().add(0, "throw new ", globals.Error, "(", f.string(`cannot encode ${String(field)} to binary: required field not set`), ");") : undefined;
  return lines.addIf(0, set, writeValue(ctx, field, v), otherwise);
}

/** toBinary's zero checks, for a value that is not null. */
function implicitIsSet(ctx: CodecContext, field: DescField, v: string): Printable[] {
  if (field.fieldKind === "enum") return [v, " !== ", String(field.enum.values[0]?.number ?? 0)];
  switch (field.scalar) {
    case ScalarType.BOOL:
      return [v, " !== false"];
    case ScalarType.STRING:
      return [v, ' !== ""'];
    case ScalarType.BYTES:
      return [ctx.rt("hasBytes"), "(", v, ")"];
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      // Object.is: -0 is written.
      return ["!Object.is(", v, ", 0)"];
    default:
      // Loose, as in protobuf-es: 0n, 0 and "0".
      return is64Bit(field.scalar as ScalarType) ? [ctx.rt("isNonZero64"), "(", v, ")"] : [v, " != 0"];
  }
}

/** A scalar's write after its tag: `.int32(v)`. */
function scalarWrite(ctx: CodecContext, type: ScalarType, v: Printable): Printable[] {
  return [".", scalarMethod[type], "(", ...(type === ScalarType.BYTES ? [ctx.rt("bytesOf"), "(", v, ")"] : [v]), ")"];
}

/** Writes one value of a singular field (or oneof member), with its tag. */
function writeValue(ctx: CodecContext, field: DescField, v: string): Lines {
  const lines = new Lines();
  if (field.fieldKind === "scalar" || field.fieldKind === "enum") {
    const type = scalarTypeOf(field);
    lines.add(0, "w.uint32(", String(tagOf(field.number, wireTypeOf(type))), ")", ...scalarWrite(ctx, type, v), ";");
    return lines;
  }
  if (field.fieldKind !== "message") throw new Error(`protoc-gen-a2a: ${String(field)} is not singular`);
  const held: Printable[] = isUnboxedWrapper(field) ? ["{ value: ", v, " }"] : isJsonStruct(field) ? [ctx.rt("structFromJson"), "(", v, ")"] : [v];
  return writeMessage(ctx, field.number, field.message, isDelimited(field), held);
}

/** A message value with its tag: length-delimited, or a group. */
function writeMessage(ctx: CodecContext, fieldNo: number, desc: DescMessage, delimited: boolean, held: Printable[]): Lines {
  const lines = new Lines();
  if (delimited) {
    lines.add(0, "w.uint32(", String(tagOf(fieldNo, WireType.StartGroup)), ");");
    lines.add(0, ctx.fn(desc, "write"), "(w, ", ...held, ");");
    lines.add(0, "w.uint32(", String(tagOf(fieldNo, WireType.EndGroup)), ");");
    return lines;
  }
  lines.add(0, "w.uint32(", String(tagOf(fieldNo, WireType.LengthDelimited)), ").fork();");
  lines.add(0, ctx.fn(desc, "write"), "(w, ", ...held, ");");
  lines.add(0, "w.join();");
  return lines;
}

function writeList(ctx: CodecContext, field: Extract<DescField, { fieldKind: "list" }>, v: string): Lines {
  const lines = new Lines();
  if (field.listKind === "message") {
    const held: Printable[] = isJsonStruct(field) ? [ctx.rt("structFromJson"), "(item)"] : ["item"];
    const loop = new Lines().add(0, "for (const item of ", v, ") {").addAll(1, writeMessage(ctx, field.number, field.message, isDelimited(field), held)).add(0, "}");
    return lines.addIf(0, [v, " != null"], loop);
  }
  const type = scalarTypeOf(field);
  if (field.packed) {
    lines.add(0, "if (", v, " != null && ", v, ".length !== 0) {");
    lines.add(1, "w.uint32(", String(tagOf(field.number, WireType.LengthDelimited)), ").fork();");
    lines.add(1, "for (const item of ", v, ") w", ...scalarWrite(ctx, type, "item"), ";");
    lines.add(1, "w.join();");
    lines.add(0, "}");
    return lines;
  }
  const loop = new Lines().add(0, "for (const item of ", v, ") w.uint32(", String(tagOf(field.number, wireTypeOf(type))), ")", ...scalarWrite(ctx, type, "item"), ";");
  return lines.addIf(0, [v, " != null"], loop);
}

/** Map keys are object keys: converted back to the key type, as toBinary converts them. */
function mapKey(ctx: CodecContext, type: ScalarType): Printable[] {
  switch (type) {
    case ScalarType.STRING:
      return ["key"];
    case ScalarType.BOOL:
      return [ctx.rt("boolKey"), "(key)"];
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return [ctx.rt("int64Key"), "(key)"];
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return [ctx.rt("uint64Key"), "(key)"];
    default:
      return [ctx.rt("int32Key"), "(key)"];
  }
}

function writeMap(ctx: CodecContext, field: Extract<DescField, { fieldKind: "map" }>, v: string): Lines {
  const lines = new Lines();
  const keyType = field.mapKey as ScalarType;
  const item = "item";
  lines.add(0, "if (", v, " != null) {");
  lines.add(1, "for (const [key, item] of Object.entries(", v, ")) {");
  lines.add(2, "w.uint32(", String(tagOf(field.number, WireType.LengthDelimited)), ").fork();");
  lines.add(2, "w.uint32(", String(tagOf(1, wireTypeOf(keyType))), ")", ...scalarWrite(ctx, keyType, mapKey(ctx, keyType)), ";");
  if (field.mapKind === "message") {
    // Map values are never delimited.
    lines.addAll(2, writeMessage(ctx, 2, field.message, false, isJsonStruct(field) ? [ctx.rt("structFromJson"), "(", item, ")"] : [item]));
  } else {
    const type = scalarTypeOf(field);
    lines.add(2, "w.uint32(", String(tagOf(2, wireTypeOf(type))), ")", ...scalarWrite(ctx, type, item), ";");
  }
  lines.add(2, "w.join();");
  lines.add(1, "}");
  lines.add(0, "}");
  return lines;
}

// ---------------------------------------------------------------------------
// Reading

/**
 * The reader of `desc` (length-delimited), and its group reader when some
 * field holds it as a group: the same field cases, a different loop.
 */
export function emitReaders(ctx: CodecContext, desc: DescMessage): void {
  const { f } = ctx;
  const names = ctx.plan.namesOf(desc, ctx.file, ctx.f, (m) => ctx.shape(m).name);
  const shape = ctx.shape(desc);
  const cases = readCases(ctx, desc);
  const typeName = f.string(desc.typeName);
  const unknownType = ctx.pb("UnknownField", true);
  const record = (indent: number, lines: Lines) => {
    const dispatch = new Lines();
    if (cases === undefined) {
      dispatch.add(0, "unknown = ", ctx.rt("readUnknownField"), "(r, ctx, tag, unknown ?? kept);");
    } else {
      dispatch.add(0, "switch (tag >>> 3) {");
      dispatch.addAll(1, cases);
      dispatch.add(1, "default:");
      dispatch.add(2, "unknown = ", ctx.rt("readUnknownField"), "(r, ctx, tag, unknown ?? kept);");
      dispatch.add(0, "}");
    }
    lines.addAll(indent, dispatch);
  };

  const body = new Lines();
  body.add(1, ctx.rt("enterMessage"), "(ctx, ", typeName, ");");
  body.add(1, "const end = r.pos + length;");
  // fromBinary's list of unknown fields: the message's own when it had one, else a new one set at the end, over
  // the list a closed enum's unknown value started meanwhile (protobuf-es 2.17 loses that value so; kept alike).
  body.add(1, "const kept = message.$unknown;");
  body.add(1, "let unknown: ", unknownType, "[] | undefined;");
  body.add(1, "while (r.pos < end) {");
  body.add(2, "const tag = ", ctx.rt("readTag"), "(r, ctx);");
  record(2, body);
  body.add(1, "}");
  body.add(1, "if (unknown !== undefined) message.$unknown = unknown;");
  body.add(1, "ctx.depth--;");
  body.add(1, "return message;");
  f.print(f.jsDoc(`Reads \`length\` bytes of ${desc.typeName} fields into \`message\` (a new\nmessage when undefined), as fromBinary and mergeFromBinary read them.`));
  f.print(f.export("function", names.read), "(r: ", ctx.wire("BinaryReader", true), ", ctx: ", ctx.rt("ReadContext", true), ", length: number, message: ", shape, " = ", ctx.fn(desc, "zero"), "()): ", shape, " {");
  body.print(f);
  f.print("}");
  f.print();

  if (!ctx.plan.isGroup(desc)) return;
  const group = new Lines();
  group.add(1, ctx.rt("enterMessage"), "(ctx, ", typeName, ");");
  group.add(1, "const kept = message.$unknown;");
  group.add(1, "let unknown: ", unknownType, "[] | undefined;");
  group.add(1, "let tag = 0;");
  group.add(1, "while (r.pos < r.len) {");
  group.add(2, "tag = ", ctx.rt("readTag"), "(r, ctx);");
  group.add(2, "if (", ctx.rt("wireTypeOf"), "(tag) === ", ctx.wire("WireType"), ".EndGroup) break;");
  record(2, group);
  group.add(1, "}");
  group.add(1, "if (", ctx.rt("wireTypeOf"), "(tag) !== ", ctx.wire("WireType"), ".EndGroup || tag >>> 3 !== fieldNo) throw new ", globals.Error, '("invalid end group tag");');
  group.add(1, "if (unknown !== undefined) message.$unknown = unknown;");
  group.add(1, "ctx.depth--;");
  group.add(1, "return message;");
  f.print(f.jsDoc(`Reads the fields of a ${desc.typeName} group (field \`fieldNo\`) up to its end\ntag into \`message\` (a new message when undefined), as fromBinary reads a group.`));
  f.print(f.export("function", names.readGroup), "(r: ", ctx.wire("BinaryReader", true), ", ctx: ", ctx.rt("ReadContext", true), ", fieldNo: number, message: ", shape, " = ", ctx.fn(desc, "zero"), "()): ", shape, " {");
  group.print(f);
  f.print("}");
  f.print();
}

/** One `case` per field (by number), or undefined for a message without fields. */
function readCases(ctx: CodecContext, desc: DescMessage): Lines | undefined {
  if (desc.fields.length === 0) return undefined;
  const lines = new Lines();
  for (const field of [...desc.fields].sort((a, b) => a.number - b.number)) {
    const body = readField(ctx, field);
    if (body.block) {
      lines.add(0, "case ", String(field.number), ": {");
      lines.addAll(1, body.lines);
      lines.add(1, "break;");
      lines.add(0, "}");
    } else {
      lines.add(0, "case ", String(field.number), ":");
      lines.addAll(1, body.lines);
      lines.add(1, "break;");
    }
  }
  return lines;
}

/** The read of a scalar (enums as int32): `r.string(true)`, `globalThis.String(r.int64())` for 64-bit values held as strings. */
function scalarRead(type: ScalarType, utf8Validation: boolean, longAsString: boolean): string {
  if (type === ScalarType.STRING) return `r.string(${String(utf8Validation)})`;
  const read = `r.${scalarMethod[type]}()`;
  // BinaryReader types 64-bit reads `bigint | string` (strings where BigInt is missing); protobuf-es holds them as bigint.
  if (is64Bit(type)) return longAsString ? `${globals.String}(${read})` : `${read} as bigint`;
  return read;
}

/**
 * Reads a message value into `existing` (a new message when left out):
 * length-delimited or a group; for a Struct held as a JsonObject, `existing`
 * is already the Struct (see heldStruct) and the result is converted back.
 */
function messageRead(ctx: CodecContext, field: DescField, desc: DescMessage, existing: Printable[] | undefined): Printable[] {
  const into: Printable[] = existing === undefined ? [] : [", ", ...existing];
  const read: Printable[] =
    field.fieldKind !== "map" && isDelimited(field)
      ? [ctx.fn(desc, "readGroup"), "(r, ctx, ", String(field.number), ...into, ")"]
      : [ctx.fn(desc, "read"), "(r, ctx, r.uint32()", ...into, ")"];
  return isJsonStruct(field) ? [ctx.rt("structToJson"), "(", ...read, ")"] : read;
}

/** The message to merge into for `held` (a property or local, read twice): itself, or for a Struct held as a JsonObject its Struct. */
function heldMessage(ctx: CodecContext, field: DescField, held: string): Printable[] {
  return isJsonStruct(field) ? [held, " === undefined ? undefined : ", ctx.rt("structFromJson"), "(", held, ")"] : [held];
}

function readField(ctx: CodecContext, field: DescField): { lines: Lines; block: boolean } {
  const { f } = ctx;
  const lines = new Lines();
  const target = prop("message", field.localName);
  const oneof = field.oneof === undefined ? undefined : prop("message", field.oneof.localName);
  const name = f.string(field.localName);
  switch (field.fieldKind) {
    case "scalar":
    case "enum": {
      if (field.fieldKind === "enum" && !field.enum.open) {
        // Closed enums: an unknown number is kept as an unknown field.
        lines.add(0, "const number = r.int32();");
        lines.add(0, "if (", ctx.rt("isEnumValue"), "(", ctx.schema(field.enum), ", number)) ", ...(oneof !== undefined ? [oneof, " = { case: ", name, ", value: number };"] : [target, " = number;"]));
        lines.add(0, "else ", ctx.rt("keepUnknownEnum"), "(message, ctx, tag, number);");
        return { lines, block: true };
      }
      const read = field.fieldKind === "enum" ? "r.int32()" : scalarRead(field.scalar, field.utf8Validation, field.longAsString);
      if (oneof !== undefined) lines.add(0, oneof, " = { case: ", name, ", value: ", read, " };");
      else lines.add(0, target, " = ", read, ";");
      return { lines, block: false };
    }
    case "message": {
      if (oneof !== undefined) {
        const selected: Printable[] = isJsonStruct(field) ? [ctx.rt("structFromJson"), "(", oneof, ".value)"] : [oneof, ".value"];
        const existing: Printable[] = [oneof, ".case === ", name, " ? ", ...selected, " : undefined"];
        lines.add(0, oneof, " = { case: ", name, ", value: ", ...messageRead(ctx, field, field.message, existing), " };");
        return { lines, block: false };
      }
      if (isUnboxedWrapper(field)) {
        // Read as the wrapper message around the value held (so a repeated record merges), then unboxed.
        lines.add(0, "const wrapper = ", ctx.fn(field.message, "zero"), "();");
        lines.add(0, "if (", target, " !== undefined) wrapper.value = ", target, ";");
        lines.add(0, target, " = ", ...messageRead(ctx, field, field.message, ["wrapper"]), ".value;");
        return { lines, block: true };
      }
      lines.add(0, target, " = ", ...messageRead(ctx, field, field.message, heldMessage(ctx, field, target)), ";");
      return { lines, block: false };
    }
    case "list": {
      if (field.listKind === "message") {
        lines.add(0, target, ".push(", ...messageRead(ctx, field, field.message, undefined), ");");
        return { lines, block: false };
      }
      const type = scalarTypeOf(field);
      const read = scalarRead(type, field.utf8Validation, field.listKind === "scalar" ? field.longAsString : false);
      if (type === ScalarType.STRING || type === ScalarType.BYTES) {
        lines.add(0, target, ".push(", read, ");");
        return { lines, block: false };
      }
      // Packed or not, whatever the declaration: both are read.
      lines.add(0, "if (", ctx.rt("wireTypeOf"), "(tag) === ", ctx.wire("WireType"), ".LengthDelimited) {");
      lines.add(1, "const packedEnd = r.uint32() + r.pos;");
      lines.add(1, "while (r.pos < packedEnd) ", target, ".push(", read, ");");
      lines.add(0, "} else {");
      lines.add(1, target, ".push(", read, ");");
      lines.add(0, "}");
      return { lines, block: false };
    }
    case "map":
      return { lines: readMapEntry(ctx, field, target), block: true };
  }
}

function readMapEntry(ctx: CodecContext, field: Extract<DescField, { fieldKind: "map" }>, target: string): Lines {
  const { f } = ctx;
  const lines = new Lines();
  const keyType = field.mapKey as ScalarType;
  let valueType: Printable[];
  let readValue: Printable[];
  let valueDefault: Printable[];
  switch (field.mapKind) {
    case "scalar":
      valueType = [tsTypeOf(field.scalar)];
      readValue = [scalarRead(field.scalar, field.utf8Validation, false)];
      valueDefault = zeroOf(ctx, field.scalar);
      break;
    case "enum":
      valueType = ["number"];
      readValue = ["r.int32()"];
      valueDefault = [String(field.enum.values[0]?.number ?? 0)];
      break;
    case "message":
      // A repeated value within one entry merges into the one before.
      if (isJsonStruct(field)) {
        valueType = [ctx.pb("JsonObject", true)];
        valueDefault = ["{}"];
      } else {
        valueType = [ctx.shape(field.message)];
        valueDefault = [ctx.fn(field.message, "zero"), "()"];
      }
      readValue = messageRead(ctx, field, field.message, heldMessage(ctx, field, "value"));
      break;
  }
  lines.add(0, "let key: ", tsTypeOf(keyType), " | undefined;");
  lines.add(0, "let value: ", ...valueType, " | undefined;");
  lines.add(0, "const entryEnd = r.uint32() + r.pos;");
  lines.add(0, "while (r.pos < entryEnd) {");
  lines.add(1, "const entryTag = ", ctx.rt("readTag"), "(r, ctx);");
  lines.add(1, "if (entryTag >>> 3 === 1) key = ", scalarRead(keyType, field.utf8Validation, false), ";");
  lines.add(1, "else if (entryTag >>> 3 === 2) value = ", ...readValue, ";");
  lines.add(1, "else ", ctx.rt("skipField"), "(r, ctx, entryTag);");
  lines.add(0, "}");
  // Keys may be booleans, numbers or bigints: object keys are their strings.
  const key: Printable[] = keyType === ScalarType.STRING ? ['key ?? ""'] : ["key === undefined ? ", f.string(zeroKey(keyType)), " : ", globals.String, "(key)"];
  lines.add(0, ctx.rt("setOwn"), "(", target, ", ", ...key, ", value ?? ", ...valueDefault, ");");
  return lines;
}

function tsTypeOf(type: ScalarType): string {
  switch (type) {
    case ScalarType.STRING:
      return "string";
    case ScalarType.BOOL:
      return "boolean";
    case ScalarType.BYTES:
      return "Uint8Array";
    default:
      return is64Bit(type) ? "bigint" : "number";
  }
}

/** A scalar's zero as a fresh value (bytes made per entry, so entries do not share one array). */
function zeroOf(ctx: CodecContext, type: ScalarType): Printable[] {
  switch (type) {
    case ScalarType.STRING:
      return ['""'];
    case ScalarType.BOOL:
      return ["false"];
    case ScalarType.BYTES:
      return ["new Uint8Array(0)"];
    default:
      return is64Bit(type) ? [ctx.f.runtime.protoInt64, ".zero"] : ["0"];
  }
}

/** A map key's zero as an object key. */
function zeroKey(type: ScalarType): string {
  switch (type) {
    case ScalarType.BOOL:
      return "false";
    case ScalarType.STRING:
      return "";
    default:
      return String(is64Bit(type) ? protoInt64.zero : 0);
  }
}
