/**
 * ProtoJSON input as the bindings read it (D10, A2A spec 5.7): unknown fields are
 * ignored, but a value of the wrong type, an unknown enum name included, is
 * an error naming the field. protobuf-es's `ignoreUnknownFields` would also
 * drop unknown enum names silently (a ListTasks filter `status: "BOGUS"`
 * would quietly list everything), so unknown fields are removed here instead
 * and the parse itself stays strict.
 */
import { readJsonFast } from "./json-reader.js";
import { fromJson, type DescField, type DescMessage, type JsonObject, type JsonValue, type Message } from "@bufbuild/protobuf";

/** A request body that is not a valid ProtoJSON message; `field` is the JSON path of the bad value when it could be found. */
export class JsonDecodeError extends Error {
  override readonly name = "JsonDecodeError";
  constructor(
    readonly field: string | undefined,
    readonly reason: string,
  ) {
    super(field === undefined ? reason : `invalid value for ${field}: ${reason}`);
  }
}

/**
 * Decodes `json` into a message of `desc`. The common case is read by the
 * fast path (json-reader.ts); what it leaves costs one strict parse
 * (no unknown fields), and only a body that fails that is walked.
 * Throws JsonDecodeError.
 */
export function decodeJson(desc: DescMessage, json: JsonValue): Message {
  return readJsonFast(desc, json) ?? decodeJsonStrict(desc, json);
}

/** decodeJson through protobuf-es alone: what a body the fast path leaves gets. */
export function decodeJsonStrict(desc: DescMessage, json: JsonValue): Message {
  try {
    return fromJson(desc, json);
  } catch (first) {
    // protobuf-es stops at this depth; the walks below recurse too, and would run out of stack on
    // input nested thousands deep (an INTERNAL error, reported as one of ours), or name a path of
    // that length.
    if (nestsDeeperThan(json, maxDepth)) throw new JsonDecodeError(undefined, `the request nests objects more than ${maxDepth} deep`);
    const known = withoutUnknownFields(desc, json);
    try {
      return known === json ? fail(first) : fromJson(desc, known);
    } catch (err) {
      throw new JsonDecodeError(locateBadValue(desc, known, ""), err instanceof Error ? err.message : String(err));
    }
  }
}

/** How deep a request's JSON may nest: protobuf-es's own recursion limit for messages. */
const maxDepth = 100;

/**
 * Whether `json` has objects (messages, as protobuf-es counts them; the arrays between them do not
 * count) nested more than `limit` deep. Without recursion, so any depth is safe.
 */
function nestsDeeperThan(json: JsonValue, limit: number): boolean {
  const pending: [JsonValue, number][] = [[json, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, depth] = next;
    if (typeof value !== "object" || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value) pending.push([item, depth]);
      continue;
    }
    if (depth >= limit) return true;
    for (const child of Object.values(value)) pending.push([child as JsonValue, depth + 1]);
  }
  return false;
}

function fail(err: unknown): never {
  throw err;
}

function decodes(desc: DescMessage, json: JsonValue): boolean {
  try {
    fromJson(desc, json);
    return true;
  } catch {
    return false;
  }
}

/**
 * The JSON path (`message.parts[0].text`) of the first value that does not
 * decode, found by decoding one key at a time; for two members of one oneof,
 * the message holding them, or at the request's top the second member. Only
 * runs for bodies already known to be invalid. Undefined when no single
 * value is to blame.
 */
function locateBadValue(desc: DescMessage, json: JsonValue, path: string): string | undefined {
  if (hasCustomJson(desc) || typeof json !== "object" || json === null || Array.isArray(json)) {
    return path === "" ? undefined : path;
  }
  for (const [key, value] of Object.entries(json)) {
    if (decodes(desc, { [key]: value })) continue;
    const field = fieldByJsonKey(desc, key);
    const here = path === "" ? (field?.jsonName ?? key) : `${path}.${field?.jsonName ?? key}`;
    if (field === undefined) return here;
    if (field.fieldKind === "message") return locateBadValue(field.message, value, here) ?? here;
    if (field.fieldKind === "list" && field.listKind === "message" && Array.isArray(value)) {
      const i = value.findIndex((v) => !decodes(field.message, v));
      return i < 0 ? here : (locateBadValue(field.message, value[i] as JsonValue, `${here}[${i}]`) ?? `${here}[${i}]`);
    }
    if (field.fieldKind === "map" && field.mapKind === "message" && typeof value === "object" && value !== null && !Array.isArray(value)) {
      const bad = Object.entries(value).find(([, v]) => !decodes(field.message, v as JsonValue));
      if (bad === undefined) return here;
      const at = `${here}[${JSON.stringify(bad[0])}]`;
      return locateBadValue(field.message, bad[1] as JsonValue, at) ?? at;
    }
    return here;
  }
  // Two members of one oneof, each fine alone: a nested message holding them is blamed (its path,
  // by the caller); the request itself has no path, so its second member is named instead.
  if (path !== "") return undefined;
  // The second in the request's own order: the one that came after another was set.
  const seen = new Set<unknown>();
  for (const [key, value] of Object.entries(json)) {
    const field = value === null ? undefined : fieldByJsonKey(desc, key);
    if (field?.oneof === undefined) continue;
    if (seen.has(field.oneof)) return field.jsonName;
    seen.add(field.oneof);
  }
  return undefined;
}

// Messages whose JSON is not "one key per field" (Struct, Any, Timestamp, ...):
// their contents are data, never unknown fields.
function hasCustomJson(desc: DescMessage): boolean {
  return desc.typeName.startsWith("google.protobuf.");
}

function fieldByJsonKey(desc: DescMessage, key: string): DescField | undefined {
  return desc.fields.find((f) => f.jsonName === key || f.name === key);
}

/** A copy of `json` without the keys `desc` does not know, nested messages included; `json` itself when nothing was removed. */
function withoutUnknownFields(desc: DescMessage, json: JsonValue): JsonValue {
  if (hasCustomJson(desc) || typeof json !== "object" || json === null || Array.isArray(json)) return json;
  let changed = false;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(json)) {
    const field = fieldByJsonKey(desc, key);
    if (field === undefined || value === undefined) {
      changed = true;
      continue;
    }
    const cleaned = cleanField(field, value);
    if (cleaned !== value) changed = true;
    out[key] = cleaned;
  }
  return changed ? out : json;
}

function cleanField(field: DescField, value: JsonValue): JsonValue {
  switch (field.fieldKind) {
    case "message":
      return withoutUnknownFields(field.message, value);
    case "list":
      if (field.listKind !== "message" || !Array.isArray(value)) return value;
      return mapIfChanged(value, (v) => withoutUnknownFields(field.message, v));
    case "map": {
      if (field.mapKind !== "message" || typeof value !== "object" || value === null || Array.isArray(value)) return value;
      let changed = false;
      const out: JsonObject = {};
      for (const [k, v] of Object.entries(value)) {
        const cleaned = withoutUnknownFields(field.message, v as JsonValue);
        if (cleaned !== v) changed = true;
        // A key is data here: "__proto__" assigned would set the copy's prototype, and the entry be lost.
        Object.defineProperty(out, k, { value: cleaned, enumerable: true, writable: true, configurable: true });
      }
      return changed ? out : value;
    }
    default:
      return value;
  }
}

function mapIfChanged(values: JsonValue[], f: (v: JsonValue) => JsonValue): JsonValue[] {
  const out = values.map(f);
  return out.some((v, i) => v !== values[i]) ? out : values;
}
