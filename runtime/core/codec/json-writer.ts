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
 * protobuf-es. Each type's writer is compiled once (code-generation.ts),
 * naming its properties; where that is not allowed, a generic loop over the
 * same plans writes the same JSON, key for key.
 */
import { ScalarType, create, isMessage, toJson, type DescField, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence, hasCustomJsonRepresentation, isWrapperDesc } from "@bufbuild/protobuf/wkt";
import { base64Encode } from "@bufbuild/protobuf/wire";
import type { RequiredFieldTable } from "../method-spec.js";
import { generate, type Ref } from "./code-generation.js";
import { setOwn } from "./own-property.js";
import { defaultJson, toJsonWithRequired } from "./required-fields.js";

type Writer = (value: unknown) => JsonValue;

interface FieldPlan {
  readonly field: DescField;
  readonly key: string;
  /** Whether a field outside a oneof is set, as toJson sees it (`owner` holds it); oneof members go by their case. */
  readonly isSet: (v: unknown, owner: Record<string, unknown>) => boolean;
  /** The JSON of a REQUIRED field that is not set (its default), when it gets one. */
  readonly fallback: (() => JsonValue) | undefined;
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
  // Planning looks no other writer up (message values find theirs on first
  // use), so a recursive type needs none registered before its plans.
  const required = new Set(table[desc.typeName]?.required ?? []);
  const plans: readonly FieldPlan[] = desc.fields.map((field) => ({
    field,
    key: field.jsonName,
    isSet: presence(field),
    fallback: required.has(field.localName) ? fallbackOf(field) : undefined,
    write: valueWriter(field, table, cache),
  }));
  const compiled = compiledWriter(plans);
  if (compiled !== undefined) compiledWriters.add(compiled);
  const write: Writer = compiled ?? ((value) => writeMessage(value as Record<string, unknown>, plans));
  cache.set(desc, write);
  return write;
}

const compiledWriters = new WeakSet<Writer>();

/** Whether `write` (from jsonWriter) is code compiled for its type, rather than the generic loop: for tests and diagnostics. */
export function isCompiledWriter(write: Writer): boolean {
  return compiledWriters.has(write);
}

/**
 * writeMessage for one type, as code naming each property (see
 * code-generation.ts; undefined where that is not allowed): the loop's
 * `value[field.localName]` and `json[plan.key]` are megamorphic, one
 * generic lookup per field. Same fields, same order, same values.
 */
function compiledWriter(plans: readonly FieldPlan[]): Writer | undefined {
  return generate<Writer>((ref) => writerSource(plans, ref));
}

function writerSource(plans: readonly FieldPlan[], ref: Ref): string {
  const q = (s: string) => JSON.stringify(s);
  const writeMapRef = ref(writeMap);
  const body: string[] = [];
  for (const { field, key, isSet, fallback, write } of plans) {
    const name = q(field.localName);
    const w = ref(write);
    let set: string;
    if (field.oneof !== undefined) {
      body.push(`o = value[${q(field.oneof.localName)}];`);
      body.push(`v = o != null && o.case === ${name} ? o.value : undefined;`);
      set = `o != null && o.case === ${name}`;
    } else {
      body.push(`v = value[${name}];`);
      set = `${ref(isSet)}(v, value)`;
    }
    const value = field.fieldKind === "list" ? `v.map(${w})` : field.fieldKind === "map" ? `${writeMapRef}(v, ${w})` : `${w}(v)`;
    // A JSON name may be "__proto__" (json_name): that one is set as an own property.
    const assign = (expr: string) => (key === "__proto__" ? `${ref(setOwn)}(json, "__proto__", ${expr});` : `json[${q(key)}] = ${expr};`);
    body.push(`if (${set}) ${assign(value)}`);
    if (fallback !== undefined) body.push(`else ${assign(`${ref(fallback)}()`)}`);
  }
  return ["return (value) => {", "const json = {};", "let v, o;", ...body, "return json;", "};"].join("\n");
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
      set = plan.isSet(v, value);
    }
    if (set) {
      setOwn(json, plan.key, field.fieldKind === "list" ? (v as unknown[]).map(plan.write) : field.fieldKind === "map" ? writeMap(v as Record<string, unknown>, plan.write) : plan.write(v));
    } else if (plan.fallback !== undefined) {
      setOwn(json, plan.key, plan.fallback());
    }
  }
  return json;
}

function writeMap(value: Record<string, unknown>, write: Writer): JsonObject {
  const json: JsonObject = {};
  for (const key of Object.keys(value)) setOwn(json, key, write(value[key]));
  return json;
}

/**
 * Field presence as ProtoJSON output sees it, for a message or an init
 * object, for a field outside a oneof: null and undefined are never set.
 * One closure per field, called by the loop and by the compiled writers.
 */
function presence(field: DescField): (v: unknown, owner: Record<string, unknown>) => boolean {
  switch (field.fieldKind) {
    case "list":
      return (v) => v != null && (v as unknown[]).length > 0;
    case "map":
      return (v) => v != null && Object.keys(v as object).length > 0;
    case "message":
      return (v) => v != null;
  }
  // Explicit presence: set when the value is the object's own (proto2
  // defaults live on the prototype of a created message).
  const name = field.localName;
  if (field.presence !== FeatureSet_FieldPresence.IMPLICIT) return (v, owner) => v != null && Object.hasOwn(owner, name);
  if (field.fieldKind === "enum") {
    const zero = field.enum.values[0]?.number ?? 0;
    return (v) => v != null && v !== zero;
  }
  switch (field.scalar) {
    case ScalarType.STRING:
      return (v) => v != null && v !== "";
    case ScalarType.BOOL:
      return (v) => v != null && v !== false;
    case ScalarType.BYTES:
      return (v) => v != null && (v as Uint8Array).length !== 0;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      // As protobuf-es: -0 is set, and written.
      return (v) => v != null && !Object.is(v, 0);
    default:
      // 64-bit values may be bigint, number or string.
      return (v) => v != null && v != 0;
  }
}

/** A REQUIRED field's default JSON (fresh per response for lists and maps); undefined where none is written. */
function fallbackOf(field: DescField): (() => JsonValue) | undefined {
  const d = defaultJson(field, {});
  if (d === undefined) return undefined;
  if (Array.isArray(d)) return () => [];
  if (typeof d === "object" && d !== null) return () => ({});
  return () => d;
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
