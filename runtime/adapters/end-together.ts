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
 */
import type { ServerResponse } from "node:http";
import type { Endpoint } from "../core/transport.js";
import { failUnanswered } from "./answer-failure.js";
import { endAnswer } from "./closing.js";

/** A turn that finishes more answers writes them in groups of this size, so no answer waits on an unbounded batch. */
export const MOST_ANSWERS_TOGETHER = 64;

let responses: ServerResponse[] = [];
let bodies: (string | undefined)[] = [];
let cores: Endpoint[] = [];

/**
 * Ends `res` with `body` at the end of this turn (setImmediate), or at once
 * when the batch is full. Should `end()` throw (a body node refuses: a HEAD
 * or 204 answer on a server made with `rejectNonStandardBodyWrites`), it is
 * answered as a failure `serve` let escape would have been, reported to
 * `core`, and the rest are still written.
 */
export function endTogether(res: ServerResponse, body: string | undefined, core: Endpoint): void {
  if (responses.length === 0) setImmediate(endAll);
  responses.push(res);
  bodies.push(body);
  cores.push(core);
  if (responses.length >= MOST_ANSWERS_TOGETHER) endAll();
}

function endAll(): void {
  const rs = responses;
  const bs = bodies;
  const cs = cores;
  if (rs.length === 0) return;
  responses = [];
  bodies = [];
  cores = [];
  for (let i = 0; i < rs.length; i++) {
    const res = rs[i]!;
    try {
      // Queued before its server's close() began, so its headers kept the connection alive.
      endAnswer(res, bs[i]);
    } catch (err) {
      try {
        failUnanswered(cs[i]!, err, res.req, res);
      } catch {
        // Not even an empty answer could be written: the client must not wait for one.
        res.destroy();
      }
    }
  }
}
