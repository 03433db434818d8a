// JSON-RPC 2.0 requests for the campaign: valid calls of the 11 methods,
// mutated in their params and in their envelope (ids of every type, a bad
// `jsonrpc`, a bad or unknown method, params by position or not
// structured), alone, as notifications or in batches, with damaged text and
// odd headers; and the oracle for an answer.
import fc from "fast-check";
import { applyMutations, damage, expandDeep, stringify, mutation, oddNumber, oddString, oddValue, textDamage } from "./mutate.mjs";
import { learn, resolvePool, validCall } from "./values.mjs";
import { callTo03 } from "./v03.mjs";

// FUZZ_COMPAT=1: the server takes 0.3 callers too, and two requests in three are 0.3's (v03.mjs).
const compat = process.env.FUZZ_COMPAT === "1";

const id = fc.oneof(
  { weight: 6, arbitrary: fc.integer() },
  { weight: 3, arbitrary: fc.string({ maxLength: 10 }) },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: oddNumber },
  { weight: 1, arbitrary: oddString },
  { weight: 1, arbitrary: fc.constantFrom(true, false, [], {}, [1], { a: 1 }) },
  { weight: 1, arbitrary: fc.constant(undefined) }, // a notification
);

const element = fc.record({
  call: validCall,
  mutations: fc.oneof({ weight: 1, arbitrary: fc.constant([]) }, { weight: 4, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) }),
  id,
  jsonrpc: fc.oneof({ weight: 12, arbitrary: fc.constant("2.0") }, { weight: 1, arbitrary: fc.constantFrom("1.0", "2", 2, 2.0, null, undefined, "2.0 ", "") }),
  method: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.oneof(oddString, fc.constantFrom("sendMessage", "message/send", "SendMessage ", "GetTask\u0000", "tasks/get", 1, null)) }),
  params: fc.oneof({ weight: 12, arbitrary: fc.constant("object") }, { weight: 1, arbitrary: fc.constantFrom("array", "missing", "string", "null", "number") }),
  envelope: fc.oneof({ weight: 10, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 2 }) }),
});

export const arbitrary = fc.record({
  body: fc.oneof(
    { weight: 10, arbitrary: element.map((e) => ({ shape: "single", elements: [e] })) },
    { weight: 1, arbitrary: fc.array(element, { minLength: 1, maxLength: 4 }).map((elements) => ({ shape: "batch", elements })) },
    { weight: 1, arbitrary: fc.constant({ shape: "empty-batch" }) },
    { weight: 1, arbitrary: oddValue.map((notAnObject) => ({ shape: "not-an-object", notAnObject })) },
  ),
  text: textDamage,
  contentType: fc.oneof({ weight: 12, arbitrary: fc.constant("application/json") }, { weight: 1, arbitrary: fc.constantFrom("application/a2a+json", "application/json; charset=utf-8", "application/json; charset=latin1", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/vnd.x+json", "*/*") }),
  version: fc.oneof({ weight: 12, arbitrary: fc.constant("1.0") }, { weight: 1, arbitrary: fc.constantFrom(undefined, "0.3", "1.1", "2.0", "1", "garbage", "1.0.1", "") }),
  auth: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("Bearer demo", "Bearer wrong", "Basic x", "") }),
  extensions: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom("https://example.invalid/ext/v1", ",,", "a, b ,c", "\u00e9") }),
  dialect: compat ? fc.constantFrom("1.0", "0.3", "0.3") : fc.constant("1.0"),
});

function envelopeOf(e, pool, dialect) {
  const call = dialect === "0.3" ? callTo03(e.call) : e.call;
  const params = expandDeep(resolvePool(applyMutations(call.params, e.mutations), pool));
  const out = { jsonrpc: e.jsonrpc, method: e.method ?? call.method };
  if (e.id !== undefined) out.id = e.id;
  switch (e.params) {
    case "object":
      out.params = params;
      break;
    case "array":
      out.params = [params];
      break;
    case "string":
      out.params = JSON.stringify(params);
      break;
    case "null":
      out.params = null;
      break;
    case "number":
      out.params = 7;
      break;
  }
  if (out.jsonrpc === undefined) delete out.jsonrpc;
  return e.envelope.length === 0 ? out : expandDeep(applyMutations(out, e.envelope));
}

/** The HTTP request a generated value stands for. */
export function requestOf(v, pool) {
  let body;
  switch (v.body.shape) {
    case "single":
      body = envelopeOf(v.body.elements[0], pool, v.dialect);
      break;
    case "batch":
      body = v.body.elements.map((e) => envelopeOf(e, pool, v.dialect));
      break;
    case "empty-batch":
      body = [];
      break;
    default:
      body = expandDeep(v.body.notAnObject);
  }
  const headers = {};
  if (v.contentType !== "") headers["content-type"] = v.contentType;
  // A 0.3 caller sends no A2A-Version (or, now and then, the one it mutated).
  const version = v.dialect === "0.3" ? (v.version === "1.0" ? undefined : v.version) : v.version;
  if (version !== undefined) headers["a2a-version"] = version;
  if (v.auth !== undefined) headers.authorization = v.auth;
  if (v.extensions !== undefined) headers["a2a-extensions"] = v.extensions;
  return { method: "POST", path: "/a2a/jsonrpc", headers, body: damage(stringify(body), v.text) };
}

/**
 * What is wrong with an answer, or undefined: an Internal error (-32603),
 * an InvalidAgentResponse (-32006) or an HTTP 5xx, in the body, a batch's
 * elements or an SSE stream's events. Learns ids from good answers.
 */
export function judge(answer, pool) {
  if (answer.status >= 500) return `HTTP ${answer.status}`;
  const ct = answer.headers["content-type"] ?? "";
  const texts = ct.startsWith("text/event-stream")
    ? answer.text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5))
    : answer.text === ""
      ? []
      : [answer.text];
  for (const [i, t] of texts.entries()) {
    let json;
    try {
      json = JSON.parse(t);
    } catch {
      // The last event of a stream cut by the client may be cut short.
      if (answer.cut && i === texts.length - 1) continue;
      return `an answer that is not JSON: ${t.slice(0, 80)}`;
    }
    for (const r of Array.isArray(json) ? json : [json]) {
      const code = r?.error?.code;
      if (code === -32603 || code === -32006) return `JSON-RPC error ${code}`;
      if (r?.result !== undefined && r.result !== null) learn(pool, r.result.task ?? r.result.statusUpdate ?? r.result);
    }
  }
  return undefined;
}

export const name = "jsonrpc";

/** Sends generated values over `ctx.http` (undici). */
export function open(server, ctx) {
  return {
    build: (value) => requestOf(value, ctx.pool),
    send: (request) => ctx.http.send(request),
    judge: (answer) => judge(answer, ctx.pool),
    kind: (answer) => `HTTP ${answer.status}${answer.cut ? " (stream cut after 500 ms)" : ""}`,
    printable,
    printableAnswer: (answer) => ({ status: answer.status, text: answer.text.slice(0, 2000) }),
    close() {},
  };
}

export function printable(request) {
  const text = request.body.toString("utf8");
  return { ...request, body: text.length > 4000 ? `${text.slice(0, 4000)}... (${text.length} characters)` : text };
}
