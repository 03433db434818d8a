/**
 * The JSON-RPC 2.0 binding's core: framing (D13), dispatch on a generated
 * method table, ProtoJSON in and out, errors from the profile's table, and
 * SSE for streaming methods. Transport adapters (node:http, fetch) run it.
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { CallScope } from "../call-scope.js";
import { defaultBodyLimit, defaultBodyTimeoutMs, defaultHeartbeatMs } from "../defaults.js";
import { createDispatcher, isPromiseLike, type DispatchConfig, type Dispatcher, type StreamFraming } from "../dispatch.js";
import { jsonRpcErrorObject } from "../error-encoding.js";
import { RpcError, toRpcError, type ErrorTableEntry } from "../errors.js";
import type { MethodSpec } from "../method-spec.js";
import type { CallSpan } from "../tracing.js";
import { BodyRefusedError, decodeUtf8, isJsonMediaType, sseHeaders, type CoreRequest, type CoreResponse, type Endpoint, type EventSource } from "../transport.js";

export interface JsonRpcOptions extends Pick<DispatchConfig, "authenticate" | "onError" | "logger" | "tracing"> {
  /** Largest request body accepted, in bytes (D16). Default 4 MiB. */
  readonly bodyLimit?: number;
  /** Milliseconds the request body may take to arrive once read, else 408 (D32; adapters reading a socket). Default 30,000. */
  readonly bodyTimeoutMs?: number;
  /** Milliseconds between SSE heartbeat comments; 0 disables them. Default 15 s (D14). */
  readonly heartbeatMs?: number;
  /** Most requests one batch may hold; a larger batch is answered with one -32600 and none of it runs (D31). Default 100. */
  readonly maxBatchSize?: number;
}

/** D31: a batch is a request like any other, bounded like one. */
export const defaultMaxBatchSize = 100;

export interface JsonRpcEndpointConfig<H extends object> extends JsonRpcOptions, DispatchConfig<H> {
  /** The generated dispatch table: JSON-RPC method name (the RPC name) to method. */
  readonly methods: Readonly<Record<string, MethodSpec>>;
}

type JsonRpcId = string | number | null;

/** Where a call's trace parent is read from: the request's headers. */
type ScopeRequestLike = Pick<CoreRequest, "header" | "authority" | "local">;

/** A call that passed framing: `id` is undefined for a notification. */
interface Call {
  readonly id: JsonRpcId | undefined;
  readonly spec: MethodSpec;
  readonly params: JsonObject;
}

const jsonHeaders = { "content-type": "application/json" } as const;
const noContent: CoreResponse = { kind: "empty", status: 204, headers: {} };

/** Creates the JSON-RPC endpoint for one service's method table and handler. */
export function createJsonRpcEndpoint<H extends object>(config: JsonRpcEndpointConfig<H>): Endpoint {
  const bodyLimit = config.bodyLimit ?? defaultBodyLimit;
  const bodyTimeoutMs = config.bodyTimeoutMs ?? defaultBodyTimeoutMs;
  const heartbeatMs = config.heartbeatMs ?? defaultHeartbeatMs;
  const maxBatchSize = config.maxBatchSize ?? defaultMaxBatchSize;
  if (!(Number.isInteger(maxBatchSize) && maxBatchSize >= 1)) throw new Error(`maxBatchSize must be a whole number >= 1, got ${maxBatchSize}`);
  const byName = new Map(Object.entries(config.methods));
  const dispatch: Dispatcher = createDispatcher(config);
  const errors = dispatch.errors;

  const fail = (entry: ErrorTableEntry, message?: string) => new RpcError(entry, message);
  const errorEnvelope = (id: JsonRpcId, err: unknown) => ({
    jsonrpc: "2.0",
    id,
    error: jsonRpcErrorObject(toRpcError(err, errors.Internal)),
  });
  /**
   * The envelope of a call that failed past its framing: an unexpected
   * failure is reported with the call's method and id; a traced call's span
   * ends with the error.
   */
  const callFailure = (id: JsonRpcId, method: string, err: unknown, scope: CallScope, span?: CallSpan) => {
    const failure = dispatch.failure(err, { binding: "JSONRPC", method, requestId: id === null ? undefined : String(id) }, scope);
    // A client that left makes its call fail (its signal aborted): that is its leaving, not a failure of the server's.
    if (scope.aborted) span?.cancelled();
    else span?.end(failure);
    const envelope = { jsonrpc: "2.0", id, error: jsonRpcErrorObject(failure) };
    if (failure.entry.grpcStatus === "UNAUTHENTICATED" || failure.entry.grpcStatus === "PERMISSION_DENIED") refusedCaller.set(envelope, failure);
    return envelope;
  };
  /** The answers of calls refused as unauthenticated or forbidden, with their error. */
  const refusedCaller = new WeakMap<object, RpcError>();
  /**
   * The answer to a request of one call: HTTP 200, or, for a caller refused as unauthenticated or
   * forbidden, 401 or 403 with the same JSON-RPC body and a 401's challenge (D13). An HTTP layer in
   * front (an SDK's auth middleware) answers so, and clients' credential refresh looks at the status.
   */
  const single = (reply: unknown, headers: Readonly<Record<string, string>> | undefined): CoreResponse => {
    const failure = typeof reply === "object" && reply !== null ? refusedCaller.get(reply) : undefined;
    if (failure === undefined) return body(200, reply, headers);
    return body(failure.entry.httpStatus, reply, { ...headers, ...dispatch.failureHeaders(failure) });
  };
  const body = (status: number, value: unknown, headers?: Readonly<Record<string, string>>): CoreResponse => ({
    kind: "body",
    status,
    headers: headers === undefined ? jsonHeaders : { ...jsonHeaders, ...headers },
    body: JSON.stringify(value),
  });

  /** Framing rules of JSON-RPC 2.0 for one request object (D13). */
  function frame(value: JsonValue): Call | { id: JsonRpcId | undefined; error: RpcError } {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { id: null, error: fail(errors.InvalidRequest, "a request must be a JSON object") };
    }
    const hasId = Object.prototype.hasOwnProperty.call(value, "id");
    const rawId = value.id;
    const idValid = !hasId || rawId === null || typeof rawId === "string" || typeof rawId === "number";
    const id: JsonRpcId = idValid && hasId ? (rawId as JsonRpcId) : null;
    if (!idValid) return { id: null, error: fail(errors.InvalidRequest, "id must be a string, a number or null") };
    // A number past double's range reads as Infinity, which JSON writes as null, and an integer past
    // 2^53 reads as a neighbour: either way the answer could not be matched to its call.
    if (typeof id === "number" && (!Number.isFinite(id) || (Number.isInteger(id) && !Number.isSafeInteger(id)))) {
      return { id: null, error: fail(errors.InvalidRequest, "id is a number too large to be sent back exactly; send it as a string") };
    }
    if (value.jsonrpc !== "2.0") return { id, error: fail(errors.InvalidRequest, 'jsonrpc must be "2.0"') };
    if (typeof value.method !== "string") return { id, error: fail(errors.InvalidRequest, "method must be a string") };
    const params = "params" in value ? value.params : {};
    // Params that are neither an object nor an array make no request (JSON-RPC 2.0 §4.2): answered, id or not.
    if (typeof params !== "object" || params === null) return { id, error: fail(errors.InvalidRequest, "params must be an object") };
    // From here the request is well formed: a notification (no id) is never answered, not even with an error.
    const answerId = hasId ? id : undefined;
    const spec = byName.get(value.method);
    if (spec === undefined) {
      const hint = config.profile?.methodHint?.(value.method);
      const error = fail(errors.MethodNotFound, `method ${JSON.stringify(value.method)} does not exist${hint === undefined ? "" : `: ${hint}`}`);
      return { id: answerId, error };
    }
    // JSON-RPC 2.0 allows params by position (an array); this service's methods take theirs by name.
    if (Array.isArray(params)) return { id: answerId, error: fail(errors.InvalidParams, "params must be an object of named parameters, not an array") };
    return { id: answerId, spec, params };
  }

  async function unary(call: Call, scope: CallScope, span?: CallSpan): Promise<unknown> {
    try {
      const started = dispatch.start(call.spec, scope, () => dispatch.decode(call.spec, call.params), call.id !== undefined);
      const { request, context } = isPromiseLike(started) ? await started : started;
      span?.message(request, "request");
      const result = await dispatch.unary(call.spec, request, context, span);
      span?.end();
      return { jsonrpc: "2.0", id: call.id ?? null, result };
    } catch (err) {
      return callFailure(call.id ?? null, call.spec.name, err, scope, span);
    }
  }

  /** The span of a call when tracing is on (D35), child of the request's traceparent. */
  function startSpan(call: Call, req: ScopeRequestLike): CallSpan | undefined {
    const tracer = dispatch.tracer;
    if (tracer === undefined) return undefined;
    // OTel's JSON-RPC conventions: a null id is "", a notification (no id) has none.
    return tracer.start("JSONRPC", call.spec, req, call.id === undefined ? undefined : { "rpc.jsonrpc.request_id": call.id === null ? "" : String(call.id) });
  }

  /** A unary call, in its span's context when traced. */
  function answer(call: Call, scope: CallScope, req: ScopeRequestLike): Promise<unknown> {
    const span = startSpan(call, req);
    return span === undefined ? unary(call, scope) : span.run(() => unary(call, scope, span));
  }

  /** A call of a request refused as a whole (an unsupported version): answered with the refusal, its span ended with it. */
  function refused(call: Call, refusal: unknown, req: ScopeRequestLike) {
    startSpan(call, req)?.end(toRpcError(refusal, errors.Internal));
    return errorEnvelope(call.id ?? null, refusal);
  }

  // One object per open stream with the call's id and scope; the methods
  // are shared, so a stream holds no closures of its own here.
  class JsonRpcStream implements StreamFraming {
    constructor(
      private readonly id: JsonRpcId,
      private readonly method: string,
      private readonly scope: CallScope,
      private readonly span: CallSpan | undefined,
    ) {}

    get heartbeatMs(): number {
      return heartbeatMs;
    }

    event(result: JsonValue): string {
      return JSON.stringify({ jsonrpc: "2.0", id: this.id, result });
    }

    error(err: unknown): string {
      return JSON.stringify(callFailure(this.id, this.method, err, this.scope, this.span));
    }

    abort(failed?: boolean): void {
      this.scope.abort(failed);
    }
  }

  /** A streaming call, in its span's context when traced; the span ends with the stream. */
  function stream(call: Call & { id: JsonRpcId }, scope: CallScope, req: ScopeRequestLike): Promise<CoreResponse> {
    const span = startSpan(call, req);
    return span === undefined ? openStream(call, scope, undefined) : span.run(() => openStream(call, scope, span));
  }

  async function openStream(call: Call & { id: JsonRpcId }, scope: CallScope, span: CallSpan | undefined): Promise<CoreResponse> {
    let events: EventSource;
    try {
      const started = dispatch.start(call.spec, scope, () => dispatch.decode(call.spec, call.params));
      const { request, context } = isPromiseLike(started) ? await started : started;
      span?.message(request, "request");
      events = await dispatch.openStream(call.spec, request, context, new JsonRpcStream(call.id, call.spec.name, scope, span), span);
    } catch (err) {
      return single(callFailure(call.id, call.spec.name, err, scope, span), dispatch.responseHeaders(scope));
    }
    // After the first event, so what the handler did to the response headers (extensions it activated) is sent.
    return { kind: "stream", headers: { ...sseHeaders, ...dispatch.responseHeaders(scope) }, events };
  }

  return {
    report: (err) => dispatch.reportUnanswered(err, "JSONRPC"),
    async handle(req) {
      if (req.method !== "POST") {
        return body(405, errorEnvelope(null, fail(errors.InvalidRequest, "JSON-RPC requests are sent with POST")), {
          allow: "POST",
        });
      }
      if (!isJsonMediaType(req.header("content-type"))) {
        return body(415, errorEnvelope(null, fail(errors.ContentTypeNotSupported, "the request body must be application/json")));
      }
      let bytes: Uint8Array;
      try {
        bytes = await req.body(bodyLimit, bodyTimeoutMs);
      } catch (err) {
        if (!(err instanceof BodyRefusedError)) throw err;
        return body(err.status, errorEnvelope(null, fail(err.entryIn(errors), err.message)));
      }
      let parsed: JsonValue;
      try {
        const text = decodeUtf8(bytes);
        if (text === undefined) throw new Error("not UTF-8");
        parsed = JSON.parse(text) as JsonValue;
      } catch {
        return body(200, errorEnvelope(null, fail(errors.ParseError, "the request body is not valid JSON")));
      }

      // Opened before any call is framed; a refusal (an unsupported version)
      // answers each call after its own framing errors, as if it had run.
      let scope: CallScope | undefined;
      let refusal: unknown;
      try {
        const q = req.url.indexOf("?");
        scope = dispatch.open("JSONRPC", req, q < 0 ? undefined : new URLSearchParams(req.url.slice(q + 1)));
      } catch (err) {
        refusal = err;
      }
      if (Array.isArray(parsed)) {
        const open = scope;
        const reply = async (call: Call): Promise<unknown> => (open === undefined ? refused(call, refusal, req) : answer(call, open, req));
        if (parsed.length === 0) return body(200, errorEnvelope(null, fail(errors.InvalidRequest, "an empty batch is not a request")));
        if (parsed.length > maxBatchSize) {
          return body(200, errorEnvelope(null, fail(errors.InvalidRequest, `a batch may hold at most ${maxBatchSize} requests; this one holds ${parsed.length}`)));
        }
        const replies = await Promise.all(
          parsed.map(async (item) => {
            const call = frame(item);
            if (!("spec" in call)) return call.id === undefined ? undefined : errorEnvelope(call.id, call.error);
            if (call.spec.kind !== "unary" && scope !== undefined) {
              if (call.id === undefined) return undefined;
              // A call of a method the service has, refused: its span says so (D35), as a call
              // refused with its whole request does; it had none, so a batch's refusals went untraced.
              const error = fail(errors.InvalidRequest, `${call.spec.name} streams its response and cannot be called in a batch`);
              startSpan(call, req)?.end(error);
              return errorEnvelope(call.id, error);
            }
            // A notification is not waited for: its answer would be dropped, and a blocking call
            // (an A2A SendMessage) would hold the whole batch's response until its task settled.
            if (call.id === undefined) {
              void reply(call);
              return undefined;
            }
            return reply(call);
          }),
        );
        const answered = replies.filter((r) => r !== undefined);
        const headers = scope === undefined ? undefined : dispatch.responseHeaders(scope);
        return answered.length === 0 ? { kind: "empty", status: 204, headers: headers ?? {} } : body(200, answered, headers);
      }

      const call = frame(parsed);
      if (!("spec" in call)) return call.id === undefined ? noContent : body(200, errorEnvelope(call.id, call.error));
      if (scope === undefined) {
        const envelope = refused(call, refusal, req);
        return call.id === undefined ? noContent : body(200, envelope);
      }
      if (call.spec.kind !== "unary") {
        // A notification expects no response, and a stream is nothing but one.
        if (call.id === undefined) return noContent;
        return stream({ ...call, id: call.id }, scope, req);
      }
      // A notification is answered (204) without waiting for its call, which goes on (its failure,
      // if one of ours, is still reported), with the extensions the call activated before it first waited.
      if (call.id === undefined) {
        void answer(call, scope, req);
        return { kind: "empty", status: 204, headers: dispatch.responseHeaders(scope) ?? {} };
      }
      const reply = await answer(call, scope, req);
      return single(reply, dispatch.responseHeaders(scope));
    },
  };
}
