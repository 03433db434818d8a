/**
 * `google.api.field_behavior = REQUIRED` on the wire, both ways (checklist
 * D11; Part B 2 "Presence / defaults", 15 #17, #18):
 *
 * - input: `findMissingRequired` lists every REQUIRED field that is not set,
 *   so a binding can answer InvalidParams with a google.rpc.BadRequest;
 * - output: `toJsonWithRequired` writes ProtoJSON but keeps REQUIRED fields
 *   that standard ProtoJSON drops at their default, e.g. ListTasksResponse
 *   `nextPageToken: ""` on the last page.
 *
 * Both walk the message *value* guided by the generated RequiredFieldTable:
 * `required` names the fields to check, `nested` the message fields to
 * descend into. Nothing is derived from descriptor options at runtime, so the
 * table stays the single source of truth and types outside it cost nothing.
 */
import { ScalarType, isFieldSet, toJson } from "@bufbuild/protobuf";
import type { DescField, DescMessage, JsonObject, JsonValue, JsonWriteOptions, Message } from "@bufbuild/protobuf";
import { isReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import type { ReflectMessage } from "@bufbuild/protobuf/reflect";
import { hasCustomJsonRepresentation } from "@bufbuild/protobuf/wkt";
import { base64Encode } from "@bufbuild/protobuf/wire";
import type { RequiredFieldTable } from "./method-spec.js";

/** One missing field; the shape of a google.rpc.BadRequest.FieldViolation. */
export interface FieldViolation {
  /** JSON (lowerCamel) path from the checked message, e.g. `message.parts[1].text`. */
  readonly field: string;
  readonly description: string;
}

/** The description of every violation `findMissingRequired` reports. */
export const requiredFieldDescription = "field is required";

/**
 * Lists the REQUIRED fields of `message`, and of the messages it holds along
 * `nested` fields, that are not set. "Not set" is `isFieldSet`: for fields
 * without explicit presence that includes "", 0, false, the enum's 0 value
 * and an empty list or map (spec 5.7: required arrays must be non-empty);
 * for message, `optional` and oneof fields, it means absent.
 *
 * Violations come in declaration order, depth first, with JSON-name paths:
 * `message.role`, `message.parts[0].text`, `metadata["key"].url`.
 * The walk follows the value, not the type graph, so recursive types end
 * where the data ends; a cyclic object graph is cut at the repeat.
 */
export function findMissingRequired(
  schema: DescMessage,
  message: Message,
  table: RequiredFieldTable,
): FieldViolation[] {
  assertType(schema, message);
  const violations: FieldViolation[] = [];
  walkMissing(reflect(schema, message), "", table, violations, new Set());
  return violations;
}

function walkMissing(
  msg: ReflectMessage,
  path: string,
  table: RequiredFieldTable,
  out: FieldViolation[],
  ancestors: Set<Message>,
): void {
  const entry = table[msg.desc.typeName];
  if (entry === undefined || ancestors.has(msg.message)) return;
  ancestors.add(msg.message);
  for (const field of msg.desc.fields) {
    const fieldPath = path === "" ? field.jsonName : `${path}.${field.jsonName}`;
    // isFieldSet also answers for oneof members: set only when the oneof's
    // case is this member.
    const set = isFieldSet(msg.message, field);
    if (!set) {
      if (entry.required.includes(field.localName)) {
        out.push({ field: fieldPath, description: requiredFieldDescription });
      }
      continue;
    }
    if (!entry.nested.includes(field.localName)) continue;
    for (const [child, childPath] of childMessages(msg, field, fieldPath)) {
      walkMissing(child, childPath, table, out, ancestors);
    }
  }
  ancestors.delete(msg.message);
}

/**
 * ProtoJSON of `message` (toJson with `options`), plus every REQUIRED field
 * that toJson left out, written at its default JSON value: "" for strings
 * and bytes, 0 for numbers ("0" for 64-bit integers, which ProtoJSON writes
 * as strings), false, [] for lists, {} for maps, and the name of the enum's
 * zero value (its number with `enumAsInteger`). Applied along `nested`
 * fields, to set singular messages, each list element and each map value.
 *
 * Never added: a REQUIRED singular message that is unset (there is no
 * sensible default object), and a REQUIRED oneof member whose case is not
 * selected (adding it would set a second member). Fields that are not
 * REQUIRED keep exactly the presence toJson gives them.
 */
export function toJsonWithRequired(
  schema: DescMessage,
  message: Message,
  table: RequiredFieldTable,
  options?: Partial<JsonWriteOptions>,
): JsonValue {
  assertType(schema, message);
  const json = toJson(schema, message, options);
  addRequired(reflect(schema, message), json, table, options ?? {}, new Set());
  return json;
}

function addRequired(
  msg: ReflectMessage,
  json: JsonValue | undefined,
  table: RequiredFieldTable,
  options: Partial<JsonWriteOptions>,
  ancestors: Set<Message>,
): void {
  const entry = table[msg.desc.typeName];
  if (entry === undefined || !isJsonObject(json) || ancestors.has(msg.message)) return;
  // Well-known types such as Struct or Timestamp are not written field by
  // field, so their JSON has no field keys to add.
  if (hasCustomJsonRepresentation(msg.desc)) return;
  ancestors.add(msg.message);
  for (const field of msg.desc.fields) {
    const key = options.useProtoFieldName === true ? field.name : field.jsonName;
    if (entry.required.includes(field.localName) && !Object.hasOwn(json, key)) {
      const value = defaultJson(field, options);
      if (value !== undefined) json[key] = value;
    }
    if (!entry.nested.includes(field.localName) || !isFieldSet(msg.message, field)) continue;
    const fieldJson = json[key];
    for (const [child, , childJson] of childMessages(msg, field, "", fieldJson)) {
      addRequired(child, childJson, table, options, ancestors);
    }
  }
  ancestors.delete(msg.message);
}

/**
 * The messages a set `field` of `msg` holds, with their violation path and
 * their part of the JSON written for the field (when given): the message
 * itself, each element (`[i]`), or each map value (`["key"]`; JSON map keys
 * are the stringified proto keys, as toJson writes them).
 */
function* childMessages(
  msg: ReflectMessage,
  field: DescField,
  path: string,
  json?: JsonValue,
): Generator<[ReflectMessage, string, JsonValue | undefined]> {
  switch (field.fieldKind) {
    case "message":
      yield [msg.get(field), path, json];
      return;
    case "list": {
      if (field.listKind !== "message") return;
      const items = Array.isArray(json) ? json : undefined;
      let i = 0;
      for (const item of msg.get(field)) {
        if (isReflectMessage(item)) yield [item, `${path}[${i}]`, items?.[i]];
        i++;
      }
      return;
    }
    case "map": {
      if (field.mapKind !== "message") return;
      const values = isJsonObject(json) ? json : undefined;
      for (const [mapKey, value] of msg.get(field)) {
        const key = String(mapKey);
        if (isReflectMessage(value)) yield [value, `${path}[${JSON.stringify(key)}]`, values?.[key]];
      }
      return;
    }
    default:
      return;
  }
}

/** The JSON a REQUIRED field gets when toJson omitted it; undefined when it stays absent. */
function defaultJson(field: DescField, options: Partial<JsonWriteOptions>): JsonValue | undefined {
  // A oneof member is absent because another member (or none) is selected,
  // not because it holds a default.
  if (field.oneof !== undefined) return undefined;
  switch (field.fieldKind) {
    case "list":
      return [];
    case "map":
      return {};
    case "message":
      return undefined;
    case "enum": {
      const desc = field.enum;
      // proto3 enums start at 0; a closed proto2 enum may not have 0, and
      // then its first value is the default.
      const number = field.getDefaultValue() ?? (desc.values.find((v) => v.number === 0) ?? desc.values[0])?.number ?? 0;
      if (desc.typeName === "google.protobuf.NullValue") return null;
      if (options.enumAsInteger === true) return number;
      return desc.value[number]?.jsonName ?? number;
    }
    case "scalar":
      return scalarJson(field.scalar, field.getDefaultValue());
  }
}

/** A scalar's ProtoJSON: the proto2 declared default when there is one, else the zero value. */
function scalarJson(type: ScalarType, declared: string | number | bigint | boolean | Uint8Array | undefined): JsonValue {
  if (declared !== undefined) {
    if (typeof declared === "bigint") return declared.toString();
    if (declared instanceof Uint8Array) return base64Encode(declared);
    if (typeof declared === "number" && !Number.isFinite(declared)) {
      return Number.isNaN(declared) ? "NaN" : declared > 0 ? "Infinity" : "-Infinity";
    }
    return declared;
  }
  switch (type) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return "";
    case ScalarType.BOOL:
      return false;
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return "0";
    default:
      return 0;
  }
}

// reflect() does not compare the two, and a mismatch would read the wrong
// fields silently.
function assertType(schema: DescMessage, message: Message): void {
  if (message.$typeName !== schema.typeName) {
    throw new TypeError(`expected a message of type ${schema.typeName}, got ${message.$typeName}`);
  }
}

function isJsonObject(json: JsonValue | undefined): json is JsonObject {
  return typeof json === "object" && json !== null && !Array.isArray(json);
}
