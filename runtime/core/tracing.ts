/**
 * OpenTelemetry on every binding (D35), through `@opentelemetry/api` given
 * as an option: the module itself (`import * as api from
 * "@opentelemetry/api"`), typed here by the parts used, so the core has no
 * dependency on the package, not even a type one. Without the option nothing
 * of this runs: a binding checks one field per call and takes the path it
 * took before tracing existed.
 *
 * A server span per call of a method the service has, named
 * `<package.Service>/<Method>`, kind SERVER, child of the span active when
 * the call arrives (an HTTP or gRPC instrumentation's), else of the remote
 * one in `traceparent` / `tracestate`; the handler runs in its context, so
 * its own spans and the calls it makes are its children. Standard `rpc.*`
 * attributes, the profile's own (A2A: method, task id, error reason), and
 * status ERROR for the server-side failures of OTel's gRPC conventions.
 */
import { backgroundTracing, inBackground } from "./background.js";
import type { Binding } from "./call-context.js";
import type { RpcCodeName, RpcError } from "./errors.js";
import { rpcCode } from "./error-encoding.js";
import type { MethodSpec } from "./method-spec.js";

/** An OpenTelemetry context (the API's `Context`), opaque here. */
export interface TraceContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): TraceContext;
  deleteValue(key: symbol): TraceContext;
}

export type TraceAttributes = Readonly<Record<string, string | number | boolean>>;

/** The parts of an OpenTelemetry span used here. */
export interface TraceSpan {
  setAttribute(key: string, value: string | number | boolean): unknown;
  setAttributes(attributes: TraceAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  isRecording(): boolean;
  end(): void;
}

/** The parts of an OpenTelemetry tracer used here. */
export interface TraceTracer {
  startSpan(name: string, options: { kind: number; attributes: TraceAttributes }, context: TraceContext): TraceSpan;
}

/** How headers or metadata are read and written by the API's propagators. */
export interface TraceGetter<C> {
  keys(carrier: C): string[];
  get(carrier: C, key: string): string | string[] | undefined;
}

/** The parts of the `@opentelemetry/api` module used here: pass the module itself. */
export interface TracingApi {
  readonly trace: {
    getTracer(name: string, version?: string): TraceTracer;
    setSpan(context: TraceContext, span: TraceSpan): TraceContext;
    getSpan(context: TraceContext): unknown;
    /** A context's span context, and a context with one in place of its span: what a queued push keeps (D35). */
    getSpanContext?(context: TraceContext): object | undefined;
    setSpanContext?(context: TraceContext, spanContext: never): TraceContext;
  };
  readonly context: {
    active(): TraceContext;
    with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: TraceContext, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F>;
  };
  readonly propagation: {
    extract<C>(context: TraceContext, carrier: C, getter?: TraceGetter<C>): TraceContext;
    inject<C>(context: TraceContext, carrier: C): void;
  };
  readonly SpanKind: { readonly SERVER: number; readonly CLIENT: number };
  /** The context with no span: where background work starts (background.ts, D35). */
  readonly ROOT_CONTEXT?: TraceContext;
  readonly SpanStatusCode: { readonly ERROR: number };
}

/** The server side of a request's connection, as its transport knows it (D35: server.address, server.port). */
export interface ServerEndpoint {
  /** The local address the connection was accepted on. */
  readonly address?: string | undefined;
  readonly port?: number | undefined;
  /** Whether it came over TLS: the default port of an authority that names none (443, else 80). */
  readonly secure?: boolean | undefined;
}

/** Where a call's parent comes from: its headers or metadata, read as the scope reads them. */
export interface TraceCarrier {
  header(name: string): string | null;
  /**
   * The authority the client addressed when the transport keeps it apart from the headers (HTTP/2's
   * `:authority`, gRPC's `getHost()`: grpc-js drops pseudo-headers from the metadata); else `Host`.
   */
  authority?(): string | null | undefined;
  /** The connection's local side: server.address and server.port of a request that names no authority. */
  local?(): ServerEndpoint | undefined;
}

/** Reads `traceparent` and `tracestate` (and whatever else a propagator asks for) from a request. */
const carrierGetter: TraceGetter<TraceCarrier> = {
  // Only what a propagator asks for by name is read; keys() serves propagators that scan (baggage does not).
  keys: () => [],
  get: (carrier, key) => carrier.header(key) ?? undefined,
};

/**
 * `server.address` and `server.port` of a server span (OTel's HTTP server conventions, which the
 * RPC ones follow): the host and port the client addressed (`:authority`, else `Host`), the port
 * the scheme's default when it names none; the connection's local address and port when the
 * request names no authority (HTTP/1.0). The same rule on every binding, so one request's span
 * says the same whichever binding served it. Forwarded and X-Forwarded-Host are not read: a
 * server behind a proxy sees the authority the proxy sent.
 */
export function serverAttributes(carrier: TraceCarrier): TraceAttributes | undefined {
  const named = carrier.authority?.() ?? carrier.header("host");
  const parsed = named === null || named === undefined ? undefined : parseAuthority(named);
  const local = carrier.local?.();
  if (parsed === undefined) {
    if (local?.address === undefined || local.address === "") return undefined;
    return local.port === undefined ? { "server.address": local.address } : { "server.address": local.address, "server.port": local.port };
  }
  // A port named that is no port (null) is left out: the scheme's default is not what the client addressed.
  const port = parsed.port === null ? undefined : (parsed.port ?? (local?.secure === undefined ? undefined : local.secure ? 443 : 80));
  return port === undefined ? { "server.address": parsed.address } : { "server.address": parsed.address, "server.port": port };
}

// RFC 3986 3.2.2: a reg-name or IPv4 address (unreserved, pct-encoded, sub-delims), and what an
// IP-literal holds (an IPv6 address, a zone `%25…`, or an IPvFuture). A value with anything else
// (a space, a quote, a slash) names no host: it is never recorded.
const regName = /^[A-Za-z0-9\-._~!$&'()*+,;=%]+$/;
const ipLiteral = /^(?:[0-9A-Fa-f:.]+(?:%25[A-Za-z0-9\-._~%]+)?|[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+)$/;

/**
 * `host[:port]` or `[v6][:port]` (any userinfo dropped, never recorded); undefined when it names no
 * host. `port` is absent when none is named (or it is empty, RFC 3986 3.2.3: the scheme's default),
 * null when the one named is no port (`:99999`, `:8o`).
 */
export function parseAuthority(authority: string): { readonly address: string; readonly port?: number | null } | undefined {
  const text = authority.slice(authority.lastIndexOf("@") + 1).trim();
  let host: string;
  let port: string | undefined;
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    if (end < 0) return undefined;
    host = text.slice(1, end);
    const rest = text.slice(end + 1);
    if (rest.startsWith(":")) port = rest.slice(1);
    else if (rest !== "") return undefined;
    if (!ipLiteral.test(host)) return undefined;
  } else {
    const colon = text.indexOf(":");
    // Two colons: a bare IPv6 address, which an authority brackets.
    if (colon >= 0 && text.indexOf(":", colon + 1) >= 0) return undefined;
    host = colon < 0 ? text : text.slice(0, colon);
    if (colon >= 0) port = text.slice(colon + 1);
    if (!regName.test(host)) return undefined;
  }
  if (port === undefined || port === "") return { address: host };
  const number = /^[0-9]{1,5}$/.test(port) ? Number(port) : 65536;
  return { address: host, port: number <= 65535 ? number : null };
}

/** The tracer's name and the instrumentation scope of every span (OTel: the library's package). */
export const instrumentationName = "protoc-gen-a2a";

/**
 * The statuses whose server spans are ERROR (OTel semantic conventions for
 * gRPC, server side): the server's failures, not the caller's mistakes.
 * The same on every binding, from the error's table row.
 */
const serverFailures: ReadonlySet<RpcCodeName> = new Set<RpcCodeName>(["UNKNOWN", "DEADLINE_EXCEEDED", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS"]);

/** What a profile adds to a call's span (optional on Profile): the protocol's names for what a call says. */
export interface TraceProfile {
  /** Attributes of every span of `spec`'s calls (computed once per method). */
  method?(spec: MethodSpec): TraceAttributes | undefined;
  /** Attributes of a message of the call: the decoded request, a unary result, a stream's events. */
  message?(spec: MethodSpec, message: unknown, role: "request" | "response"): TraceAttributes | undefined;
  /** Attributes of the error a call failed with. */
  error?(err: RpcError): TraceAttributes | undefined;
}

/** Per binding: `rpc.system`, as OTel spells it (D35 for HTTP+JSON). */
const rpcSystem: Readonly<Record<Binding, string>> = { JSONRPC: "jsonrpc", "HTTP+JSON": "http_json", GRPC: "grpc" };

/** The tracing of one endpoint: starts a span per call. Made once, with the endpoint. */
export class CallTracer {
  readonly #api: TracingApi;
  readonly #tracer: TraceTracer;
  readonly #profile: TraceProfile | undefined;
  /** Span name and attributes per binding and method, made on first use. */
  readonly #methods = new Map<string, { readonly name: string; readonly attributes: TraceAttributes }>();

  constructor(api: TracingApi, profile: TraceProfile | undefined) {
    this.#api = api;
    this.#tracer = api.trace.getTracer(instrumentationName);
    this.#profile = profile;
  }

  /**
   * Starts the span of one call, child of the active span or of the
   * request's `traceparent`. `extra` are the binding's own attributes.
   */
  start(binding: Binding, spec: MethodSpec, carrier: TraceCarrier, extra?: TraceAttributes): CallSpan | undefined {
    const api = this.#api;
    const method = this.#method(binding, spec);
    try {
      const active = api.context.active();
      const parent = api.trace.getSpan(active) === undefined ? api.propagation.extract(active, carrier, carrierGetter) : active;
      const server = serverAttributes(carrier);
      const attributes = extra === undefined && server === undefined ? method.attributes : { ...method.attributes, ...server, ...extra };
      const span = this.#tracer.startSpan(method.name, { kind: api.SpanKind.SERVER, attributes }, parent);
      return new CallSpan(api, span, api.trace.setSpan(parent, span), binding, spec, this.#profile);
    } catch {
      // A sampler, propagator or processor that throws: the call runs untraced, never fails for it.
      return undefined;
    }
  }

  #method(binding: Binding, spec: MethodSpec): { readonly name: string; readonly attributes: TraceAttributes } {
    const key = `${binding} ${spec.grpcPath}`;
    let method = this.#methods.get(key);
    if (method === undefined) {
      // grpcPath is `/<package.Service>/<Method>`: the span name is it without the leading slash (OTel's RPC span name).
      const name = spec.grpcPath.slice(1);
      const service = name.slice(0, name.lastIndexOf("/"));
      const attributes: Record<string, string | number | boolean> = { "rpc.system": rpcSystem[binding], "rpc.service": service, "rpc.method": spec.name };
      if (binding === "JSONRPC") attributes["rpc.jsonrpc.version"] = "2.0";
      Object.assign(attributes, this.#profile?.method?.(spec));
      method = { name, attributes };
      this.#methods.set(key, method);
    }
    return method;
  }
}

/**
 * One call's span: what the binding tells it, and the context the handler
 * runs in. What it does to the span never throws: a span processor or
 * profile that throws costs the span's data, never the call (an escaped
 * throw in a gRPC answer's callback ended the process).
 */
export class CallSpan {
  #ended = false;
  #failed = false;
  #responded = false;
  /** The call failed and its binding ends the span with the failure: a release meanwhile is no cancel. */
  #failing = false;
  /** The answer's status is out: an HTTP+JSON stream's 200. */
  #opened = false;

  constructor(
    private readonly api: TracingApi,
    readonly span: TraceSpan,
    /** The span's context: the handler runs in it. */
    readonly context: TraceContext,
    private readonly binding: Binding,
    private readonly spec: MethodSpec,
    private readonly profile: TraceProfile | undefined,
  ) {}

  /** Runs `fn` in the span's context. */
  run<T>(fn: () => T): T {
    return this.api.context.with(this.context, fn);
  }

  /** A message of the call (the request, a result, an event): the profile's attributes of it. */
  message(message: unknown, role: "request" | "response"): void {
    if (this.#ended) return;
    // A stream's first event says what the call is about (its task); the rest would only repeat it.
    if (role === "response") {
      if (this.#responded) return;
      this.#responded = true;
    }
    try {
      if (!this.span.isRecording()) return;
      const attributes = this.profile?.message?.(this.spec, message, role);
      if (attributes !== undefined) this.span.setAttributes(attributes);
    } catch {
      // Tracing never fails a call (see the class).
    }
  }

  /** The call failed with `err` (what the client is answered): status, code attributes, the profile's. */
  fail(err: RpcError): void {
    if (this.#ended || this.#failed) return;
    this.#failed = true;
    try {
      this.#record(err);
    } catch {
      // Tracing never fails a call (see the class).
    }
  }

  /**
   * The answer's status went out (a stream's 200 and its headers): a failure after it is told in
   * the stream, and the span keeps the status sent (OpenTelemetry's http.response.status_code).
   */
  opened(): void {
    this.#opened = true;
  }

  /** The call failed and its binding will end the span with that failure: a release of its stream meanwhile is not the client leaving. */
  failing(): void {
    this.#failing = true;
  }

  /** The handler's stream was released (TracedIterator.return): the client left, unless the call failed first and its binding ends the span. */
  released(): void {
    if (!this.#failing) this.cancelled();
  }

  #record(err: RpcError): void {
    const span = this.span;
    const status = err.entry.grpcStatus;
    if (this.binding === "GRPC") span.setAttribute("rpc.grpc.status_code", rpcCode(status));
    if (this.binding === "JSONRPC") {
      span.setAttribute("rpc.jsonrpc.error_code", err.entry.jsonRpcCode);
      span.setAttribute("rpc.jsonrpc.error_message", err.message);
    }
    // A stream that failed after its 200 went out: the status sent, and what failed as error.type.
    if (this.binding === "HTTP+JSON") span.setAttribute("http.response.status_code", this.#opened ? 200 : err.entry.httpStatus);
    if (this.#opened) span.setAttribute("error.type", status);
    const attributes = this.profile?.error?.(err);
    if (attributes !== undefined) span.setAttributes(attributes);
    if (serverFailures.has(status)) {
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: err.message });
      // What the client never sees: the failure behind an Internal answer.
      const cause = err.cause;
      if (cause !== undefined && cause !== err) span.recordException(cause instanceof Error ? cause : String(cause));
    }
  }

  /** Ends the span; once. A call that did not fail ends with its binding's success code. */
  end(failed?: RpcError): void {
    if (this.#ended) return;
    if (failed !== undefined) this.fail(failed);
    this.#ended = true;
    try {
      if (!this.#failed) {
        if (this.binding === "GRPC") this.span.setAttribute("rpc.grpc.status_code", 0);
        else if (this.binding === "HTTP+JSON") this.span.setAttribute("http.response.status_code", 200);
      }
      this.span.end();
    } catch {
      // Tracing never fails a call (see the class).
    }
  }

  /**
   * Ends the span of a call the client left before its answer: CANCELLED, not an error of the
   * server's; or, when its deadline passed, DEADLINE_EXCEEDED, which OTel counts as one (D35).
   */
  cancelled(code: "CANCELLED" | "DEADLINE_EXCEEDED" = "CANCELLED"): void {
    if (this.#ended) return;
    if (!this.#failed) {
      this.#failed = true;
      try {
        if (this.binding === "GRPC") this.span.setAttribute("rpc.grpc.status_code", rpcCode(code));
        if (serverFailures.has(code)) this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: "the deadline passed" });
      } catch {
        // Tracing never fails a call (see the class).
      }
    }
    this.end();
  }

  /**
   * The handler's stream, each pull in the span's context; the span ends
   * when the client leaves, or at the stream's end when `endOnDone` (else
   * the binding ends it, after the profile's end-of-stream rules).
   */
  iterator<T>(inner: AsyncIterator<T>, endOnDone: boolean): AsyncIterator<T> {
    return new TracedIterator(inner, this, endOnDone);
  }

  get ended(): boolean {
    return this.#ended;
  }
}

/**
 * A handler's stream pulled in its span's context (a generator resumes in
 * the context of whoever calls next(): the writer's, not the call's). The
 * span ends when the stream does: its end, an error (which the binding
 * reports with `fail` first), or the client leaving (`return`).
 */
class TracedIterator<T> implements AsyncIterator<T> {
  #seen = false;
  readonly #onResult = (r: IteratorResult<T>): IteratorResult<T> => {
    if (r.done !== true) {
      this.#seen = true;
      this.span.message(r.value, "response");
    } else if (this.endOnDone && this.#seen) {
      // An empty stream is the binding's to end: the profile may refuse it.
      this.span.end();
    }
    return r;
  };

  constructor(
    private readonly inner: AsyncIterator<T>,
    private readonly span: CallSpan,
    private readonly endOnDone: boolean,
  ) {}

  next(): Promise<IteratorResult<T>> {
    return this.span.run(() => this.inner.next()).then(this.#onResult);
  }

  return(value?: unknown): Promise<IteratorResult<T>> {
    // The client left, the deadline passed, or the binding released the stream after an error it framed (then already failed).
    this.span.released();
    const ret = this.inner.return;
    return ret === undefined ? Promise.resolve({ done: true, value: value as T }) : this.span.run(() => ret.call(this.inner, value));
  }
}

/**
 * `@opentelemetry/api` when it is installed, else undefined: loaded once,
 * with a dynamic import, by what turns tracing on by itself (serveA2AService,
 * generated clients). Nothing else of this runtime imports it.
 */
let loading: Promise<TracingApi | undefined> | undefined;
let loaded: { readonly api: TracingApi | undefined } | undefined;
export function loadTracingApi(): Promise<TracingApi | undefined> {
  if (loaded !== undefined) return Promise.resolve(loaded.api);
  // A variable, so bundlers and tsc leave the specifier alone: the package is an optional peer.
  const specifier = "@opentelemetry/api";
  // Imported in the background context, and the promise let go once settled: kept, it (and the
  // loader's job for the import) held the context of the first caller, its span, for good (D35).
  loading ??= inBackground(() =>
    import(specifier).then(
      (m: { default?: unknown } & Partial<TracingApi>) => (m.trace !== undefined ? (m as TracingApi) : (m.default as TracingApi | undefined)),
      () => undefined,
    ),
  ).then((api) => {
    loaded = { api };
    loading = undefined;
    if (api !== undefined) backgroundTracing(api);
    return api;
  });
  return loading;
}
