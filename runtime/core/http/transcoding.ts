/**
 * HttpRule transcoding: the request message of an HTTP+JSON call, as one
 * ProtoJSON object built from path variables, the body and the query, so
 * that protobuf-es decodes it once and every value follows the same rules
 * whatever part of the request it came from (D7).
 *
 * - Path values are always the truth: a body or query value for a
 *   path-bound field must agree with the path, else the call is refused.
 * - With `body: "*"` the query sets nothing; otherwise the query may set
 *   the fields the model listed for the rule, by JSON or proto name, nested
 *   ones by dotted name; unknown names are ignored (spec 5.7).
 * - Query text follows application/x-www-form-urlencoded (`+` is a space),
 *   as the URLSearchParams of clients writes it; repeated fields take the
 *   parameter repeated or comma-separated, split at the commas written as
 *   such before decoding, so an element holding a comma sends it as %2C
 *   (as URLSearchParams writes it).
 */
import { ScalarType, type DescField, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import type { HttpRuleSpec } from "../method-spec.js";
import { JsonDecodeError } from "../codec/proto-json.js";
import { setOwn } from "../codec/own-property.js";

/** A field path from the request message, with its JSON name path for messages. */
interface FieldPath {
  readonly fields: readonly DescField[];
  readonly json: string;
}

export interface Transcoder {
  /** Fields set by the template's variables, in variable order. */
  readonly pathFields: readonly FieldPath[];
  /**
   * The request's ProtoJSON from the decoded path values, the parsed body (as
   * the rule maps it; undefined when the rule has none; a body object is
   * filled in place) and the query.
   * Throws JsonDecodeError for a value that cannot be right.
   */
  build(pathValues: readonly string[], body: JsonValue | undefined, query: URLSearchParams | undefined, url?: string): JsonObject;
}

export function createTranscoder(input: DescMessage, rule: HttpRuleSpec): Transcoder {
  const pathFields = rule.pathParams.map((p) => resolve(input, p.field, "local"));
  const byQueryName = new Map<string, FieldPath>();
  for (const json of rule.query) {
    const path = resolve(input, json.split("."), "json");
    byQueryName.set(path.json, path);
    byQueryName.set(path.fields.map((f) => f.name).join("."), path);
  }
  // A query naming a path-bound field is checked against the path, never applied.
  const pathByName = new Map<string, number>();
  pathFields.forEach((p, i) => {
    pathByName.set(p.json, i);
    pathByName.set(p.fields.map((f) => f.name).join("."), i);
  });
  const bodyField = rule.body === "" || rule.body === "*" ? undefined : input.fields.find((f) => f.localName === rule.body);

  return {
    pathFields,
    build(pathValues, body, query, url) {
      let json: JsonObject = {};
      if (body !== undefined) {
        if (bodyField !== undefined) setOwn(json, bodyField.jsonName, body);
        else if (typeof body !== "object" || body === null || Array.isArray(body)) {
          throw new JsonDecodeError(undefined, "the request body must be a JSON object");
        } else json = body; // freshly parsed for this request: filled in place, not copied
      }
      if (query !== undefined && rule.body !== "*") {
        // Grouped by the field, not the key: `pageSize=1&page_size=2` names one field twice.
        const byField = new Map<FieldPath, string[]>();
        for (const [name, value] of query) {
          const bound = pathByName.get(name);
          if (bound !== undefined) {
            const path = pathFields[bound] as FieldPath;
            agree(path, scalarJson(path, value), scalarJson(path, pathValues[bound] as string), "query");
            continue;
          }
          const path = byQueryName.get(name);
          if (path === undefined) continue;
          // Pushed, not copied: a key repeated n times cost n² (flood hunt).
          const values = byField.get(path);
          if (values === undefined) byField.set(path, [value]);
          else values.push(value);
        }
        for (const [path, values] of byField) {
          const leaf = path.fields[path.fields.length - 1] as DescField;
          if (leaf.fieldKind === "list") {
            // Split as sent (`url`, read only for a list field), so a comma sent as %2C stays in its element.
            const elements = url === undefined ? values.flatMap((v) => v.split(",")) : listElements(url.slice(url.indexOf("?") + 1), byQueryName, path);
            set(json, path, elements.map((v) => scalarJson(path, v)));
          } else {
            if (values.length > 1) throw new JsonDecodeError(path.json, `given ${values.length} times in the query; the field takes one value`);
            set(json, path, scalarJson(path, values[0] as string));
          }
        }
      }
      pathFields.forEach((path, i) => {
        const value = scalarJson(path, pathValues[i] as string);
        const existing = get(json, path);
        if (existing !== undefined) agree(path, existing, value, "body");
        set(json, path, value);
      });
      return json;
    },
  };
}

/**
 * The elements of list field `path` in the raw query: each of its parameters split at the commas
 * written as such, then form-decoded, so a comma sent as %2C stays in its element.
 */
function listElements(rawQuery: string, byQueryName: ReadonlyMap<string, FieldPath>, path: FieldPath): string[] {
  const elements: string[] = [];
  for (const pair of rawQuery.split("&")) {
    const eq = pair.indexOf("=");
    if (byQueryName.get(formDecode(eq < 0 ? pair : pair.slice(0, eq))) !== path) continue;
    for (const raw of (eq < 0 ? "" : pair.slice(eq + 1)).split(",")) elements.push(formDecode(raw));
  }
  return elements;
}

/** One application/x-www-form-urlencoded name or value, as URLSearchParams decodes it. */
function formDecode(raw: string): string {
  return new URLSearchParams(`a=${raw}`).get("a") ?? "";
}

function resolve(input: DescMessage, names: readonly string[], by: "local" | "json"): FieldPath {
  const fields: DescField[] = [];
  let message: DescMessage | undefined = input;
  for (const name of names) {
    const field: DescField | undefined = message?.fields.find((f) => (by === "local" ? f.localName : f.jsonName) === name);
    if (field === undefined) throw new Error(`${input.typeName} has no field ${names.join(".")}: the HTTP rule table does not match the schema`);
    fields.push(field);
    message = field.message;
  }
  return { fields, json: fields.map((f) => f.jsonName).join(".") };
}

/** Text from a path or query as the ProtoJSON of the field's type. */
function scalarJson(path: FieldPath, raw: string): JsonValue {
  const leaf = path.fields[path.fields.length - 1] as DescField;
  if (leaf.enum !== undefined) return /^-?\d+$/.test(raw) ? Number(raw) : raw;
  const message = leaf.message;
  const scalar = message === undefined ? leaf.scalar : wrapperScalar(message);
  if (scalar === ScalarType.BOOL) {
    if (raw === "true" || raw === "false") return raw === "true";
    throw new JsonDecodeError(path.json, `expected true or false, got ${JSON.stringify(raw)}`);
  }
  // Numbers stay text: ProtoJSON takes "12", "1.5" and "NaN" and checks their range itself.
  return raw;
}

/** The scalar inside a wrapper type (google.protobuf.BoolValue), else undefined. */
function wrapperScalar(message: DescMessage): ScalarType | undefined {
  if (!message.typeName.startsWith("google.protobuf.") || !message.typeName.endsWith("Value")) return undefined;
  return message.fields.find((f) => f.name === "value")?.scalar;
}

/** An enum value by name or number, as its number; undefined for a name the enum does not have. */
function enumNumber(path: FieldPath, value: JsonValue): number | undefined {
  const leaf = path.fields[path.fields.length - 1] as DescField;
  if (typeof value === "number") return value;
  if (typeof value !== "string") return undefined;
  if (/^-?\d+$/.test(value)) return Number(value);
  return leaf.enum?.values.find((v) => v.name === value)?.number;
}

function agree(path: FieldPath, given: JsonValue, fromPath: JsonValue, where: "body" | "query"): void {
  // A path-bound field is a scalar, so an object or array given for it never agrees; it is not
  // printed either: String() and JSON.stringify of one nested deep enough overflow the stack.
  const scalar = given === null || typeof given !== "object";
  // An enum agrees by value: its name in one place and its number in the other name the same.
  const isEnum = (path.fields[path.fields.length - 1] as DescField).enum !== undefined;
  const same = () => (isEnum && enumNumber(path, given) !== undefined ? enumNumber(path, given) === enumNumber(path, fromPath) : String(given) === String(fromPath));
  if (!scalar || !same()) {
    const said = scalar ? JSON.stringify(given) : Array.isArray(given) ? "an array" : "an object";
    throw new JsonDecodeError(path.json, `the ${where} says ${said} but the path says ${JSON.stringify(fromPath)}; the path decides, so they must agree`);
  }
}

/**
 * What the body gave for `key`, its own property only: a field named `constructor`, `to_string` or
 * `__proto__` read the object's prototype's members, and every HTTP+JSON call bound to one failed
 * (generator hunt).
 */
function own(node: JsonObject, key: string): JsonValue | undefined {
  return Object.hasOwn(node, key) ? node[key] : undefined;
}

function get(json: JsonObject, path: FieldPath): JsonValue | undefined {
  let node: JsonValue | undefined = json;
  for (const f of path.fields) {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return undefined;
    node = own(node, f.jsonName) ?? own(node, f.name);
  }
  return node;
}

function set(json: JsonObject, path: FieldPath, value: JsonValue): void {
  let node = json;
  path.fields.forEach((f, i) => {
    if (i === path.fields.length - 1) {
      // The path's value replaces one the body gave under the proto name too.
      if (f.name !== f.jsonName) delete node[f.name];
      setOwn(node, f.jsonName, value);
      return;
    }
    const next = own(node, f.jsonName);
    if (typeof next === "object" && next !== null && !Array.isArray(next)) node = next;
    else if (next === undefined || next === null) {
      const made: JsonObject = {};
      setOwn(node, f.jsonName, made);
      node = made;
    }
    // The body gave a message field something else: a wrong value (D10), not one to replace.
    else throw new JsonDecodeError(path.fields.slice(0, i + 1).map((p) => p.jsonName).join("."), `expected an object (a ${f.message?.typeName ?? "message"}), got ${Array.isArray(next) ? "an array" : typeof next}`);
  });
}
