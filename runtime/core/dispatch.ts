/**
 * The one call sequence every binding runs, whatever its framing: open the
 * request's scope (the profile's, e.g. version negotiation), authenticate,
 * admit (the profile's policy), decode strictly (D10) and check REQUIRED
 * fields (D11), admit what the request asks for (the profile's again), build
 * the handler's context, call the handler or answer for
 * a left-out method, write the result with REQUIRED defaults, and open a
 * stream after pulling its first event (D14) with the profile's stream
 * rules. JSON-RPC and HTTP+JSON differ only in framing; gRPC shares all of
 * it but the JSON.
 */
import type { DescMessage, JsonValue, Message } from "@bufbuild/protobuf";
import type { Authenticate, Binding, CallContext } from "./call-context.js";
import type { CallScope, ScopeRequest } from "./call-scope.js";
import { JsonDecodeError, decodeJson } from "./codec/proto-json.js";
import { jsonWriter } from "./codec/json-writer.js";
import { findMissingRequired } from "./codec/required-fields.js";
import { badRequest } from "./error-encoding.js";
import { RpcError, isRpcError, type CoreErrorTable } from "./errors.js";
import { failureReporter, type FailureInfo, type Logger, type OnError } from "./failures.js";
import { createEventSource, createOpenedEventSource, releaseIterator, type EventEncoder } from "./event-stream.js";
import type { MethodSpec, RequiredFieldTable } from "./method-spec.js";
import { coreProfile, type Profile, type StreamCheck } from "./profile.js";
import { CallTracer, type CallSpan, type TracingApi } from "./tracing.js";
import type { EventSource } from "./transport.js";

/** What every binding's endpoint is made from: the generated tables, the handler, and optionally a profile. */
export interface DispatchConfig<H extends object = object> {
  /** The generated REQUIRED-fields table of the service. */
  readonly required: RequiredFieldTable;
  readonly handler: H;
  /** The protocol's rules on top of the bindings' own (the A2A profile); default none. */
  readonly profile?: Profile | undefined;
  /** Turns a request's headers or metadata into the principal, or refuses it; runs first on every call. */
  readonly authenticate?: Authenticate | undefined;
  /** Hears of each unexpected handler failure (the client gets Internal). Default: `logger`'s `error`. */
  readonly onError?: OnError | undefined;
  /** Where unexpected failures are logged when there is no `onError`: pino or any `{ error(obj, msg) }`. Default: one JSON line on stderr. */
  readonly logger?: Logger | undefined;
  /**
   * `@opentelemetry/api` (the module: `import * as api from "@opentelemetry/api"`):
   * a server span per call (D35). Default none: no span, no cost.
   */
  readonly tracing?: TracingApi | undefined;
}

/** A call past its preamble: the decoded request and the handler's context. */
export interface Started {
  readonly request: Message;
  readonly context: CallContext;
}

export interface Dispatcher {
  /** How the core's own errors are spelled: the profile's table. */
  readonly errors: CoreErrorTable;
  /** The JSON media type of HTTP+JSON responses when the request states none it accepts. */
  readonly mediaType: string;
  /** Starts each call's span when tracing is on (D35); undefined when it is off, the one thing a binding checks then. */
  readonly tracer: CallTracer | undefined;
  /** Opens a transport request's scope; throws the error that refuses all its calls. */
  open(binding: Binding, request: ScopeRequest, query: URLSearchParams | undefined): CallScope;
  /**
   * The preamble of one call: authentication and the profile's admission
   * (before anything is decoded for a caller that may be refused), then
   * `decode`, then the handler's context. Synchronous when nothing awaits
   * (no authentication hook, a decode that returns a message), so a busy
   * unary path makes no promise here. `awaited` false: no one waits for the
   * answer (a JSON-RPC notification), so the call runs whether or not its
   * client is still there once an asynchronous hook settled.
   */
  start(spec: MethodSpec, scope: CallScope, decode: () => Message | Promise<Message>, awaited?: boolean): Started | Promise<Started>;
  /** Decodes and validates a request message from ProtoJSON; throws InvalidParams naming the fields at fault. */
  decode(spec: MethodSpec, json: JsonValue): Message;
  /** Checks REQUIRED fields of a request decoded elsewhere (gRPC binary) and returns it; throws InvalidParams. */
  checked(spec: MethodSpec, request: Message): Message;
  /** InvalidParams for a request that could not be decoded, the field at fault in a BadRequest. */
  invalidParams(err: JsonDecodeError): RpcError;
  /**
   * Calls the handler's method for `spec` and returns what it returned (a
   * promise, an async iterable, or a value), or throws the error for a
   * left-out method. For bindings that chain the result themselves.
   */
  invoke(spec: MethodSpec, request: Message, context: CallContext): unknown;
  /** Calls a unary method (in the span's context, when traced) and writes its result as ProtoJSON. */
  unary(spec: MethodSpec, request: Message, context: CallContext, span?: CallSpan): Promise<JsonValue>;
  /**
   * Calls a streaming method for gRPC: the handler's iterator, with the
   * profile's stream rules applied to each result; pulled in the span's
   * context when traced (the binding ends the span).
   */
  streamMessages(spec: MethodSpec, request: Message, context: CallContext, span?: CallSpan): MessageStream;
  /**
   * Calls a streaming method and pulls its first event, so an error before
   * it still throws here; later events and errors go through the source.
   */
  openStream(spec: MethodSpec, request: Message, context: CallContext, framing: StreamFraming, span?: CallSpan): Promise<EventSource>;
  /** Headers (or initial metadata) the profile adds to the response once the handler ran. */
  responseHeaders(scope: CallScope): Readonly<Record<string, string>> | undefined;
  /**
   * The headers an HTTP answer of `failure` carries for it: `WWW-Authenticate` on an
   * UNAUTHENTICATED one (the error's challenge, else the profile's; RFC 9110 §11.6.1), else none.
   */
  failureHeaders(failure: RpcError): Readonly<Record<string, string>> | undefined;
  /**
   * The error to answer `err` with: an RpcError as it is, anything else as
   * Internal, reported to onError (unless the call was aborted first: then
   * the failure is the abort's, and no one is waiting for the answer).
   */
  failure(err: unknown, info: FailureInfo, scope?: CallScope): RpcError;
  /** Reports an unexpected failure that has no answer to go with (a gRPC response that could not be encoded). */
  report(err: unknown, info: FailureInfo): void;
  /** Reports a failure that escaped an endpoint of `binding` (Endpoint.report): its method is not known then. */
  reportUnanswered(err: unknown, binding: Binding): void;
}

/**
 * How a binding frames one stream's events. Methods, not function fields: a
 * binding can answer with one small object per stream (JSON-RPC's carries
 * the call's id) instead of a closure per member.
 */
export interface StreamFraming {
  /** The `data:` payload of one event, from its ProtoJSON. */
  event(json: JsonValue): string;
  /** The `data:` payload of the error that ends the stream. */
  error(err: unknown): string;
  /** SSE event name of that error frame, if the binding names it. */
  readonly errorEvent?: string | undefined;
  /** Aborts the call's signal; `failed`: because the stream failed on the server's side, a failure still to be reported. */
  abort(failed?: boolean): void;
  readonly heartbeatMs: number;
}

/**
 * A handler's stream as the gRPC binding pulls it: the writer calls the
 * handler's iterator itself, so an idle stream waits on one pending next()
 * with nothing of ours suspended around it.
 */
export interface MessageStream {
  readonly iterator: AsyncIterator<unknown>;
  /**
   * The message to send for one result of `iterator.next()`, or undefined
   * when the stream is over; throws the error that ends it.
   */
  accept(result: IteratorResult<unknown>): Message | undefined;
}

type HandlerFn = (request: Message, context: CallContext) => unknown;

/**
 * A handler's result on the gRPC path, left as the handler gave it: the
 * generated definition serializes with its emitted codec, which
 * writes an init shape exactly as `toBinary(create(desc, value))` would, so
 * creating the message first would only build a tree to be read once. Typed
 * as a Message because that is what grpc-js is told the definition takes.
 */
function grpcResult(value: unknown): Message {
  return value as Message;
}

/** True for a promise (or thenable): what a binding awaits, where a plain value it takes as it is, with no tick lost. */
export function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

export function createDispatcher(config: DispatchConfig): Dispatcher {
  const { required, authenticate } = config;
  const profile = config.profile ?? coreProfile;
  const errors = profile.errors;
  const handler = config.handler as Record<string, HandlerFn | undefined>;
  const write = (desc: DescMessage, value: unknown) => jsonWriter(desc, required)(value);
  const report = failureReporter(config);
  const tracer = config.tracing === undefined ? undefined : new CallTracer(config.tracing, profile.trace);

  function invoke(spec: MethodSpec, request: Message, context: CallContext): unknown {
    const fn = handler[spec.localName];
    // An RPC named e.g. HasOwnProperty must not find Object.prototype's method.
    const inherited = (Object.prototype as unknown as Record<string, unknown>)[spec.localName];
    if (typeof fn !== "function" || fn === inherited) throw profile.unimplemented(spec);
    return fn.call(handler, request, context);
  }

  function checked(spec: MethodSpec, request: Message): Message {
    const missing = findMissingRequired(spec.input, request, required);
    if (missing.length > 0) {
      const fields = missing.map((v) => v.field).join(", ");
      throw new RpcError(errors.InvalidParams, `missing required field${missing.length > 1 ? "s" : ""}: ${fields}`, {
        details: [badRequest(missing)],
      });
    }
    return request;
  }

  function invalidParams(err: JsonDecodeError): RpcError {
    const details = err.field === undefined ? [] : [badRequest([{ field: err.field, description: err.reason }])];
    return new RpcError(errors.InvalidParams, `invalid params: ${err.message}`, { details });
  }

  function admitted(spec: MethodSpec, scope: CallScope, decode: () => Message | Promise<Message>): Started | Promise<Started> {
    profile.admit(spec, scope);
    const request = decode();
    if (isPromiseLike(request)) return Promise.resolve(request).then((r) => decoded(spec, scope, r));
    return decoded(spec, scope, request);
  }

  function decoded(spec: MethodSpec, scope: CallScope, request: Message): Started {
    profile.admitRequest?.(spec, scope, request);
    return { request, context: profile.context(scope, request) };
  }

  /** The handler's stream: its iterator, pulled in the span's context when traced. */
  function iterate(spec: MethodSpec, request: Message, context: CallContext, span: CallSpan | undefined, endOnDone: boolean): AsyncIterator<unknown> {
    if (span === undefined) return (invoke(spec, request, context) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    const iterable = span.run(() => invoke(spec, request, context)) as AsyncIterable<unknown>;
    return span.iterator(iterable[Symbol.asyncIterator](), endOnDone);
  }

  return {
    errors,
    mediaType: profile.mediaType,
    tracer,

    open: (binding, request, query) => profile.open(binding, request, query),

    start(spec, scope, decode, awaited = true) {
      if (authenticate === undefined) return admitted(spec, scope, decode);
      return scope
        .authenticate(spec.name, () => authenticate({ binding: scope.binding, method: spec.name, headers: scope.headers }))
        .then((principal) => {
          // Gone while the hook looked the caller up: nothing is run for it (a task nobody waits for).
          if (awaited && scope.leftWhileAuthenticating) throw new RpcError("CANCELLED", "the client went away while it was being authenticated");
          scope.admitAs(principal);
          return admitted(spec, scope, decode);
        });
    },

    decode(spec, json) {
      let request: Message;
      try {
        request = decodeJson(spec.input, json);
      } catch (err) {
        if (!(err instanceof JsonDecodeError)) throw err;
        throw invalidParams(err);
      }
      return checked(spec, request);
    },

    checked,

    invalidParams,

    invoke,

    streamMessages(spec, request, context, span) {
      return new CheckedMessages(iterate(spec, request, context, span, false), profile.streamCheck(spec));
    },

    async unary(spec, request, context, span) {
      let result: unknown;
      if (span === undefined) {
        result = await invoke(spec, request, context);
      } else {
        result = await span.run(() => invoke(spec, request, context));
        span.message(result, "response");
      }
      const json = write(spec.output, result);
      profile.shapeJson?.(spec, request, json);
      return json;
    },

    async openStream(spec, request, context, framing, span) {
      const encoder = new FramedEvents(spec.output, profile.streamCheck(spec), framing, write);
      let iterator: AsyncIterator<unknown> | undefined;
      let first: string | undefined;
      try {
        iterator = iterate(spec, request, context, span, true);
        const pending = iterator.next();
        const r = framing.heartbeatMs > 0 ? await withinPeriod(pending, framing.heartbeatMs) : await pending;
        // Slower than a heartbeat period (D14): the stream opens now, so that its headers and heartbeats
        // reach the client and any proxy before their read timeouts; a later failure is its last event.
        if (r === late) {
          return createOpenedEventSource(iterator, pending, encoder, framing.heartbeatMs, () => {
            endStream(encoder.check);
            span?.end();
          });
        }
        // Nothing yielded: the profile may say a stream owes an event (A2A's D15 does).
        if (r.done === true) {
          endStream(encoder.check);
          span?.end();
        }
        // Encoded before answering, so an unencodable first event is still a plain error response.
        else first = encoder.event(r.value);
      } catch (err) {
        // The handler is let go at once, as failed: the binding answers (and reports) the
        // failure after this, and one reported after a plain abort would read as the client's;
        // its span too, which the release would otherwise end as the client leaving.
        framing.abort(true);
        span?.failing();
        releaseIterator(iterator);
        throw err;
      }
      return createEventSource(iterator, first, encoder, framing.heartbeatMs);
    },

    responseHeaders: (scope) => sendable(profile.responseHeaders(scope)),

    failureHeaders(failure) {
      if (failure.entry.grpcStatus !== "UNAUTHENTICATED") return undefined;
      const challenge = failure.challenge ?? profile.challenge;
      return challenge === undefined ? undefined : { "www-authenticate": challenge };
    },

    failure(err, info, scope) {
      if (isRpcError(err)) return profile.answerError === undefined ? err : profile.answerError(err);
      if (scope?.aborted !== true) reportSafely(report, err, info);
      return new RpcError(errors.Internal, undefined, { cause: err });
    },

    report: (err, info) => reportSafely(report, err, info),

    reportUnanswered: (err, binding) => reportSafely(report, err, { binding, method: "(unanswered)" }),
  };
}

/** What `withinPeriod` answers when the pull took longer. */
const late = Symbol("the first event is late");

/** `pending`'s result, or `late` if it takes longer than `ms`; its failure either way is handled (the stream takes it over when late). */
function withinPeriod<T>(pending: Promise<T>, ms: number): Promise<T | typeof late> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms, late);
    // A pull that never settles holds no process open for it (the connection does, while it lasts).
    (timer as { unref?: () => void }).unref?.();
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** A hook that throws must not turn one failure into another. */
function reportSafely(report: OnError, err: unknown, info: FailureInfo): void {
  try {
    report(err, info);
  } catch {
    // Nothing is left to tell: the hook itself failed.
  }
}

type WriteJson = (desc: DescMessage, value: unknown) => JsonValue;

/** The profile's stream rules on one of the handler's events. */
function acceptEvent(check: StreamCheck | undefined, value: unknown): void {
  const problem = check?.next(value);
  if (problem !== undefined) throw problem;
}

/** The profile's stream rules at the handler's end of stream. */
function endStream(check: StreamCheck | undefined): void {
  const problem = check?.end();
  if (problem !== undefined) throw problem;
}

/** One stream's events on the HTTP bindings: the profile's stream rules, ProtoJSON with REQUIRED defaults, the binding's framing. */
class FramedEvents implements EventEncoder<unknown> {
  constructor(
    private readonly output: DescMessage,
    readonly check: StreamCheck | undefined,
    private readonly framing: StreamFraming,
    private readonly write: WriteJson,
  ) {}

  get errorEvent(): string | undefined {
    return this.framing.errorEvent;
  }

  event(value: unknown): string {
    acceptEvent(this.check, value);
    return this.framing.event(this.write(this.output, value));
  }

  error(err: unknown): string {
    return this.framing.error(err);
  }

  abort(failed?: boolean): void {
    this.framing.abort(failed);
  }
}

/** One stream's results on the gRPC path, checked by the profile's stream rules. */
class CheckedMessages implements MessageStream {
  constructor(
    readonly iterator: AsyncIterator<unknown>,
    private readonly check: StreamCheck | undefined,
  ) {}

  accept(r: IteratorResult<unknown>): Message | undefined {
    if (r.done === true) {
      endStream(this.check);
      return undefined;
    }
    acceptEvent(this.check, r.value);
    return grpcResult(r.value);
  }
}

/**
 * The profile's response headers a transport can carry: a value other than printable ASCII
 * (CR/LF, NUL, an é) is left out, on every binding alike. node refused the whole answer's headers
 * after the handler had run (the JSON bindings answered an empty 500), and grpc-js's Metadata.set
 * threw (no answer, an unhandled rejection). Copied only when one is left out.
 */
function sendable(headers: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> | undefined {
  if (headers === undefined) return undefined;
  let out: Record<string, string> | undefined;
  for (const name in headers) {
    if (printable.test(headers[name]!)) continue;
    out ??= { ...headers };
    delete out[name];
  }
  return out ?? headers;
}

const printable = /^[\x20-\x7e]*$/;
