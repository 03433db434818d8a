/** The one home of the bindings' defaults. */

/** Largest request body (and gRPC message, both ways) accepted, in bytes (D16). */
export const defaultBodyLimit = 4 << 20;

/** Milliseconds between SSE heartbeat comments (D14). */
export const defaultHeartbeatMs = 15_000;
