/**
 * Runs a binding core as a fetch-style handler, `(Request) => Promise<Response>`,
 * for Hono, Bun, Deno and workers. Streams are pulled by the platform, so a
 * slow client slows the producer without any drain bookkeeping.
 */
import { BodyTimeoutError, BodyTooLargeError, checkBodyHeaders, sseHeartbeat, type CoreResponse, type Endpoint } from "../core/transport.js";
import { unwatchBody, watchBody } from "./body-watch.js";

export type FetchHandler = (request: Request) => Promise<Response>;

export function createFetchHandler(core: Endpoint): FetchHandler {
  return async (request) => {
    const url = new URL(request.url);
    const path = url.pathname + url.search;
    const { headers, signal } = request;
    // Only the body read needs the Request itself (D114): a task the call started may run for hours and
    // holds the call's context, which then keeps the headers and the signal, not the Request.
    let source: Request | undefined = request;
    try {
      const response = await core.handle({
        method: request.method,
        url: path,
        headers,
        header: (name) => headers.get(name),
        signal,
        left: () => signal.aborted,
        // The platform made the URL from the authority the client addressed (D35: server.address).
        authority: () => url.host,
        local: () => ({ secure: url.protocol === "https:" }),
        body: (limit, timeoutMs) =>
          source === undefined ? Promise.reject(new Error("the body of a request that was answered cannot be read")) : readBody(source, limit, timeoutMs),
      });
      source = undefined;
      return toResponse(response, signal);
    } catch (err) {
      return failUnanswered(core, err, request, path);
    }
  };
}

/**
 * A failure the core let escape (a bug of ours: the cores answer their own)
 * gets the node adapter's answer, an empty 500 that never says what went
 * wrong, and is reported to the core, unless the client left (its request's
 * signal aborted while the body was read: no failure of ours). Left to the
 * platform, it was answered by the platform's own error page (Hono's
 * "Internal Server Error" text, Bun's error page in development) and told
 * to no onError.
 */
function failUnanswered(core: Endpoint, err: unknown, request: Request, path: string): Response {
  if (!request.signal.aborted) {
    try {
      core.report?.(err, path);
    } catch {
      // Nothing is left to tell: the reporter itself failed.
    }
  }
  return new Response(null, { status: 500, headers: { "content-type": "application/json" } });
}

/** The most of an event enqueued at once (see `rest` below). */
const PIECE = 64 * 1024;

function toResponse(response: CoreResponse, signal: AbortSignal): Response {
  switch (response.kind) {
    case "body":
      return new Response(response.body, { status: response.status, headers: response.headers });
    case "empty":
      return new Response(null, { status: response.status, headers: response.headers });
    case "stream": {
      const { events } = response;
      // Headers the platform refuses (a NUL in an activated extension's URI) fail here, before the
      // stream exists: its source is let go at once, as the node:http adapter does, not at the timer.
      let headers: Headers;
      try {
        headers = new Headers(response.headers);
      } catch (err) {
        events.cancel();
        throw err;
      }
      const encoder = new TextEncoder();
      const period = events.heartbeatMs > 0 ? events.heartbeatMs : 15_000;
      let timer: ReturnType<typeof setInterval> | undefined;
      // Since when the piece at the head of the queue has waited for the server (Hono's, Deno's,
      // Bun's) to take it: the socket's pace, seen from here.
      let waitingSince = Date.now();
      // What is left of the event being written. An event goes out in pieces of at most PIECE bytes,
      // each enqueued when the server took the one before: the server takes a piece once the last
      // one reached the socket, so a client reading a large event slowly but steadily shows it here.
      let rest: Uint8Array | undefined;
      // The source ended. The stream closes once the server comes back for more, which it does once
      // it wrote the last chunk to the socket: a client that stopped reading at the last event is
      // watched (and let go) like one that stopped anywhere else.
      let ended = false;
      const stop = () => {
        if (timer !== undefined) clearInterval(timer);
        timer = undefined;
      };
      const giveUp = (controller: ReadableStreamDefaultController<Uint8Array>) => {
        stop();
        events.cancel();
        controller.error(new Error("the client took nothing of this stream for four heartbeat periods"));
      };
      const enqueue = (controller: ReadableStreamDefaultController<Uint8Array>, bytes: Uint8Array) => {
        // A piece of a large event is a copy: a server that takes over (transfers) a chunk's buffer
        // would otherwise take the rest of the event with it.
        const whole = bytes.byteLength <= PIECE;
        rest = whole ? undefined : bytes.subarray(PIECE);
        controller.enqueue(whole ? bytes : bytes.slice(0, PIECE));
        waitingSince = Date.now();
      };
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          // Every period: a heartbeat, unless something waits to be read already (a client that
          // stopped reading would have the queue grow by one per period for as long as it stays);
          // and a client that took no piece for four periods while one waited is let go, as the
          // node:http adapter lets it go (D24's transport side): the stream errors, which makes the
          // server drop the connection, and the handler's stream is released.
          timer = setInterval(() => {
            const room = controller.desiredSize;
            // Errored: nothing more to watch (every path that closes or errors the stream stops the timer itself).
            if (room === null) stop();
            else if (room > 0) {
              if (events.heartbeatMs > 0 && rest === undefined && !ended) enqueue(controller, encoder.encode(sseHeartbeat));
            } else if (Date.now() - waitingSince >= 4 * period) {
              giveUp(controller);
            }
          }, period);
          // Without heartbeats the timer only watches: it keeps no process up on its own.
          if (events.heartbeatMs <= 0) timer.unref?.();
          const left = () => {
            stop();
            events.cancel();
          };
          // Gone already (while the first event was awaited, D14): no abort event will come.
          if (signal.aborted) left();
          else signal.addEventListener("abort", left, { once: true });
        },
        async pull(controller) {
          if (ended) {
            stop();
            controller.close();
            return;
          }
          if (rest !== undefined) {
            enqueue(controller, rest);
            return;
          }
          let data: string | undefined;
          try {
            data = await events.next();
          } catch (err) {
            // The stream errors with the source's failure; the timer goes with it.
            stop();
            throw err;
          }
          if (data === undefined) {
            ended = true;
            // What the timer watches until the server takes it (a heartbeat that waits already will
            // do): an empty chunk, nothing on the wire. Taken, it has the stream pull again, and close.
            if (controller.desiredSize! > 0) enqueue(controller, new Uint8Array(0));
            return;
          }
          enqueue(controller, encoder.encode(data));
        },
        cancel() {
          stop();
          events.cancel();
        },
      });
      return new Response(body, { status: 200, headers });
    }
  }
}

/**
 * Reads the body under `limit`, and within `timeoutMs` (D32): a client that sends part of its body
 * and then nothing is refused 408 as on node:http, rather than held until the platform's own limit
 * (node:http's requestTimeout, 300 s by default, under @hono/node-server; none at all on some).
 */
async function readBody(request: Request, limit: number, timeoutMs: number): Promise<Uint8Array> {
  checkBodyHeaders(request.headers.get("content-length"), request.headers.get("content-encoding"), undefined, limit);
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  let late = false;
  // Cancelling settles the read that waits, as done: the loop below then says why.
  const pending = watchBody(timeoutMs, () => {
    late = true;
    reader.cancel().catch(() => undefined);
  });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch (err) {
        // A platform whose cancel fails the waiting read rather than ending it.
        if (late) throw new BodyTimeoutError(timeoutMs);
        throw err;
      }
      if (late) throw new BodyTimeoutError(timeoutMs);
      const { done, value } = read;
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel();
        throw new BodyTooLargeError(limit);
      }
      chunks.push(value);
    }
  } finally {
    unwatchBody(timeoutMs, pending);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}
