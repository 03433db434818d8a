/**
 * What the JSON bindings' transports read of an answer, bounded: one message
 * (a unary body, one server-sent event's data) at most `maxMessageBytes`
 * (4 MiB, gRPC's own default receive limit, D16), and a stream's body cut as
 * UNAVAILABLE when it went quiet: a half-open connection otherwise froze a
 * follow for as long as the kernel kept the socket. By default the bound is
 * `heartbeatTimeoutMs` (45 s, three of the agent's heartbeats, D14), armed
 * only once the stream carried a heartbeat: an agent that sends none
 * (@a2a-js/sdk's) may keep a healthy task quiet for longer, and was cut.
 * An explicit `streamIdleTimeoutMs` bounds every stream from its start (D30).
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
   * JSON bindings: a stream's body that brings no byte for this long, from
   * its start, is taken for cut (UNAVAILABLE; stream recovery reconnects),
   * heartbeats or not. Unset (the default), `heartbeatTimeoutMs` bounds it
   * instead; 0 turns every idle bound off (undici's own `bodyTimeout`,
   * 300 s, is then the bound).
   */
  readonly streamIdleTimeoutMs?: number;
  /**
   * JSON bindings, when `streamIdleTimeoutMs` is unset: a stream that has
   * carried a heartbeat (an SSE comment line; this project's agents send one
   * every 15 s, D14) and then brings no byte for this long is taken for cut.
   * A stream that never carried one is not bounded: an agent without
   * heartbeats may keep a healthy task quiet as long as it likes. Default
   * 45 s, three heartbeats; 0 turns it off.
   */
  readonly heartbeatTimeoutMs?: number;
}

export const defaultMaxMessageBytes = 4 * 1024 * 1024;
export const defaultHeartbeatTimeoutMs = 45_000;

/** A stream's idle bound: `ms` (0: none), from its start or only once it carried a heartbeat. */
export interface IdleBound {
  readonly ms: number;
  /** `heartbeatTimeoutMs`'s, armed once a heartbeat came; else `streamIdleTimeoutMs`'s, from the start (the option the error names). */
  readonly afterHeartbeat: boolean;
}

export interface BodyBounds {
  readonly maxMessageBytes: number;
  readonly idle: IdleBound;
}

export function bodyBoundsOf(options: BodyBoundOptions): BodyBounds {
  const maxMessageBytes = options.maxMessageBytes ?? defaultMaxMessageBytes;
  if (!(maxMessageBytes > 0)) throw new TypeError(`maxMessageBytes must be a positive number of bytes, got ${String(maxMessageBytes)}`);
  for (const option of ["streamIdleTimeoutMs", "heartbeatTimeoutMs"] as const) {
    const ms = options[option];
    if (ms !== undefined && !(ms >= 0)) throw new TypeError(`${option} must be 0 or more milliseconds, got ${String(ms)}`);
  }
  const idle: IdleBound =
    options.streamIdleTimeoutMs !== undefined
      ? { ms: options.streamIdleTimeoutMs, afterHeartbeat: false }
      : { ms: options.heartbeatTimeoutMs ?? defaultHeartbeatTimeoutMs, afterHeartbeat: true };
  return { maxMessageBytes, idle };
}

export function tooLarge(maxMessageBytes: number, what: string): RpcError {
  return new RpcError("RESOURCE_EXHAUSTED", `${what} is larger than maxMessageBytes (${maxMessageBytes} bytes)`);
}

/**
 * `send` with its answers bounded: `unary` for a body read whole (`text`
 * stops at maxMessageBytes), `stream` for a body read as it comes (cut when
 * idle past `bounds.idle`; its text, an error before the stream, is
 * bounded as well).
 */
export function boundedSend(send: HttpSend, bounds: BodyBounds): { unary: HttpSend; stream: HttpSend } {
  const max = bounds.maxMessageBytes;
  const idleBound = bounds.idle;
  // Once one stream of this client carried a heartbeat, its agent sends them: a later stream (a
  // follow's reconnection) is bounded from its start, not from its own first heartbeat, which a
  // link gone half-open at once would never bring.
  const agentBeats = { seen: false };
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
      if (idleBound.ms <= 0) {
        const response = await send(url, request);
        return bounded(response, response.body);
      }
      // Its own abort, to close the connection when the body is taken for cut.
      const idle = new AbortController();
      const signal = request.signal === undefined ? idle.signal : AbortSignal.any([request.signal, idle.signal]);
      const response = await send(url, { ...request, signal });
      return bounded(response, response.body === null ? null : idleBounded(response.body, idleBound, idle, agentBeats));
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
 * for `bound.ms` while a read waited. Only waiting counts: the caller's own time with an event (a
 * tool call of a minute) is no silence of the agent's (review). A bound `afterHeartbeat` is armed
 * at the first chunk that holds an SSE comment line (until then the chunks are scanned for one), or
 * at once when an earlier stream of the same client carried one.
 */
async function* idleBounded(body: AsyncIterable<Uint8Array>, bound: IdleBound, idle: AbortController, agentBeats: { seen: boolean }): AsyncGenerator<Uint8Array> {
  const ms = bound.ms;
  const chunks = body[Symbol.asyncIterator]();
  const why = bound.afterHeartbeat ? "heartbeatTimeoutMs: the agent sends heartbeats" : "streamIdleTimeoutMs";
  const cutError = () => new RpcError("UNAVAILABLE", `the stream brought no byte for ${ms} ms (${why}): the connection is taken for cut`);
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
  let timer = bound.afterHeartbeat && !agentBeats.seen ? undefined : setTimeout(check, ms);
  /** Scanning for the first heartbeat: whether the last chunk ended a line. */
  let atLineStart = true;
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
      if (timer === undefined) {
        if (holdsComment(result.value, atLineStart)) {
          agentBeats.seen = true;
          timer = setTimeout(check, ms);
        }
        else atLineStart = endsLine(result.value, atLineStart);
      }
      yield result.value;
    }
  } finally {
    clearTimeout(timer);
    if (!done) void chunks.return?.()?.catch?.(() => undefined);
  }
}

const colon = 0x3a;
const lf = 0x0a;
const cr = 0x0d;

/** Whether `chunk` holds the start of an SSE comment line (`:` at a line's start; LF, CR and CRLF end lines). */
function holdsComment(chunk: Uint8Array, atLineStart: boolean): boolean {
  if (chunk.byteLength === 0) return false;
  if (atLineStart && chunk[0] === colon) return true;
  // Native searches: a JSON event holds many colons, but never a raw line break before one.
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return bytes.includes("\n:") || bytes.includes("\r:");
}

function endsLine(chunk: Uint8Array, atLineStart: boolean): boolean {
  if (chunk.byteLength === 0) return atLineStart;
  const last = chunk[chunk.byteLength - 1];
  return last === lf || last === cr;
}
