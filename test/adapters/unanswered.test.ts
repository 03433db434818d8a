/**
 * A failure a core lets escape (a bug: the cores answer their own failures)
 * is answered with an empty 500 and reported, not lost: the node adapter
 * hands it to the endpoint's `report`, which the generated endpoints route
 * to onError / the logger, and serveA2AService to the endpoint of the path.
 * The fuzz campaign found such failures in 0.3's layer that no log showed.
 */
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { serve as honoServe } from "@hono/node-server";
import { Hono } from "hono";
import { createFetchHandler, createNodeListener, type Endpoint } from "protoc-gen-a2a/runtime";
import type { FailureInfo } from "protoc-gen-a2a/runtime/server";
import { createA2AServiceHttpJsonEndpoint } from "../../generated/a2a_http.js";
import { createA2AServiceJsonRpcEndpoint } from "../../generated/a2a_jsonrpc.js";

async function listen(endpoint: Endpoint): Promise<{ server: Server; base: string }> {
  const server = createServer(createNodeListener(endpoint));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

test("the node adapter answers an escaped failure with an empty 500 and reports it with the request's path and query", async () => {
  const seen: { message: string; url: string }[] = [];
  const { server, base } = await listen({
    handle: () => Promise.reject(new Error("a bug of ours")),
    report: (err, url) => void seen.push({ message: (err as Error).message, url }),
  });
  try {
    const res = await fetch(`${base}/a2a/x?y=1`, { method: "POST", body: "{}" });
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("");
    expect(seen).toEqual([{ message: "a bug of ours", url: "/a2a/x?y=1" }]);
  } finally {
    server.close();
  }
});

test("a failure after the body was read is reported too; a client gone while its body was read is not; a report that throws still answers", async () => {
  const seen: string[] = [];
  let throwing = false;
  let bodyFailed: () => void = () => {};
  const bodyFailure = new Promise<void>((resolve) => (bodyFailed = resolve));
  const { server, base } = await listen({
    async handle(req) {
      try {
        await req.body(1 << 20, 5000);
      } catch (err) {
        bodyFailed();
        throw err;
      }
      throw new Error("after the body");
    },
    report: (err) => {
      if (throwing) throw new Error("the reporter broke");
      seen.push((err as Error).message);
    },
  });
  try {
    // Read to its end: node marks the request destroyed then, which is no reason to stay silent.
    expect((await fetch(`${base}/x`, { method: "POST", body: "{}" })).status).toBe(500);
    expect(seen).toEqual(["after the body"]);
    throwing = true;
    expect((await fetch(`${base}/x`, { method: "POST", body: "{}" })).status).toBe(500);
    throwing = false;
    // A body cut off by the client: its read fails, which is the client's doing.
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"a\":");
        setImmediate(() => socket.destroy());
      });
      socket.on("close", () => resolve());
    });
    // The read failed; one turn of the event loop settles everything that failure leads to.
    await bodyFailure;
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(["after the body"]);
  } finally {
    server.close();
  }
});

test.each([
  ["JSON-RPC", "/", (onError: (err: unknown, info: FailureInfo) => void) => createA2AServiceJsonRpcEndpoint({}, { onError })],
  ["HTTP+JSON", "/message:send", (onError: (err: unknown, info: FailureInfo) => void) => createA2AServiceHttpJsonEndpoint({}, { onError })],
] as const)("%s: a client gone while its body was read (half-closed or reset) is no failure to report", async (_, path, endpointOf) => {
  const reported: string[] = [];
  const endpoint = endpointOf((err) => void reported.push((err as Error).message));
  let closed: () => void = () => {};
  const server = createServer((req, res) => {
    res.on("close", () => closed());
    createNodeListener(endpoint)(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    for (const leave of ["half-close", "reset"]) {
      const gone = new Promise<void>((resolve) => (closed = resolve));
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\na2a-version: 1.0\r\nContent-Length: 100\r\n\r\n{"a":`);
        setImmediate(() => (leave === "reset" ? socket.resetAndDestroy() : socket.end()));
      });
      socket.on("error", () => undefined);
      await gone;
      // The read fails with the connection's close; two turns of the event loop settle what that failure leads to.
      for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
    }
    expect(reported).toEqual([]);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

/** `endpoint` behind Hono on @hono/node-server: the fetch adapter over a real socket. */
async function listenHono(endpoint: Endpoint): Promise<{ server: Server; base: string }> {
  const app = new Hono();
  const handler = createFetchHandler(endpoint);
  app.all("*", (c) => handler(c.req.raw));
  return new Promise((resolve) => {
    const server = honoServe({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
      resolve({ server: server as Server, base: `http://127.0.0.1:${info.port}` });
    });
  });
}

test("the fetch adapter answers an escaped failure with an empty 500 and reports it, not the platform's error page", async () => {
  const seen: { message: string; url: string }[] = [];
  let throwing = false;
  const { server, base } = await listenHono({
    handle: () => Promise.reject(new Error("a bug of ours")),
    report: (err, url) => {
      if (throwing) throw new Error("the reporter broke");
      seen.push({ message: (err as Error).message, url });
    },
  });
  try {
    const res = await fetch(`${base}/a2a/x?y=1`, { method: "POST", body: "{}" });
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.text()).toBe("");
    expect(seen).toEqual([{ message: "a bug of ours", url: "/a2a/x?y=1" }]);
    throwing = true;
    const again = await fetch(`${base}/a2a/x`, { method: "POST", body: "{}" });
    expect(again.status).toBe(500);
    expect(await again.text()).toBe("");
  } finally {
    server.close();
  }
});

test("the fetch adapter does not report a failure of a request whose client left", async () => {
  const seen: string[] = [];
  const client = new AbortController();
  const request = new Request("http://agent.example/a2a/x", { method: "POST", body: "{}", signal: client.signal });
  const handler = createFetchHandler({
    handle: () => {
      client.abort();
      return Promise.reject(new Error("the body read failed: the client left"));
    },
    report: (err) => void seen.push((err as Error).message),
  });
  expect((await handler(request)).status).toBe(500);
  expect(seen).toEqual([]);
  const kept = createFetchHandler({ handle: () => Promise.reject(new Error("a bug of ours")), report: (err) => void seen.push((err as Error).message) });
  expect((await kept(new Request("http://agent.example/a2a/x", { method: "POST", body: "{}" }))).status).toBe(500);
  expect(seen).toEqual(["a bug of ours"]);
});

test("the generated endpoints report such a failure to onError, with their binding", () => {
  const seen: FailureInfo[] = [];
  const onError = (_err: unknown, info: FailureInfo) => void seen.push(info);
  createA2AServiceJsonRpcEndpoint({}, { onError }).report?.(new Error("x"), "/");
  createA2AServiceHttpJsonEndpoint({}, { onError }).report?.(new Error("y"), "/tasks/1");
  expect(seen).toEqual([
    { binding: "JSONRPC", method: "(unanswered)" },
    { binding: "HTTP+JSON", method: "(unanswered)" },
  ]);
});

test("a stream whose headers node refuses is answered with an empty 500 and reported, and its source is let go as on a disconnect", async () => {
  const seen: string[] = [];
  let cancelled = 0;
  const { server, base } = await listen({
    handle: async () => ({
      kind: "stream",
      // A header value node will not write (an activated extension's name, say).
      headers: { "content-type": "text/event-stream", "a2a-extensions": "bad\u0000name" },
      events: { next: () => new Promise<string | undefined>(() => undefined), cancel: () => void cancelled++, heartbeatMs: 50 },
    }),
    report: (err) => void seen.push((err as Error).name),
  });
  try {
    const res = await fetch(`${base}/a2a`, { method: "POST", body: "{}" });
    expect([res.status, await res.text()]).toEqual([500, ""]);
    expect(cancelled).toBe(1);
    expect(seen).toHaveLength(1);
  } finally {
    server.close();
  }
});

test("the fetch adapter lets the source of a stream whose headers the platform refuses go at once, heartbeats on or off", async () => {
  for (const heartbeatMs of [50, 0]) {
    const seen: string[] = [];
    let cancelled = 0;
    const handler = createFetchHandler({
      handle: async () => ({
        kind: "stream",
        headers: { "content-type": "text/event-stream", "a2a-extensions": "bad\u0000name" },
        events: { next: () => new Promise<string | undefined>(() => undefined), cancel: () => void cancelled++, heartbeatMs },
      }),
      report: (err) => void seen.push((err as Error).name),
    });
    const res = await handler(new Request("http://agent.example/a2a", { method: "POST", body: "{}" }));
    expect([res.status, await res.text()]).toEqual([500, ""]);
    // Before the answer: it used to wait for the fourth heartbeat period, or for ever without heartbeats.
    expect(cancelled).toBe(1);
    expect(seen).toHaveLength(1);
  }
});
