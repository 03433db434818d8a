/**
 * The core's one extension point. The bindings serve any service from its
 * generated tables with nothing but their own rules; a profile adds a
 * protocol's rules on top, the same way on every binding, at fixed points
 * of the one call sequence all bindings share (runtime/core/dispatch.ts):
 *
 *   open (once per transport request) -> authenticate (core option) ->
 *   admit -> decode -> admitRequest -> context -> handler -> each stream
 *   event checked -> response headers.
 *
 * The A2A profile (runtime/a2a/profile.ts) is one; `coreProfile` is the
 * profile of a service with none.
 */
import type { JsonValue, Message } from "@bufbuild/protobuf";
import type { Binding, CallContext } from "./call-context.js";
import { CallScope, ScopedContext, type ScopeRequest } from "./call-scope.js";
import { RpcError, coreErrors, type CoreErrorTable } from "./errors.js";
import type { TrailingSlash } from "./http/router.js";
import type { MethodSpec } from "./method-spec.js";
import type { TraceProfile } from "./tracing.js";

/** The rules one stream's events must follow; one object per stream, so it may count. */
export interface StreamCheck {
  /** The error that `event` may not come next for, or undefined when it may. */
  next(event: unknown): RpcError | undefined;
  /** The error the stream may not end here for, or undefined when it may. */
  end(): RpcError | undefined;
}

export interface Profile<Scope extends CallScope = CallScope> {
  /** How the core's own errors are spelled (framing, decoding, internal, a body that is not JSON). */
  readonly errors: CoreErrorTable;
  /** The JSON media type of HTTP+JSON responses when the request states none it accepts. */
  readonly mediaType: string;
  /** The `WWW-Authenticate` challenge of an HTTP 401 whose error names none; left out: none is sent. */
  readonly challenge?: string | undefined;
  /**
   * Opens a transport request, before any call of it is admitted. Throws an
   * RpcError that answers every call of the request (an unsupported protocol
   * version, say). `query` is the URL's query on the HTTP bindings.
   */
  open(binding: Binding, request: ScopeRequest, query: URLSearchParams | undefined): Scope;
  /** Refuses a call, by throwing, after authentication and before its request is decoded. */
  admit(spec: MethodSpec, scope: Scope): void;
  /**
   * Refuses a call by what its decoded request asks for, by throwing, before
   * the handler's context is made (A2A: a push config in SendMessage on an
   * agent that declares no push notifications). Left out: nothing to check.
   */
  admitRequest?(spec: MethodSpec, scope: Scope, request: Message): void;
  /**
   * Edits a unary answer's ProtoJSON, on the JSON bindings, where the
   * protocol asks for more than ProtoJSON writes (A2A: ListTasks with
   * `includeArtifacts` shows `artifacts: []`, checklist 15 #18). Left out:
   * the answer is ProtoJSON as it is.
   */
  shapeJson?(spec: MethodSpec, request: Message, json: JsonValue): void;
  /** The context the handler is called with, from the request's scope and its decoded message. */
  context(scope: Scope, request: Message): CallContext;
  /** The error answered for a method the handler leaves out. */
  unimplemented(spec: MethodSpec): RpcError;
  /** The rules of one stream's events, or undefined for none. */
  streamCheck(spec: MethodSpec): StreamCheck | undefined;
  /** Headers (HTTP) or initial metadata (gRPC) the response carries, once the handler ran. */
  responseHeaders(scope: Scope): Readonly<Record<string, string>> | undefined;
  /** What the protocol adds to a call's span when tracing is on (D35): its names for the method, the messages and the error. */
  readonly trace?: TraceProfile | undefined;
  /**
   * What a trailing slash on an HTTP+JSON path is (the router's option): left out, dropped,
   * as the reference transcoder does (A2A: an empty last value where a route takes one, D6).
   */
  readonly trailingSlash?: TrailingSlash | undefined;
  /** Words added to JSON-RPC's MethodNotFound for a method name the service lacks (A2A: 0.3's names, D5). */
  methodHint?(method: string): string | undefined;
  /**
   * The error a handler's RpcError is answered as, on every binding: the
   * profile may spell an entry that is not its own its way (A2A: a bare
   * google.rpc.Code keeps clear of A2A's JSON-RPC codes, D37).
   */
  answerError?(err: RpcError): RpcError;
}

/** The profile of a service with none: the bindings' own rules, google.rpc.Code errors, `application/json`. */
export const coreProfile: Profile = {
  errors: coreErrors,
  mediaType: "application/json",
  open: (binding, request) => new CallScope(binding, request),
  admit() {},
  context: (scope) => new ScopedContext(scope),
  unimplemented: (spec) => new RpcError("UNIMPLEMENTED", `${spec.name} is not implemented`),
  streamCheck: () => undefined,
  responseHeaders: () => undefined,
};
