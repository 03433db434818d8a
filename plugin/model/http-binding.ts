import { ScalarType, getOption, hasOption, type DescField, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import { http } from "../../runtime/gen/google/api/annotations_pb.js";
import type { HttpRule } from "../../runtime/gen/google/api/http_pb.js";
import { PathTemplateError, parsePathTemplate, type PathTemplate, type TemplateVariable } from "../../runtime/core/http/path-template.js";
import type { Diagnostics } from "./diagnostics.js";

/** A path variable resolved to the request field it sets. */
export interface PathParamModel {
  readonly variable: TemplateVariable;
  /** Fields from the request message down to the bound one. */
  readonly fields: readonly DescField[];
}

/** One validated `google.api.http` rule of a method. */
export interface HttpBindingModel {
  readonly method: DescMethod;
  /** `GET`, `POST`, ... or the kind of a `custom` pattern as written. */
  readonly httpMethod: string;
  readonly template: PathTemplate;
  readonly pathParams: readonly PathParamModel[];
  /** `*`, a top-level request field, or undefined when there is no body. */
  readonly body: "*" | DescField | undefined;
  /** The response field sent as the body; undefined for the whole message. */
  readonly responseBody: DescField | undefined;
  /** True for an entry of `additional_bindings`. */
  readonly additional: boolean;
  /** Position among the method's rules: 0 is the default binding. */
  readonly index: number;
  /** How the rule is quoted in messages, e.g. `get "/tasks/{id}"`. */
  readonly display: string;
  /**
   * Request fields a query parameter may set, each as the field path from the
   * request message: every scalar, enum or well-known-type leaf that neither
   * the path nor the body binds. Empty when the body is `*`.
   */
  readonly queryFields: readonly (readonly DescField[])[];
  /** True for a rule the model adds rather than the proto (the POST twin of a streaming GET, D1). */
  readonly derived: boolean;
}

/**
 * Reads and validates every `google.api.http` rule of a method, the
 * `additional_bindings` included. Invalid rules are reported to `diag` and
 * left out of the result.
 */
export function createHttpBindings(method: DescMethod, diag: Diagnostics): HttpBindingModel[] {
  if (!hasOption(method, http)) return [];
  const top = getOption(method, http);
  const rules: { rule: HttpRule; additional: boolean }[] = [{ rule: top, additional: false }];
  for (const extra of top.additionalBindings) {
    rules.push({ rule: extra, additional: true });
    if (extra.additionalBindings.length > 0) {
      diag.method(method, "additional_bindings cannot be nested", describeRule(extra));
    }
  }
  const bindings: HttpBindingModel[] = [];
  rules.forEach(({ rule, additional }, index) => {
    const binding = createHttpBinding(method, rule, additional, index, diag);
    if (binding !== undefined) bindings.push(binding);
  });
  return bindings;
}

/** The HTTP method and path template of a rule (custom verbs upper-cased), or undefined for a rule with no pattern. */
export function patternOf(rule: HttpRule): { httpMethod: string; path: string } | undefined {
  const p = rule.pattern;
  switch (p.case) {
    case "get":
    case "put":
    case "post":
    case "delete":
    case "patch":
      return { httpMethod: p.case.toUpperCase(), path: p.value };
    case "custom":
      // HTTP method names are tokens; "get" and "GET" mean the same rule to a router.
      return { httpMethod: p.value.kind === "*" ? "*" : p.value.kind.toUpperCase(), path: p.value.path };
    default:
      return undefined;
  }
}

/**
 * D7: what a custom kind cannot serve. A HEAD answer has no content (RFC 9110 9.3.2), so a HEAD rule
 * can only carry an RPC whose answer is nothing: unary, returning a message without fields
 * (google.protobuf.Empty), which the client reads from the empty answer. node:http hands a CONNECT
 * request to no request listener (it opens a tunnel: the server's `connect` event). TRACE and TRACK
 * are forbidden methods of the Fetch standard: fetch, which the generated client sends with, throws
 * before sending one (and RFC 9110 9.3.8 forbids a TRACE request content: it only echoes the request).
 */
function kindProblem(method: DescMethod, httpMethod: string): string | undefined {
  if (httpMethod === "CONNECT") return "CONNECT asks for a tunnel, which node:http never hands to a request handler; use another method";
  if (httpMethod === "TRACE" || httpMethod === "TRACK") {
    return `${httpMethod} is a forbidden method of the Fetch standard: fetch, which the generated client and browsers send with, refuses to send it, and a TRACE request may carry no content (RFC 9110 9.3.8); use another method`;
  }
  if (httpMethod !== "HEAD") return undefined;
  if (method.methodKind === "server_streaming") return "a HEAD answer has no body, so no message of the stream could reach the caller; use GET";
  if (method.output.fields.length === 0) return undefined;
  return `a HEAD answer has no body, so the RPC's response ${method.output.typeName} could never reach the caller; return google.protobuf.Empty or use GET`;
}

/** `.` and `..`, in any spelling URL parsing reads as one (`%2E` and `%2e` are a `.` to the WHATWG URL standard). */
const dotSegment = /^(?:\.|%2e){1,2}$/i;

function describeRule(rule: HttpRule): string {
  const p = rule.pattern;
  if (p.case === "custom") return `custom ${JSON.stringify(p.value.kind)} ${JSON.stringify(p.value.path)}`;
  if (p.case === undefined) return "google.api.http rule";
  return `${p.case} ${JSON.stringify(p.value)}`;
}

function createHttpBinding(
  method: DescMethod,
  rule: HttpRule,
  additional: boolean,
  index: number,
  diag: Diagnostics,
): HttpBindingModel | undefined {
  const display = describeRule(rule);
  const report = (problem: string) => diag.method(method, problem, display);
  const pattern = patternOf(rule);
  if (pattern === undefined) {
    report("the rule has no pattern (set one of get, put, post, delete, patch or custom)");
    return undefined;
  }
  if (pattern.httpMethod === "") {
    report("a custom pattern needs a kind (the HTTP method)");
    return undefined;
  }
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Z]+$/.test(pattern.httpMethod)) {
    report(`custom kind ${JSON.stringify(pattern.httpMethod)} is not an HTTP method name (a token such as PURGE, or "*")`);
    return undefined;
  }
  const unservable = kindProblem(method, pattern.httpMethod);
  if (unservable !== undefined) {
    report(unservable);
    return undefined;
  }
  let template: PathTemplate;
  try {
    template = parsePathTemplate(pattern.path);
  } catch (err) {
    if (!(err instanceof PathTemplateError)) throw err;
    report(`${err.reason} at offset ${err.offset}`);
    return undefined;
  }
  let valid = true;
  const dots = template.segments.find((s) => s.kind === "literal" && dotSegment.test(s.value));
  if (dots !== undefined && dots.kind === "literal") {
    // D8: URL parsing removes dot segments (`%2E` too, WHATWG URL) before a request is sent.
    report(`the literal segment ${JSON.stringify(dots.value)} is a dot segment, which URL parsing removes before a request is sent, so no client could reach the rule; use another literal`);
    valid = false;
  }
  const pathParams: PathParamModel[] = [];
  for (const variable of template.variables) {
    const resolved = resolvePathField(method.input, variable.fieldPath);
    const problem = typeof resolved === "string" ? resolved : patternProblem(template, variable, resolved);
    if (problem !== undefined) {
      report(problem);
      valid = false;
    } else {
      pathParams.push({ variable, fields: resolved as DescField[] });
    }
  }
  const body = resolveBody(method, rule.body, pattern.httpMethod, report);
  const responseBody = resolveTopLevel(method.output, rule.responseBody, "response_body", report);
  if (method.methodKind === "server_streaming" && responseBody !== null && responseBody !== undefined) {
    // D14: a stream's messages are sent whole, one SSE event each; the endpoint never picked a field of them.
    report(`response_body ${JSON.stringify(responseBody.name)} on a server-streaming RPC: each message of the stream is sent whole as an SSE event; remove response_body`);
    valid = false;
  }
  if (body !== null && body !== undefined && body !== "*") {
    // Binding a field inside the body message is the usual update pattern
    // (`patch "/v1/{shelf.name}" body: "shelf"`); binding the body field itself is not.
    const clash = pathParams.find((p) => p.fields.length === 1 && p.fields[0] === body);
    if (clash !== undefined) {
      report(`body ${JSON.stringify(body.name)} is also set by path variable "${clash.variable.fieldPath.join(".")}"; a field comes from the path or the body, not both`);
      valid = false;
    }
  }
  if (body === null || responseBody === null || !valid) return undefined;
  return {
    method,
    httpMethod: pattern.httpMethod,
    template,
    pathParams,
    body,
    responseBody,
    additional,
    index,
    display,
    queryFields: body === "*" ? [] : queryFields(method.input, pathParams, body),
    derived: false,
  };
}

/**
 * The leaves of the request a query parameter may set (HttpRule: every field
 * not bound by the path or the body, nested messages by dotted name; maps
 * and repeated messages cannot travel in a query). Well-known types with a
 * JSON string form (Timestamp, Duration, FieldMask, wrappers) are leaves.
 */
function queryFields(input: DescMessage, pathParams: readonly PathParamModel[], body: DescField | undefined): DescField[][] {
  const bound = new Set(pathParams.map((p) => p.fields.map((f) => f.name).join(".")));
  const out: DescField[][] = [];
  const walk = (message: DescMessage, prefix: DescField[], seen: ReadonlySet<string>) => {
    for (const field of message.fields) {
      const path = [...prefix, field];
      if (field === body || bound.has(path.map((f) => f.name).join("."))) continue;
      if (field.fieldKind === "map") continue;
      if (field.fieldKind === "list" && field.listKind === "message") continue;
      if (field.fieldKind === "message" && !field.message.typeName.startsWith("google.protobuf.")) {
        // A recursive type would expand forever; each type is entered once per path.
        if (!seen.has(field.message.typeName)) walk(field.message, path, new Set([...seen, field.message.typeName]));
        continue;
      }
      if (field.fieldKind === "message" && ["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue", "google.protobuf.Any"].includes(field.message.typeName)) continue;
      out.push(path);
    }
  };
  walk(input, [], new Set([input.typeName]));
  return out;
}

/**
 * D7: a variable whose pattern is more than one `*` or `**` (`shelves/` then `*`, or two `*`)
 * captures a value with literals or slashes, which only a string field can hold: bound to a number,
 * bool, enum or bytes field, no request could reach the RPC (its value never decodes), so it is
 * refused.
 */
function patternProblem(template: PathTemplate, variable: TemplateVariable, fields: readonly DescField[]): string | undefined {
  const field = fields[fields.length - 1] as DescField;
  if (field.fieldKind !== "scalar" && field.fieldKind !== "enum") return undefined;
  if (field.fieldKind === "scalar" && field.scalar === ScalarType.STRING) return undefined;
  const covered = template.segments.slice(variable.start, variable.end);
  if (covered.length === 1 && covered[0]?.kind !== "literal") return undefined;
  const pattern = covered.map((s) => (s.kind === "literal" ? s.value : s.kind === "wildcard" ? "*" : "**")).join("/");
  const name = variable.fieldPath.join(".");
  const type = field.fieldKind === "enum" ? `enum ${field.enum.typeName}` : ScalarType[field.scalar].toLowerCase();
  return `variable "${name}" binds ${type} field "${name}" with the pattern "${pattern}", which only a string field can hold (a value of several segments or with literals); bind it as {${name}} or make the field a string`;
}

/** Resolves a dotted field path for a path variable; returns a problem text when it cannot. */
function resolvePathField(input: DescMessage, path: readonly string[]): DescField[] | string {
  const fields: DescField[] = [];
  let message: DescMessage = input;
  for (let i = 0; i < path.length; i++) {
    const name = path[i] as string;
    const shown = path.slice(0, i + 1).join(".");
    const field = message.fields.find((f) => f.name === name);
    if (field === undefined) {
      return `variable "${path.join(".")}" names no field of ${input.typeName}` +
        (i > 0 ? ` ("${name}" is not a field of ${message.typeName})` : "");
    }
    fields.push(field);
    const last = i === path.length - 1;
    if (field.fieldKind === "list" || field.fieldKind === "map") {
      return `variable "${path.join(".")}" binds ${field.fieldKind === "list" ? "repeated" : "map"} field "${shown}"; path variables bind singular fields only`;
    }
    if (!last) {
      if (field.fieldKind !== "message") {
        return `variable "${path.join(".")}": "${shown}" is not a message field, so it has no field "${path[i + 1]}"`;
      }
      message = field.message;
    } else if (field.fieldKind === "message") {
      return `variable "${path.join(".")}" binds message field "${shown}" (${field.message.typeName}); path variables bind scalar or enum fields`;
    }
  }
  return fields;
}

/** Returns the body mapping, or null after reporting a problem. */
function resolveBody(
  method: DescMethod,
  body: string,
  httpMethod: string,
  report: (problem: string) => void,
): "*" | DescField | undefined | null {
  if (body === "") return undefined;
  if (httpMethod === "GET") {
    report(`a GET rule cannot have a body (body: ${JSON.stringify(body)}); remove it or use another method`);
    return null;
  }
  if (body === "*") return "*";
  return resolveTopLevel(method.input, body, "body", report);
}

/** Resolves a top-level field name; undefined for "", null after reporting a problem. */
function resolveTopLevel(
  message: DescMessage,
  name: string,
  what: "body" | "response_body",
  report: (problem: string) => void,
): DescField | undefined | null {
  if (name === "") return undefined;
  const field = message.fields.find((f) => f.name === name);
  if (field === undefined) {
    const names = message.fields.map((f) => f.name).join(", ");
    report(`${what} ${JSON.stringify(name)} names no field of ${message.typeName} (fields: ${names})`);
    return null;
  }
  return field;
}
