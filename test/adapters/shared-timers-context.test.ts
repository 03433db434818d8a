/**
 * The shared timers of the node:http adapter keep no request's async context (D35). That of the
 * SSE heartbeats, made by the first stream, held that call's context as long as any stream was
 * open. And the one that watches body reads (D32): made in the
 * context of the read that happened to start it, it held that request's AsyncLocalStorage stores
 * (an OpenTelemetry span, a logger's request context) for as long as some body was being read,
 * which on a busy server is for good. A real node:http server with the generated JSON-RPC core; the
 * request context is a store of the test's own AsyncLocalStorage, as a logging middleware sets.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import v8 from "node:v8";
import vm from "node:vm";
import { createNodeListener } from "protoc-gen-a2a/runtime/adapters";
import { JSONRPC_PATH, cores, type CoreOptions } from "./frameworks.js";

/**
 * A node:http server with the JSON-RPC core of `options`, each request run in a context of an
 * AsyncLocalStorage of the test's own (as a logging middleware sets one), held weakly in `seen`.
 */
async function serveRecording(options: CoreOptions): Promise<{ port: number; seen: WeakRef<object>[]; gc: () => void; server: Server }> {
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  const requests = new AsyncLocalStorage<{ readonly id: number; readonly payload: number[] }>();
  const seen: WeakRef<object>[] = [];
  const listener = createNodeListener(cores(options).jsonRpc);
  const server = createServer((req, res) => {
    const context = { id: seen.length, payload: new Array<number>(1000).fill(seen.length) };
    seen.push(new WeakRef(context));
    requests.run(context, () => listener(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, seen, gc, server };
}

const getTask = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t1" } });

test("a request whose body read started the watch's timer is not kept by it while other bodies are read", async () => {
  // A distinct timeout of this test's own: its watch starts with this test's first body.
  const { port, seen, gc, server } = await serveRecording({ bodyTimeoutMs: 4_321 });
  // A body that stops halfway keeps the watch (and its timer) going.
  const stalled = connect(port, "127.0.0.1");
  try {
    const answer = await fetch(`http://127.0.0.1:${port}${JSONRPC_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0", connection: "close" },
      body: getTask,
    });
    expect(answer.status).toBe(200);
    await answer.text();
    await new Promise<void>((resolve) => {
      stalled.write(`POST ${JSONRPC_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${getTask.length}\r\n\r\n`);
      stalled.write(getTask.slice(0, 10), () => resolve());
    });
    while (seen.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    // The first request's own short-lived resources (its socket's close, the server's timers) end.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    gc();
    // The first request is answered; only the second is still being read.
    expect(seen[0]!.deref()).toBeUndefined();
  } finally {
    stalled.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test("a stream that started the SSE heartbeats' timer is not kept by it once it ends while other streams go on", async () => {
  // A heartbeat period of this test's own: its timer starts with this test's first stream.
  const { port, seen, gc, server } = await serveRecording({ heartbeatMs: 4_321 });
  const subscribe = async (id: string, signal: AbortSignal) => {
    const res = await fetch(`http://127.0.0.1:${port}${JSONRPC_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SubscribeToTask", params: { id } }),
      signal,
    });
    expect(res.status).toBe(200);
    // The first event is out: the stream is open, its heartbeat slot taken.
    const reader = res.body!.getReader();
    await reader.read();
    return reader;
  };
  const first = new AbortController();
  const second = new AbortController();
  try {
    await subscribe("first", first.signal);
    await subscribe("second", second.signal);
    first.abort();
    // The first stream's own short-lived resources (its socket's close, the server's timers) end.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    gc();
    expect(seen).toHaveLength(2);
    expect(seen[0]!.deref()).toBeUndefined();
  } finally {
    second.abort();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
