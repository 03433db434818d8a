/**
 * What a handler method learns about the call besides its request message.
 * Every binding (JSON-RPC, HTTP+JSON, gRPC) fills the same shape, so a handler
 * never branches on how it was called unless it wants to. A profile's
 * context extends it (the A2A one adds the protocol version, extensions and
 * tenant).
 */

/** The bindings, spelled as A2A's `AgentInterface.protocolBinding` spells them. */
export type Binding = "JSONRPC" | "HTTP+JSON" | "GRPC";

export interface CallContext<Principal = unknown> {
  /** The binding the request arrived on. */
  readonly binding: Binding;
  /** Request headers (HTTP) or metadata (gRPC); names are case-insensitive. */
  readonly headers: Headers;
  /** Aborted when the client goes away, the deadline passes or the server closes. */
  readonly signal: AbortSignal;
  /** The caller, as the authentication hook established it; undefined when anonymous. */
  readonly principal: Principal | undefined;
}

/** What an authentication hook sees of a request. */
export interface AuthRequest {
  readonly binding: Binding;
  /** The RPC name, e.g. `GetExtendedAgentCard`. */
  readonly method: string;
  /** HTTP headers or gRPC metadata (`authorization`, ...). */
  readonly headers: Headers;
}

/**
 * Runs before anything else of a call, so nothing is looked up for a caller
 * that is refused: returns the principal (undefined for an anonymous caller),
 * or throws the error to answer with (an RpcError of UNAUTHENTICATED or
 * PERMISSION_DENIED, say).
 */
export type Authenticate<Principal = unknown> = (request: AuthRequest) => Principal | undefined | Promise<Principal | undefined>;
