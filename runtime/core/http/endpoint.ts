/**
 * The HTTP+JSON binding's core: routes compiled from the generated
 * google.api.http rules, HttpRule transcoding into one ProtoJSON request,
 * the shared dispatcher, AIP-193 error bodies, and SSE for streaming
 * methods. Transport adapters (node:http, fetch) run it.
 */
import type { JsonValue, Message } from "@bufbuild/protobuf";
import type { CallContext } from "../call-context.js";
import type { CallScope } from "../call-scope.js";
import { JsonDecodeError } from "../codec/proto-json.js";
import { defaultBodyLimit, defaultBodyTimeoutMs, defaultHeartbeatMs } from "../defaults.js";
import { createDispatcher, isPromiseLike, type DispatchConfig, type StreamFraming } from "../dispatch.js";
import { httpErrorBody } from "../error-encoding.js";
import { RpcError, toRpcError, type CoreErrorTable, type ErrorTableEntry } from "../errors.js";
import type { FailureInfo } from "../failures.js";
import type { HttpRuleSpec, MethodSpec } from "../method-spec.js";
import type { CallSpan } from "../tracing.js";
import { BodyRefusedError, decodeUtf8, isJsonMediaType, sseHeaders, type CoreRequest, type CoreResponse, type Endpoint, type EventSource } from "../transport.js";
import { parsePathTemplate } from "./path-template.js";
import { responseBodyOf } from "./response-body.js";
import { createRouter } from "./router.js";
import { createTranscoder, type Transcoder } from "./transcoding.js";

export interface HttpJsonOptions extends Pick<DispatchConfig, "authenticate" | "onError" | "logger" | "tracing"> {
  /** Largest request body accepted, in bytes (D16). Default 4 MiB. */
  readonly bodyLimit?: number;
  /** Milliseconds the request body may take to arrive once read, else 408 (D32; adapters reading a socket). Default 30,000. */
  readonly bodyTimeoutMs?: number;
  /** Milliseconds between SSE heartbeat comments; 0 disables them. Default 15 s (D14). */
  readonly heartbeatMs?: number;
  /** Path the routes are mounted under, e.g. `/a2a/rest`; default none. */
  readonly basePath?: string;
}

export interface HttpJsonEndpointConfig<H extends object> extends HttpJsonOptions, DispatchConfig<H> {
  /** The generated method table, keyed by the handler's method names. */
  readonly methods: Readonly<Record<string, MethodSpec>>;
  /** The generated google.api.http rules. */
  readonly rules: readonly HttpRuleSpec[];
}

/**
 * HTTP statuses an error table has no row for: the same error in HTTP's own
 * word. Shared by every HTTP endpoint of a profile (the routes, the Agent
 * Card, the one-call server's fallback), so they answer alike.
 */
export function httpErrors(errors: CoreErrorTable): {
  readonly routeNotFound: ErrorTableEntry;
  readonly methodNotAllowed: ErrorTableEntry;
  readonly notJson: ErrorTableEntry;
} {
  return {
    routeNotFound: { ...errors.MethodNotFound, grpcStatus: "NOT_FOUND" },
    methodNotAllowed: { ...errors.MethodNotFound, httpStatus: 405 },
    notJson: { ...errors.ContentTypeNotSupported, httpStatus: 415 },
  };
}

interface Target {
  readonly rule: HttpRuleSpec;
  readonly spec: MethodSpec;
  readonly transcoder: Transcoder;
  /** The rule's `response_body` taken out of the answer; undefined for the whole answer. */
  readonly responseBody: ((result: JsonValue) => JsonValue) | undefined;
}

/** Creates the HTTP+JSON endpoint for one service's rules, method table and handler. */
export function createHttpJsonEndpoint<H extends object>(config: HttpJsonEndpointConfig<H>): Endpoint {
  const bodyLimit = config.bodyLimit ?? defaultBodyLimit;
  const bodyTimeoutMs = config.bodyTimeoutMs ?? defaultBodyTimeoutMs;
  const heartbeatMs = config.heartbeatMs ?? defaultHeartbeatMs;
  const basePath = (config.basePath ?? "").replace(/\/+$/, "");
  const dispatch = createDispatcher(config);
  const errors = dispatch.errors;
  const mediaTypes = createMediaTypes(dispatch.mediaType);
  const router = createRouter(
    config.rules.map((rule) => {
      const spec = config.methods[rule.method];
      if (spec === undefined) throw new Error(`HTTP rule ${rule.httpMethod} ${rule.path} names no method ${rule.method}`);
      return {
        httpMethod: rule.httpMethod,
        template: parsePathTemplate(rule.path),
        target: {
          rule,
          spec,
          transcoder: createTranscoder(spec.input, rule),
          responseBody: rule.responseBody === "" ? undefined : responseBodyOf(spec.output, rule.responseBody),
        },
      };
    }),
    undefined,
    { trailingSlash: config.profile?.trailingSlash ?? "drop" },
  );
  const { routeNotFound, methodNotAllowed, notJson } = httpErrors(errors);
  const jsonTypes = dispatch.mediaType === "application/json" ? "application/json" : `${dispatch.mediaType} or application/json`;

  /**
   * The answer to `err` before a call was made of the request (no route,
   * an unsupported version): nothing of the handler's to report. A traced
   * request's span ends with it.
   */
  function errorResponse(err: unknown, mediaType: string, headers?: Readonly<Record<string, string>>, span?: CallSpan): CoreResponse {
    const failure = toRpcError(err, errors.Internal);
    span?.end(failure);
    return failureResponse(failure, mediaType, withFailureHeaders(headers, failure));
  }

  /** The answer to a call's failure: an unexpected one is reported with its method (dispatch.failure). */
  function callFailure(err: unknown, call: FailedCall, mediaType: string, headers: Readonly<Record<string, string>> | undefined, span: CallSpan | undefined): CoreResponse {
    const failure = dispatch.failure(err, failureInfo(call.spec, call.req), call.scope);
    // A client that left makes its call fail (its signal aborted): that is its leaving, not a failure of the server's.
    if (call.scope.aborted) span?.cancelled();
    else span?.end(failure);
    return failureResponse(failure, mediaType, withFailureHeaders(headers, failure));
  }

  /** `headers` and what the answer of `failure` carries for it (a 401's challenge). */
  function withFailureHeaders(headers: Readonly<Record<string, string>> | undefined, failure: RpcError): Readonly<Record<string, string>> | undefined {
    const own = dispatch.failureHeaders(failure);
    return own === undefined ? headers : { ...headers, ...own };
  }

  /** Reads and parses the body as the rule maps it, for a rule that takes one (or the POST twin of D1). */
  async function readBody(req: CoreRequest, target: Target): Promise<JsonValue | undefined> {
    const { rule } = target;
    let bytes: Uint8Array;
    try {
      bytes = await req.body(bodyLimit, bodyTimeoutMs);
    } catch (err) {
      if (!(err instanceof BodyRefusedError)) throw err;
      throw new RpcError(err.entryIn(errors), err.message);
    }
    const text = decodeUtf8(bytes);
    // No body at all is a message with no fields set (POST /tasks/x:cancel
    // carries only an optional metadata), as grpc-gateway and Envoy read it.
    if (text !== undefined && text.trim() === "") return rule.body === "*" ? {} : undefined;
    if (rule.derived) {
      // D1: the POST twin of a streaming GET takes no request fields in its body.
      if (text === undefined || (text.trim() !== "" && text.replace(/\s/g, "") !== "{}")) {
        throw new RpcError(errors.InvalidRequest, `${rule.path} takes its fields from the path; send an empty body or {}`);
      }
      return undefined;
    }
    if (!isJsonMediaType(req.header("content-type"))) {
      throw new RpcError(notJson, `the request body must be JSON (${jsonTypes})`);
    }
    try {
      if (text === undefined) throw new Error("not UTF-8");
      return JSON.parse(text) as JsonValue;
    } catch {
      throw new RpcError(errors.ParseError, "the request body is not valid JSON");
    }
  }

  // One object per open stream, holding only its scope; the methods are shared.
  class HttpJsonStream implements StreamFraming {
    constructor(
      private readonly scope: CallScope,
      private readonly spec: MethodSpec,
      private readonly req: CoreRequest,
      private readonly span: CallSpan | undefined,
    ) {}

    get heartbeatMs(): number {
      return heartbeatMs;
    }

    // The spec is silent on errors after a stream started (A2A #1262): one
    // last event carries the same AIP-193 body a plain response would, named
    // `error` so clients that dispatch on the event type (@a2a-js/sdk does)
    // see an error, not an empty StreamResponse.
    get errorEvent(): string {
      return "error";
    }

    event(json: JsonValue): string {
      return JSON.stringify(json);
    }

    error(err: unknown): string {
      const failure = dispatch.failure(err, failureInfo(this.spec, this.req), this.scope);
      this.span?.fail(failure);
      return JSON.stringify(httpErrorBody(failure));
    }

    abort(failed?: boolean): void {
      this.scope.abort(failed);
    }
  }

  /** The request message: the transcoded path, body and query, decoded as one ProtoJSON object. */
  /** The request message; read synchronously when the rule takes no body (a GET), so the call loses no tick. */
  function decode(req: CoreRequest, target: Target, values: readonly string[], query: URLSearchParams | undefined): Message | Promise<Message> {
    const { rule } = target;
    if (rule.body === "" && !rule.derived) return transcode(target, values, undefined, query, req.url);
    return readBody(req, target).then((body) => transcode(target, values, body, query, req.url));
  }

  function transcode(target: Target, values: readonly string[], body: JsonValue | undefined, query: URLSearchParams | undefined, url: string): Message {
    let json: JsonValue;
    try {
      json = target.transcoder.build(values, body, query, url);
    } catch (err) {
      if (!(err instanceof JsonDecodeError)) throw err;
      throw dispatch.invalidParams(err);
    }
    return dispatch.decode(target.spec, json);
  }

  /** One call past routing: in its span's context when traced (D35). */
  async function serve(req: CoreRequest, target: Target, values: readonly string[], query: URLSearchParams | undefined, mediaType: string, span: CallSpan | undefined): Promise<CoreResponse> {
    const { spec } = target;

    let scope: CallScope;
    let request: Message;
    let context: CallContext;
    try {
      scope = dispatch.open("HTTP+JSON", req, query);
    } catch (err) {
      return errorResponse(err, mediaType, undefined, span);
    }
    try {
      const started = dispatch.start(spec, scope, () => decode(req, target, values, query));
      ({ request, context } = isPromiseLike(started) ? await started : started);
      span?.message(request, "request");
    } catch (err) {
      // A body whose read failed because its client left (a cut connection): the scope's signal,
      // made now, says so, and the failure is the client's, not one to report (D33).
      if (!(err instanceof RpcError)) scope.signal();
      return callFailure(err, { spec, scope, req }, mediaType, undefined, span);
    }

    if (spec.kind !== "unary") {
      let events: EventSource;
      try {
        events = await dispatch.openStream(spec, request, context, new HttpJsonStream(scope, spec, req, span), span);
      } catch (err) {
        return callFailure(err, { spec, scope, req }, mediaType, dispatch.responseHeaders(scope), span);
      }
      span?.opened();
      return { kind: "stream", headers: { ...sseHeaders, ...dispatch.responseHeaders(scope) }, events };
    }
    try {
      const result = await dispatch.unary(spec, request, context, span);
      const body = target.responseBody === undefined ? result : target.responseBody(result);
      const response: CoreResponse = { kind: "body", status: 200, headers: { "content-type": mediaType, ...dispatch.responseHeaders(scope) }, body: JSON.stringify(body) };
      span?.end();
      return response;
    } catch (err) {
      return callFailure(err, { spec, scope, req }, mediaType, dispatch.responseHeaders(scope), span);
    }
  }

  return {
    report: (err) => dispatch.reportUnanswered(err, "HTTP+JSON"),
    // Not async: a call past routing answers with serve()'s own promise, with no second one around it.
    handle(req) {
      const mediaType = mediaTypes.of(req);
      const q = req.url.indexOf("?");
      const fullPath = q < 0 ? req.url : req.url.slice(0, q);
      const query = q < 0 ? undefined : new URLSearchParams(req.url.slice(q + 1));
      if (basePath !== "" && fullPath !== basePath && !fullPath.startsWith(`${basePath}/`)) {
        return Promise.resolve(errorResponse(new RpcError(routeNotFound, `no route for ${req.method} ${fullPath}`), mediaType));
      }
      const path = fullPath.slice(basePath.length);
      const match = router.match(req.method, path);
      switch (match.kind) {
        case "not_found":
          return Promise.resolve(errorResponse(new RpcError(routeNotFound, `no route for ${req.method} ${fullPath}`), mediaType));
        case "method_not_allowed":
          return Promise.resolve(
            errorResponse(new RpcError(methodNotAllowed, `${req.method} is not allowed on ${fullPath}; allowed: ${match.allow.join(", ")}`), mediaType, {
              allow: match.allow.join(", "),
            }),
          );
        case "bad_path":
          return Promise.resolve(errorResponse(new RpcError(errors.InvalidParams, match.reason), mediaType));
      }
      // The query by the path's rule (D8): URLSearchParams reads a bad escape (%ZZ) as itself and
      // bytes that are not UTF-8 (%FF) as U+FFFD, so the call ran with values the client never sent.
      if (q >= 0 && req.url.includes("%", q) && !validPercentEncoding(req.url.slice(q + 1))) {
        return Promise.resolve(errorResponse(new RpcError(errors.InvalidParams, "the query is not valid percent-encoded UTF-8"), mediaType));
      }
      const target = match.route.target;
      const tracer = dispatch.tracer;
      if (tracer === undefined) return serve(req, target, match.values, query, mediaType, undefined);
      const span = tracer.start("HTTP+JSON", target.spec, req, { "http.request.method": req.method, "http.route": `${basePath}${target.rule.path}` });
      if (span === undefined) return serve(req, target, match.values, query, mediaType, undefined);
      return span.run(() => serve(req, target, match.values, query, mediaType, span));
    },
  };
}

/** A call past routing, as its failure is reported. */
interface FailedCall {
  readonly spec: MethodSpec;
  readonly scope: CallScope;
  readonly req: CoreRequest;
}

/** An error's AIP-193 body, as the answer's media type. */
function failureResponse(failure: RpcError, mediaType: string, headers: Readonly<Record<string, string>> | undefined): CoreResponse {
  return {
    kind: "body",
    status: failure.entry.httpStatus,
    headers: { "content-type": mediaType, ...headers },
    body: JSON.stringify(httpErrorBody(failure)),
  };
}

/** Where an HTTP+JSON call failed: its RPC, and the client's `x-request-id` if it sent one. */
function failureInfo(spec: MethodSpec, req: CoreRequest): FailureInfo {
  return { binding: "HTTP+JSON", method: spec.name, requestId: req.header("x-request-id") ?? undefined };
}

/**
 * D9: what the client accepts (the profile's media type, A2A's
 * `application/a2a+json`, or `application/json`), else the JSON type it
 * sent, else the profile's media type. Clients send the
 * same few header pairs, so each pair is negotiated once (bounded: they are
 * client data).
 */
function createMediaTypes(fallback: string): { of(req: CoreRequest): string } {
  const cache = new Map<string, string>();
  return {
    of(req) {
      const accept = req.header("accept");
      const sent = req.header("content-type");
      const key = `${accept ?? ""}\n${sent ?? ""}`;
      let type = cache.get(key);
      if (type === undefined) {
        type = negotiate(accept, sent, fallback);
        if (cache.size < 256) cache.set(key, type);
      }
      return type;
    },
  };
}

function negotiate(accept: string | null, sent: string | null, fallback: string): string {
  if (accept !== null) {
    const types = accept.split(",").map((t) => (t.split(";")[0] ?? "").trim().toLowerCase());
    if (types.includes(fallback)) return fallback;
    if (types.includes("application/json")) return "application/json";
  }
  if (sent !== null && isJsonMediaType(sent)) return (sent.split(";")[0] ?? "").trim().toLowerCase();
  return fallback;
}

/** Whether every `%` starts an escape and the escapes decode as UTF-8 (decodeURIComponent refuses both). */
function validPercentEncoding(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}
