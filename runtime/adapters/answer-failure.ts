/**
 * The node adapter's last resort for a failure a core let escape (a bug:
 * the cores answer their own failures): an empty 500, and a report.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Endpoint } from "../core/transport.js";
import { endAnswer } from "./closing.js";

/**
 * A failure `serveNodeRequest` let escape: answered with answerFailure, then
 * reported to the core (a bug of ours), unless the client's connection is
 * gone (it left while its body was read: no failure of ours). Not
 * `req.destroyed`: node destroys a request once its body was read to the
 * end. A `report` that throws changes nothing.
 */
export function failUnanswered(core: Endpoint, err: unknown, req: IncomingMessage, res: ServerResponse, url = req.url ?? "/"): void {
  answerFailure(res);
  const socket = req.socket as IncomingMessage["socket"] | null;
  if (socket === null || socket.destroyed) return;
  try {
    core.report?.(err, url);
  } catch {
    // Nothing is left to tell: the reporter itself failed.
  }
}

/** The last resort: an empty 500 if nothing was sent yet, never what went wrong. */
export function answerFailure(res: ServerResponse): void {
  // The cores answer every failure themselves; this never leaks what went wrong.
  if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
  endAnswer(res);
}
