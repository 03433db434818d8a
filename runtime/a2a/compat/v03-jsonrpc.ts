/**
 * The JSON-RPC endpoint for A2A 0.3 callers as well (D110): a 0.3 call
 * (no `A2A-Version`, or 0.3) has its method and params translated to the 1.0
 * call, the same 1.0 endpoint runs it (handler, task runtime, policy,
 * errors), and its answer or stream is translated back. A 1.0 call, or any
 * other version, passes through untouched.
 */
import type { JsonValue } from "@bufbuild/protobuf";
import { BodyRefusedError, decodeUtf8, isJsonMediaType, type CoreResponse, type Endpoint } from "../../core/transport.js";
import { noV03Counterpart, v03MethodOf, v1To03Names, type V03Method } from "./v03-methods.js";
import { bytesBody, failedBody, isV03Request, jsonBytes, jsonResponse, mapEvents, translatedRequest, translationFailure } from "./v03-request.js";
import { obj } from "./v03-shapes.js";

export interface V03JsonRpcOptions {
  /** The 1.0 endpoint's body limit and timeout, applied while the compat layer reads the body. */
  readonly bodyLimit: number;
  readonly bodyTimeoutMs: number;
}

const methodNotFound = -32601;
const invalidRequest = -32600;
const invalidParams = -32602;
/** What a notification gets: no answer (JSON-RPC 2.0 §4.1), as from the 1.0 endpoint. */
const notAnswered: CoreResponse = { kind: "empty", status: 204, headers: {} };

export function createV03JsonRpcEndpoint(inner: Endpoint, options: V03JsonRpcOptions): Endpoint {
  return {
    report: (err, url) => inner.report?.(err, url),
    async handle(req) {
      if (!isV03Request(req) || req.method !== "POST") return inner.handle(req.method === "POST" ? req : translatedRequest(req, req.url, req.body));
      // D9: a body that is not JSON is refused (415) before it is read, as the 1.0 endpoint refuses it: the
      // translated call is sent as JSON, so a text/plain POST (a browser's cross-origin "simple request") would run.
      if (!isJsonMediaType(req.header("content-type"))) return inner.handle(translatedRequest(req, req.url, req.body));
      let bytes: Uint8Array;
      try {
        bytes = await req.body(options.bodyLimit, options.bodyTimeoutMs);
      } catch (err) {
        if (!(err instanceof BodyRefusedError)) throw err;
        return inner.handle(translatedRequest(req, req.url, failedBody(err)));
      }
      let call: JsonValue;
      try {
        call = JSON.parse(decodeUtf8(bytes) ?? "") as JsonValue;
      } catch {
        // Not JSON: the 1.0 endpoint answers -32700 (or 415) as it always does.
        return inner.handle(translatedRequest(req, req.url, bytesBody(bytes)));
      }
      if (Array.isArray(call)) {
        return jsonResponse(200, errorOf(null, invalidRequest, "batches are served to A2A 1.0 callers only; send A2A-Version: 1.0, or send A2A 0.3 calls one at a time"));
      }
      const c = obj(call);
      const name = typeof c.method === "string" ? c.method : undefined;
      const method = name === undefined ? undefined : v03MethodOf(name);
      // An id JSON-RPC does not allow: the 1.0 endpoint answers it (-32600) from the bytes as they came.
      const badId = c.id !== undefined && c.id !== null && typeof c.id !== "string" && !(typeof c.id === "number" && Number.isFinite(c.id));
      if (method === undefined || badId) {
        const refusal = name === undefined || badId ? undefined : refusalFor(name);
        if (refusal === undefined) return inner.handle(translatedRequest(req, req.url, bytesBody(bytes)));
        return c.id === undefined ? notAnswered : jsonResponse(200, errorOf(c.id ?? null, methodNotFound, refusal));
      }
      let translated: Uint8Array;
      try {
        // Params that are not an object (an array, null, a string) go on as they came, for the 1.0
        // endpoint to refuse as it refuses them (-32602 for an array, -32600 otherwise).
        const params = c.params === undefined || isObject(c.params) ? method.request(obj(c.params)) : c.params;
        translated = jsonBytes({ jsonrpc: c.jsonrpc, ...(c.id === undefined ? {} : { id: c.id }), method: method.v1, params });
      } catch (err) {
        // Params the translation cannot take (nested past the stack, say): the caller's mistake;
        // anything else is ours, rethrown by translationFailure even for a notification.
        const why = translationFailure(err);
        if (c.id === undefined) return notAnswered;
        return jsonResponse(200, errorOf(c.id ?? null, invalidParams, `the params of ${name} cannot be read as A2A 0.3's: ${why}`));
      }
      const answer = await inner.handle(translatedRequest(req, req.url, bytesBody(translated), { json: true }));
      return answerTo03(answer, method, (err) => inner.report?.(err, req.url));
    },
  };
}

/** Why a method that is not 0.3's is refused to a caller read as 0.3, or undefined for an unknown name (the 1.0 endpoint's -32601). */
function refusalFor(name: string): string | undefined {
  const counterpart = Object.hasOwn(noV03Counterpart, name) ? noV03Counterpart[name] : undefined;
  if (counterpart !== undefined) return `method ${JSON.stringify(name)} does not exist in A2A 0.3: ${counterpart}`;
  if (name === "tasks/list") return `method "tasks/list" does not exist in A2A 0.3: ${noV03Counterpart.ListTasks}`;
  const v03 = v1To03Names.get(name);
  if (v03 === undefined) return undefined;
  return `method ${JSON.stringify(name)} is A2A 1.0's, and a request without A2A-Version is A2A 0.3 (spec 3.6.2): send A2A-Version: 1.0, or call ${v03}`;
}

function isObject(value: JsonValue): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function errorOf(id: JsonValue, code: number, message: string) {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/** The 1.0 endpoint's answer with each `result` translated; errors keep their code, message and data (0.3's data is free-form). */
function answerTo03(answer: CoreResponse, method: V03Method, report: (err: unknown) => void): CoreResponse {
  const translate = (text: string): string => {
    const envelope = obj(JSON.parse(text));
    if (!("result" in envelope)) return text;
    return JSON.stringify({ ...envelope, result: method.result(obj(envelope.result), "jsonrpc") });
  };
  if (answer.kind === "body") return { ...answer, headers: { ...answer.headers, "content-type": "application/json" }, body: translate(answer.body) };
  if (answer.kind === "stream") return { ...answer, events: mapEvents(answer.events, (data, event) => ({ data: translate(data), event }), report) };
  return answer;
}
