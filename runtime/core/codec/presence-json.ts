/**
 * A message's JSON with only the fields field presence says were given (D100;
 * A2A spec 8.4.1 states it for the Agent Card, the rule itself knows nothing
 * of A2A): a field marked `google.api.field_behavior = REQUIRED` is kept even
 * at its default, a field with explicit presence (`optional`, a message, a
 * oneof member) is kept when it is there, and any other field is kept only
 * when it is not at its default. It is read off the descriptors, field by
 * field, so a new proto needs no new list of fields.
 *
 * `presenceJson` works on JSON as it travelled: what it does not hold it does
 * not invent (the section's own example is a fragment with REQUIRED fields
 * left out, and its canonical form leaves them out too). `presenceJsonOf`
 * starts from a message, where every REQUIRED field exists, so its form has
 * all of them: what a signer signs, and serves, and a verifier of that JSON
 * then computes the same.
 *
 * Keys this descriptor does not know are kept as they are: they are a newer
 * proto's fields, and the party that wrote them meant them to count.
 * Well-known types with a JSON form of their own (Struct, Value, Timestamp,
 * ...) are data, kept as written.
 */
import { ScalarType, toJson, type DescField, type DescMessage, type JsonObject, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence, hasCustomJsonRepresentation } from "@bufbuild/protobuf/wkt";
import { isRequired as isRequiredField } from "./field-behavior.js";
import { setOwn } from "./own-property.js";

/** JSON the presence rules cannot read: a field of the wrong JSON type, nesting too deep. */
export class PresenceJsonError extends Error {
  override readonly name = "PresenceJsonError";
}

export interface PresenceJsonOptions {
  /** Top-level fields left out whatever they hold (proto or JSON name), e.g. `signatures`. */
  readonly omit?: readonly string[];
}

/** Deeper than any real message; a guard against JSON built to exhaust the stack. */
const maxDepth = 100;

/** The presence form of `json`, a message of type `schema` as ProtoJSON (json or proto field names). */
export function presenceJson(schema: DescMessage, json: JsonObject, options: PresenceJsonOptions = {}): JsonObject {
  const omit = new Set<string>();
  for (const name of options.omit ?? []) {
    const field = schema.fields.find((f) => f.name === name || f.jsonName === name || f.localName === name);
    omit.add(name);
    if (field !== undefined) omit.add(field.name).add(field.jsonName);
  }
  return walkMessage(schema, json, "$", 0, omit);
}

/** The presence form of a message: every REQUIRED field there, at its default if unset. */
export function presenceJsonOf<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>, options: PresenceJsonOptions = {}): JsonObject {
  // Implicit fields at their defaults are written so the REQUIRED ones are there; the walk drops the rest.
  const json = toJson(schema, message, { alwaysEmitImplicit: true }) as JsonObject;
  return presenceJson(schema, json, options);
}

function walkMessage(desc: DescMessage, json: JsonObject, path: string, depth: number, omit: ReadonlySet<string>): JsonObject {
  if (depth > maxDepth) throw new PresenceJsonError(`${path} is nested more than ${maxDepth} messages deep`);
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(json)) {
    if (omit.has(key)) continue;
    const field = desc.fields.find((f) => f.jsonName === key || f.name === key);
    if (field === undefined) {
      // Set as an own property: `out["__proto__"] = v` would set out's prototype, and the key, left
      // out of the canonical form, could be added to a signed card unnoticed (D100).
      setOwn(out, key, value);
      continue;
    }
    if (Object.hasOwn(out, field.jsonName)) throw new PresenceJsonError(`${path}.${field.jsonName} is given twice (as ${field.name} and ${field.jsonName})`);
    const kept = walkField(field, value, `${path}.${field.jsonName}`, depth);
    if (kept !== undefined) out[field.jsonName] = kept;
  }
  return out;
}

/** The field's value in presence form, or undefined when the field is left out. */
function walkField(field: DescField, value: JsonValue, path: string, depth: number): JsonValue | undefined {
  const required = isRequiredField(field);
  // ProtoJSON's null is "not set", except for google.protobuf.Value, where it is a value.
  if (value === null) return field.fieldKind === "message" && field.message.typeName === "google.protobuf.Value" ? null : undefined;
  switch (field.fieldKind) {
    case "list": {
      if (!Array.isArray(value)) throw new PresenceJsonError(`${path} must be a JSON array`);
      if (value.length === 0 && !required) return undefined;
      return field.listKind === "message" ? value.map((item, i) => walkValue(field.message, item, `${path}[${i}]`, depth)) : value;
    }
    case "map": {
      if (!isObject(value)) throw new PresenceJsonError(`${path} must be a JSON object`);
      const entries = Object.entries(value);
      if (entries.length === 0 && !required) return undefined;
      if (field.mapKind !== "message") return value;
      return Object.fromEntries(entries.map(([k, item]) => [k, walkValue(field.message, item, `${path}[${JSON.stringify(k)}]`, depth)]));
    }
    case "message":
      // A message field has presence: there is kept, whatever it holds.
      return walkValue(field.message, value, path, depth);
    case "enum":
    case "scalar":
      if (required || field.presence !== FeatureSet_FieldPresence.IMPLICIT || field.oneof !== undefined) return value;
      return isDefault(field, value) ? undefined : value;
  }
}

function walkValue(desc: DescMessage, value: JsonValue, path: string, depth: number): JsonValue {
  if (hasCustomJsonRepresentation(desc)) return value;
  if (!isObject(value)) throw new PresenceJsonError(`${path} must be a JSON object (${desc.typeName})`);
  return walkMessage(desc, value, path, depth + 1, noOmit);
}

const noOmit: ReadonlySet<string> = new Set();

/** Whether a scalar or enum's JSON is its zero value, in any of ProtoJSON's spellings. */
function isDefault(field: DescField & { fieldKind: "scalar" | "enum" }, value: JsonValue): boolean {
  if (field.fieldKind === "enum") {
    return value === 0 || (typeof value === "string" && field.enum.values.find((v) => v.number === 0)?.name === value);
  }
  if (typeof value === "boolean") return value === false;
  if (typeof value === "number") return value === 0;
  if (typeof value !== "string") return false;
  // Strings and bytes are "" at their default; numbers may be quoted ("0", 64-bit integers always are).
  return value === "" || (field.scalar !== ScalarType.STRING && field.scalar !== ScalarType.BYTES && value.trim() !== "" && Number(value) === 0);
}

function isObject(value: JsonValue): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
