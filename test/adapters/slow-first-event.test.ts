/**
 * A stream whose first event takes longer than a heartbeat period (D14),
 * over a real socket, on both JSON bindings, on the node:http adapter and on
 * the fetch adapter under Hono's node server: its headers go out after one
 * period and heartbeats follow, so neither the client nor a proxy between
 * waits for a first byte for as long as the handler takes (test/proxy/
 * nginx.test.ts shows a stream that would otherwise be cut). What the
 * handler does after that (fails, or ends without an event) is the stream's
 * last event, as an error after a first event is.
 */
import { jest } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve as honoServe } from "@hono/node-server";
import { createFetchHandler, type Endpoint } from "protoc-gen-a2a/runtime";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { createA2AServiceHttpJsonEndpoint } from "../../generated/a2a_http.js";
import { createA2AServiceJsonRpcEndpoint } from "../../generated/a2a_jsonrpc.js";
import { TaskState } from "../../generated/a2a_pb.js";
import { createNodeListener } from "../../runtime/adapters/node-http.js";
import { deferred, within, type Deferred } from "../support/task-clients.js";

jest.setTimeout(30_000);

const HEARTBEAT_MS = 100;

/** Per message text: what the handler waits for before it does what the text's first word says. */
const gates = new Map<string, Deferred>();

const handler = {
  async *sendStreamingMessage(request: { message?: { parts: { content: { value?: unknown } }[] } }) {
    const text = String(request.message?.parts[0]?.content.value);
    await gates.get(text)!.promise;
    if (text.startsWith("fail")) throw new Error("secret: the handler failed");
    if (text.startsWith("empty")) return;
    yield { payload: { case: "task" as const, value: { id: "t1", contextId: "c1", status: { state: TaskState.COMPLETED } } } };
  },
} as unknown as A2AServiceHandler;

const reported: unknown[] = [];
const options = { heartbeatMs: HEARTBEAT_MS, onError: (err: unknown) => void reported.push(err) };

const BINDINGS = {
  JSONRPC: {
    endpoint: () => createA2AServiceJsonRpcEndpoint(handler, options),
    path: "/",
    body: (text: string) => ({ jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text }] } } }),
  },
  "HTTP+JSON": {
    endpoint: () => createA2AServiceHttpJsonEndpoint(handler, options),
    path: "/message:stream",
    body: (text: string) => ({ message: { messageId: "m1", role: "ROLE_USER", parts: [{ text }] } }),
  },
};

const SERVERS: Record<string, (endpoint: Endpoint) => Promise<Server>> = {
  "node:http": async (endpoint) => {
    const server = createServer(createNodeListener(endpoint));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return server;
  },
  "fetch (Hono's node server)": (endpoint) =>
    new Promise((resolve) => {
      const server = honoServe({ fetch: createFetchHandler(endpoint), port: 0, hostname: "127.0.0.1" }, () => resolve(server as Server));
    }),
};

/** An SSE body read as it comes: its frames (`event` named or not), heartbeat comments counted. */
function readFrames(body: ReadableStream<Uint8Array>) {
  const frames: { event?: string; data: unknown }[] = [];
  let comments = 0;
  let wake: (() => void) | undefined;
  const ended = (async () => {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const piece of body) {
      buffered += decoder.decode(piece, { stream: true });
      let end: number;
      while ((end = buffered.indexOf("\n\n")) >= 0) {
        const frame = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (frame.startsWith(":")) comments++;
        else {
          const lines = frame.split("\n");
          const event = lines.find((l) => l.startsWith("event: "))?.slice("event: ".length);
          frames.push({ ...(event === undefined ? {} : { event }), data: JSON.parse(lines.find((l) => l.startsWith("data: "))!.slice("data: ".length)) });
        }
        wake?.();
      }
    }
    wake?.();
  })();
  return {
    frames,
    get comments() {
      return comments;
    },
    ended,
    /** Resolves once a heartbeat came. */
    async heartbeat(): Promise<void> {
      while (comments === 0) await within("a heartbeat", new Promise<void>((resolve) => (wake = resolve)), 5000);
    },
  };
}

describe.each(Object.keys(SERVERS))("%s", (serverName) => {
  describe.each(Object.keys(BINDINGS) as (keyof typeof BINDINGS)[])("%s", (bindingName) => {
    const binding = BINDINGS[bindingName];
    let server: Server;
    let origin: string;

    beforeAll(async () => {
      server = await SERVERS[serverName]!(binding.endpoint());
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    afterAll(async () => {
      for (const gate of gates.values()) gate.resolve();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    /** Starts a stream whose handler waits before anything: resolves with its response once the headers came, the gate still closed. */
    async function slowStream(kind: string) {
      const text = `${kind} ${serverName} ${bindingName}`;
      const gate = deferred();
      gates.set(text, gate);
      const res = await within(
        "the headers, before the first event",
        fetch(origin + binding.path, { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" }, body: JSON.stringify(binding.body(text)) }),
      );
      expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/event-stream"]);
      const read = readFrames(res.body!);
      // Heartbeats keep the stream going while the handler has nothing yet.
      await read.heartbeat();
      expect(read.frames).toEqual([]);
      gate.resolve();
      await within("the stream to end", read.ended);
      return read;
    }

    test("the first event later than a heartbeat period: headers after one period, heartbeats, then the event", async () => {
      const { frames } = await slowStream("event");
      const task = { task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_COMPLETED" } } };
      expect(frames).toEqual([{ data: bindingName === "JSONRPC" ? { jsonrpc: "2.0", id: 1, result: task } : task }]);
    });

    test("a failure after the stream opened without its first event is its last frame, without the failure's text", async () => {
      const before = reported.length;
      const { frames } = await slowStream("fail");
      expect(frames).toHaveLength(1);
      if (bindingName === "JSONRPC") expect(frames[0]).toEqual({ data: { jsonrpc: "2.0", id: 1, error: { code: -32603, message: "Internal error" } } });
      else expect(frames[0]).toMatchObject({ event: "error", data: { error: { code: 500, status: "INTERNAL" } } });
      expect(JSON.stringify(frames)).not.toContain("secret");
      expect(reported.slice(before).map(String)).toEqual(["Error: secret: the handler failed"]);
    });

    test("a stream that ends without an event after it opened gets the error a stream owes then (D15), as its one frame", async () => {
      const { frames } = await slowStream("empty");
      expect(frames).toHaveLength(1);
      if (bindingName === "JSONRPC") {
        expect(frames[0]).toEqual({ data: { jsonrpc: "2.0", id: 1, error: { code: -32603, message: "the stream ended before its first event" } } });
      } else {
        expect(frames[0]).toMatchObject({ event: "error", data: { error: { code: 500, message: "the stream ended before its first event" } } });
      }
    });
  });
});
