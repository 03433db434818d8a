/**
 * The inverse of transcoding.ts, for clients: a request message's ProtoJSON
 * as the HTTP request one of its method's `google.api.http` rules maps it
 * to, so the server's transcoder reads back the same message.
 *
 * - The rule is the one whose path variables the request sets most of
 *   (a tenant set picks `/{tenant}/...`), the first in table order on a tie;
 *   a rule whose variables are not all set cannot carry the request.
 * - Variable values are percent-encoded per segment; a multi-segment
 *   capture keeps its `/` (http.proto), and must fit the variable's pattern
 *   (`{name=loans/*}`): a rule whose pattern a value does not fit cannot
 *   carry the request. A segment equal to a literal of the service's
 *   routes, which would route the call to that literal's method (D6), has
 *   its first character escaped, which the server decodes back (D8). `.` and
 *   `..` cannot be sent at all: URL parsing drops them, escaped or not (the
 *   WHATWG URL standard reads `%2E` as `.`), and the call would reach
 *   another route.
 * - A `custom { kind: "*" }` rule, which the server takes on any method, is
 *   sent as POST when it has a body and as GET when it has none.
 * - `body: "*"` sends the whole message (path-bound fields too: they agree);
 *   `body: "<field>"` that field; the other fields go to the query by their
 *   JSON names, nested ones dotted, repeated ones repeated. A set field that
 *   neither the path, the body nor the rule's query can carry is an error
 *   rather than silently dropped.
 */
import { ScalarType, type DescField, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import type { HttpRuleSpec } from "../method-spec.js";
import { parsePathTemplate, type PathTemplate, type TemplateSegment, type TemplateVariable } from "./path-template.js";

/**
 * A request the rules cannot carry (a path field left empty, a field no
 * rule takes): the request's doing, not the rule table's, whose problems
 * are plain Errors.
 */
export class RequestShapeError extends Error {
  override readonly name = "RequestShapeError";
}

export interface HttpRequestParts {
  readonly rule: HttpRuleSpec;
  readonly method: string;
  /** Path and query, to append to the base URL. */
  readonly path: string;
  /** The JSON body, or undefined for none. */
  readonly body: JsonValue | undefined;
}

export interface RequestEncoder {
  encode(json: JsonObject): HttpRequestParts;
}

interface PreparedRule {
  readonly rule: HttpRuleSpec;
  /** The JSON name of the field `body` names ("" or "*" as the rule has them). */
  readonly body: string;
  readonly template: PathTemplate;
  /** JSON names from the request down to each variable's field, in variable order. */
  readonly variables: readonly (readonly string[])[];
  /** Each variable's zero value as path text, or undefined (a string: empty is no value). */
  readonly zeros: readonly (string | undefined)[];
  readonly query: ReadonlySet<string>;
}

/**
 * An encoder for one method's rules (derived POST twins left out: a client
 * uses the rule as written). `jsonNames` maps a local field path, dotted,
 * to its JSON name path.
 */
export function createRequestEncoder(
  methodName: string,
  rules: readonly HttpRuleSpec[],
  jsonNames: (field: readonly string[]) => readonly string[],
  /** The literal path segments of every rule of the service (`literalsOf`): values equal to one are escaped. */
  literals: ReadonlySet<string> = new Set(),
  /**
   * The path text of a field's zero value (`zeroTextOf`), undefined for a string: ProtoJSON leaves a
   * number, bool or enum at zero out, but a path bound to one still names it.
   */
  zeroOf: (field: readonly string[]) => string | undefined = () => undefined,
): RequestEncoder {
  const prepared: PreparedRule[] = rules
    .filter((r) => !r.derived)
    .map((rule) => {
      const template = parsePathTemplate(rule.path);
      const fieldOf = new Map(rule.pathParams.map((p) => [p.variable, p.field]));
      const fields = template.variables.map((v) => fieldOf.get(v.fieldPath.join(".")) ?? v.fieldPath);
      // `body` names a field by its local name; the request's JSON has its JSON name (a json_name option, an escaped name).
      const body = rule.body === "" || rule.body === "*" ? rule.body : (jsonNames([rule.body])[0] ?? rule.body);
      return { rule, body, template, variables: fields.map(jsonNames), zeros: fields.map(zeroOf), query: new Set(rule.query) };
    });
  if (prepared.length === 0) throw new Error(`${methodName} has no HTTP rule a client can call`);

  return {
    encode(json) {
      let best: { p: PreparedRule; values: string[] } | undefined;
      let misfit: string | undefined;
      for (const p of prepared) {
        const values: string[] = [];
        for (const [i, names] of p.variables.entries()) {
          const value = valueAt(json, names) ?? p.zeros[i];
          if (value === undefined || value === "") break;
          const text = String(value);
          const variable = p.template.variables[i]!;
          // A single-segment value sends its "/" as %2F: only the whole value can be a dot segment.
          if ((variable.multiSegment ? text.split("/") : [text]).some((x) => x === "." || x === "..")) {
            throw new RequestShapeError(`${methodName} cannot send ${names.join(".")} "${text}" in a URL path: URL parsing drops "." and ".." segments, escaped or not; call it over JSON-RPC or gRPC`);
          }
          if (!fits(p.template.segments.slice(variable.start, variable.end), text)) {
            misfit ??= `${names.join(".")} "${text}" does not match ${patternOf(p.template, variable)}`;
            break;
          }
          values.push(text);
        }
        if (values.length === p.variables.length && (best === undefined || values.length > best.values.length)) best = { p, values };
      }
      if (best === undefined) {
        if (misfit !== undefined) throw new RequestShapeError(`${methodName} cannot be sent over HTTP+JSON: ${misfit}, the pattern of its HTTP rule`);
        // Bindings that bind the same fields (one field under several paths) are named once.
        const needed = [...new Set(prepared.map((p) => p.variables.map((v) => v.join(".")).join(", ")))].join(" or ");
        throw new RequestShapeError(`${methodName} needs ${needed} set to be sent over HTTP+JSON`);
      }
      const { p, values } = best;
      const bound = new Set(p.variables.map((v) => v.join(".")));
      let body: JsonValue | undefined;
      const query = new URLSearchParams();
      if (p.rule.body === "*") body = json;
      else {
        for (const [key, value] of Object.entries(json)) {
          if (p.body !== "" && key === p.body) {
            body = value;
            continue;
          }
          addQuery(query, key, value, bound, p.query, methodName);
        }
        // A body field ProtoJSON left out (unset, or a scalar or list at its default) is sent as no
        // body, which the server reads as the field not set: `{}` made an unset message an empty one,
        // and a string, number or list field's request could not be sent at all.
      }
      const search = query.toString();
      return { rule: p.rule, method: methodOf(p.rule), path: pathOf(p.template, values, literals) + (search === "" ? "" : `?${search}`), body };
    },
  };
}

/**
 * The method a rule is called with. `custom { kind: "*" }` is served on any method, but "*" is no
 * method to send (D7): a rule with a body is called with POST, one without with GET.
 */
function methodOf(rule: HttpRuleSpec): string {
  if (rule.httpMethod !== "*") return rule.httpMethod;
  return rule.body === "" ? "GET" : "POST";
}

function valueAt(json: JsonObject, names: readonly string[]): JsonValue | undefined {
  let node: JsonValue | undefined = json;
  for (const name of names) {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return undefined;
    node = node[name];
  }
  return node;
}

/**
 * Whether `value`, split at `/`, fits a variable's segments: its literals, one segment per `*`, one
 * or more for `**`. http.proto lets `**` take none, but a path that ends at the pattern's literals
 * may be another rule's route (`{rest=a/**}` with `a` is `/r/a`, which a literal route `/r/a` wins):
 * such a value is not sent by this rule.
 */
function fits(pattern: readonly TemplateSegment[], value: string): boolean {
  // A plain `{field}` takes any value: a `/` in it is sent as %2F.
  if (pattern.length === 1 && pattern[0]!.kind === "wildcard") return true;
  const parts = value.split("/");
  const match = (p: number, v: number): boolean => {
    if (p === pattern.length) return v === parts.length;
    const segment = pattern[p]!;
    if (segment.kind === "deep_wildcard") {
      for (let end = parts.length; end > v; end--) if (parts.slice(v, end).every((x) => x !== "") && match(p + 1, end)) return true;
      return false;
    }
    if (v === parts.length || parts[v] === "") return false;
    return (segment.kind === "wildcard" || parts[v] === segment.value) && match(p + 1, v + 1);
  };
  return match(0, 0);
}

/** A variable's pattern as the rule writes it (`loans/*`). */
function patternOf(template: PathTemplate, variable: TemplateVariable): string {
  return template.segments
    .slice(variable.start, variable.end)
    .map((s) => (s.kind === "literal" ? s.value : s.kind === "wildcard" ? "*" : "**"))
    .join("/");
}

/** Every literal segment of `rules`' paths: what a variable's value must not be sent as (createRequestEncoder). */
export function literalsOf(rules: readonly HttpRuleSpec[]): Set<string> {
  const literals = new Set<string>();
  for (const rule of rules) for (const segment of parsePathTemplate(rule.path).segments) if (segment.kind === "literal") literals.add(segment.value);
  return literals;
}

/** One segment of a value, percent-encoded; a literal of the service's routes escaped further, so that it is read as the value. */
function encodeSegment(value: string, literals: ReadonlySet<string>): string {
  const encoded = encodeURIComponent(value);
  if (!literals.has(encoded)) return encoded;
  // Its first character is ASCII (encodeURIComponent left it): %XX is that byte.
  return `%${encoded.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}${encoded.slice(1)}`;
}

function pathOf(template: PathTemplate, values: readonly string[], literals: ReadonlySet<string>): string {
  const parts: string[] = [];
  let i = 0;
  while (i < template.segments.length) {
    const v = template.variables.findIndex((x) => x.start === i);
    if (v >= 0) {
      const variable = template.variables[v]!;
      const value = values[v]!;
      if (!variable.multiSegment) parts.push(encodeSegment(value, literals));
      else {
        // The pattern's own literals go as they are (the value fits it); the parts a wildcard takes are escaped as needed.
        const pattern = template.segments.slice(variable.start, variable.end);
        const deep = pattern.findIndex((s) => s.kind === "deep_wildcard");
        value.split("/").forEach((x, j) => parts.push(pattern[deep >= 0 && j >= deep ? deep : j]?.kind === "literal" ? encodeURIComponent(x) : encodeSegment(x, literals)));
      }
      i = variable.end;
      continue;
    }
    const segment = template.segments[i]!;
    if (segment.kind !== "literal") throw new Error(`${template.text}: a wildcard outside a variable cannot be filled by a client`);
    parts.push(segment.value);
    i++;
  }
  return "/" + parts.join("/") + (template.verb === undefined ? "" : `:${template.verb}`);
}

function addQuery(query: URLSearchParams, name: string, value: JsonValue, bound: ReadonlySet<string>, allowed: ReadonlySet<string>, method: string): void {
  if (bound.has(name)) return;
  if (value !== null && typeof value === "object" && !Array.isArray(value) && !allowed.has(name)) {
    for (const [key, inner] of Object.entries(value)) addQuery(query, `${name}.${key}`, inner, bound, allowed, method);
    return;
  }
  if (!allowed.has(name)) throw new RequestShapeError(`${method} cannot send ${name} over HTTP+JSON: its rule takes it neither in the path, the body nor the query`);
  for (const item of Array.isArray(value) ? value : [value]) {
    if (item !== null && typeof item === "object") throw new RequestShapeError(`${method} cannot send ${name} in a query: it holds messages`);
    query.append(name, String(item));
  }
}

/** The path text of the zero value of the field at local path `field` of `desc`: "0", "false", an enum's zero name; undefined for a string or bytes. */
export function zeroTextOf(desc: DescMessage, field: readonly string[]): string | undefined {
  let message: DescMessage | undefined = desc;
  let leaf: DescField | undefined;
  for (const local of field) {
    leaf = message?.fields.find((x) => x.localName === local);
    message = leaf?.message;
  }
  if (leaf === undefined || leaf.fieldKind === "message" || leaf.fieldKind === "list" || leaf.fieldKind === "map") return undefined;
  if (leaf.fieldKind === "enum") return leaf.enum.values.find((v) => v.number === 0)?.name ?? "0";
  if (leaf.scalar === ScalarType.STRING || leaf.scalar === ScalarType.BYTES) return undefined;
  return leaf.scalar === ScalarType.BOOL ? "false" : "0";
}

/** The JSON names along a local field path of `desc` (`["task_id"]` style paths from the rule table), for `createRequestEncoder`. */
export function jsonNamesOf(desc: DescMessage, field: readonly string[]): string[] {
  const names: string[] = [];
  let message: DescMessage | undefined = desc;
  for (const local of field) {
    const f: DescField | undefined = message?.fields.find((x) => x.localName === local);
    if (f === undefined) throw new Error(`${desc.typeName} has no field ${field.join(".")}: the HTTP rule table does not match the schema`);
    names.push(f.jsonName);
    message = f.message;
  }
  return names;
}
