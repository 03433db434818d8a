/**
 * How a node:http answer ends its connection once its server's close()
 * began (D115): node keeps an idle keep-alive connection open for its
 * keep-alive timeout, which holds close() open.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";

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

/**
 * Makes `server`'s closeIdleConnections (which its close() calls first, since node 19) let an
 * answer already ended but still being sent finish: node counts a connection idle once its answer
 * is ended, not once it is out, and destroyed it with the rest of the answer unsent (a 10 MB answer
 * to a slow reader was cut at 4 MB, under a 200 with its Content-Length). Such a connection ends
 * once its bytes are out instead (destroySoon); every other idle one is destroyed as before. The
 * caller's own cut (closeAllConnections) still bounds how long that takes.
 */
export function keepAnswersWhole(server: Server): void {
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const closeIdle = server.closeIdleConnections;
  server.closeIdleConnections = function (this: Server) {
    // For this call only, `destroy` on a socket still sending ends it once its bytes are out (as
    // destroySoon does; destroySoon itself would keep this very override for its 'finish').
    const sending = [...sockets].filter((socket) => socket.writableLength > 0 && !socket.destroyed);
    for (const socket of sending) {
      socket.destroy = function (this: Socket) {
        this.once("finish", () => this.destroy());
        this.end();
        return this;
      };
    }
    try {
      closeIdle.call(this);
    } finally {
      for (const socket of sending) delete (socket as { destroy?: unknown }).destroy;
    }
  };
}
