/**
 * The ProtoJSON half of a message's codec, and its zero message.
 *
 * The JSON writer reads a message or its init shape once and writes what
 * `toJsonWithRequired(desc, create(desc, value), table)` gives for the
 * generated REQUIRED table (decision D11): ProtoJSON with default options,
 * fields in declaration order, and every `google.api.field_behavior =
 * REQUIRED` field written even at its default ("" for strings, 0, false,
 * [] and {}, an enum's first name), except a REQUIRED singular message
 * that is unset and a REQUIRED oneof member not selected. The well-known
 * types with a JSON form of their own, and a Struct field held as a
 * JsonObject, are written by protobuf-es (its checks, its output).
 *
 * The zero message is the object literal of `create(desc)`: its own
 * properties, in order, spelled from a message create() made at build time
 * (primitives, empty lists, maps and bytes, unset oneofs). A message whose
 * defaults live on a prototype (proto2, editions' explicit presence), or
 * holding anything a literal cannot spell, is made by create() itself.
 */
import { ScalarType, create, type DescField, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence, hasCustomJsonRepresentation } from "@bufbuild/protobuf/wkt";
import type { Printable } from "@bufbuild/protoplugin";
import { defaultJson } from "../../runtime/core/codec/required-fields.js";
import { isLegacyRequired, isRequired } from "../model/required-fields.js";
import { globals } from "../names.js";
import { Lines, is64Bit, isJsonStruct, isUnboxedWrapper, prop, type CodecContext } from "./codec-context.js";

const IMPLICIT = FeatureSet_FieldPresence.IMPLICIT;
const LEGACY_REQUIRED = FeatureSet_FieldPresence.LEGACY_REQUIRED;

const requiredCache = new WeakMap<DescMessage, readonly string[]>();

/** The local names of a message's REQUIRED fields (google.api.field_behavior, and proto2 `required`), in declaration order. */
export function requiredFields(desc: DescMessage): readonly string[] {
  let required = requiredCache.get(desc);
  if (required === undefined) {
    required = desc.fields.filter(isRequired).map((f) => f.localName);
    requiredCache.set(desc, required);
  }
  return required;
}

export function emitJsonWriter(ctx: CodecContext, desc: DescMessage): void {
  const { f } = ctx;
  const names = ctx.plan.namesOf(desc, ctx.file, ctx.f, (m) => ctx.shape(m).name);
  const schema = ctx.schema(desc);
  const init = [ctx.pb("MessageInitShape", true), "<typeof ", schema, ">"];
  if (hasCustomJsonRepresentation(desc)) {
    f.print(f.jsDoc(`The ProtoJSON of ${desc.typeName}, a message or its init shape: a\nwell-known type with a JSON form of its own, which protobuf-es writes.`));
    f.print(f.export("function", names.toJson), "(value: ", ...init, "): ", f.runtime.JsonValue, " {");
    f.print("  return ", ctx.rt("customJson"), "(", schema, ", value);");
    f.print("}");
    f.print();
    return;
  }
  const required = new Set(requiredFields(desc));
  const body = new Lines();
  if (desc.fields.length === 0) {
    f.print(f.jsDoc(`The ProtoJSON of ${desc.typeName}, which has no fields: {}.`));
    f.print(f.export("function", names.toJson), "(_value: ", ...init, "): ", f.runtime.JsonObject, " {");
    f.print("  return {};");
    f.print("}");
    f.print();
    return;
  }
  body.add(1, "const json: ", f.runtime.JsonObject, " = {};");
  for (const field of desc.fields) body.addAll(1, writeField(ctx, field, required.has(field.localName)));
  body.add(1, "return json;");
  const defaulted = desc.fields.filter((f) => required.has(f.localName) && !isLegacyRequired(f)).map((f) => f.localName);
  const doc = defaulted.length === 0 ? "" : `\nREQUIRED fields (${defaulted.join(", ")}) are written even at their default.`;
  f.print(f.jsDoc(`The ProtoJSON of ${desc.typeName}, a message or its init shape, as\ntoJson(${schema.name}, create(${schema.name}, value)) writes it.${doc}`));
  f.print(f.export("function", names.toJson), "(value: ", ...init, "): ", f.runtime.JsonObject, " {");
  body.print(f);
  f.print("}");
  f.print();
}

/**
 * `json["key"] = expr;`, or an own property for a key that is "__proto__" (json_name). Brackets
 * even for an identifier: JsonObject is an index signature, and a user's tsconfig with
 * noPropertyAccessFromIndexSignature refuses `json.key` on it.
 */
function assign(ctx: CodecContext, key: string, expr: Printable[]): Printable[] {
  if (key === "__proto__") return [ctx.rt("setOwn"), "(json, ", ctx.f.string(key), ", ", ...expr, ");"];
  return ["json[", ctx.f.string(key), "] = ", ...expr, ";"];
}

function writeField(ctx: CodecContext, field: DescField, required: boolean): Lines {
  const lines = new Lines();
  const key = field.jsonName;
  if (field.oneof !== undefined) {
    // A REQUIRED member that is not selected gets no default: that would set a second member.
    const oneof = prop("value", field.oneof.localName);
    lines.add(0, "if (", oneof, "?.case === ", ctx.f.string(field.localName), ") ", ...assign(ctx, key, valueJson(ctx, field, `${oneof}.value`)));
    return lines;
  }
  const v = prop("value", field.localName);
  lines.add(0, "if (", ...isSet(ctx, field, v), ") ", ...assign(ctx, key, fieldJson(ctx, field, v)));
  // A proto2 `required` field is in the table (a request must have it, D11), but an answer without
  // it cannot be encoded, as toJson and the binary writer say: no default is made up for it.
  const fallback = required && !isLegacyRequired(field) ? defaultJson(field, {}) : undefined;
  if (fallback !== undefined) lines.add(0, "else ", ...assign(ctx, key, [jsonLiteral(ctx, fallback)]));
  else if (field.presence === LEGACY_REQUIRED) lines.add(0, "else throw new ", globals.Error, "(", ctx.f.string(`cannot encode ${String(field)} to JSON: required field not set`), ");");
  return lines;
}

/** Whether a field outside a oneof is set as toJson sees it, for a message or an init shape: null and undefined never are. */
function isSet(ctx: CodecContext, field: DescField, v: string): Printable[] {
  switch (field.fieldKind) {
    case "list":
      return [v, " != null && ", v, ".length > 0"];
    case "map":
      return [v, " != null && Object.keys(", v, ").length > 0"];
    case "message":
      return [v, " != null"];
  }
  // Explicit presence: set when the value is the object's own (proto2
  // defaults live on the prototype of a created message).
  if (field.presence !== IMPLICIT) return [v, " != null && Object.hasOwn(value, ", ctx.f.string(field.localName), ")"];
  if (field.fieldKind === "enum") return [v, " != null && ", v, " !== ", String(field.enum.values[0]?.number ?? 0)];
  switch (field.scalar) {
    case ScalarType.STRING:
      return [v, ' != null && ', v, ' !== ""'];
    case ScalarType.BOOL:
      return [v, " != null && ", v, " !== false"];
    case ScalarType.BYTES:
      return [v, " != null && ", v, ".length !== 0"];
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      // As protobuf-es: -0 is set, and written.
      return [v, " != null && !Object.is(", v, ", 0)"];
    default:
      return is64Bit(field.scalar) ? [v, " != null && ", ctx.rt("isNonZero64"), "(", v, ")"] : [v, " != null && ", v, " != 0"];
  }
}

/** The JSON of a set field's value: a list's or a map's elements each through the element's writer. */
function fieldJson(ctx: CodecContext, field: DescField, v: string): Printable[] {
  if (field.fieldKind === "list") {
    const item = itemWriter(ctx, field);
    return item === undefined ? [v, ".slice()"] : [v, ".map(", ...item, ")"];
  }
  if (field.fieldKind === "map") {
    const item = itemWriter(ctx, field);
    return [ctx.rt("mapJson"), "(", v, ...(item === undefined ? [] : [", ", ...item]), ")"];
  }
  return valueJson(ctx, field, v);
}

/** A function writing one element of a list or map, or undefined where the element is its own JSON. */
function itemWriter(ctx: CodecContext, field: DescField): Printable[] | undefined {
  if (field.message !== undefined) {
    if (isJsonStruct(field)) return ["(item) => ", ...valueJson(ctx, field, "item")];
    return [ctx.fn(field.message, "toJson")];
  }
  if (field.enum !== undefined) return ["(item) => ", ...valueJson(ctx, field, "item")];
  switch (field.scalar) {
    case ScalarType.BYTES:
      return ["(item) => ", ...valueJson(ctx, field, "item")];
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return [ctx.rt("floatJson")];
    default:
      return is64Bit(field.scalar as ScalarType) ? [globals.String] : undefined;
  }
}

/** The JSON of one value of a field (a singular value, a oneof member's, a list's element, a map's value). */
function valueJson(ctx: CodecContext, field: DescField, v: string): Printable[] {
  if (field.message !== undefined) {
    // A Struct held as a JsonObject: through protobuf-es, which checks it is JSON.
    if (isJsonStruct(field)) return [ctx.rt("structFieldJson"), "(", ctx.schema(field.parent), ", ", ctx.f.string(field.localName), ", ", v, ")"];
    if (isUnboxedWrapper(field)) return [ctx.fn(field.message, "toJson"), "({ value: ", v, " })"];
    return [ctx.fn(field.message, "toJson"), "(", v, ")"];
  }
  if (field.enum !== undefined) {
    if (field.enum.typeName === "google.protobuf.NullValue") return ["null"];
    return [ctx.rt("enumJson"), "(", ctx.schema(field.enum), ", ", v, ")"];
  }
  switch (field.scalar as ScalarType) {
    case ScalarType.BYTES:
      return [ctx.wire("base64Encode"), "(", v, ")"];
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return [ctx.rt("floatJson"), "(", v, ")"];
    default:
      return is64Bit(field.scalar as ScalarType) ? [globals.String, "(", v, ")"] : [v];
  }
}

/** A JSON value (a REQUIRED field's default) as a literal: lists and objects are fresh per call. */
function jsonLiteral(ctx: CodecContext, json: JsonValue): Printable {
  if (json === null) return "null";
  if (Array.isArray(json)) return "[]";
  switch (typeof json) {
    case "string":
      return ctx.f.string(json);
    case "number":
    case "boolean":
      return String(json);
    default:
      return "{}";
  }
}

// ---------------------------------------------------------------------------
// Zero messages

export function emitZero(ctx: CodecContext, desc: DescMessage): void {
  const { f } = ctx;
  const names = ctx.plan.namesOf(desc, ctx.file, ctx.f, (m) => ctx.shape(m).name);
  const shape = ctx.shape(desc);
  const literal = zeroLiteral(ctx, desc);
  f.print(f.jsDoc(`A new ${desc.typeName} with no field set, as create(${ctx.schema(desc).name}) makes it.`));
  f.print(f.export("function", names.zero), "(): ", shape, " {");
  if (literal === undefined) f.print("  return ", f.runtime.create, "(", ctx.schema(desc), ");");
  else f.print("  return ", ...literal, ";");
  f.print("}");
  f.print();
}

/** The object literal of create(desc), or undefined where a literal cannot make that message. */
function zeroLiteral(ctx: CodecContext, desc: DescMessage): Printable[] | undefined {
  const template = create(desc) as unknown as Record<string, unknown>;
  if (Object.getPrototypeOf(template) !== Object.prototype) return undefined;
  const parts: Printable[] = [];
  for (const key of Object.keys(template)) {
    const v = template[key];
    let expr: Printable;
    if (typeof v === "string") expr = ctx.f.string(v);
    else if (typeof v === "boolean") expr = String(v);
    else if (typeof v === "number" && Number.isFinite(v) && !Object.is(v, -0)) expr = String(v);
    else if (typeof v === "bigint") expr = v;
    else if (Array.isArray(v) && v.length === 0) expr = "[]";
    else if (v instanceof Uint8Array && v.byteLength === 0) expr = "new Uint8Array(0)";
    else if (isPlainEmpty(v)) expr = "{}";
    else if (isUnsetOneof(v)) expr = "{ case: undefined }";
    else return undefined;
    if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) return undefined;
    parts.push(parts.length === 0 ? "{ " : ", ", key, ": ", expr);
  }
  parts.push(" }");
  return parts;
}

function isPlainEmpty(v: unknown): boolean {
  return typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype && Object.keys(v).length === 0;
}

function isUnsetOneof(v: unknown): boolean {
  if (typeof v !== "object" || v === null || Object.getPrototypeOf(v) !== Object.prototype) return false;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === "case" && (v as { case?: unknown }).case === undefined;
}
