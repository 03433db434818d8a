/**
 * What a binding's core hands to a transport adapter (node:http, fetch), so
 * the JSON-RPC and HTTP+JSON cores never touch a socket and every adapter
 * writes responses, streams, heartbeats and backpressure the same way.
 */
import type { CoreErrorTable, ErrorTableEntry } from "./errors.js";
import type { ServerEndpoint } from "./tracing.js";

/**
 * A binding's transport-neutral core, as every adapter (node:http, fetch,
 * express, fastify, Hono) runs it: the JSON-RPC and HTTP+JSON endpoints, the
 * Agent Card, or anything else that answers a CoreRequest.
 */
export interface Endpoint {
  handle(request: CoreRequest): Promise<CoreResponse>;
  /**
   * Reports a failure `handle` let escape: a bug, since the cores answer
   * their own failures. The adapter answers the request with an empty 500
   * and calls this, so the failure reaches onError or the logger instead of
   * nowhere. `url` is the request's path and query.
   */
  report?(error: unknown, url: string): void;
}

/** A request as the cores see it. The body is read lazily, with the size limit applied while reading. */
export interface CoreRequest {
  readonly method: string;
  /** Path and query, e.g. `/a2a?A2A-Version=1.0`. */
  readonly url: string;
  /** All request headers; adapters may build this on first use, so cores read single headers with `header`. */
  readonly headers: Headers;
  /** One request header by lower-case name, repeated values joined with ", "; null when absent. */
  header(name: string): string | null;
  /** Aborted when the client goes away or the server shuts down; may be created on first use. */
  readonly signal: AbortSignal;
  /** Whether the client has gone, read without making the signal; optional, for adapters that can tell cheaply. */
  left?(): boolean;
  /** HTTP/2's `:authority`, for adapters that keep it apart from the headers; else the `Host` header names the server (D35). */
  authority?(): string | null | undefined;
  /** The connection's local side (address, port, TLS), for adapters that know it: a span's server.address without `Host` (D35). */
  local?(): ServerEndpoint | undefined;
  /**
   * Reads the whole body; rejects with BodyTooLargeError past the limit,
   * without reading further, and with BodyTimeoutError when it takes longer
   * than `timeoutMs` (D32).
   */
  readonly body: (limit: number, timeoutMs: number) => Promise<Uint8Array>;
}

export type CoreResponse =
  | {
      readonly kind: "body";
      readonly status: number;
      readonly headers: Readonly<Record<string, string>>;
      readonly body: string;
    }
  | { readonly kind: "empty"; readonly status: number; readonly headers: Readonly<Record<string, string>> }
  | {
      readonly kind: "stream";
      readonly headers: Readonly<Record<string, string>>;
      readonly events: EventSource;
    };

/**
 * Server-sent events, pulled one at a time so a slow client slows the
 * producer (the adapter waits for `drain` before the next pull).
 */
export interface EventSource {
  /** The next event as a whole SSE frame (`data: ...\n\n`), or undefined when the stream is over. */
  next(): Promise<string | undefined>;
  /** The client went away: stop the producer now (abort and iterator `return()`). */
  cancel(): void;
  /** Milliseconds between comment heartbeats; 0 disables them. */
  readonly heartbeatMs: number;
}

/**
 * The transport would not read the request body: the endpoints answer it
 * with `status` (413, 408, 415) and the binding's error for it (`entryIn`).
 */
export abstract class BodyRefusedError extends Error {
  abstract readonly status: number;
  /** Which of the binding's errors answers it. */
  protected abstract readonly error: "InvalidRequest" | "ContentTypeNotSupported";

  /** The refusal as the binding's error: its entry of `errors`, with this refusal's HTTP status. */
  entryIn(errors: CoreErrorTable): ErrorTableEntry {
    return { ...errors[this.error], httpStatus: this.status };
  }
}

/** The request body is larger than the binding accepts (D16). */
export class BodyTooLargeError extends BodyRefusedError {
  override readonly name = "BodyTooLargeError";
  readonly status = 413;
  protected readonly error = "InvalidRequest";
  constructor(readonly limit: number) {
    super(`request body exceeds the limit of ${limit} bytes`);
  }
}

/** The request body did not arrive in time (D32): a client sending it too slowly. */
export class BodyTimeoutError extends BodyRefusedError {
  override readonly name = "BodyTimeoutError";
  readonly status = 408;
  protected readonly error = "InvalidRequest";
  constructor(readonly timeoutMs: number) {
    super(`the request body did not arrive within ${timeoutMs} ms`);
  }
}

/**
 * The request body is in a content coding the server does not decode (gzip, br, ...): 415 with
 * the binding's error for a body it cannot take (RFC 9110 §15.5.16), rather than the parse error
 * its compressed bytes would otherwise get.
 */
export class BodyEncodingError extends BodyRefusedError {
  override readonly name = "BodyEncodingError";
  readonly status = 415;
  protected readonly error = "ContentTypeNotSupported";
  constructor(
    readonly coding: string,
    header = "Content-Encoding",
  ) {
    super(`the request body is sent with ${header} ${coding}, which this server does not decode; send it uncompressed`);
  }
}

/**
 * Refuses a body before a byte of it is read, from its headers as the adapter has them: one whose
 * declared Content-Length is over the limit (adapters still count while reading, for chunked
 * bodies), and one with a Content-Encoding other than identity or a Transfer-Encoding coding other
 * than chunked (node:http's parser takes chunked off, and nothing else).
 */
export function checkBodyHeaders(contentLength: string | null | undefined, contentEncoding: string | null | undefined, transferEncoding: string | null | undefined, limit: number): void {
  const declared = Number(contentLength);
  if (contentLength != null && Number.isFinite(declared) && declared > limit) throw new BodyTooLargeError(limit);
  checkContentEncoding(contentEncoding, transferEncoding);
}

function checkContentEncoding(contentEncoding: string | null | undefined, transferEncoding: string | null | undefined): void {
  if (contentEncoding == null && (transferEncoding == null || transferEncoding === "chunked")) return;
  const other = (value: string | null | undefined, plain: string) =>
    (value ?? "")
      .split(",")
      .map((c) => c.trim().toLowerCase())
      .filter((c) => c !== "" && c !== plain)
      .join(", ");
  const content = other(contentEncoding, "identity");
  if (content !== "") throw new BodyEncodingError(content);
  const transfer = other(transferEncoding, "chunked");
  if (transfer !== "") throw new BodyEncodingError(transfer, "Transfer-Encoding");
}

/** D9: application/json and any +json type, A2A's application/a2a+json among them (parameters ignored). */
export function isJsonMediaType(value: string | null): boolean {
  if (value === null) return false;
  if (value === "application/json") return true;
  const type = (value.split(";")[0] ?? "").trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

// fatal: a body that is not UTF-8 is refused, not read as text with U+FFFD in it.
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A request body as text; undefined when it is not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Headers every SSE response carries (D14). `no-transform` keeps compressing
 * middleware (express's compression()) and proxies from holding events back
 * until a compressed block fills.
 */
export const sseHeaders: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
};

/** Frames one event; payloads are single-line JSON, so one `data:` line each. */
export function sseFrame(data: string, event?: string): string {
  return event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`;
}

export const sseHeartbeat = ": keep-alive\n\n";
