/**
 * A fast path for ProtoJSON requests: the message `fromJson` would build,
 * for the JSON that well-behaved clients send, without protobuf-es's
 * per-message bookkeeping (a read context, a Map of oneofs and a Set of
 * fields per message, a try/catch per field).
 *
 * It takes only what it can read exactly as protobuf-es reads it: strings,
 * booleans, 32-bit integers given as JSON numbers, enums given by name,
 * messages, Structs, lists and string-keyed maps of those. Anything else (a
 * null, an int64, a float, bytes, a Timestamp or other well-known type, a
 * number for an enum, an unknown enum name, a field set twice, a value of
 * the wrong type) makes it answer `undefined`, and the caller decodes with
 * protobuf-es, which then gives the result or the error it always gave.
 * Unknown keys are skipped, as decodeJson's second parse skips them.
 *
 * test/runtime/json-reader.test.ts holds it to protobuf-es on random and
 * adversarial input: whenever it answers, the message equals
 * `fromJson(desc, json, { ignoreUnknownFields: true })`.
 */
import { create, type DescField, type DescMessage, type JsonObject, type JsonValue, type Message } from "@bufbuild/protobuf";
import { ScalarType } from "@bufbuild/protobuf";
import { zeroFactory } from "./message-zero.js";

type Fields = Record<string, unknown>;
/** Reads one JSON value into `message`; false when the value is not one the fast path takes. */
type FieldRead = (message: Fields, json: JsonValue, depth: number) => boolean;
/** A JSON value as it is stored in a message (the element of a list, a map value); `miss` when not taken. */
type ValueRead = (json: JsonValue, depth: number) => unknown;

interface Entry {
  readonly read: FieldRead;
  /** The field's other JSON key (proto name or JSON name), when they differ: both set is an error. */
  readonly alias: string | undefined;
  /** The oneof's local name: a second member set is an error. */
  readonly oneof: string | undefined;
}

interface Reader {
  /** The message, or undefined if the JSON is not one the fast path takes. */
  read(json: JsonValue, depth: number): Fields | undefined;
}

const miss: unique symbol = Symbol("miss");
const readers = new WeakMap<DescMessage, Reader | null>();
// Well under protobuf-es's recursion limit (100): deeper input takes its path.
const maxDepth = 32;

/** The message `fromJson(desc, json)` gives once unknown keys are removed, or undefined to let protobuf-es decide. */
export function readJsonFast(desc: DescMessage, json: JsonValue): Message | undefined {
  const reader = readerOf(desc);
  return reader === null ? undefined : (reader.read(json, 0) as Message | undefined);
}

function readerOf(desc: DescMessage): Reader | null {
  let reader = readers.get(desc);
  if (reader === undefined) reader = compile(desc);
  return reader;
}

function compile(desc: DescMessage): Reader | null {
  // Well-known types have JSON forms of their own, and proto2 defaults live
  // on a prototype: both are left to protobuf-es.
  if (desc.typeName.startsWith("google.protobuf.") || Object.getPrototypeOf(create(desc)) !== Object.prototype) {
    readers.set(desc, null);
    return null;
  }
  const entries = new Map<string, Entry>();
  const zero = zeroFactory(desc) as () => Fields;
  const reader: Reader = {
    read(json, depth) {
      if (!isObject(json) || depth > maxDepth) return undefined;
      const message = zero();
      const keys = Object.keys(json);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        const entry = entries.get(key);
        if (entry === undefined) continue;
        if (entry.alias !== undefined && Object.hasOwn(json, entry.alias)) return undefined;
        if (entry.oneof !== undefined && (message[entry.oneof] as { case: unknown }).case !== undefined) return undefined;
        if (!entry.read(message, json[key] as JsonValue, depth)) return undefined;
      }
      return message;
    },
  };
  // Registered before the fields are compiled, so recursive types resolve to it.
  readers.set(desc, reader);
  for (const field of desc.fields) {
    const read = fieldRead(field);
    const entry: Entry = { read, alias: field.name === field.jsonName ? undefined : field.jsonName, oneof: field.oneof?.localName };
    entries.set(field.name, entry);
    if (field.jsonName !== field.name) entries.set(field.jsonName, { ...entry, alias: field.name });
  }
  return reader;
}

function fieldRead(field: DescField): FieldRead {
  const name = field.localName;
  switch (field.fieldKind) {
    case "scalar":
    case "enum":
    case "message": {
      const value = field.fieldKind === "message" ? messageValue(field.message) : singularValue(field);
      if (value === undefined) return () => false;
      const oneof = field.oneof?.localName;
      if (oneof !== undefined) {
        return (message, json, depth) => {
          const v = value(json, depth);
          if (v === miss) return false;
          message[oneof] = { case: name, value: v };
          return true;
        };
      }
      return (message, json, depth) => {
        const v = value(json, depth);
        if (v === miss) return false;
        message[name] = v;
        return true;
      };
    }
    case "list": {
      const item = field.listKind === "message" ? messageValue(field.message) : singularValue(field);
      if (item === undefined) return () => false;
      return (message, json, depth) => {
        if (!Array.isArray(json)) return false;
        const list = message[name] as unknown[];
        for (let i = 0; i < json.length; i++) {
          const v = item(json[i] as JsonValue, depth);
          if (v === miss) return false;
          list.push(v);
        }
        return true;
      };
    }
    case "map": {
      if (field.mapKey !== ScalarType.STRING) return () => false;
      const item = field.mapKind === "message" ? messageValue(field.message) : singularValue(field);
      if (item === undefined) return () => false;
      return (message, json, depth) => {
        if (!isObject(json)) return false;
        const map = readEntries(json, (v) => item(v, depth));
        if (map === undefined) return false;
        // The zero message's empty map, replaced: a JSON object holds each key once.
        message[name] = map;
        return true;
      };
    }
  }
}

/** A message value: a nested message, or a Struct held as a JsonObject. */
function messageValue(desc: DescMessage): ValueRead | undefined {
  if (desc.typeName === "google.protobuf.Struct") {
    return (json, depth) => (isObject(json) ? (copyJson(json, depth + 1) ?? miss) : miss);
  }
  let reader: Reader | null | undefined;
  return (json, depth) => {
    reader ??= readerOf(desc);
    if (reader === null) return miss;
    return reader.read(json, depth + 1) ?? miss;
  };
}

/** A scalar or enum value, or undefined for a kind the fast path leaves to protobuf-es. */
function singularValue(field: DescField): ValueRead | undefined {
  if (field.fieldKind === "enum" || ((field.fieldKind === "list" || field.fieldKind === "map") && field.enum !== undefined)) {
    const desc = field.enum as NonNullable<DescField["enum"]>;
    if (desc.typeName === "google.protobuf.NullValue") return undefined;
    // fromJson takes both names; the protobuf name wins a clash, as there.
    const numbers = new Map<string, number>();
    for (const v of desc.values) numbers.set(v.jsonName, v.number);
    for (const v of desc.values) numbers.set(v.name, v.number);
    return (json) => (typeof json === "string" ? (numbers.get(json) ?? miss) : miss);
  }
  const scalar = field.fieldKind === "scalar" || field.fieldKind === "list" || field.fieldKind === "map" ? field.scalar : undefined;
  switch (scalar) {
    case ScalarType.STRING:
      return (json) => (typeof json === "string" ? json : miss);
    case ScalarType.BOOL:
      return (json) => (typeof json === "boolean" ? json : miss);
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return (json) => (typeof json === "number" && Number.isInteger(json) && json <= 0x7fffffff && json >= -0x80000000 ? json : miss);
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return (json) => (typeof json === "number" && Number.isInteger(json) && json <= 0xffffffff && json >= 0 ? json : miss);
    default:
      return undefined;
  }
}

/** A copy of a JSON object as protobuf-es holds a Struct; undefined for what it would not take as is. */
function copyJson(json: JsonObject, depth: number): JsonObject | undefined {
  if (depth > maxDepth) return undefined;
  return readEntries(json, (v) => copyValue(v, depth) ?? miss) as JsonObject | undefined;
}

/**
 * A JSON object's own entries, each value through `read`; undefined when
 * `read` does not take one (`miss`), or for a "__proto__" key, which is
 * left to protobuf-es.
 */
function readEntries(json: JsonObject, read: (v: JsonValue) => unknown): Fields | undefined {
  const out: Fields = {};
  for (const key in json) {
    if (!Object.hasOwn(json, key)) continue;
    if (key === "__proto__") return undefined;
    const v = read(json[key] as JsonValue);
    if (v === miss) return undefined;
    out[key] = v;
  }
  return out;
}

function copyValue(json: JsonValue, depth: number): JsonValue | undefined {
  if (json === null || typeof json !== "object") return typeof json === "number" && !Number.isFinite(json) ? undefined : json;
  if (!Array.isArray(json)) return copyJson(json, depth + 1);
  // Arrays count towards the depth as objects do: nested arrays alone used to recurse until the stack ran out.
  if (depth > maxDepth) return undefined;
  const out: JsonValue[] = [];
  for (let i = 0; i < json.length; i++) {
    const v = copyValue(json[i] as JsonValue, depth + 1);
    if (v === undefined) return undefined;
    out.push(v);
  }
  return out;
}

function isObject(json: JsonValue): json is JsonObject {
  return typeof json === "object" && json !== null && !Array.isArray(json);
}
