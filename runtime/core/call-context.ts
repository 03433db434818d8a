/**
 * What a handler method learns about the call besides its request message.
 * Every binding (JSON-RPC, HTTP+JSON, gRPC) fills the same shape, so a handler
 * never branches on how it was called unless it wants to.
 */

/** The A2A protocol bindings, spelled as in `AgentInterface.protocolBinding`. */
export type Binding = "JSONRPC" | "HTTP+JSON" | "GRPC";

export interface CallContext<Principal = unknown> {
  /** The binding the request arrived on. */
  readonly binding: Binding;
  /** The negotiated protocol version as Major.Minor, e.g. `1.0`. */
  readonly protocolVersion: string;
  /** Extension URIs the client asked for (`A2A-Extensions`), in request order. */
  readonly requestedExtensions: readonly string[];
  /**
   * Extension URIs the handler activated for this call. Add to it; the binding
   * echoes it in the response's `A2A-Extensions` header or metadata.
   */
  readonly activatedExtensions: Set<string>;
  /** The tenant of the request (path, params or request field); undefined when none. */
  readonly tenant: string | undefined;
  /** Request headers (HTTP) or metadata (gRPC); names are case-insensitive. */
  readonly headers: Headers;
  /** Aborted when the client goes away, the deadline passes or the server closes. */
  readonly signal: AbortSignal;
  /** The caller, as the authentication hook established it; undefined when anonymous. */
  readonly principal: Principal | undefined;
}
