/**
 * The options and handles of the gRPC server's public types, in a module of
 * their own that imports nothing of grpc-js: the types of serveA2AService
 * reach them, and an agent served on the JSON bindings alone, which does
 * not install @grpc/grpc-js, still type-checks its dependencies
 * (skipLibCheck off). runtime/core/grpc/server.ts re-exports them.
 */

export interface GrpcServerOptions {
  /** Largest request message accepted (`grpc.max_receive_message_length`). Default 4 MiB. */
  readonly maxReceiveMessageBytes?: number;
  /** Largest response message sent (`grpc.max_send_message_length`). Default 4 MiB (grpc-js alone: unlimited). */
  readonly maxSendMessageBytes?: number;
  /**
   * Server keepalive pings on idle HTTP/2 connections, so long streams
   * survive proxies and dead peers are noticed. Default: off (grpc-js default).
   */
  readonly keepalive?: {
    /** `grpc.keepalive_time_ms`: ping after this long without activity. */
    readonly timeMs: number;
    /** `grpc.keepalive_timeout_ms`: close when the ping is not answered in time. Default 20 s. */
    readonly timeoutMs?: number;
  };
  /** `grpc.max_connection_idle_ms`: close connections idle for this long. */
  readonly maxConnectionIdleMs?: number;
  /** `grpc.max_connection_age_ms`: ask clients to reconnect after this long. */
  readonly maxConnectionAgeMs?: number;
  /** `grpc.max_connection_age_grace_ms`: time calls get to finish after max age. */
  readonly maxConnectionAgeGraceMs?: number;
  /**
   * `grpc.max_concurrent_streams`: calls one HTTP/2 connection may have open
   * at once, sent to clients in SETTINGS; a stream past it is refused
   * (REFUSED_STREAM, which grpc-js clients retry). Default 100 (D80);
   * grpc-js alone: unlimited.
   */
  readonly maxConcurrentStreams?: number;
  /**
   * `grpc-node.max_session_memory`, in megabytes: what node's HTTP/2 session
   * of one connection may hold (queued frames, header blocks, buffered
   * data); past it, new streams on that connection are refused with
   * ENHANCE_YOUR_CALM (RESOURCE_EXHAUSTED). Default 64 (D80); grpc-js alone:
   * unlimited (node alone: 10).
   */
  readonly maxSessionMemoryMb?: number;
  /**
   * Any other grpc-js server options (its `ServerOptions`); these win over
   * the ones above and over the defaults (channelz is off unless
   * `"grpc.enable_channelz": 1` is given here, D80). Typed loosely here so that this module's types need no
   * grpc-js: an agent served on the JSON bindings alone compiles without it.
   */
  readonly serverOptions?: Readonly<Record<string, unknown>>;
}

/** Concurrent calls per HTTP/2 connection, unless `maxConcurrentStreams` says otherwise (D80). */
export const defaultMaxConcurrentStreams = 100;
/** Megabytes one connection's HTTP/2 session may hold, unless `maxSessionMemoryMb` says otherwise (D80). */
export const defaultMaxSessionMemoryMb = 64;

export interface ListenOptions {
  /** Host to bind. Default "127.0.0.1". */
  readonly host?: string;
  /** Port to bind; 0 picks a free one. Default 0. */
  readonly port?: number;
  /** PEM TLS material. Without it the server is plaintext, which is allowed on loopback hosts only unless `insecure` is set. */
  readonly tls?: {
    readonly cert: Buffer | string;
    readonly key: Buffer | string;
    /** CA for client certificates; with it, clients must present one (mTLS). */
    readonly clientCa?: Buffer | string;
  };
  /** Allow plaintext on a non-loopback host (e.g. behind a TLS-terminating proxy). */
  readonly insecure?: boolean;
}

/** grpc.health.v1 serving status. */
export type ServingStatus = "UNKNOWN" | "SERVING" | "NOT_SERVING";

export interface HealthOptions {
  /** Fully-qualified service names reported besides "" (the whole server), e.g. "lf.a2a.v1.A2AService". */
  readonly services?: readonly string[];
  /** Initial status of "" and every service. Default "SERVING". */
  readonly status?: ServingStatus;
}

export interface HealthHandle {
  /** Sets one service's status ("" is the server); Watch callers are told. */
  setStatus(service: string, status: ServingStatus): void;
  /** Sets "" and every service given at creation, e.g. "NOT_SERVING" while draining. */
  setAll(status: ServingStatus): void;
  /**
   * Ends every Watch stream open now, each after the status it was last sent: a Watch never ends
   * by itself, so a shutdown's drain would wait for it to its end (serveA2AService's close() calls
   * this once the server takes no new calls).
   */
  endWatches(): void;
}

/** grpc-js's options that take a number (its ChannelOptions); the few others take a string. */
const numericGrpcOptions = new Set([
  "grpc.keepalive_time_ms",
  "grpc.keepalive_timeout_ms",
  "grpc.keepalive_permit_without_calls",
  "grpc.max_concurrent_streams",
  "grpc.initial_reconnect_backoff_ms",
  "grpc.max_reconnect_backoff_ms",
  "grpc.use_local_subchannel_pool",
  "grpc.max_send_message_length",
  "grpc.max_receive_message_length",
  "grpc.enable_http_proxy",
  "grpc.default_compression_algorithm",
  "grpc.enable_channelz",
  "grpc.dns_min_time_between_resolutions_ms",
  "grpc.enable_retries",
  "grpc.per_rpc_retry_buffer_size",
  "grpc.retry_buffer_size",
  "grpc.max_connection_age_ms",
  "grpc.max_connection_age_grace_ms",
  "grpc.max_connection_idle_ms",
  "grpc-node.max_session_memory",
  "grpc.service_config_disable_resolution",
  "grpc.client_idle_timeout_ms",
  "grpc-node.tls_enable_trace",
  "grpc.lb.ring_hash.ring_size_cap",
  "grpc-node.retry_max_attempts_limit",
  "grpc-node.flow_control_window",
  "grpc.server_call_metric_recording",
]);

/**
 * grpc-js options as a caller gave them (`serverOptions`, a client's
 * `channelOptions`), checked before they are passed on: grpc-js uses them
 * as they come, so a limit given as text ("1mb") would be compared as text
 * and never hold. One of grpc-js's numeric options must be a finite number,
 * any other "grpc." or "grpc-node." option a number or a string, and a
 * server's `interceptors` a list. Throws a TypeError naming the key.
 */
export function checkGrpcOptions(options: Readonly<Record<string, unknown>> | undefined, what: string): void {
  if (options === undefined) return;
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (key === "interceptors") {
      if (!Array.isArray(value)) throw new TypeError(`${what}.interceptors must be a list of grpc-js interceptors`);
    } else if (numericGrpcOptions.has(key)) {
      if (typeof value !== "number" || !Number.isFinite(value)) throw new TypeError(`${what}["${key}"] must be a number, got ${JSON.stringify(value) ?? typeof value}`);
    } else if ((key.startsWith("grpc.") || key.startsWith("grpc-node.")) && typeof value !== "number" && typeof value !== "string") {
      throw new TypeError(`${what}["${key}"] must be a number or a string (a grpc-js channel option), got ${typeof value}`);
    }
  }
}
