/** The one home of the bindings' defaults. */

/**
 * Largest request body accepted, in bytes, and the gRPC message limit both
 * ways: 4 MiB, gRPC's own default for received messages (D16).
 */
export const defaultBodyLimit = 4 << 20;

/** Milliseconds between SSE heartbeat comments (D14). */
export const defaultHeartbeatMs = 15_000;

/**
 * Milliseconds a request body may take to arrive once the endpoint reads it
 * (D32): 4 MiB at ~140 KB/s. A slower body is a client holding a request
 * open, answered 408.
 */
export const defaultBodyTimeoutMs = 30_000;
