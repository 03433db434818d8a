/**
 * The gRPC binding on @grpc/grpc-js: a generated service definition served
 * with the same dispatcher as the HTTP bindings, so REQUIRED validation
 * (D11), left-out methods (D18), stream rules (D15), version negotiation
 * (D5) and the error table behave the same on all three. Imported as
 * "protoc-gen-a2a/runtime/grpc", apart from the main runtime, so JSON-only
 * agents never load grpc-js.
 */
import { toBinary, type DescMessage, type Message, type MessageInitShape } from "@bufbuild/protobuf";
import { encodeBinaryWith } from "./binary-codec.js";
import { Metadata, status, type Server, type ServerUnaryCall, type ServerWritableStream, type ServiceDefinition, type ServiceError, type UntypedServiceImplementation, type sendUnaryData } from "@grpc/grpc-js";
import type { CallContext } from "./call-context.js";
import { createCallScope, type CallScope, type ScopeRequest } from "./call-scope.js";
import { createDispatcher, type BindingErrorTable, type Dispatcher } from "./dispatch.js";
import { grpcStatusOf, rpcCode, toA2AError } from "./error-encoding.js";
import { A2AError } from "./errors.js";
import type { MethodSpec, RequiredFieldTable } from "./method-spec.js";
import type { AgentPolicy } from "./policy.js";
import { negotiateVersion, type VersionPolicy } from "./service-params.js";
import { StatusSchema } from "./gen/google/rpc/status_pb.js";

export interface GrpcOptions {
  /** Protocol versions served (D5). Default: 1.0 only, a missing version is 0.3. */
  readonly versions?: VersionPolicy;
  /** Authentication, required extensions and capability gating, shared by all bindings. */
  readonly policy?: AgentPolicy;
}

export interface GrpcServiceConfig<H extends object> extends GrpcOptions {
  /** The generated grpc-js service definition. */
  readonly definition: ServiceDefinition;
  /** The generated method table, keyed like the definition. */
  readonly methods: Readonly<Record<string, MethodSpec>>;
  readonly errors: BindingErrorTable;
  readonly required: RequiredFieldTable;
  readonly handler: H;
}

/** The bytes protobuf-es wrote, as the Buffer grpc-js wants, without copying them. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A message or its init shape in protobuf binary (as `encodeBinary`), as
 * the Buffer grpc-js wants: one copy out of the codec's writer, into
 * Buffer's pool for small messages. What the generated definitions
 * serialize with.
 */
export function encodeBuffer<Desc extends DescMessage>(desc: Desc, value: MessageInitShape<Desc>): Buffer {
  return encodeBinaryWith(desc, value, toBuffer);
}

function toBuffer(bytes: Uint8Array, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  out.set(length === bytes.byteLength ? bytes : bytes.subarray(0, length));
  return out;
}

/** Adds the service to `server`, served by `handler`. */
export function addGrpcService<H extends object>(server: Server, config: GrpcServiceConfig<H>): void {
  const dispatch = createDispatcher(config);
  const versions = config.versions ?? { supported: ["1.0"] };
  const implementation: UntypedServiceImplementation = {};
  for (const [key, spec] of Object.entries(config.methods)) {
    implementation[key] =
      spec.kind === "unary"
        ? (call: ServerUnaryCall<Message, Message>, callback: sendUnaryData<Message>) => {
            unary(dispatch, config.errors, versions, spec, call, callback);
          }
        : (call: ServerWritableStream<Message, Message>) => {
            void serverStream(dispatch, config.errors, versions, spec, call);
          };
  }
  server.addService(config.definition, implementation);
}

type GrpcCall = ServerUnaryCall<Message, Message> | ServerWritableStream<Message, Message>;

/**
 * The call as the call scope reads a request: metadata as headers, an abort
 * on cancel or deadline. A class rather than an object literal with getters
 * and closures: one allocation per call, the rest made on first use.
 */
class GrpcRequest implements ScopeRequest {
  #controller: AbortController | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #headers: Headers | undefined;
  #onCancel: (() => void) | undefined;

  constructor(readonly call: GrpcCall) {}

  header(name: string): string | null {
    const values = this.call.metadata.get(name);
    let joined: string | null = null;
    for (const v of values) {
      if (typeof v === "string") joined = joined === null ? v : `${joined}, ${v}`;
    }
    return joined;
  }

  get headers(): Headers {
    if (this.#headers === undefined) {
      const headers = new Headers();
      for (const [name, value] of Object.entries(this.call.metadata.getMap())) {
        if (typeof value === "string") headers.append(name, value);
      }
      this.#headers = headers;
    }
    return this.#headers;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const controller = new AbortController();
      this.#controller = controller;
      const call = this.call;
      if (call.cancelled) controller.abort();
      else {
        this.#onCancel = () => controller.abort();
        call.once("cancelled", this.#onCancel);
      }
      // grpc-js answers DEADLINE_EXCEEDED itself when the deadline passes but
      // does not always report it as a cancel: the handler learns it here.
      const deadline = call.getDeadline();
      const ms = deadline instanceof Date ? deadline.getTime() - Date.now() : Number(deadline) - Date.now();
      if (Number.isFinite(ms)) this.#timer = setTimeout(() => controller.abort(), Math.max(0, ms));
    }
    return this.#controller.signal;
  }

  /** Undoes what `signal` set up; nothing unless it was asked for. */
  done(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#onCancel !== undefined) this.call.off("cancelled", this.#onCancel);
  }
}

/** A grpc-js error with the google.rpc.Status (ErrorInfo, BadRequest) in `grpc-status-details-bin` (D19). */
function serviceError(err: unknown, errors: BindingErrorTable): Partial<ServiceError> {
  const a2a = toA2AError(err, errors.Internal);
  const metadata = new Metadata();
  metadata.set("grpc-status-details-bin", Buffer.from(toBinary(StatusSchema, grpcStatusOf(a2a))));
  return { code: rpcCode(a2a.entry.grpcStatus) as status, details: a2a.message, metadata };
}

/** The version check (D5) and the call scope; throws VersionNotSupported. */
function openScope(req: GrpcRequest, errors: BindingErrorTable, versions: VersionPolicy): CallScope {
  const version = negotiateVersion(req.header("a2a-version"), null, versions);
  if (!version.ok) throw new A2AError(errors.VersionNotSupported, version.message);
  return createCallScope("GRPC", version.version, req);
}

/** Policy, then REQUIRED fields, then the context the handler gets. */
async function admit(dispatch: Dispatcher, spec: MethodSpec, scope: CallScope, request: Message): Promise<CallContext> {
  const admitted = dispatch.admit(spec, scope);
  if (admitted !== undefined) await admitted;
  dispatch.checkRequired(spec, request);
  return scope.context(dispatch.tenantOf(request));
}

/** Echoes the extensions the handler activated, as initial metadata. */
function sendExtensions(call: GrpcCall, scope: CallScope): void {
  const activated = scope.activatedHeader();
  if (activated === undefined) return;
  const md = new Metadata();
  md.set("a2a-extensions", activated);
  call.sendMetadata(md);
}

/**
 * A unary call. Without a policy to wait for, the handler is called in the
 * same tick and its promise is the only one the call makes: this is the
 * path every call of a busy gRPC agent takes.
 */
function unary(
  dispatch: Dispatcher,
  errors: BindingErrorTable,
  versions: VersionPolicy,
  spec: MethodSpec,
  call: ServerUnaryCall<Message, Message>,
  callback: sendUnaryData<Message>,
): void {
  const req = new GrpcRequest(call);
  const fail = (err: unknown) => {
    req.done();
    callback(serviceError(err, errors));
  };
  let scope: CallScope;
  let result: unknown;
  try {
    scope = openScope(req, errors, versions);
    const request = call.request;
    const open = scope;
    const invoke = () => {
      dispatch.checkRequired(spec, request);
      return dispatch.invoke(spec, request, open.context(dispatch.tenantOf(request)));
    };
    const admitted = dispatch.admit(spec, scope);
    result = admitted === undefined ? invoke() : admitted.then(invoke);
  } catch (err) {
    fail(err);
    return;
  }
  const respond = (value: unknown) => {
    req.done();
    sendExtensions(call, scope);
    // The handler's message or its init shape: the definition's encodeBuffer writes either.
    callback(null, value as Message);
  };
  if (isPromiseLike(result)) result.then(respond, fail);
  else respond(result);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

async function serverStream(
  dispatch: Dispatcher,
  errors: BindingErrorTable,
  versions: VersionPolicy,
  spec: MethodSpec,
  call: ServerWritableStream<Message, Message>,
): Promise<void> {
  const req = new GrpcRequest(call);
  let events: AsyncIterator<Message> | undefined;
  // A client that leaves, or a passed deadline, ends the handler's iterator at once.
  const stop = () => {
    void Promise.resolve()
      .then(() => events?.return?.())
      .catch(() => undefined);
  };
  try {
    const scope = openScope(req, errors, versions);
    const context = await admit(dispatch, spec, scope, call.request);
    const signal = req.signal;
    signal.addEventListener("abort", stop, { once: true });
    events = dispatch.streamMessages(spec, call.request, context);
    let first = true;
    for (let r = await events.next(); r.done !== true && !signal.aborted; r = await events.next()) {
      if (first) sendExtensions(call, scope);
      first = false;
      if (!call.write(r.value)) await drained(call, signal);
    }
    if (!signal.aborted) call.end();
  } catch (err) {
    stop();
    if (!call.cancelled) call.emit("error", serviceError(err, errors));
  } finally {
    req.done();
  }
}

function drained(call: ServerWritableStream<Message, Message>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const finish = () => {
      call.off("drain", finish);
      signal.removeEventListener("abort", finish);
      resolve();
    };
    call.on("drain", finish);
    signal.addEventListener("abort", finish, { once: true });
  });
}

export * from "./grpc-extras.js";
/** The generated definition's (de)serializers: protobuf binary of a message or its init shape. */
export { decodeBinary, encodeBinary } from "./binary-codec.js";
