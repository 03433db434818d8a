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
 * table stays the single source of truth and types outside it cost nothing;
 * the table is resolved to field descriptors once per type, and values are
 * read directly rather than through reflect(), since this runs per request.
 */
import { ScalarType, isFieldSet, toJson } from "@bufbuild/protobuf";
import type { DescField, DescMessage, JsonObject, JsonValue, JsonWriteOptions, Message } from "@bufbuild/protobuf";
import { hasCustomJsonRepresentation } from "@bufbuild/protobuf/wkt";
import { base64Encode } from "@bufbuild/protobuf/wire";
import type { RequiredFieldTable } from "../method-spec.js";

/** One missing field; the shape of a google.rpc.BadRequest.FieldViolation. */
export interface FieldViolation {
  /** JSON (lowerCamel) path from the checked message, e.g. `message.parts[1].text`. */
  readonly field: string;
  readonly description: string;
}

/** The description of every violation `findMissingRequired` reports. */
export const requiredFieldDescription = "field is required";

export function findMissingRequired(
  schema: DescMessage,
  message: Message,
  table: RequiredFieldTable,
): FieldViolation[] {
  assertType(schema, message);
  // One walk is kept between calls: a complete request then allocates
  // nothing but the empty answer. A call made while it is in use (none is
  // today: the walk calls no user code) takes a new one.
  const walk = idleWalk ?? new MissingWalk();
  idleWalk = undefined;
  try {
    return walk.run(plansOf(table), schema, message);
  } finally {
    idleWalk = walk;
  }
}

let idleWalk: MissingWalk | undefined;

/** What the walks need of one message type: its REQUIRED and nested fields, in declaration order. */
interface Step {
  readonly field: DescField;
  readonly required: boolean;
  readonly nested: boolean;
}

// The table names fields by local name; resolving them to descriptors once per
// type (not per request) keeps the per-message cost to the fields that matter.
const planCache = new WeakMap<RequiredFieldTable, Map<DescMessage, readonly Step[] | undefined>>();

const plansCache = new WeakMap<RequiredFieldTable, Plans>();

function plansOf(table: RequiredFieldTable): Plans {
  let fn = plansCache.get(table);
  if (fn === undefined) {
    fn = createPlans(table);
    plansCache.set(table, fn);
  }
  return fn;
}

function createPlans(table: RequiredFieldTable): Plans {
  let plans = planCache.get(table);
  if (plans === undefined) {
    plans = new Map();
    planCache.set(table, plans);
  }
  const cache = plans;
  return (desc) => {
    if (cache.has(desc)) return cache.get(desc);
    const entry = table[desc.typeName];
    const steps =
      entry === undefined
        ? undefined
        : desc.fields
            .map((field) => ({
              field,
              required: entry.required.includes(field.localName),
              nested: entry.nested.includes(field.localName) && messageKind(field),
            }))
            .filter((s) => s.required || s.nested);
    cache.set(desc, steps);
    return steps;
  };
}

function messageKind(field: DescField): boolean {
  return (
    field.fieldKind === "message" ||
    (field.fieldKind === "list" && field.listKind === "message") ||
    (field.fieldKind === "map" && field.mapKind === "message")
  );
}

type Plans = (desc: DescMessage) => readonly Step[] | undefined;

/** The value of a set field, oneof members included (isFieldSet said it is set). */
function fieldValue(message: Message, field: DescField): unknown {
  const record = message as unknown as Record<string, unknown>;
  if (field.oneof !== undefined) return (record[field.oneof.localName] as { value: unknown }).value;
  return record[field.localName];
}

const noPlans: Plans = () => undefined;

/** A step of a path: a field's JSON name, a list index, or a map key (boxed, to tell it from a name). */
type Segment = string | number | { readonly key: string };

// One walk decides and names: the path is a stack of segments spelled out only
// for a missing field, so a complete request (nearly every one) builds no
// strings, and a message met again on the way down (a cycle) is not entered.
class MissingWalk {
  #violations: FieldViolation[] | undefined;
  readonly #path: Segment[] = [];
  readonly #ancestors: Message[] = [];
  #plans: Plans = noPlans;

  run(plans: Plans, desc: DescMessage, message: Message): FieldViolation[] {
    this.#plans = plans;
    try {
      this.visit(desc, message);
      return this.#violations ?? [];
    } finally {
      // Empty after a complete walk (each push has its pop), so emptied only
      // after one that threw: `length = 0` drops the arrays' storage, and
      // they must not keep that request's messages alive.
      if (this.#path.length !== 0) this.#path.length = 0;
      if (this.#ancestors.length !== 0) this.#ancestors.length = 0;
      this.#violations = undefined;
      this.#plans = noPlans;
    }
  }

  visit(desc: DescMessage, message: Message): void {
    const steps = this.#plans(desc);
    if (steps === undefined || this.#ancestors.includes(message)) return;
    this.#ancestors.push(message);
    for (const { field, required, nested } of steps) {
      // isFieldSet also answers for oneof members: set only when the oneof's
      // case is this member.
      if (!isFieldSet(message, field)) {
        if (required) this.#report(field.jsonName);
        continue;
      }
      if (!nested) continue;
      const child = field.message as DescMessage;
      const value = fieldValue(message, field);
      const path = this.#path;
      path.push(field.jsonName);
      if (field.fieldKind === "list") {
        const items = value as Message[];
        for (let i = 0; i < items.length; i++) {
          path.push(i);
          this.visit(child, items[i] as Message);
          path.pop();
        }
      } else if (field.fieldKind === "map") {
        const items = value as Record<string, Message>;
        for (const key in items) {
          if (!Object.hasOwn(items, key)) continue;
          path.push({ key });
          this.visit(child, items[key] as Message);
          path.pop();
        }
      } else {
        this.visit(child, value as Message);
      }
      path.pop();
    }
    this.#ancestors.pop();
  }

  #report(name: string): void {
    let field = "";
    for (const s of this.#path) {
      field += typeof s === "number" ? `[${s}]` : typeof s === "string" ? (field === "" ? s : `.${s}`) : `[${JSON.stringify(s.key)}]`;
    }
    (this.#violations ??= []).push({ field: field === "" ? name : `${field}.${name}`, description: requiredFieldDescription });
  }
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
  addRequired(schema, message, json, plansOf(table), options ?? {}, new Set());
  return json;
}

function addRequired(
  desc: DescMessage,
  message: Message,
  json: JsonValue | undefined,
  plans: Plans,
  options: Partial<JsonWriteOptions>,
  ancestors: Set<Message>,
): void {
  const steps = plans(desc);
  // Well-known types such as Struct or Timestamp are not written field by
  // field, so their JSON has no field keys to add.
  if (steps === undefined || !isJsonObject(json) || ancestors.has(message) || hasCustomJsonRepresentation(desc)) return;
  ancestors.add(message);
  for (const { field, required, nested } of steps) {
    const key = options.useProtoFieldName === true ? field.name : field.jsonName;
    if (required && !Object.hasOwn(json, key)) {
      const value = defaultJson(field, options);
      if (value !== undefined) json[key] = value;
    }
    if (!nested || !isFieldSet(message, field)) continue;
    const child = field.message as DescMessage;
    const value = fieldValue(message, field);
    const fieldJson = json[key];
    if (field.fieldKind === "list") {
      const items = Array.isArray(fieldJson) ? fieldJson : [];
      (value as Message[]).forEach((item, i) => addRequired(child, item, items[i], plans, options, ancestors));
    } else if (field.fieldKind === "map") {
      const values = isJsonObject(fieldJson) ? fieldJson : {};
      // JSON map keys are the stringified proto keys, as toJson writes them.
      for (const [k, item] of Object.entries(value as Record<string, Message>)) {
        addRequired(child, item, values[k], plans, options, ancestors);
      }
    } else {
      addRequired(child, value as Message, fieldJson, plans, options, ancestors);
    }
  }
  ancestors.delete(message);
}

/** The JSON a REQUIRED field gets when toJson omitted it; undefined when it stays absent. */
export function defaultJson(field: DescField, options: Partial<JsonWriteOptions>): JsonValue | undefined {
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

// Values are read by local name, so a message of another type would be read
// wrong silently.
function assertType(schema: DescMessage, message: Message): void {
  if (message.$typeName !== schema.typeName) {
    throw new TypeError(`expected a message of type ${schema.typeName}, got ${message.$typeName}`);
  }
}

function isJsonObject(json: JsonValue | undefined): json is JsonObject {
  return typeof json === "object" && json !== null && !Array.isArray(json);
}
