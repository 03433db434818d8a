/**
 * A loopback TCP proxy that fails on command, for the stream recovery tests:
 * it forwards bytes both ways (HTTP/1.1 and HTTP/2 alike, so gRPC too), and
 * can cut every connection it carries (a reset toward the client, as a
 * crashed proxy or a dropped network does), hold new connections unforwarded
 * (the agent unreachable for a while, deterministically: nothing reaches it
 * until `resume`), stop listening for a while (`refuse`, then `listen` on the
 * same port: a restarted proxy), or stop listening (the agent gone). Before
 * a database, `cutWhenSent` resets the one connection that sends a given
 * statement, before the server sees it (a connection reset at that moment).
 */
import { createServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export interface CuttingProxy {
  /** The port to dial instead of the target's. */
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Resolves once `text` has been forwarded toward a client (whole within one read of the agent's; once written, it reaches the client even if the link then stalls). */
  passed(text: string): Promise<void>;
  /**
   * Resets the next connection whose client sends `text` (whole within one write), before that
   * write is forwarded: the target never sees it. Resolves once it did.
   */
  cutWhenSent(text: string): Promise<void>;
  /** Resets every connection now open, held ones included. */
  cut(): void;
  /** From now on, new connections wait, unforwarded, until `resume`. */
  hold(): void;
  /** Forwards the held connections, and new ones at once. */
  resume(): void;
  /** The connections now open stop forwarding, both ways, and stay open (a half-open link); new ones are forwarded. */
  stall(): void;
  /** Stops listening for now (new connections are refused) and resets every connection. */
  refuse(): Promise<void>;
  /** Listens again on the same port after `refuse`. */
  listen(): Promise<void>;
  /** Stops listening (new connections are refused) and resets every connection. */
  close(): Promise<void>;
}

export async function startCuttingProxy(target: { host: string; port: number }): Promise<CuttingProxy> {
  const open = new Set<Socket>();
  const held: Socket[] = [];
  const links = new Set<{ client: Socket; upstream: Socket }>();
  let holding = false;
  let accepted = 0;
  const watchers: { text: string; seen: () => void }[] = [];
  const cutters: { text: string; seen: () => void }[] = [];

  const track = (socket: Socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    // A cut makes both sides fail: that is the point, not an error of the test.
    socket.on("error", () => undefined);
  };

  const forward = (client: Socket) => {
    if (client.destroyed) return;
    const upstream = connect(target.port, target.host);
    track(upstream);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    // Before pipe's own listener: a cut write goes no further.
    client.on("data", (data: Buffer) => {
      const cutter = cutters.find((c) => data.includes(c.text));
      if (cutter === undefined) return;
      cutters.splice(cutters.indexOf(cutter), 1);
      client.unpipe(upstream);
      upstream.destroy();
      client.resetAndDestroy();
      cutter.seen();
    });
    client.pipe(upstream);
    upstream.pipe(client);
    upstream.on("data", (data: Buffer) => {
      for (const w of watchers.slice()) if (data.includes(w.text)) watchers.splice(watchers.indexOf(w), 1), w.seen();
    });
    links.add({ client, upstream });
    client.on("close", () => links.forEach((l) => l.client === client && links.delete(l)));
  };

  const server = createServer((client) => {
    accepted++;
    track(client);
    // Unread, a held connection's bytes wait in its buffer until it is forwarded.
    if (holding) held.push(client);
    else forward(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  const cut = () => {
    for (const socket of [...open]) {
      if (socket.destroyed) continue;
      // resetAndDestroy needs a connected socket; an upstream still connecting is just destroyed.
      if (socket.connecting) socket.destroy();
      else socket.resetAndDestroy();
    }
    held.length = 0;
  };

  const port = (server.address() as AddressInfo).port;
  const stop = async () => {
    if (!server.listening) return cut();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    cut();
    await closed;
  };

  return {
    port,
    get accepted() {
      return accepted;
    },
    passed: (text) => new Promise<void>((seen) => watchers.push({ text, seen })),
    cutWhenSent: (text) => new Promise<void>((seen) => cutters.push({ text, seen })),
    cut,
    hold() {
      holding = true;
    },
    resume() {
      holding = false;
      for (const client of held.splice(0)) forward(client);
    },
    stall() {
      for (const { client, upstream } of links.values()) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      links.clear();
    },
    refuse: stop,
    listen: () => new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve)),
    close: stop,
  };
}
