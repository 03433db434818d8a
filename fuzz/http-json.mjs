// HTTP+JSON requests for the campaign: a valid call of each of the 11
// methods on its google.api.http route (with or without a tenant), then
// mutated: its params (as for JSON-RPC), the ids and tenant in its path
// (odd strings, percent-encodings good and broken), its query string (known
// fields with bad values, repeated, unknown), its HTTP method, its content
// type and body text, its A2A-Version; and the oracle for an answer.
import fc from "fast-check";
import { applyMutations, damage, expandDeep, mutation, oddString, stringify, textDamage } from "./mutate.mjs";
import { learn, resolvePool, validCall } from "./values.mjs";
import { printable } from "./jsonrpc.mjs";
import { callTo03 } from "./v03.mjs";

// FUZZ_COMPAT=1: the server takes 0.3 callers too, and two requests in three go to 0.3's routes
// (`<base>/v1/...`) with 0.3's bodies (v03.mjs), without A2A-Version.
const compat = process.env.FUZZ_COMPAT === "1";

export const name = "http-json";

/** Percent-encoding of any string (a lone surrogate becomes U+FFFD: it has no UTF-8). */
const enc = (s) => encodeURIComponent(String(s).toWellFormed());

/** Each method's route: verb, path (":name" a path variable bound to a field), and whether the body carries the request. */
const routes = {
  SendMessage: ["POST", "/message:send", true],
  SendStreamingMessage: ["POST", "/message:stream", true],
  GetTask: ["GET", "/tasks/:id", false],
  ListTasks: ["GET", "/tasks", false],
  CancelTask: ["POST", "/tasks/:id\u0000:cancel", true],
  SubscribeToTask: ["GET", "/tasks/:id\u0000:subscribe", false],
  CreateTaskPushNotificationConfig: ["POST", "/tasks/:taskId/pushNotificationConfigs", true],
  GetTaskPushNotificationConfig: ["GET", "/tasks/:taskId/pushNotificationConfigs/:id", false],
  ListTaskPushNotificationConfigs: ["GET", "/tasks/:taskId/pushNotificationConfigs", false],
  GetExtendedAgentCard: ["GET", "/extendedAgentCard", false],
  DeleteTaskPushNotificationConfig: ["DELETE", "/tasks/:taskId/pushNotificationConfigs/:id", false],
};

const rawSegment = fc.constantFrom("%", "%zz", "%2F", "%2f", "%00", "%C0%AF", "%FF", "%ED%A0%80", "%F0%9F%98%80", "..", ".", "", "a%20b", "+", "a;b", "*", "%3A", ":", "tasks", "extendedAgentCard", "%25");
const segment = fc.oneof(
  { weight: 10, arbitrary: fc.constant(undefined) }, // the value from the params
  { weight: 2, arbitrary: oddString.map((s) => ({ encoded: enc(s) })) },
  { weight: 2, arbitrary: rawSegment.map((raw) => ({ raw })) },
);
const queryKey = fc.constantFrom("historyLength", "history_length", "pageSize", "page_size", "status", "statusTimestampAfter", "includeArtifacts", "contextId", "pageToken", "tenant", "id", "taskId", "A2A-Version", "unknown", "status.state", "message.messageId", "");
const queryValue = fc.oneof(fc.constantFrom("-1", "0", "1", "2147483648", "99999999999999999999", "1e3", "1.5", "abc", "true", "maybe", "TASK_STATE_WORKING", "TASK_STATE_NOPE", "99", "2024-13-45T25:61:61Z", "2024-01-01T00:00:00Z", "", "%", "%zz", "a,b", "+"), oddString.map((s) => enc(s)));

export const arbitrary = fc.record({
  call: validCall,
  mutations: fc.oneof({ weight: 1, arbitrary: fc.constant([]) }, { weight: 3, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) }),
  tenant: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: fc.constantFrom("t1", "acme") }, { weight: 1, arbitrary: segment.filter((s) => s !== undefined) }),
  segments: fc.array(segment, { minLength: 2, maxLength: 2 }),
  query: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fc.tuple(queryKey, queryValue), { minLength: 1, maxLength: 4 }) }),
  rawQuery: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("&&", "=", "a=1&a=2", "%", "pageSize=1&pageSize=2", "?", "#frag", "historyLength") }),
  verb: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD") }),
  pathNoise: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("double-slash", "trailing-slash", "upper", "bad-verb", "no-base", "dot-segment") }),
  text: textDamage,
  contentType: fc.oneof({ weight: 12, arbitrary: fc.constant("application/json") }, { weight: 1, arbitrary: fc.constantFrom("application/a2a+json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "", "application/grpc", "application/json; charset=utf-16") }),
  version: fc.oneof({ weight: 12, arbitrary: fc.constant("1.0") }, { weight: 1, arbitrary: fc.constantFrom(undefined, "0.3", "1.1", "garbage", "") }),
  auth: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("Bearer demo", "Bearer wrong", "") }),
  dialect: compat ? fc.constantFrom("1.0", "0.3", "0.3") : fc.constant("1.0"),
});

function queryText(value, prefix = "") {
  // A GET's request fields go in the query, nested ones by dotted name.
  const out = [];
  if (value === null || typeof value !== "object" || Array.isArray(value)) return out;
  for (const [k, v] of Object.entries(value)) {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) out.push(...queryText(v, `${prefix}${k}.`));
    else if (Array.isArray(v)) for (const item of v) out.push(`${enc(prefix + k)}=${enc(typeof item === "string" ? item : JSON.stringify(item))}`);
    else out.push(`${enc(prefix + k)}=${enc(typeof v === "string" ? v : JSON.stringify(v))}`);
  }
  return out;
}

export function requestOf(v, pool, basePath) {
  const v03 = v.dialect === "0.3";
  const [verb, route, hasBody] = routes[v.call.method];
  // 0.3's routes are 1.0's below /v1, but for its card; the ids in the path come from the same call.
  const template = v03 && v.call.method === "GetExtendedAgentCard" ? "/card" : route;
  const params = expandDeep(resolvePool(applyMutations(v.call.params, v.mutations), pool));
  const rest = params !== null && typeof params === "object" && !Array.isArray(params) ? { ...params } : {};
  const body03 = v03 && hasBody ? expandDeep(resolvePool(applyMutations(callTo03(v.call).params, v.mutations), pool)) : undefined;
  let k = 0;
  let path = template.replace(/:(id|taskId)/g, (_, field) => {
    const s = v.segments[k++];
    const value = rest[field];
    delete rest[field];
    if (s?.raw !== undefined) return s.raw;
    if (s?.encoded !== undefined) return s.encoded;
    return enc(typeof value === "string" ? value : JSON.stringify(value) ?? "");
  });
  path = path.replace("\u0000", "");
  if (v.tenant !== undefined) path = `/${typeof v.tenant === "string" ? v.tenant : (v.tenant.raw ?? v.tenant.encoded)}${path}`;
  switch (v.pathNoise) {
    case "double-slash":
      path = path.replace("/", "//");
      break;
    case "trailing-slash":
      path += "/";
      break;
    case "upper":
      path = path.toUpperCase();
      break;
    case "bad-verb":
      path = path.includes(":") ? path.replace(/:(\w+)$/, "::$1") : `${path}:nope`;
      break;
    case "dot-segment":
      path = `/tasks/..${path}`;
      break;
  }
  let full = v.pathNoise === "no-base" ? path : `${basePath}${v03 ? "/v1" : ""}${path}`;
  const query = hasBody ? [] : queryText(rest);
  for (const [key, value] of v.query) query.push(`${enc(key)}=${value}`);
  if (v.rawQuery !== undefined) query.push(v.rawQuery);
  if (query.length > 0) full += `?${query.join("&")}`;
  const headers = {};
  if (v.contentType !== "") headers["content-type"] = v.contentType;
  // A 0.3 caller sends no A2A-Version (or, now and then, the one it mutated).
  const version = v03 && v.version === "1.0" ? undefined : v.version;
  if (version !== undefined) headers["a2a-version"] = version;
  if (v.auth !== undefined) headers.authorization = v.auth;
  const method = v.verb ?? verb;
  const body = hasBody || method === "POST" || method === "PUT" || method === "PATCH" ? damage(stringify(hasBody ? (body03 ?? params) : rest), v.text) : undefined;
  return { method, path: full, headers, body: body ?? Buffer.alloc(0) };
}

/** A 5xx, or an SSE error event with an INTERNAL status; learns ids from good answers. */
export function judge(answer, pool) {
  if (answer.status >= 500) return `HTTP ${answer.status}`;
  const ct = String(answer.headers["content-type"] ?? "");
  if (ct.startsWith("text/event-stream")) {
    const lines = answer.text.split("\n");
    for (const [i, line] of lines.entries()) {
      if (!line.startsWith("data:")) continue;
      let json;
      try {
        json = JSON.parse(line.slice(5));
      } catch {
        if (answer.cut && i >= lines.length - 2) continue;
        return `an SSE event that is not JSON: ${line.slice(0, 80)}`;
      }
      const status = json?.error?.status;
      if (status === "INTERNAL" || json?.error?.code >= 500) return `SSE error event ${status}`;
      learn(pool, json.task ?? json);
    }
    return undefined;
  }
  if (answer.status === 200 && ct.includes("json")) {
    try {
      learn(pool, JSON.parse(answer.text));
    } catch {
      return `a 200 answer that is not JSON: ${answer.text.slice(0, 80)}`;
    }
  }
  return undefined;
}

export function open(server, ctx) {
  return {
    build: (value) => requestOf(value, ctx.pool, server.httpJsonPath),
    send: (request) => ctx.http.send(request),
    judge: (answer) => judge(answer, ctx.pool),
    kind: (answer) => `HTTP ${answer.status}${answer.cut ? " (stream cut after 500 ms)" : ""}`,
    printable,
    printableAnswer: (answer) => ({ status: answer.status, text: answer.text.slice(0, 2000) }),
    close() {},
  };
}
