/**
 * How a node:http answer ends its connection once its server's close()
 * began (D115): node keeps an idle keep-alive connection open for its
 * keep-alive timeout, which holds close() open.
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

/**
 * Ends an answer whose headers kept its connection alive (a queued answer, an SSE stream, a
 * last-resort 500): if its server's close() began meanwhile, the connection is ended once the
 * answer is out, as node ends one whose answer said `connection: close` (destroySoon: the rest of
 * the answer is written first; end() alone would wait for a client that keeps its side open).
 * A pipelined request node already read on it goes unanswered, as after `connection: close`.
 */
export function endAnswer(res: ServerResponse, body?: string): void {
  if (body === undefined) res.end();
  else res.end(body);
  if (!serverClosing(res.req)) return;
  const socket = res.socket;
  if (socket === null) return;
  if (res.writableFinished) socket.destroySoon();
  else res.once("finish", () => socket.destroySoon());
}
