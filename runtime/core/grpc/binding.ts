/**
 * The gRPC binding on @grpc/grpc-js: a generated service definition served
 * with the same dispatcher as the HTTP bindings, so REQUIRED validation
 * (D11), left-out methods, the profile's rules (A2A: versions, gating,
 * stream rules) and its error table behave the same on all three. Reached through
 * the "protoc-gen-a2a/runtime/grpc" entry, apart from the main runtime, so
 * JSON-only agents never load grpc-js.
 */
import type { Message } from "@bufbuild/protobuf";
import { Metadata, status, type MethodDefinition, type Server, type ServerUnaryCall, type ServerWritableStream, type ServiceDefinition, type ServiceError, type UntypedServiceImplementation, type sendUnaryData } from "@grpc/grpc-js";
import { clientLeft, signalOnClose, type Abortable, type CallScope, type ScopeRequest } from "../call-scope.js";
import { jsonProblemOf } from "../codec/json-representable.js";
import { createDispatcher, isPromiseLike, type DispatchConfig, type Dispatcher, type MessageStream, type Started } from "../dispatch.js";
import { grpcStatusParts, rpcCode } from "../error-encoding.js";
import { RpcError } from "../errors.js";
import { releaseIterator } from "../event-stream.js";
import type { MethodSpec } from "../method-spec.js";
import type { CallSpan, ServerEndpoint } from "../tracing.js";

/** What a generated `add<Service>ToServer` takes besides the handler: authentication, for a service with no profile. */
export type GrpcOptions = Pick<DispatchConfig, "authenticate" | "onError" | "logger" | "tracing">;

export interface GrpcServiceConfig<H extends object> extends DispatchConfig<H> {
  /** The generated grpc-js service definition. */
  readonly definition: ServiceDefinition;
  /** The generated method table, keyed like the definition. */
  readonly methods: Readonly<Record<string, MethodSpec>>;
  /**
   * Whether the server's ports are TLS, for the default port of an authority that names none
   * (D35: a span's server.port). serveAgent knows it; left out, the call's auth context tells it,
   * which grpc-js fills for a client it authorized (mTLS) alone, and no port is recorded otherwise.
   */
  readonly secure?: boolean;
}

/** Adds the service to `server`, served by `handler`. */
export function addGrpcService<H extends object>(server: Server, config: GrpcServiceConfig<H>): void {
  const dispatch = createDispatcher(config);
  const secure = config.secure;
  const implementation: UntypedServiceImplementation = {};
  for (const [key, spec] of Object.entries(config.methods)) {
    implementation[key] =
      spec.kind === "unary"
        ? (call: ServerUnaryCall<Message, Message>, callback: sendUnaryData<Message>) => {
            const tracer = dispatch.tracer;
            if (tracer === undefined) {
              unary(dispatch, spec, call, callback, new GrpcRequest(call, secure), undefined);
              return;
            }
            const req = new GrpcRequest(call, secure);
            const span = tracer.start("GRPC", spec, req);
            if (span === undefined) unary(dispatch, spec, call, callback, req, undefined);
            else span.run(() => unary(dispatch, spec, call, callback, req, span));
          }
        : (call: ServerWritableStream<Message, Message>) => {
            const stream = new ServerStream(call, new GrpcRequest(call, secure), dispatch);
            const span = dispatch.tracer?.start("GRPC", spec, stream.req);
            if (span === undefined) stream.start(spec);
            else stream.traced(spec, span);
          };
  }
  server.addService(withCodecFailures(config.definition, config.methods, dispatch), implementation);
}

/**
 * What a request deserializer hands grpc-js for bytes that are not a message
 * of the method's type. grpc-js answers INTERNAL ("Error deserializing
 * request") when the deserializer throws; passed on as this, the call is
 * answered InvalidParams (INVALID_ARGUMENT) like a JSON body that does not
 * decode (D90).
 */
class UndecodableRequest {
  /** `what`: what is wrong with the request, as the client is told. */
  constructor(readonly what: string) {}
}

/** The request grpc-js decoded, or InvalidParams for bytes that were not one (UndecodableRequest). */
function decoded(dispatch: Dispatcher, request: unknown): Message {
  if (request instanceof UndecodableRequest) {
    throw new RpcError(dispatch.errors.InvalidParams, `invalid params: the request ${request.what}`);
  }
  return request as Message;
}

/**
 * The definition with each response serializer reporting what it cannot
 * encode (a plain object where a google.protobuf.Value goes, say): grpc-js
 * answers INTERNAL without saying why, as the JSON bindings answer Internal,
 * and the server hears of it as it does of a handler that throws. Each
 * request deserializer hands bytes it cannot decode on as an
 * UndecodableRequest, which the call answers InvalidParams (D90).
 */
function withCodecFailures(definition: ServiceDefinition, methods: Readonly<Record<string, MethodSpec>>, dispatch: Dispatcher): ServiceDefinition {
  const out: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const [key, method] of Object.entries(definition)) {
    const spec = methods[key];
    const serialize = method.responseSerialize;
    const deserialize = method.requestDeserialize;
    const streaming = method.responseStream;
    if (spec !== undefined && streaming) streamSerializers.set(spec, serialize);
    out[key] =
      spec === undefined
        ? method
        : {
            ...method,
            requestDeserialize: (bytes: Buffer) => {
              let request: unknown;
              try {
                request = deserialize(bytes);
              } catch (err) {
                return new UndecodableRequest(`is not a ${spec.input.typeName} in protobuf binary: ${err instanceof Error ? err.message : String(err)}`);
              }
              // What the JSON bindings could not answer with later (a task holding it, D90).
              const problem = jsonProblemOf(spec.input, request as object);
              return problem === undefined ? request : new UndecodableRequest(`holds what its JSON form cannot: ${problem}`);
            },
            responseSerialize: (value: unknown) => {
              // A stream's messages come encoded (ServerStream); a unary answer never does (a handler's Buffer is no message).
              if (streaming && Buffer.isBuffer(value)) return value;
              try {
                return serialize(value);
              } catch (err) {
                encodeFailures.count++;
                dispatch.report(err, { binding: "GRPC", method: spec.name });
                throw new Error("the handler's response could not be encoded");
              }
            },
          };
  }
  return out as ServiceDefinition;
}

/**
 * Responses that could not be encoded, counted: grpc-js serializes a unary
 * response inside the callback, so a traced call tells from the count
 * whether its answer was written or failed.
 */
const encodeFailures = { count: 0 };

/** The response serializer of each server-streaming method: a stream encodes its messages itself. */
const streamSerializers = new WeakMap<MethodSpec, (value: unknown) => Buffer>();

type GrpcCall = ServerUnaryCall<Message, Message> | ServerWritableStream<Message, Message>;

/**
 * The call as the call scope reads a request: metadata as headers, a close
 * on cancel or deadline. A class rather than an object literal with getters
 * and closures: one allocation per call, the rest made on first use.
 */
class GrpcRequest implements ScopeRequest {
  #signal: AbortSignal | undefined;
  #headers: Headers | undefined;
  /** Aborted once the call is cancelled or past its deadline; undefined until something asks. */
  #targets: Abortable[] | undefined;
  #closed = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #onCancel: (() => void) | undefined;
  /** Until a unary call is answered (`release`): a task it started may run long after, and must not keep grpc-js's call. */
  #call: GrpcCall | undefined;
  /** What is kept of the call for a context read after that: its metadata. */
  readonly #metadata: Metadata;

  /** Whether the server's ports are TLS, when the server said (GrpcServiceConfig.secure). */
  readonly #secure: boolean | undefined;

  constructor(call: GrpcCall, secure: boolean | undefined) {
    this.#call = call;
    this.#metadata = call.metadata;
    this.#secure = secure;
  }

  header(name: string): string | null {
    const values = this.#metadata.get(name);
    let joined: string | null = null;
    for (const v of values) {
      if (typeof v === "string") joined = joined === null ? v : `${joined}, ${v}`;
    }
    return joined;
  }

  /** `:authority`, which grpc-js keeps out of the metadata (D35: the span's server.address). */
  authority(): string | undefined {
    const call = this.#call;
    return call === undefined || typeof call.getHost !== "function" ? undefined : call.getHost();
  }

  /**
   * Only whether the call came over TLS: the default port of an authority without one. grpc-js's
   * auth context names the transport for a client it authorized alone (mTLS): a TLS call without a
   * client certificate reads as `{}`, as a plaintext one does, so that is no answer (no port is
   * recorded rather than 80); the server's own word (`secure`) comes first.
   */
  local(): ServerEndpoint | undefined {
    if (this.#secure !== undefined) return { secure: this.#secure };
    const call = this.#call as (GrpcCall & { getAuthContext?: () => { transportSecurityType?: string } }) | undefined;
    if (call === undefined || typeof call.getAuthContext !== "function") return undefined;
    return call.getAuthContext().transportSecurityType === undefined ? undefined : { secure: true };
  }

  get headers(): Headers {
    if (this.#headers === undefined) {
      const headers = new Headers();
      for (const [name, value] of Object.entries(this.#metadata.getMap())) {
        if (typeof value === "string") headers.append(name, value);
      }
      this.#headers = headers;
    }
    return this.#headers;
  }

  get signal(): AbortSignal {
    return (this.#signal ??= signalOnClose(this));
  }

  /** The client cancelled or the deadline passed (known once something asked with `onClose`). */
  get closed(): boolean {
    return this.#closed;
  }

  left(): boolean {
    const call = this.#call;
    return this.#closed || (call !== undefined && abandoned(call));
  }

  /**
   * Aborts `target` when the call is cancelled or its deadline passes (at
   * once if it was cancelled). One grpc-js listener and one timer per call
   * for every target: the scope's signal and the stream writer share them,
   * so a stream needs no AbortController of its own.
   */
  onClose(target: Abortable): void {
    if (this.#closed) {
      target.abort(clientLeft());
      return;
    }
    if (this.#targets !== undefined) {
      // concat() copies to the exact size; push() (and spreading) would grow a one-element array to 17 slots.
      this.#targets = this.#targets.concat(target);
      return;
    }
    const call = this.#call;
    // Answered: the call is over, and nothing aborts a signal asked for now (as one made before).
    if (call === undefined) return;
    this.#targets = [target];
    if (call.cancelled) {
      this.#close();
      return;
    }
    // grpc-js answers DEADLINE_EXCEEDED itself when the deadline passes but
    // does not always report it as a cancel: the handler learns it here.
    const ms = deadlineOf(call) - Date.now();
    // Past already: closed now, so a caller asking right after sees it.
    if (ms <= 0) {
      this.#close();
      return;
    }
    const close = () => this.#close();
    this.#onCancel = close;
    call.on("cancelled", close);
    if (Number.isFinite(ms)) this.#timer = setTimeout(close, ms);
  }

  /** Undoes what `onClose` set up; nothing unless something asked. */
  #done(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#onCancel !== undefined) this.#call?.off("cancelled", this.#onCancel);
    this.#timer = undefined;
    this.#onCancel = undefined;
  }

  /**
   * The call is answered, or its stream over (D114): undo what `onClose` set up and let go of grpc-js's call. A task the call started, which may run
   * for hours, holds its context and through it this object (the call held its stream's state).
   */
  release(): void {
    this.#done();
    this.#call = undefined;
    this.#targets = undefined;
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#done();
    const targets = this.#targets ?? [];
    this.#targets = undefined;
    const reason = clientLeft();
    for (const target of targets) target.abort(reason);
  }
}

/** The call's deadline in epoch ms (Infinity for none). */
function deadlineOf(call: { getDeadline(): Date | number }): number {
  const deadline = call.getDeadline();
  return deadline instanceof Date ? deadline.getTime() : Number(deadline);
}

/** Whether the call's deadline has passed: grpc-js answers DEADLINE_EXCEEDED itself then, without always marking the call cancelled. */
function pastDeadline(call: { getDeadline(): Date | number }): boolean {
  const ms = deadlineOf(call);
  return Number.isFinite(ms) && Date.now() >= ms;
}

/** Whether the call was over before its answer: the client cancelled it, or its deadline passed. */
function abandoned(call: { readonly cancelled: boolean; getDeadline(): Date | number }): boolean {
  return call.cancelled || pastDeadline(call);
}

/** Why an abandoned call ended. */
function leftWith(call: { getDeadline(): Date | number }): "CANCELLED" | "DEADLINE_EXCEEDED" {
  return pastDeadline(call) ? "DEADLINE_EXCEEDED" : "CANCELLED";
}

/**
 * A grpc-js error with the google.rpc.Status (ErrorInfo, BadRequest) in
 * `grpc-status-details-bin` (D19), and what the profile adds to an answer
 * (A2A: the extensions the handler activated, as the JSON bindings send them
 * with an error) unless the stream sent it already. A traced call's span ends with it.
 */
function serviceError(err: unknown, dispatch: Dispatcher, spec: MethodSpec, req: GrpcRequest, scope: CallScope | undefined, span: CallSpan | undefined, headersSent = false): Partial<ServiceError> {
  const failure = dispatch.failure(err, { binding: "GRPC", method: spec.name, requestId: req.header("x-request-id") ?? undefined }, scope);
  span?.end(failure);
  const metadata = new Metadata();
  const headers = scope === undefined || headersSent ? undefined : dispatch.responseHeaders(scope);
  if (headers !== undefined) setAll(metadata, headers);
  const sent = grpcStatusParts(failure);
  metadata.set("grpc-status-details-bin", Buffer.from(sent.details));
  return { code: rpcCode(failure.entry.grpcStatus) as status, details: sent.message, metadata };
}

/** Sends what the profile adds to the response (A2A: the extensions the handler activated) as initial metadata. */
function sendResponseHeaders(call: GrpcCall, dispatch: Dispatcher, scope: CallScope): void {
  const headers = dispatch.responseHeaders(scope);
  if (headers === undefined) return;
  const md = new Metadata();
  if (setAll(md, headers)) call.sendMetadata(md);
}

/** Sets the headers (dispatch.responseHeaders left out what grpc-js cannot carry); whether any was set. */
function setAll(md: Metadata, headers: Readonly<Record<string, string>>): boolean {
  let set = false;
  for (const name in headers) {
    md.set(name, headers[name]!);
    set = true;
  }
  return set;
}

/**
 * A unary call. Without an authentication hook to wait for, the handler is
 * called in the same tick and its promise is the only one the call makes:
 * this is the path every call of a busy gRPC agent takes.
 */
function unary(dispatch: Dispatcher, spec: MethodSpec, call: ServerUnaryCall<Message, Message>, callback: sendUnaryData<Message>, req: GrpcRequest, span: CallSpan | undefined): void {
  let scope: CallScope | undefined;
  // Answered either way: the call is let go (D114) before grpc-js has it.
  const fail = (err: unknown) => {
    req.release();
    // The client left or its deadline passed first: the span says so, not the handler's failure that followed.
    const over = abandoned(call);
    if (over) span?.cancelled(leftWith(call));
    callback(serviceError(err, dispatch, spec, req, scope, over ? undefined : span));
  };
  let result: unknown;
  try {
    scope = dispatch.open("GRPC", req, undefined);
    const started = dispatch.start(spec, scope, () => dispatch.checked(spec, decoded(dispatch, call.request)));
    if (span === undefined) {
      result = isPromiseLike(started) ? started.then((s) => dispatch.invoke(spec, s.request, s.context)) : dispatch.invoke(spec, started.request, started.context);
    } else {
      result = isPromiseLike(started) ? started.then((s) => invokeTraced(dispatch, spec, s, span)) : invokeTraced(dispatch, spec, started, span);
    }
  } catch (err) {
    fail(err);
    return;
  }
  const opened = scope;
  const respond = (value: unknown) => {
    req.release();
    sendResponseHeaders(call, dispatch, opened);
    // The handler's message or its init shape: the definition's serializeMessage writes either.
    if (span === undefined) {
      callback(null, value as Message);
      return;
    }
    span.message(value, "response");
    if (abandoned(call)) {
      // Answered after the client left or its deadline passed: nobody receives it.
      span.cancelled(leftWith(call));
      callback(null, value as Message);
      return;
    }
    // grpc-js serializes in the callback: a response that cannot be encoded is INTERNAL (see withCodecFailures).
    const encoded = encodeFailures.count;
    callback(null, value as Message);
    span.end(encodeFailures.count === encoded ? undefined : new RpcError(dispatch.errors.Internal, "the handler's response could not be encoded"));
  };
  if (isPromiseLike(result)) result.then(respond, fail);
  else respond(result);
}

/** The handler of a traced unary call, its request shown to the span. */
function invokeTraced(dispatch: Dispatcher, spec: MethodSpec, started: Started, span: CallSpan): unknown {
  span.message(started.request, "request");
  return dispatch.invoke(spec, started.request, started.context);
}

/**
 * A server-streaming call: the preamble, then the handler's events written
 * one at a time, waiting for `drain`. Callbacks on one object rather than an
 * async loop: an idle stream holds this object and the handler's pending
 * next(), nothing of ours suspended around it.
 */
class ServerStream implements Abortable {
  #messages: MessageStream | undefined;
  /** The profile's response headers go out with the first event. */
  #headersSent = false;
  readonly #onResult = (r: IteratorResult<unknown>): void => this.#write(r);
  readonly #onError = (err: unknown): void => this.#fail(err);
  /** The call, for its response headers and for reporting a failure: its method and, once opened, its scope. */
  #spec: MethodSpec | undefined;
  /** The method's response serializer: the stream encodes its messages itself (#write). */
  #serialize: ((value: unknown) => Buffer) | undefined;
  #scope: CallScope | undefined;
  /** The call's span when tracing is on (D35). */
  #span: CallSpan | undefined;

  constructor(
    private readonly call: ServerWritableStream<Message, Message>,
    readonly req: GrpcRequest,
    private readonly dispatch: Dispatcher,
  ) {}

  /** start(), in the span's context; the span ends with the stream. */
  traced(spec: MethodSpec, span: CallSpan): void {
    this.#span = span;
    span.run(() => this.start(spec));
  }

  start(spec: MethodSpec): void {
    const { dispatch } = this;
    this.#spec = spec;
    this.#serialize = streamSerializers.get(spec);
    let started: Started | Promise<Started>;
    try {
      const scope = dispatch.open("GRPC", this.req, undefined);
      this.#scope = scope;
      started = dispatch.start(spec, scope, () => dispatch.checked(spec, decoded(dispatch, this.call.request)));
    } catch (err) {
      this.#fail(err);
      return;
    }
    if (isPromiseLike(started)) started.then((s) => this.#open(spec, s), this.#onError);
    else this.#open(spec, started);
  }

  #open(spec: MethodSpec, started: Started): void {
    try {
      this.#span?.message(started.request, "request");
      this.#messages = this.dispatch.streamMessages(spec, started.request, started.context, this.#span);
    } catch (err) {
      this.#fail(err);
      return;
    }
    this.req.onClose(this);
    if (!this.req.closed) this.#pull();
  }

  #pull(): void {
    let pending: Promise<IteratorResult<unknown>>;
    try {
      pending = (this.#messages as MessageStream).iterator.next();
    } catch (err) {
      this.#fail(err);
      return;
    }
    pending.then(this.#onResult, this.#onError);
  }

  #write(r: IteratorResult<unknown>): void {
    const { call, req } = this;
    if (req.closed) return;
    let ok: boolean;
    try {
      const message = (this.#messages as MessageStream).accept(r);
      if (message === undefined) {
        call.end();
        req.release();
        this.#span?.end();
        return;
      }
      if (!this.#headersSent) {
        this.#headersSent = true;
        sendResponseHeaders(call, this.dispatch, this.#scope as CallScope);
      }
      // Encoded here, not by grpc-js as it writes (later, once an earlier message is out): one that
      // cannot be is this stream's failure, answered and traced as any (grpc-js answered INTERNAL by
      // itself, the span said success or the client leaving, and the handler was pulled on; a hunt).
      const bytes = (this.#serialize as (value: unknown) => Buffer)(message);
      ok = call.write(bytes as unknown as Message);
    } catch (err) {
      this.#fail(err);
      return;
    }
    // Paced by the client: the next event is pulled once grpc-js drained, or never if the call closed.
    if (ok) this.#pull();
    else call.once("drain", () => req.closed || this.#pull());
  }

  #fail(err: unknown): void {
    // Ends the handler's iterator and lets go of the call (abort).
    this.abort();
    if (!this.call.cancelled) this.call.emit("error", serviceError(err, this.dispatch, this.#spec as MethodSpec, this.req, this.#scope, this.#span, this.#headersSent));
    else this.#span?.cancelled(leftWith(this.call));
  }

  /** Ends the handler's iterator: the client left, the deadline passed, or the stream failed. */
  abort(): void {
    // Before the iterator's release, which would end the span as a plain cancel.
    if (this.call.cancelled) this.#span?.cancelled(leftWith(this.call));
    releaseIterator(this.#messages?.iterator);
    // The call is over: a task it started runs on without grpc-js's call (D114).
    this.req.release();
  }
}
