/**
 * The client side of the core: one object per service with the handler
 * interface's shape (a method per RPC, by its local name: a request in, a
 * response or an async iterable of stream messages out), over any transport
 * that can carry a method of the generated table. The transports (JSON-RPC,
 * HTTP+JSON, gRPC) know their binding and nothing of any protocol; a
 * profile adds a protocol's headers, request fields and error classes, the
 * way the server's profile does.
 */
import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { RpcError, isRpcError, type ErrorTableEntry, type RpcCodeName, type RpcErrorOptions } from "../errors.js";
import type { CallContext } from "../call-context.js";
import type { MethodSpec } from "../method-spec.js";
import { loadTracingApi, type TracingApi } from "../tracing.js";

/** What one call may carry besides its request. */
export interface ClientCallOptions {
  /** Aborts the call (and closes a stream); the call rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** A deadline for the whole call in milliseconds, streams included. */
  readonly timeoutMs?: number;
  /** More request headers (HTTP) or metadata (gRPC) for this call. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A call as a transport sends it: the request already prepared by the profile. */
export interface OutgoingCall {
  readonly spec: MethodSpec;
  readonly request: object;
  /** Headers or metadata, lower-case names: the client's, the profile's and the call's own. */
  readonly headers: Readonly<Record<string, string>>;
  /** Aborted by the caller's signal or the deadline. */
  readonly signal: AbortSignal | undefined;
  /** The deadline (epoch milliseconds), for a binding that sends it to the server (gRPC). */
  readonly deadline: number | undefined;
}

/** One binding's way of sending calls. */
export interface ClientTransport {
  unary(call: OutgoingCall): Promise<object>;
  stream(call: OutgoingCall): AsyncIterable<object>;
  /** Closes connections the transport keeps (gRPC channels). */
  close?(): void;
  /**
   * Waits, at most `timeoutMs`, while a call made now would fail at once for
   * want of a connection: gRPC's channel between its reconnection attempts
   * (TRANSIENT_FAILURE). Absent where every call dials (the JSON bindings).
   */
  waitForConnection?(timeoutMs: number, signal: AbortSignal | undefined): Promise<void>;
}

/**
 * The key of a client's wait for its connection (the transport's
 * waitForConnection), which stream recovery (D30) calls before a
 * reconnection. A symbol, so no RPC's name can take it.
 */
export const connectionWait: unique symbol = Symbol("protoc-gen-a2a.connectionWait");

/** How a failed call's status becomes an error the caller can branch on. */
export interface ClientErrors {
  /** The error for a status: by `ErrorInfo` reason and domain when there is one, else by its code. */
  create(entry: ErrorTableEntry, message: string, options: RpcErrorOptions): RpcError;
  /** The entry of an `ErrorInfo` reason in `domain`, if the profile knows it. */
  byReason(reason: string, domain: string): ErrorTableEntry | undefined;
  /** The entry of a JSON-RPC error code, if the profile has one of its own. */
  byJsonRpcCode(code: number): ErrorTableEntry | undefined;
  /** The entry of a status that came with neither. */
  byCode(code: RpcCodeName): ErrorTableEntry;
}

/** A protocol's rules on the client side. */
export interface ClientProfile {
  readonly errors: ClientErrors;
  /** Headers or metadata every call carries (lower-case names). */
  headers(): Readonly<Record<string, string>>;
  /** The request as it is sent, e.g. with fields the connection implies filled in. */
  request(spec: MethodSpec, request: object): object;
  /** What a call made for a handler's caller passes on from that caller's context (binding translation). */
  forward(context: CallContext): Readonly<Record<string, string>>;
}

/** A typed unary method of a client. */
export type UnaryClientMethod<I extends DescMessage, O extends DescMessage> = (
  request: MessageInitShape<I>,
  options?: ClientCallOptions | CallContext,
) => Promise<MessageShape<O>>;

/** A typed server-streaming method of a client. */
export type StreamClientMethod<I extends DescMessage, O extends DescMessage> = (
  request: MessageInitShape<I>,
  options?: ClientCallOptions | CallContext,
) => AsyncIterable<MessageShape<O>>;

/** What every generated client has beside its methods. */
export interface ClientBase {
  /** Closes the connections of the client's transport. */
  close(): void;
  /** Waits, at most `timeoutMs`, while the transport is between reconnection attempts (gRPC); see ClientTransport. */
  readonly [connectionWait]?: (timeoutMs: number, signal: AbortSignal | undefined) => Promise<void>;
}

/** The client of a generated method table: each RPC by its local name, typed by its kind and messages. */
export type ClientOf<M extends Readonly<Record<string, MethodSpec>>> = ClientBase & {
  readonly [K in keyof M]: M[K] extends MethodSpec<infer I, infer O>
    ? M[K]["kind"] extends "unary"
      ? UnaryClientMethod<I, O>
      : StreamClientMethod<I, O>
    : never;
};

export interface ServiceClientConfig {
  /** The generated method table. */
  readonly methods: Readonly<Record<string, MethodSpec>>;
  readonly transport: ClientTransport;
  readonly profile: ClientProfile;
  /** Headers (or metadata) every call of this client carries. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Headers computed per call, e.g. a fresh bearer token. */
  readonly callHeaders?: (spec: MethodSpec) => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>;
  /**
   * OpenTelemetry (D35): the trace context active when a call is made goes
   * with it (`traceparent`, `tracestate`) through the API's propagator.
   * Default: `@opentelemetry/api` if it is installed; `false` sends none;
   * or the API module itself.
   */
  readonly tracing?: TracingApi | false | undefined;
}

/**
 * `@opentelemetry/api` for clients that did not say: loaded once, on the
 * first client made, and known to every call once it settled (a call made
 * before waits for it, so the first call is traced too).
 */
const autoTracing: { api: TracingApi | undefined; pending: Promise<unknown> | undefined } = { api: undefined, pending: undefined };
let autoTracingStarted = false;
function startAutoTracing(): void {
  if (autoTracingStarted) return;
  autoTracingStarted = true;
  autoTracing.pending = loadTracingApi().then((api) => {
    autoTracing.api = api;
    autoTracing.pending = undefined;
  });
}

/** The trace context of the caller, into a call's headers (D35). */
function injectTrace(api: TracingApi, headers: Record<string, string>): void {
  api.propagation.inject(api.context.active(), headers);
}

/**
 * The client of one service: a method per entry of the table, each
 * preparing its call (profile, headers, deadline) and handing it to the
 * transport. Typed by the generated `<Service>Client` interface.
 */
export function createServiceClient(config: ServiceClientConfig): ClientBase & Record<string, (request: object, options?: ClientCallOptions | CallContext) => unknown> {
  const fixed = { ...config.profile.headers(), ...lowerCaseKeys(config.headers) };
  const tracing = config.tracing;
  if (tracing === undefined) startAutoTracing();
  const client: ClientBase & Record<string, (request: object, options?: ClientCallOptions | CallContext) => unknown> = {
    close: () => config.transport.close?.(),
  } as never;
  const transport = config.transport;
  if (transport.waitForConnection !== undefined) (client as { [connectionWait]?: unknown })[connectionWait] = (timeoutMs: number, signal: AbortSignal | undefined) => transport.waitForConnection!(timeoutMs, signal);
  const callHeaders = config.callHeaders;
  for (const spec of Object.values(config.methods)) {
    const build = (request: object, options: ClientCallOptions | undefined, computed: Readonly<Record<string, string>> | undefined): OutgoingCall => {
      const headers = { ...fixed };
      if (computed !== undefined) addLowerCase(headers, computed);
      if (options?.headers !== undefined) addLowerCase(headers, options.headers);
      if (tracing === undefined) {
        if (autoTracing.api !== undefined) injectTrace(autoTracing.api, headers);
      } else if (tracing !== false) {
        injectTrace(tracing, headers);
      }
      return {
        spec,
        request: config.profile.request(spec, request),
        headers,
        signal: callSignal(options),
        deadline: options?.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs,
      };
    };
    // A call is prepared at once when nothing is to be waited for (no per-call
    // headers, the tracing API settled): one promise less per call.
    const prepare = (request: object, given: ClientCallOptions | CallContext | undefined): OutgoingCall | Promise<OutgoingCall> => {
      const options = isCallContext(given) ? { signal: given.signal, headers: config.profile.forward(given) } : given;
      if (callHeaders === undefined && (tracing !== undefined || autoTracing.pending === undefined)) return build(request, options, undefined);
      return (async () => {
        const computed = await callHeaders?.(spec);
        if (tracing === undefined && autoTracing.pending !== undefined) await autoTracing.pending;
        return build(request, options, computed);
      })();
    };
    const send = (call: OutgoingCall): Promise<unknown> => config.transport.unary(call).catch((err: unknown) => Promise.reject(transportFailure(err, call.signal)));
    client[spec.localName] =
      spec.kind === "unary"
        ? (request, options) => {
            try {
              const prepared = prepare(request, options);
              return prepared instanceof Promise ? prepared.then(send) : send(prepared);
            } catch (err) {
              return Promise.reject(err);
            }
          }
        : (request, options) => stream(async () => prepare(request, options), config.transport);
  }
  return client;
}

/**
 * What a call that did not get an answer fails with, the same on every
 * binding: the agent's own error as it sent it; CANCELLED when the caller
 * aborted, DEADLINE_EXCEEDED when the deadline passed; UNAVAILABLE when the
 * connection failed or was cut (a stream's recovery retries on it); INTERNAL
 * for an error of the language itself (a RangeError, say), which no retry mends.
 */
export function transportFailure(err: unknown, signal: AbortSignal | undefined): RpcError {
  if (isRpcError(err) && !(signal?.aborted === true && (err.entry.grpcStatus === "CANCELLED" || err.entry.grpcStatus === "DEADLINE_EXCEEDED"))) return err;
  if (signal?.aborted === true) {
    const reason: unknown = signal.reason;
    const timedOut = reason instanceof DOMException && reason.name === "TimeoutError";
    return new RpcError(timedOut ? "DEADLINE_EXCEEDED" : "CANCELLED", timedOut ? "the call's deadline passed" : "the caller aborted the call", { cause: reason });
  }
  const detail = err instanceof Error ? (err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message) : String(err);
  // An error of the language, not of the connection (a string too long to make: RangeError "Invalid
  // string length"): retrying it only does it again.
  if (languageError(err)) return new RpcError("INTERNAL", `the client failed reading the answer: ${detail}`, { cause: err });
  return new RpcError("UNAVAILABLE", `the connection failed: ${detail}`, { cause: err });
}

/** A RangeError or the like; never a TypeError, which the Fetch standard makes a network error (bare, in browsers, workers and mocks). */
function languageError(err: unknown): boolean {
  return err instanceof RangeError || err instanceof ReferenceError || err instanceof SyntaxError || err instanceof EvalError || err instanceof URIError;
}

/** A stream whose call is prepared when it is first read, failing as transportFailure says. */
async function* stream(prepare: () => Promise<OutgoingCall>, transport: ClientTransport): AsyncGenerator<object> {
  const call = await prepare();
  try {
    for await (const event of transport.stream(call)) {
      // Events already received are not handed out once the caller aborted.
      if (call.signal?.aborted === true) break;
      yield event;
    }
  } catch (err) {
    throw transportFailure(err, call.signal);
  }
  if (call.signal?.aborted === true) throw transportFailure(call.signal.reason, call.signal);
}

/**
 * A handler's call context, given where call options go: the client serves
 * as a handler (an agent reached over one binding served over the others).
 * Only the caller's abort signal and what the profile forwards pass on; the
 * caller's own headers are not the upstream call's.
 */
function isCallContext(value: ClientCallOptions | CallContext | undefined): value is CallContext {
  return value !== undefined && "binding" in value && value.headers instanceof Headers;
}

/** The call's signal: the caller's, the deadline's, or both. */
function callSignal(options: ClientCallOptions | undefined): AbortSignal | undefined {
  const deadline = options?.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
  if (options?.signal === undefined) return deadline;
  return deadline === undefined ? options.signal : AbortSignal.any([options.signal, deadline]);
}

function lowerCaseKeys(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers !== undefined) addLowerCase(out, headers);
  return out;
}

function addLowerCase(into: Record<string, string>, headers: Readonly<Record<string, string>>): void {
  for (const k in headers) into[k.toLowerCase()] = headers[k]!;
}
