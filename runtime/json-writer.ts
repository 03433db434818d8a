/**
 * ProtoJSON output straight from what a handler returns, a message or its
 * init shape, with REQUIRED fields kept at their defaults (D11).
 *
 * The general route, `create()` then `toJson()` then putting REQUIRED
 * defaults back, builds the whole message tree once only to read it again;
 * on the unary hot path that was the largest cost after the socket. This
 * writer reads the value once and writes JSON in field order. It must give
 * exactly what `toJsonWithRequired(desc, create(desc, value), table)` gives
 * (a property test holds it to that); types it does not handle itself (the
 * well-known types, and messages with unboxed wrapper fields) go through
 * protobuf-es.
 */
import { ScalarType, create, isMessage, toJson, type DescField, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence, hasCustomJsonRepresentation, isWrapperDesc } from "@bufbuild/protobuf/wkt";
import { base64Encode } from "@bufbuild/protobuf/wire";
import type { RequiredFieldTable } from "./method-spec.js";
import { defaultJson, toJsonWithRequired } from "./required-fields.js";

type Writer = (value: unknown) => JsonValue;

interface FieldPlan {
  readonly field: DescField;
  readonly key: string;
  readonly required: boolean;
  /** Writes a set value of the field (an element's writer for lists, a value's for maps). */
  readonly write: Writer;
}

const writers = new WeakMap<RequiredFieldTable, Map<DescMessage, Writer>>();

/** Returns the writer of `desc`'s ProtoJSON for this REQUIRED table. */
export function jsonWriter(desc: DescMessage, table: RequiredFieldTable): Writer {
  let cache = writers.get(table);
  if (cache === undefined) {
    cache = new Map();
    writers.set(table, cache);
  }
  return messageWriter(desc, table, cache);
}

function messageWriter(desc: DescMessage, table: RequiredFieldTable, cache: Map<DescMessage, Writer>): Writer {
  const known = cache.get(desc);
  if (known !== undefined) return known;
  if (hasCustomJsonRepresentation(desc)) {
    const wkt: Writer = (value) => toJson(desc, isMessage(value, desc) ? value : create(desc, value as never));
    cache.set(desc, wkt);
    return wkt;
  }
  // Unboxed wrapper fields (`google.protobuf.StringValue` as a plain string)
  // are rare; such a message takes the general route.
  if (desc.fields.some((f) => f.message !== undefined && isWrapperDesc(f.message))) {
    const general: Writer = (value) =>
      toJsonWithRequired(desc, isMessage(value, desc) ? value : create(desc, value as never), table);
    cache.set(desc, general);
    return general;
  }
  // Registered before its plans are built, so recursive types resolve to it.
  let plans: readonly FieldPlan[] = [];
  const write: Writer = (value) => writeMessage(value as Record<string, unknown>, plans);
  cache.set(desc, write);
  const required = new Set(table[desc.typeName]?.required ?? []);
  plans = desc.fields.map((field) => ({
    field,
    key: field.jsonName,
    required: required.has(field.localName),
    write: valueWriter(field, table, cache),
  }));
  return write;
}

function writeMessage(value: Record<string, unknown>, plans: readonly FieldPlan[]): JsonObject {
  const json: JsonObject = {};
  for (let i = 0; i < plans.length; i++) {
    const plan = plans[i] as FieldPlan;
    const field = plan.field;
    let v: unknown;
    let set: boolean;
    if (field.oneof !== undefined) {
      const oneof = value[field.oneof.localName] as { case?: unknown; value?: unknown } | undefined;
      set = oneof?.case === field.localName;
      v = set ? oneof?.value : undefined;
    } else {
      v = value[field.localName];
      set = isSet(field, v, value);
    }
    if (set) {
      json[plan.key] = field.fieldKind === "list" ? (v as unknown[]).map(plan.write) : field.fieldKind === "map" ? writeMap(v as Record<string, unknown>, plan.write) : plan.write(v);
    } else if (plan.required) {
      const d = defaultJson(field, {});
      if (d !== undefined) json[plan.key] = d;
    }
  }
  return json;
}

function writeMap(value: Record<string, unknown>, write: Writer): JsonObject {
  const json: JsonObject = {};
  for (const key of Object.keys(value)) json[key] = write(value[key]);
  return json;
}

/** Field presence as ProtoJSON output sees it, for a message or an init object. */
function isSet(field: DescField, v: unknown, owner: Record<string, unknown>): boolean {
  if (v === undefined || v === null) return false;
  switch (field.fieldKind) {
    case "list":
      return (v as unknown[]).length > 0;
    case "map":
      return Object.keys(v as object).length > 0;
    case "message":
      return true;
    default:
      // Explicit presence: set when the value is the object's own (proto2
      // defaults live on the prototype of a created message).
      if (field.presence !== FeatureSet_FieldPresence.IMPLICIT) return Object.prototype.hasOwnProperty.call(owner, field.localName);
      return field.fieldKind === "enum" ? v !== (field.enum.values[0]?.number ?? 0) : !isZero(field.scalar, v);
  }
}

function isZero(type: ScalarType, v: unknown): boolean {
  switch (type) {
    case ScalarType.STRING:
      return v === "";
    case ScalarType.BOOL:
      return v === false;
    case ScalarType.BYTES:
      return (v as Uint8Array).length === 0;
    default:
      // 64-bit values may be bigint, number or string.
      return v == 0;
  }
}

function valueWriter(field: DescField, table: RequiredFieldTable, cache: Map<DescMessage, Writer>): Writer {
  switch (field.fieldKind) {
    case "scalar":
      return scalarWriter(field.scalar);
    case "enum":
      return enumWriter(field);
    case "message":
      return messageValueWriter(field, field.message, table, cache);
    case "list":
      if (field.listKind === "scalar") return scalarWriter(field.scalar);
      if (field.listKind === "enum") return enumWriter(field);
      return messageValueWriter(field, field.message, table, cache);
    case "map":
      if (field.mapKind === "scalar") return scalarWriter(field.scalar);
      if (field.mapKind === "enum") return enumWriter(field);
      return messageValueWriter(field, field.message, table, cache);
  }
}

function messageValueWriter(field: DescField, desc: DescMessage, table: RequiredFieldTable, cache: Map<DescMessage, Writer>): Writer {
  // A Struct in a field is held as a plain JsonObject (not inside a Value).
  // protobuf-es checks that it is JSON (no undefined, no NaN) as it writes;
  // going through it keeps that check and its exact output.
  if (desc.typeName === "google.protobuf.Struct" && field.parent.typeName !== "google.protobuf.Value") {
    return viaParent(field);
  }
  let write: Writer | undefined;
  return (v) => (write ??= messageWriter(desc, table, cache))(v);
}

/** Writes one value of `field` by letting protobuf-es write a parent message holding only it. */
function viaParent(field: DescField): Writer {
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

function enumWriter(field: DescField): Writer {
  const desc = field.enum as NonNullable<DescField["enum"]>;
  if (desc.typeName === "google.protobuf.NullValue") return () => null;
  return (v) => desc.value[v as number]?.name ?? (v as number);
}

function scalarWriter(type: ScalarType | undefined): Writer {
  switch (type) {
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return (v) => String(v);
    case ScalarType.BYTES:
      return (v) => base64Encode(v as Uint8Array);
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return (v) => {
        const n = v as number;
        if (Number.isFinite(n)) return n;
        return Number.isNaN(n) ? "NaN" : n > 0 ? "Infinity" : "-Infinity";
      };
    default:
      return (v) => v as JsonValue;
  }
}
