/**
 * What the codecs protoc-gen-a2a emits (`<file>_codec.ts`) call besides
 * protobuf-es's BinaryReader and BinaryWriter: the few steps that are the
 * same for every message type (tags, recursion depth, unknown fields),
 * protobuf-es's conversions of the values it holds specially (a Struct
 * field as a JsonObject, bytes given as number[], map keys as strings), and
 * the ProtoJSON of values protobuf-es writes itself (well-known types).
 * Reached through the "protoc-gen-a2a/runtime/codec" entry.
 */
import { create, isMessage, protoInt64, toJson, type DescEnum, type DescField, type DescMessage, type JsonObject, type JsonValue, type Message, type MessageInitShape, type UnknownField } from "@bufbuild/protobuf";
import { BinaryWriter, WireType, type BinaryReader } from "@bufbuild/protobuf/wire";
import type { ListValue, Struct, Value } from "@bufbuild/protobuf/wkt";
import type { ReadContext } from "./registry.js";
import { setOwn } from "./own-property.js";

// ---------------------------------------------------------------------------
// Reading

/** BinaryReader.tag() with its checks, as one number (`fieldNo << 3 | wireType`), no array per record. */
export function readTag(r: BinaryReader, ctx: ReadContext): number {
  const start = r.pos;
  const tag = r.uint32();
  const read = r.pos - start;
  if (read > 5 || (read === 5 && (ctx.buf[r.pos - 1] as number) > 0x0f)) throw new Error("illegal tag: varint overflows uint32");
  const fieldNo = tag >>> 3;
  const wireType = tag & 7;
  if (fieldNo <= 0 || wireType > 5) throw new Error("illegal tag: field no " + fieldNo + " wire type " + wireType);
  return tag;
}

/** The wire type of a tag from readTag. */
export function wireTypeOf(tag: number): WireType {
  return (tag & 7) as WireType;
}

/** Counts one more message entered, failing past the recursion limit as fromBinary fails. */
export function enterMessage(ctx: ReadContext, typeName: string): void {
  if (++ctx.depth > ctx.recursionLimit) {
    throw new Error(`cannot decode message ${typeName} from binary: maximum recursion depth of ${ctx.recursionLimit} reached`);
  }
}

/**
 * A record of no field of the message: skipped, and added to `unknown`
 * (a new list if undefined), which is returned; kept only when the read
 * keeps unknown fields.
 */
export function readUnknownField(r: BinaryReader, ctx: ReadContext, tag: number, unknown: UnknownField[] | undefined): UnknownField[] | undefined {
  const no = tag >>> 3;
  const wireType = wireTypeOf(tag);
  const data = r.skip(wireType, no, ctx.recursionLimit - ctx.depth);
  if (!ctx.readUnknownFields) return unknown;
  const fields = unknown ?? [];
  fields.push({ no, wireType, data });
  return fields;
}

/** Skips a record of a map entry that is neither its key nor its value. */
export function skipField(r: BinaryReader, ctx: ReadContext, tag: number): void {
  r.skip(wireTypeOf(tag), tag >>> 3, ctx.recursionLimit - ctx.depth);
}

/** Whether `value` is one of the enum's numbers (what a closed enum keeps). */
export function isEnumValue(desc: DescEnum, value: number): boolean {
  return desc.value[value] !== undefined;
}

/** A closed enum's value that is not one of its numbers: kept as an unknown field of `message`, as fromBinary keeps it. */
export function keepUnknownEnum(message: Message, ctx: ReadContext, tag: number, value: number): void {
  if (!ctx.readUnknownFields) return;
  const w = new BinaryWriter();
  w.int32(value);
  const fields = message.$unknown ?? [];
  fields.push({ no: tag >>> 3, wireType: wireTypeOf(tag), data: w.finish() });
  message.$unknown = fields;
}

// ---------------------------------------------------------------------------
// Writing

/** A message's unknown fields, as toBinary writes them (create() does not carry them over from an init shape). */
export function writeUnknownFields(w: BinaryWriter, unknown: readonly UnknownField[] | undefined): void {
  if (unknown === undefined) return;
  for (let i = 0; i < unknown.length; i++) {
    const u = unknown[i] as UnknownField;
    w.tag(u.no, u.wireType).raw(u.data);
  }
}

/** Bytes as create() holds them: a number[] becomes a Uint8Array. */
export function bytesOf(v: Uint8Array | readonly number[]): Uint8Array {
  return Array.isArray(v) ? new Uint8Array(v) : (v as Uint8Array);
}

/** Whether a bytes field of implicit presence is set: toBinary's check, on the bytes create() makes. */
export function hasBytes(v: Uint8Array | readonly number[]): boolean {
  const bytes = bytesOf(v);
  return !(bytes instanceof Uint8Array) || bytes.byteLength > 0;
}

/** Whether a 64-bit field of implicit presence is set: toBinary's loose check (0n, 0 and "0" are not). */
export function isNonZero64(v: bigint | string | number): boolean {
  // Loose on purpose, as in protobuf-es.
  return (v as unknown) != 0;
}

/*
 * Map keys are object keys (strings): toBinary converts them back to the
 * key type first, and passes a key that does not convert to the writer,
 * which fails for it (or writes it, as `bool` does).
 */

export function boolKey(key: string): boolean {
  return (key === "true" ? true : key === "false" ? false : key) as boolean;
}

export function int32Key(key: string): number {
  const n = Number.parseInt(key);
  return (Number.isFinite(n) ? n : key) as number;
}

export function int64Key(key: string): bigint {
  try {
    return protoInt64.parse(key);
  } catch {
    return key as unknown as bigint;
  }
}

export function uint64Key(key: string): bigint {
  try {
    return protoInt64.uParse(key);
  } catch {
    return key as unknown as bigint;
  }
}

// ---------------------------------------------------------------------------
// google.protobuf.Struct held as a JsonObject (a Struct field outside a Value)

/** The Struct of a JsonObject, as protobuf-es's wktStructToReflect makes it. */
export function structFromJson(json: JsonObject): Struct {
  const fields: Record<string, Value> = {};
  if (json !== null && typeof json === "object" && !Array.isArray(json)) {
    for (const k of Object.keys(json)) setOwn(fields, k, valueFromJson(json[k]));
  }
  return { $typeName: "google.protobuf.Struct", fields };
}

function valueFromJson(json: JsonValue | undefined): Value {
  let kind: Value["kind"] = { case: undefined };
  switch (typeof json) {
    case "number":
      kind = { case: "numberValue", value: json };
      break;
    case "string":
      kind = { case: "stringValue", value: json };
      break;
    case "boolean":
      kind = { case: "boolValue", value: json };
      break;
    case "object":
      if (json === null) kind = { case: "nullValue", value: 0 };
      else if (Array.isArray(json)) kind = { case: "listValue", value: { $typeName: "google.protobuf.ListValue", values: json.map(valueFromJson) } satisfies ListValue };
      else kind = { case: "structValue", value: structFromJson(json) };
      break;
  }
  return { $typeName: "google.protobuf.Value", kind };
}

/** The JsonObject of a Struct, as protobuf-es's wktStructToLocal makes it. */
export function structToJson(struct: Struct): JsonObject {
  const json: JsonObject = {};
  const fields = struct.fields;
  for (const k of Object.keys(fields)) setOwn(json, k, valueToJson(fields[k] as Value));
  return json;
}

function valueToJson(value: Value): JsonValue {
  const kind = value.kind;
  switch (kind.case) {
    case "structValue":
      return structToJson(kind.value);
    case "listValue":
      return kind.value.values.map(valueToJson);
    case "nullValue":
    case undefined:
      return null;
    default:
      return kind.value;
  }
}

// ---------------------------------------------------------------------------
// ProtoJSON

/** An enum value's ProtoJSON: its name, or its number when it has none. */
export function enumJson(desc: DescEnum, value: number): JsonValue {
  return desc.value[value]?.name ?? value;
}

/** A float or double's ProtoJSON: NaN and the infinities as strings. */
export function floatJson(value: number): JsonValue {
  if (Number.isFinite(value)) return value;
  return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
}

/** A map's ProtoJSON, each value through `write` (as is without one); keys as they are, "__proto__" included. */
export function mapJson<V>(record: { readonly [key: string]: V }, write?: (value: V) => JsonValue): JsonObject {
  const json: JsonObject = {};
  for (const key of Object.keys(record)) setOwn(json, key, write === undefined ? (record[key] as JsonValue) : write(record[key] as V));
  return json;
}

/** The ProtoJSON of a type with a JSON form of its own (the well-known types): protobuf-es's. */
export function customJson<Desc extends DescMessage>(desc: Desc, value: MessageInitShape<Desc>): JsonValue {
  if (desc.typeName === "google.protobuf.Timestamp") {
    const json = timestampJson(value as { seconds?: unknown; nanos?: unknown });
    if (json !== undefined) return json;
  }
  return toJson(desc, isMessage(value, desc) ? value : create(desc, value));
}

// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the range RFC 3339 can write.
const timestampMinSeconds = -62135596800;
const timestampMaxSeconds = 253402300799;

/**
 * A Timestamp's ProtoJSON, as protobuf-es's timestampToJson writes it (0, 3,
 * 6 or 9 digits of fraction), without the reflection around it: a task's
 * status carries one in every answer and event. Undefined for a value out of
 * range, which protobuf-es then refuses with its own message.
 */
function timestampJson(value: { seconds?: unknown; nanos?: unknown }): string | undefined {
  const seconds = value.seconds === undefined ? 0 : typeof value.seconds === "bigint" || typeof value.seconds === "number" ? Number(value.seconds) : NaN;
  const nanos = value.nanos === undefined ? 0 : value.nanos;
  if (!Number.isInteger(seconds) || seconds < timestampMinSeconds || seconds > timestampMaxSeconds) return undefined;
  if (typeof nanos !== "number" || !Number.isInteger(nanos) || nanos < 0 || nanos > 999_999_999) return undefined;
  // Timestamps written together mostly share their second: its text is kept.
  if (seconds !== lastSeconds) {
    lastSeconds = seconds;
    lastSecondText = new Date(seconds * 1000).toISOString().slice(0, -5);
  }
  if (nanos === 0) return lastSecondText + "Z";
  const digits = String(nanos + 1_000_000_000).slice(1);
  const fraction = digits.endsWith("000000") ? digits.slice(0, 3) : digits.endsWith("000") ? digits.slice(0, 6) : digits;
  return lastSecondText + "." + fraction + "Z";
}

let lastSeconds = NaN;
let lastSecondText = "";

const viaParent = new WeakMap<DescMessage, Map<string, (value: unknown) => JsonValue>>();

/**
 * One value (a list's item, a map's value) of a Struct field held as a
 * JsonObject, as protobuf-es writes it: protobuf-es writes a message of the
 * field's parent type holding only that value, which keeps its check that
 * the object is JSON (no undefined, no NaN) and its exact output.
 */
export function structFieldJson(parent: DescMessage, localName: string, value: unknown): JsonValue {
  let fields = viaParent.get(parent);
  if (fields === undefined) {
    fields = new Map();
    viaParent.set(parent, fields);
  }
  let write = fields.get(localName);
  if (write === undefined) {
    write = parentWriter(parent.fields.find((f) => f.localName === localName) as DescField);
    fields.set(localName, write);
  }
  return write(value);
}

function parentWriter(field: DescField): (value: unknown) => JsonValue {
  const parent = field.parent;
  const holder = (v: unknown): Record<string, unknown> => {
    if (field.oneof !== undefined) return { [field.oneof.localName]: { case: field.localName, value: v } };
    if (field.fieldKind === "list") return { [field.localName]: [v] };
    if (field.fieldKind === "map") return { [field.localName]: { k: v } };
    return { [field.localName]: v };
  };
  return (v) => {
    const json = (toJson(parent, create(parent, holder(v) as never)) as JsonObject)[field.jsonName];
    if (field.fieldKind === "list") return (json as JsonValue[])[0] as JsonValue;
    if (field.fieldKind === "map") return (json as JsonObject).k as JsonValue;
    return json as JsonValue;
  };
}

export { setOwn };
