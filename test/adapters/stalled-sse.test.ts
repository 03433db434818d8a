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
import { createFetchHandler, type A2ACallContext, type Endpoint } from "protoc-gen-a2a/runtime";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { createA2AServiceJsonRpcEndpoint, createA2AServiceJsonRpcListener } from "../../generated/a2a_jsonrpc.js";
import { TaskState } from "../../generated/a2a_pb.js";
import { deferred, within } from "../support/task-clients.js";

jest.setTimeout(30_000);
// Four heartbeats (1 s) are far above a pause of the event loop on a loaded machine, so a steady reader is never taken for a stalled one.
const HEARTBEAT_MS = 250;
let released = deferred();

// "go": a stream of 64 KB events for as long as someone pulls them; "large": two events of 1 MB,
// then the end; "paused": the same, each after a pause of 350 ms (an agent at work, not a wait
// for the test); "huge": two of 4 MB.
const handler = {
  async *sendStreamingMessage(request: { message?: { parts: { content: { value?: unknown } }[] } }, context: A2ACallContext) {
    try {
      yield { payload: { case: "task" as const, value: { id: "t1", contextId: "c1", status: { state: TaskState.WORKING } } } };
      const text = request.message?.parts[0]?.content.value;
      const large = text === "large" || text === "paused" || text === "huge";
      for (let i = 0; !context.signal.aborted && (!large || i < 2); i++) {
        if (text === "paused") await new Promise((resolve) => setTimeout(resolve, 350));
        yield {
          payload: {
            case: "artifactUpdate" as const,
            value: { taskId: "t1", contextId: "c1", append: i > 0, artifact: { artifactId: "a", parts: [{ content: { case: "text" as const, value: "x".repeat(text === "huge" ? 4 << 20 : large ? 1 << 20 : 64 << 10) } }] } },
          },
        };
      }
    } finally {
      released.resolve();
    }
  },
} as unknown as A2AServiceHandler;

/** A JSON-RPC SendStreamingMessage whose text picks the handler's stream. */
const streamingBody = (text: string) =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text }] } } });

/** The "x"s in `bytes`: the events' text, whatever chunks and framing carried it. */
function xsIn(bytes: Uint8Array): number {
  let n = 0;
  for (const byte of bytes) if (byte === 0x78) n++;
  return n;
}

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
    const body = streamingBody(text);
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

  test("a client that reads steadily but slowly is not cut, though one event takes it longer than four heartbeats", async () => {
    released = deferred();
    const socket = await open("large");
    // 16 KB every 20 ms (800 KB/s): each 1 MB event takes about 1.3 s to read, four heartbeats are 1 s.
    const chunks: Buffer[] = [];
    let xs = 0;
    let ended!: () => void;
    const endedOrClosed = new Promise<void>((resolve, reject) => {
      ended = resolve;
      socket.once("close", () => reject(new Error(`the server closed the connection after ${xs} bytes of the events' text`)));
    });
    const reading = setInterval(() => {
      // 8 KB at a time (the tail, once less is left: the connection stays open after the response).
      const take = () => (socket.read(8192) ?? (socket.readableLength > 0 && socket.readableLength < 8192 ? socket.read() : null)) as Buffer | null;
      for (let budget = 16 << 10, c: Buffer | null; budget > 0 && (c = take()) !== null; budget -= c.length) {
        chunks.push(c);
        xs += xsIn(c);
      }
      // The response's last chunk: the stream ended, it was not dropped.
      if (Buffer.concat(chunks.slice(-2)).toString("latin1").endsWith("\r\n0\r\n\r\n")) ended();
    }, 20);
    try {
      await within("the stream to be read to its end", endedOrClosed, 15_000);
      await within("the handler's stream to be released", released.promise, 1000);
      // Both events whole (the fetch adapter's pieces are chunks of their own: only the count of their text is compared).
      expect(xs).toBeGreaterThanOrEqual(2 << 20);
      expect(xs).toBeLessThan((2 << 20) + 100);
    } finally {
      clearInterval(reading);
      socket.destroy();
    }
  });
});

test("fetch adapter: a server that takes each chunk once the one before was written to a slow socket is not cut while it keeps taking them, however large one event is", async () => {
  released = deferred();
  // Four heartbeats are 2 s here: a pause of the event loop under load (one cut this test at 200 ms) is far below.
  const fetchHandler = createFetchHandler(createA2AServiceJsonRpcEndpoint(handler, { heartbeatMs: 500 }));
  const response = await fetchHandler(new Request("http://localhost/", { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" }, body: streamingBody("huge") }));
  const reader = response.body!.getReader();
  // As Hono's server does: the next chunk is read once this one is out, here at 1.6 MB/s. A 4 MB
  // event taken whole would keep the next one waiting 2.6 s, past four heartbeats (2 s): it goes in
  // pieces instead, one every 40 ms.
  let xs = 0;
  for (let r = await reader.read(); r.done !== true; r = await reader.read()) {
    xs += xsIn(r.value);
    await new Promise((resolve) => setTimeout(resolve, r.value.byteLength / 1600));
  }
  expect(xs).toBeGreaterThanOrEqual(8 << 20);
  expect(xs).toBeLessThan((8 << 20) + 100);
  await within("the handler's stream to be released", released.promise, 1000);
});

test("fetch adapter: a client that stops reading at the last chunk of the last event is let go too, though the source has ended", async () => {
  released = deferred();
  const fetchHandler = createFetchHandler(createA2AServiceJsonRpcEndpoint(handler, { heartbeatMs: 100 }));
  const response = await fetchHandler(new Request("http://localhost/", { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" }, body: streamingBody("large") }));
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  // Reads as a server does up to the last chunk of the last event, then takes nothing more: the
  // server's write of that chunk waits for a client that stopped reading.
  let text = "";
  let xs = 0;
  while (!(xs >= 2 << 20 && text.endsWith("\n\n"))) {
    const r = await reader.read();
    if (r.done === true) throw new Error(`the stream ended after ${xs} bytes of the events' text`);
    text = decoder.decode(r.value);
    xs += xsIn(r.value);
  }
  await within("the handler's stream to be released", released.promise, 1000);
  // Four periods later the stream errors (the server drops the connection), rather than closing
  // as if the last chunk had reached the client.
  await expect(within("the stream to be let go", reader.closed, 5000)).rejects.toThrow("four heartbeat periods");
});

test("fetch adapter: a source that fails errors the stream, and its heartbeat stops with it (an enqueue into the errored stream would throw from the timer and end the process)", async () => {
  // A source whose next() rejects, as a 0.3 stream's does when an event cannot be translated.
  let pulls = 0;
  const failing: Endpoint = {
    handle: async () => ({
      kind: "stream",
      headers: { "content-type": "text/event-stream" },
      events: { heartbeatMs: 10, next: async () => (pulls++ === 0 ? 'data: {"status":1}\n\n' : Promise.reject(new Error("the source failed"))), cancel: () => undefined },
    }),
  };
  const response = await createFetchHandler(failing)(new Request("http://localhost/", { method: "POST" }));
  const reader = response.body!.getReader();
  const thrown: unknown[] = [];
  const onUncaught = (err: unknown) => void thrown.push(err);
  process.on("uncaughtException", onUncaught);
  try {
    const read: string[] = [];
    for (;;) {
      const r = await reader.read().catch((err: unknown) => ({ failed: err }));
      if ("failed" in r || r.done === true) break;
      read.push(new TextDecoder().decode(r.value));
    }
    // Several heartbeat periods after the end: no timer is left to throw.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(thrown).toEqual([]);
    expect(read.join("")).toContain('"status"');
  } finally {
    process.off("uncaughtException", onUncaught);
  }
});

test.each([
  ["back to back", "large"],
  ["after pauses, with heartbeats between them", "paused"],
])("fetch adapter: events split into pieces still make whole SSE frames (D14), one data line per event, heartbeats only between them: events %s", async (_, mode) => {
  released = deferred();
  // Periods of 100 ms: the adapter cuts a reader that took nothing for four of them, and a 20 ms
  // cut (periods of 5 ms) caught this steady reader in a CI run under load.
  const fetchHandler = createFetchHandler(createA2AServiceJsonRpcEndpoint(handler, { heartbeatMs: 100 }));
  const response = await fetchHandler(new Request("http://localhost/", { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" }, body: streamingBody(mode) }));
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (let r = await reader.read(); r.done !== true; r = await reader.read()) {
    text += decoder.decode(r.value, { stream: true });
    // A slow but steady reader: its 35-odd reads of 2 MB span several periods of the adapter's
    // timer while pieces wait, and it is not cut. A heartbeat goes out only when nothing waits:
    // back-to-back events leave no room for one, the pauses of 350 ms room for about three each.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const frames = text.split("\n\n").filter((f) => f !== "");
  // Every frame is a heartbeat comment or one data line holding a whole JSON-RPC response.
  const kinds = frames.map((f) => (f.startsWith(":") ? "comment" : /^data: [^\n]*$/.test(f) ? "data" : `a broken frame: ${f.slice(0, 80)}`));
  for (const kind of kinds) expect(kind).toMatch(/^(comment|data)$/);
  if (mode === "paused") {
    // Heartbeats came in each pause: between the task and the first artifact, and between the two.
    const between = kinds.join(",").split("data").slice(1, -1).map((run) => run.split("comment").length - 1);
    expect(between).toHaveLength(2);
    for (const n of between) expect(n).toBeGreaterThanOrEqual(1);
  }
  const data = frames.filter((f) => !f.startsWith(":"));
  const parsed = data.map((f) => JSON.parse(f.slice("data: ".length)) as { result: { task?: unknown; artifactUpdate?: { artifact: { parts: { text: string }[] } } } });
  expect(parsed.map((p) => (p.result.task !== undefined ? "task" : `artifact:${p.result.artifactUpdate?.artifact.parts[0]?.text.length}`))).toEqual(["task", `artifact:${1 << 20}`, `artifact:${1 << 20}`]);
  await within("the handler's stream to be released", released.promise, 1000);
});
