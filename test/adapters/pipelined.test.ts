/**
 * HTTP/1.1 on the node:http adapter, over raw sockets. Pipelining: a
 * response waits behind the one before it on its connection, with no socket
 * of its own until its turn; a stream queued so is let go when its client
 * leaves (node emits no 'close' on such a response), and is not cut as
 * stalled for the time it waits. A request target in absolute form is
 * served as its path (RFC 9112 3.2.2).
 */
import { jest } from "@jest/globals";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { createNodeListener } from "protoc-gen-a2a/runtime";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { createA2AServiceHttpJsonEndpoint } from "../../generated/a2a_http.js";
import { createA2AServiceJsonRpcEndpoint } from "../../generated/a2a_jsonrpc.js";
import { StreamResponseSchema, TaskState } from "../../generated/a2a_pb.js";
import { create } from "@bufbuild/protobuf";
import { deferred, within, type Deferred } from "../support/task-clients.js";

jest.setTimeout(30_000);

/** Resolves when `signal` aborts, or at once if it has. */
const abortOf = (signal: AbortSignal) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));

let first: Deferred<void> = deferred();
let firstEntered: Deferred<void> = deferred();
let streamReleased: Deferred<void> = deferred();
let late: Deferred<void> = deferred();
let lateEntered: Deferred<void> = deferred();
let deepWaiting = 0;
const handler: A2AServiceHandler = {
  // The first call of a connection, held by the test.
  async getTask(request, context) {
    if (request.id === "held") {
      firstEntered.resolve();
      await first.promise;
    }
    if (request.id === "late") {
      // Asks for its signal only once the test says so: after its client left.
      lateEntered.resolve();
      await late.promise;
      await abortOf(context.signal);
      streamReleased.resolve();
    }
    return { id: request.id, contextId: "c", status: { state: TaskState.WORKING } };
  },
  async *subscribeToTask(request, context) {
    yield create(StreamResponseSchema, { payload: { case: "task", value: { id: request.id, contextId: "c", status: { state: TaskState.WORKING } } } });
    if (request.id === "long") {
      // More than the response buffers while it has no socket: the writer waits for a drain.
      const text = "x".repeat(1024);
      for (let i = 0; i < 64; i++) {
        yield create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId: request.id, contextId: "c", status: { state: TaskState.WORKING, message: { messageId: `m${i}`, parts: [{ content: { case: "text", value: text } }] } } } } });
      }
      return;
    }
    if (request.id !== "open" && !request.id.startsWith("deep")) return;
    if (request.id.startsWith("deep")) deepWaiting++;
    // Open until its client leaves: its signal then aborts (D14).
    await abortOf(context.signal);
    streamReleased.resolve();
  },
};

function serve(heartbeatMs: number): Promise<{ server: Server; port: number }> {
  const server = createServer(createNodeListener(createA2AServiceJsonRpcEndpoint(handler, { heartbeatMs })));
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as AddressInfo).port })));
}

function post(method: string, id: string): string {
  const body = JSON.stringify({ jsonrpc: "2.0", id, method, params: { id } });
  return `POST /a2a HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\na2a-version: 1.0\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function open(port: number): Promise<{ socket: Socket; text: () => string; ended: Promise<void> }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => resolve({ socket, text: () => text, ended }));
    let text = "";
    socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
    const ended = new Promise<void>((done) => socket.once("close", () => done()));
  });
}

beforeEach(() => {
  first = deferred();
  firstEntered = deferred();
  streamReleased = deferred();
  late = deferred();
  lateEntered = deferred();
  deepWaiting = 0;
});

test("a stream queued behind a pipelined call is let go when its client leaves", async () => {
  const { server, port } = await serve(50);
  try {
    const client = await open(port);
    client.socket.write(post("GetTask", "held") + post("SubscribeToTask", "open"));
    await within("the first call to reach the handler", firstEntered.promise);
    // The stream's handler has run (it is pulled before its answer is its connection's turn).
    client.socket.destroy();
    await within("the queued stream to be let go", streamReleased.promise, 5_000);
  } finally {
    first.resolve();
    server.closeAllConnections();
    server.close();
  }
});

test("a queued call that asks for its signal only after its client left is let go too", async () => {
  const { server, port } = await serve(50);
  const serverClosed = deferred();
  server.on("connection", (socket: Socket) => socket.once("close", () => serverClosed.resolve()));
  try {
    const client = await open(port);
    client.socket.write(post("GetTask", "held") + post("GetTask", "late"));
    await within("the calls to reach the handler", Promise.all([firstEntered.promise, lateEntered.promise]));
    client.socket.destroy();
    // The server has seen the connection close before the queued call first asks.
    await within("the server to see the connection close", serverClosed.promise);
    late.resolve();
    await within("the queued call's signal to abort", streamReleased.promise, 5_000);
  } finally {
    first.resolve();
    server.closeAllConnections();
    server.close();
  }
});

test("a dozen streams queued on one connection add one 'close' listener to its socket, not one each", async () => {
  const { server, port } = await serve(0);
  let serverSocket: Socket | undefined;
  server.on("connection", (socket: Socket) => (serverSocket = socket));
  try {
    const client = await open(port);
    client.socket.write(post("GetTask", "held") + Array.from({ length: 12 }, (_, i) => post("SubscribeToTask", `deep${i}`)).join(""));
    await within("the first call to reach the handler", firstEntered.promise);
    await within("the dozen streams to wait", new Promise<void>((resolve) => {
      const check = () => (deepWaiting === 12 ? resolve() : setTimeout(check, 5));
      check();
    }));
    // node's own listeners, and at most one of ours: MaxListeners (10) warned at eleven.
    expect(serverSocket!.listenerCount("close")).toBeLessThan(5);
    client.socket.destroy();
  } finally {
    first.resolve();
    server.closeAllConnections();
    server.close();
  }
});

test("a stream queued behind a slow pipelined call is not cut as stalled while it waits its turn", async () => {
  const { server, port } = await serve(50);
  try {
    const client = await open(port);
    client.socket.write(post("GetTask", "held") + post("SubscribeToTask", "long") + post("GetTask", "third"));
    await within("the first call to reach the handler", firstEntered.promise);
    // Longer than four heartbeat periods, the stall watch's limit: only the queue holds the stream.
    await new Promise((resolve) => setTimeout(resolve, 600));
    first.resolve();
    const all = () => client.text().includes('"id":"held"') && client.text().includes('"id":"third"') && client.text().includes('"messageId":"m63"');
    await within("all three answers", new Promise<void>((resolve) => {
      const check = () => (all() ? resolve() : setTimeout(check, 10));
      check();
    }), 5_000);
    client.socket.destroy();
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test("a request target in absolute form (GET http://host/tasks/x) is served as its path, as RFC 9112 3.2.2 says a server must", async () => {
  const server = createServer(createNodeListener(createA2AServiceHttpJsonEndpoint(handler)));
  const port = await new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
  try {
    const client = await open(port);
    client.socket.write(`GET http://127.0.0.1:${port}/tasks/abs?historyLength=1 HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\n\r\n`);
    await within("the answer", new Promise<void>((resolve) => {
      const check = () => (client.text().includes("\r\n\r\n{") ? resolve() : setTimeout(check, 5));
      check();
    }));
    expect(client.text()).toMatch(/^HTTP\/1\.1 200 /);
    expect(client.text()).toContain('{"id":"abs"');
    client.socket.destroy();
    // Byte for byte as the origin form: no dot segments resolved (D8), as URL parsing would.
    const dots = await open(port);
    dots.socket.write(`GET http://127.0.0.1:${port}/admin/../tasks/abs HTTP/1.1\r\nhost: x\r\na2a-version: 1.0\r\nconnection: close\r\n\r\n`);
    await dots.ended;
    expect(dots.text()).toMatch(/^HTTP\/1\.1 404 /);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
