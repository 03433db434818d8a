/**
 * What only some frameworks have: express body parsers that run before the
 * adapter and nested mount points (express 4 and 5), and fastify's
 * encapsulated content-type parsers.
 */
import { Agent, createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request as httpRequest } from "node:http";
import compression from "compression";
import Fastify from "fastify";
import { Hono } from "hono";
import { serve as honoServe } from "@hono/node-server";
import { createExpressMiddleware, createFastifyHandler, createFastifyPlugin, createHonoHandler } from "protoc-gen-a2a/runtime/adapters";
import { createA2AServiceJsonRpcEndpoint } from "../../generated/a2a_jsonrpc.js";
import { TaskState } from "../../generated/a2a_pb.js";
import { BODY_LIMIT, JSONRPC_PATH, REST_PATH, cores, deferred, express, express4, within } from "./frameworks.js";

const getTask = { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t1" } };
const taskResult = { jsonrpc: "2.0", id: 1, result: { id: "t1", contextId: "ctx-none", status: { state: "TASK_STATE_WORKING" } } };

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function post(url: string, body: string, contentType = "application/json"): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": contentType, "a2a-version": "1.0" }, body });
}

describe.each([
  ["express 5", express],
  ["express 4", express4],
])("%s", (_name, factory) => {
  /** An app with `setup` run first (body parsers), then the two cores mounted as usual. */
  async function withApp(setup: (app: ReturnType<typeof express>) => void, run: (base: string) => Promise<void>): Promise<void> {
    const { jsonRpc, rest } = cores();
    const app = factory();
    setup(app);
    app.use(JSONRPC_PATH, createExpressMiddleware(jsonRpc));
    app.use(REST_PATH, createExpressMiddleware(rest));
    const server = createServer(app);
    try {
      await run(await listen(server));
    } finally {
      await close(server);
    }
  }

  test("after express.json(): the parsed object is serialized again", () =>
    withApp(
      (app) => app.use(express.json()),
      async (base) => {
        const res = await post(`${base}${JSONRPC_PATH}`, JSON.stringify(getTask));
        expect(await res.json()).toEqual(taskResult);
        const sent = await post(`${base}${REST_PATH}/message:send`, JSON.stringify({ message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] } }));
        expect(sent.status).toBe(200);
        expect(await sent.json()).toMatchObject({ message: { messageId: "re-m1" } });
      },
    ));

  test("after express.json(): a body the parser did not take (a2a+json, GET) is read from the stream", () =>
    withApp(
      (app) => app.use(express.json()),
      async (base) => {
        const res = await post(`${base}${JSONRPC_PATH}`, JSON.stringify(getTask), "application/a2a+json");
        expect(await res.json()).toEqual(taskResult);
        const got = await fetch(`${base}${REST_PATH}/tasks/t1`, { headers: { "a2a-version": "1.0" } });
        expect(got.status).toBe(200);
      },
    ));

  test("after express.json(): the core's limit still applies to the parsed body, as its own 413", () =>
    withApp(
      (app) => app.use(express.json()),
      async (base) => {
        const big = JSON.stringify({ ...getTask, params: { id: "x".repeat(BODY_LIMIT * 2) } });
        const res = await post(`${base}${JSONRPC_PATH}`, big);
        expect(res.status).toBe(413);
        expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
      },
    ));

  test("after express.raw(): the Buffer is used as it is, so a parse error is the core's", () =>
    withApp(
      (app) => app.use(express.raw({ type: "*/*" })),
      async (base) => {
        expect(await (await post(`${base}${JSONRPC_PATH}`, JSON.stringify(getTask))).json()).toEqual(taskResult);
        const bad = await post(`${base}${JSONRPC_PATH}`, "{not json");
        expect(await bad.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
      },
    ));

  test("after express.text(): the string is used as it is", () =>
    withApp(
      (app) => app.use(express.text({ type: "*/*" })),
      async (base) => {
        expect(await (await post(`${base}${JSONRPC_PATH}`, JSON.stringify(getTask))).json()).toEqual(taskResult);
      },
    ));

  test("behind compression(): SSE events arrive as they happen, not held for a compressed block (no-transform, D14)", () =>
    withApp(
      (app) => app.use(compression()),
      async (base) => {
        const url = new URL(`${base}${REST_PATH}/tasks/t-compressed:subscribe`);
        const first = deferred<{ encoding: string | undefined; chunk: string }>();
        const req = httpRequest(url, { method: "POST", headers: { "a2a-version": "1.0", "accept-encoding": "gzip", "content-type": "application/json" } }, (res) => {
          res.once("data", (chunk: Buffer) => first.resolve({ encoding: res.headers["content-encoding"], chunk: chunk.toString() }));
        });
        req.end("{}");
        try {
          const got = await within(first.promise, 10_000, "the first event");
          expect(got.encoding).toBeUndefined();
          expect(got.chunk).toMatch(/^data: \{"task":\{"id":"t-compressed"/);
        } finally {
          req.destroy();
        }
      },
    ));

  test("in a nested router the core still sees the full path (req.originalUrl)", async () => {
    const { rest } = cores();
    const app = factory();
    const router = factory.Router();
    router.use("/rest", createExpressMiddleware(rest));
    app.use("/a2a", router);
    const server = createServer(app);
    const base = await listen(server);
    try {
      const res = await fetch(`${base}${REST_PATH}/acme/tasks/t1?A2A-Version=1.0`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: "t1", contextId: "ctx-acme" });
    } finally {
      await close(server);
    }
  });

  test("routes outside the mount stay the app's", () =>
    withApp(
      (app) => app.get("/health", (_req, res) => void res.json({ ok: true })),
      async (base) => {
        expect(await (await fetch(`${base}/health`)).json()).toEqual({ ok: true });
      },
    ));
});

describe("fastify", () => {
  test("the plugin's raw body parsing stays inside it; the app's other routes keep fastify's JSON parser", async () => {
    const { jsonRpc } = cores();
    const app = Fastify();
    app.post("/echo", async (request) => ({ parsed: request.body }));
    await app.register(createFastifyPlugin(jsonRpc), { prefix: JSONRPC_PATH });
    const base = await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      expect(await (await post(`${base}/echo`, JSON.stringify({ a: 1 }))).json()).toEqual({ parsed: { a: 1 } });
      expect(await (await post(`${base}${JSONRPC_PATH}`, JSON.stringify(getTask))).json()).toEqual(taskResult);
      // A content type fastify has no parser for reaches the core, which answers with its own 415.
      const res = await post(`${base}${JSONRPC_PATH}`, "hi", "application/x-unknown");
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32005 } });
      // A body over fastify's own bodyLimit (1 MiB) is still the core's 413, not fastify's.
      const huge = await post(`${base}${JSONRPC_PATH}`, JSON.stringify({ ...getTask, params: { id: "x".repeat(2 << 20) } }));
      expect(huge.status).toBe(413);
      expect(await huge.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } });
    } finally {
      app.server.closeAllConnections();
      await app.close();
    }
  });
});

describe("fastify, more", () => {
  test("createFastifyHandler on a route whose body fastify's JSON parser already read uses request.body", async () => {
    const { jsonRpc } = cores();
    const app = Fastify();
    app.post(JSONRPC_PATH, createFastifyHandler(jsonRpc));
    const base = await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      // It used to wait for the body stream's end, which had passed, then answer 408.
      const res = await within(post(`${base}${JSONRPC_PATH}`, JSON.stringify(getTask)), 10_000, "the answer");
      expect(await res.json()).toEqual(taskResult);
    } finally {
      app.server.closeAllConnections();
      await app.close();
    }
  });

  test("the plugin answers a method it does not route (TRACE) with the core's 405 and Allow, not fastify's 404", async () => {
    const { rest } = cores();
    const app = Fastify();
    await app.register(createFastifyPlugin(rest), { prefix: REST_PATH });
    const base = await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      // fetch refuses TRACE itself: node:http sends it.
      const got = await new Promise<{ status: number | undefined; allow: string | undefined; body: string }>((resolve, reject) => {
        const req = httpRequest(`${base}${REST_PATH}/tasks/t1`, { method: "TRACE", headers: { "a2a-version": "1.0" } }, (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode, allow: res.headers.allow, body }));
        });
        req.on("error", reject);
        req.end();
      });
      expect([got.status, got.allow]).toEqual([405, "GET"]);
      expect(JSON.parse(got.body)).toMatchObject({ error: { code: 405 } });
    } finally {
      app.server.closeAllConnections();
      await app.close();
    }
  });
});

describe("hono, more", () => {
  function listenHono(app: Hono, keepAliveTimeout?: number): Promise<{ base: string; server: Server }> {
    return new Promise((resolve) => {
      const server = honoServe({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve({ base: `http://127.0.0.1:${info.port}`, server: server as Server })) as Server;
      if (keepAliveTimeout !== undefined) server.keepAliveTimeout = keepAliveTimeout;
    });
  }

  test("after a middleware that read the body (c.req.json()), the handler takes it from Hono's cache", async () => {
    const { jsonRpc, rest } = cores();
    const app = new Hono();
    app.use("*", async (c, next) => {
      if (c.req.method === "POST") await c.req.json();
      await next();
    });
    app.all(JSONRPC_PATH, createHonoHandler(jsonRpc));
    app.all(`${REST_PATH}/*`, createHonoHandler(rest));
    const { base, server } = await listenHono(app);
    try {
      expect(await (await post(`${base}${JSONRPC_PATH}`, JSON.stringify(getTask))).json()).toEqual(taskResult);
      const sent = await post(`${base}${REST_PATH}/message:send`, JSON.stringify({ message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] } }));
      expect(sent.status).toBe(200);
      expect(await sent.json()).toMatchObject({ message: { messageId: "re-m1" } });
    } finally {
      await close(server);
    }
  });

  test("an answer that finishes after close() began ends its keep-alive connection, so close() is not held (D115)", async () => {
    const entered = deferred();
    const release = deferred();
    const core = createA2AServiceJsonRpcEndpoint({
      async getTask(request) {
        entered.resolve();
        await release.promise;
        return { id: request.id, contextId: "c1", status: { state: TaskState.WORKING } };
      },
    });
    const app = new Hono();
    app.all(JSONRPC_PATH, createHonoHandler(core));
    // A keep-alive timeout longer than the test: only the adapter can end the connection in time.
    const { base, server } = await listenHono(app, 120_000);
    const agent = new Agent({ keepAlive: true });
    try {
      const answer = new Promise<number | undefined>((resolve, reject) => {
        const req = httpRequest(`${base}${JSONRPC_PATH}`, { method: "POST", agent, headers: { "content-type": "application/json", "a2a-version": "1.0" } }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode));
        });
        req.on("error", reject);
        req.end(JSON.stringify(getTask));
      });
      await entered.promise;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      release.resolve();
      expect(await answer).toBe(200);
      await within(closed, 20_000, "server.close()");
    } finally {
      agent.destroy();
      server.closeAllConnections();
    }
  }, 30_000);
});
