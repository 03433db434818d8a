/**
 * What the JSON bindings' transports read of an answer, bounded: one message
 * (a unary body, one server-sent event's data) at most `maxMessageBytes`
 * (4 MiB, gRPC's own default receive limit, D16), and a stream's body cut as
 * UNAVAILABLE when no byte came for `streamIdleTimeoutMs` (45 s, three of the
 * agent's heartbeats, D14): a half-open connection otherwise froze a follow
 * for as long as the kernel kept the socket.
 */
import { RpcError } from "../errors.js";
import type { HttpResponse, HttpSend } from "./http.js";

/** The client options that bound what the JSON bindings read. */
export interface BodyBoundOptions {
  /**
   * The largest message read: a unary answer's body, one stream event's
   * data. Larger fails RESOURCE_EXHAUSTED. Default 4 MiB (D16); gRPC's
   * channel gets it as `grpc.max_receive_message_length` unless
   * `channelOptions` set that.
   */
  readonly maxMessageBytes?: number;
  /**
   * JSON bindings: a stream's body that brings no byte for this long is
   * taken for cut (UNAVAILABLE; stream recovery reconnects). An agent sends
   * a heartbeat every 15 s (D14). Default 45 s; 0 turns it off (undici's own
   * `bodyTimeout`, 300 s, is then the bound).
   */
  readonly streamIdleTimeoutMs?: number;
}

export const defaultMaxMessageBytes = 4 * 1024 * 1024;
export const defaultStreamIdleTimeoutMs = 45_000;

export interface BodyBounds {
  readonly maxMessageBytes: number;
  readonly streamIdleTimeoutMs: number;
}

export function bodyBoundsOf(options: BodyBoundOptions): BodyBounds {
  const maxMessageBytes = options.maxMessageBytes ?? defaultMaxMessageBytes;
  const streamIdleTimeoutMs = options.streamIdleTimeoutMs ?? defaultStreamIdleTimeoutMs;
  if (!(maxMessageBytes > 0)) throw new TypeError(`maxMessageBytes must be a positive number of bytes, got ${String(maxMessageBytes)}`);
  if (!(streamIdleTimeoutMs >= 0)) throw new TypeError(`streamIdleTimeoutMs must be 0 or more milliseconds, got ${String(streamIdleTimeoutMs)}`);
  return { maxMessageBytes, streamIdleTimeoutMs };
}

export function tooLarge(maxMessageBytes: number, what: string): RpcError {
  return new RpcError("RESOURCE_EXHAUSTED", `${what} is larger than maxMessageBytes (${maxMessageBytes} bytes)`);
}

/**
 * `send` with its answers bounded: `unary` for a body read whole (`text`
 * stops at maxMessageBytes), `stream` for a body read as it comes (cut when
 * idle for streamIdleTimeoutMs; its text, an error before the stream, is
 * bounded as well).
 */
export function boundedSend(send: HttpSend, bounds: BodyBounds): { unary: HttpSend; stream: HttpSend } {
  const max = bounds.maxMessageBytes;
  const idleMs = bounds.streamIdleTimeoutMs;
  const bounded = (response: HttpResponse, body: AsyncIterable<Uint8Array> | null): HttpResponse => ({
    status: response.status,
    ok: response.ok,
    mediaType: response.mediaType,
    text: () => readText(response, max),
    body,
    discard: () => response.discard(),
  });
  return {
    unary: async (url, request) => {
      const response = await send(url, request);
      return bounded(response, response.body);
    },
    stream: async (url, request) => {
      if (idleMs <= 0) {
        const response = await send(url, request);
        return bounded(response, response.body);
      }
      // Its own abort, to close the connection when the body is taken for cut.
      const idle = new AbortController();
      const signal = request.signal === undefined ? idle.signal : AbortSignal.any([request.signal, idle.signal]);
      const response = await send(url, { ...request, signal });
      return bounded(response, response.body === null ? null : idleBounded(response.body, idleMs, idle));
    },
  };
}

/** The whole body as UTF-8 text (a BOM dropped, as fetch's text() does), RESOURCE_EXHAUSTED past `max` bytes. */
async function readText(response: HttpResponse, max: number): Promise<string> {
  const body = response.body;
  if (body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    // Leaving the loop cancels the rest of the body.
    if (size > max) throw tooLarge(max, "the agent's answer");
    chunks.push(chunk);
  }
  return new TextDecoder().decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
}

/**
 * The chunks of `body`, UNAVAILABLE (and `idle` aborted, closing the connection) when none came
 * for `ms` while a read waited. Only waiting counts: the caller's own time with an event (a tool
 * call of a minute) is no silence of the agent's (review).
 */
async function* idleBounded(body: AsyncIterable<Uint8Array>, ms: number, idle: AbortController): AsyncGenerator<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]();
  const cutError = () => new RpcError("UNAVAILABLE", `the stream brought no byte for ${ms} ms (streamIdleTimeoutMs): the connection is taken for cut`);
  /** When the read under way began; undefined while the caller has the last chunk. */
  let waitingSince: number | undefined = Date.now();
  let cut = false;
  let fail: (err: Error) => void = () => undefined;
  const quiet = new Promise<never>((_, reject) => (fail = reject));
  quiet.catch(() => undefined);
  const check = () => {
    const left = waitingSince === undefined ? ms : waitingSince + ms - Date.now();
    if (left > 0) {
      timer = setTimeout(check, left);
      return;
    }
    cut = true;
    fail(cutError());
    idle.abort();
  };
  // One timer for the whole body, set again only when it fires: nothing per chunk but a timestamp.
  let timer = setTimeout(check, ms);
  let done = false;
  try {
    for (;;) {
      waitingSince = Date.now();
      const next = chunks.next();
      // Once cut, the read under way fails with the abort: that is not the error reported.
      next.catch(() => undefined);
      let result: IteratorResult<Uint8Array>;
      try {
        result = await Promise.race([next, quiet]);
      } catch (err) {
        throw cut ? cutError() : err;
      }
      waitingSince = undefined;
      if (result.done === true) {
        done = true;
        return;
      }
      yield result.value;
    }
  } finally {
    clearTimeout(timer);
    if (!done) void chunks.return?.()?.catch?.(() => undefined);
  }
}
