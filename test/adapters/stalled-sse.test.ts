/**
 * An SSE client that stops reading, over a real socket, on the node:http
 * adapter and on the fetch adapter under Hono's node server: the server
 * neither keeps its connection for ever nor grows its write buffer with
 * heartbeats. Once a write (node:http) or a chunk (fetch) has waited four
 * heartbeat periods for the client to take it, the connection is dropped
 * (and the handler's stream is released like any disconnect's).
 */
import { jest } from "@jest/globals";
import { connect, type Socket } from "node:net";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve as honoServe } from "@hono/node-server";
import { createFetchHandler, type A2ACallContext } from "protoc-gen-a2a/runtime";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { createA2AServiceJsonRpcEndpoint, createA2AServiceJsonRpcListener } from "../../generated/a2a_jsonrpc.js";
import { TaskState } from "../../generated/a2a_pb.js";
import { deferred, within } from "../support/task-clients.js";

jest.setTimeout(30_000);
const HEARTBEAT_MS = 100;
let released = deferred();

// A stream of 64 KB events for as long as someone pulls them.
const handler = {
  async *sendStreamingMessage(_request: unknown, context: A2ACallContext) {
    try {
      yield { payload: { case: "task" as const, value: { id: "t1", contextId: "c1", status: { state: TaskState.WORKING } } } };
      for (let i = 0; !context.signal.aborted; i++) {
        yield {
          payload: {
            case: "artifactUpdate" as const,
            value: { taskId: "t1", contextId: "c1", append: i > 0, artifact: { artifactId: "a", parts: [{ content: { case: "text" as const, value: "x".repeat(64 << 10) } }] } },
          },
        };
      }
    } finally {
      released.resolve();
    }
  },
} as unknown as A2AServiceHandler;

const servers: Record<string, () => Promise<Server>> = {
  "node:http": async () => {
    const server = createServer(createA2AServiceJsonRpcListener(handler, { heartbeatMs: HEARTBEAT_MS }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return server;
  },
  "fetch (Hono's node server)": () => {
    const fetch = createFetchHandler(createA2AServiceJsonRpcEndpoint(handler, { heartbeatMs: HEARTBEAT_MS }));
    return new Promise((resolve) => {
      const server = honoServe({ fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(server as Server));
    });
  },
};

describe.each(Object.keys(servers))("%s", (name) => {
  let server: Server;

  beforeAll(async () => {
    server = await servers[name]!();
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** A raw HTTP/1.1 connection that sent a SendStreamingMessage with `text`, paused. */
  async function open(text: string): Promise<Socket> {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text }] } } });
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
    socket.on("error", () => undefined);
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.pause();
    socket.write(`POST / HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\na2a-version: 1.0\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    return socket;
  }

  const connections = () => new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  test("a client that stops reading is disconnected once a write has waited four heartbeats, and the handler's stream is released", async () => {
    released = deferred();
    const socket = await open("go");
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    // Reads nothing: the socket's buffers fill and the server's writes wait.
    await new Promise<void>((resolve) => socket.once("readable", () => resolve()));
    expect(await connections()).toBe(1);
    // The server's side (the paused client would not even read the reset).
    await within("the handler's stream to be released", released.promise, 10_000);
    await within("the server to drop the stalled connection", (async () => {
      while ((await connections()) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    })(), 10_000);
    socket.destroy();
    await closed;
  });
});
