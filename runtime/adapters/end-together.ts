/**
 * Unary answers that finish in one turn of the event loop are written
 * together at the turn's end (D115), not each as it finishes.
 *
 * Every write to a client's socket wakes the client's process if it went
 * to sleep. When a server's answers are spread over its turn (a few dozen
 * µs of work between them) the client sleeps between each and is woken
 * once per answer; written back to back, it is woken once per turn. On
 * loopback that wake-up is paid inside the server's `writev`, and it was
 * the largest single cost of a small JSON answer.
 *
 * Also here: how an answer ends its connection once its server's close()
 * began, which an answer written later than it would have been otherwise
 * (queued past the close) has to do itself.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * Whether the server `req` came to stopped listening: its close() began. An answer written then
 * says `connection: close`, so node closes the connection once the answer is out rather than
 * keeping it for its keep-alive timeout (5 s by default), which held close() open. `socket.server`
 * is net's own link from an accepted socket to its server; a socket without one is taken as open.
 */
export function serverClosing(req: IncomingMessage): boolean {
  const socket = req.socket as (IncomingMessage["socket"] & { server?: { listening?: boolean } }) | null;
  return socket?.server?.listening === false;
}

/** A turn that finishes more answers writes them in groups of this size, so no answer waits on an unbounded batch. */
export const MOST_ANSWERS_TOGETHER = 64;

let responses: ServerResponse[] = [];
let bodies: (string | undefined)[] = [];
let failures: ((err: unknown) => void)[] = [];

/**
 * Ends `res` with `body` at the end of this turn (setImmediate), or at once
 * when the batch is full. Should `end()` throw (a body node refuses: a HEAD
 * or 204 answer on a server made with `rejectNonStandardBodyWrites`), `failed`
 * answers it as a failure `serve` let escape would have been, and the rest
 * are still written.
 */
export function endTogether(res: ServerResponse, body: string | undefined, failed: (err: unknown) => void): void {
  if (responses.length === 0) setImmediate(endAll);
  responses.push(res);
  bodies.push(body);
  failures.push(failed);
  if (responses.length >= MOST_ANSWERS_TOGETHER) endAll();
}

function endAll(): void {
  const rs = responses;
  const bs = bodies;
  const fs = failures;
  if (rs.length === 0) return;
  responses = [];
  bodies = [];
  failures = [];
  for (let i = 0; i < rs.length; i++) {
    const res = rs[i]!;
    const body = bs[i];
    try {
      if (body === undefined) res.end();
      else res.end(body);
      // Queued before its server's close() began, so its headers kept the connection alive.
      endConnectionIfClosing(res);
    } catch (err) {
      try {
        fs[i]!(err);
      } catch {
        // Not even an empty answer could be written: the client must not wait for one.
        res.destroy();
      }
    }
  }
}

/**
 * An answer just ended whose headers kept its connection alive (a queued answer, an SSE stream,
 * a last-resort 500), while its server's close() began: the connection is ended once the answer
 * is out, as node ends one whose answer said `connection: close` (destroySoon: the rest of the
 * answer is written first; end() alone would wait for a client that keeps its side open).
 * A pipelined request node already read on it goes unanswered, as after `connection: close`.
 */
export function endConnectionIfClosing(res: ServerResponse): void {
  if (!serverClosing(res.req)) return;
  const socket = res.socket;
  if (socket === null) return;
  if (res.writableFinished) socket.destroySoon();
  else res.once("finish", () => socket.destroySoon());
}
