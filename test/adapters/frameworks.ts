/**
 * The frameworks the adapter suite runs against, each a real server on a
 * real socket with the generated JSON-RPC core mounted at /a2a/jsonrpc and
 * the HTTP+JSON core at /a2a/rest, plus the small handler behind them.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { create } from "@bufbuild/protobuf";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { serve as honoServe } from "@hono/node-server";
import {
  createExpressMiddleware,
  createFastifyPlugin,
  createFetchHandler,
  createHonoHandler,
  createNodeListener,
  type Endpoint,
} from "protoc-gen-a2a/runtime/adapters";
import { TaskNotFoundError } from "../../runtime/a2a/errors.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { createA2AServiceHttpJsonEndpoint } from "../../generated/a2a_http.js";
import { createA2AServiceJsonRpcEndpoint } from "../../generated/a2a_jsonrpc.js";
import { Role, StreamResponseSchema, TaskState } from "../../generated/a2a_pb.js";

// express 4 is installed under an alias next to express 5; its API is the same for what is used here.
const express4 = createRequire(import.meta.url)("express4") as typeof express;

export const BODY_LIMIT = 1024;
export const JSONRPC_PATH = "/a2a/jsonrpc";
export const REST_PATH = "/a2a/rest";

export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves with the promise's value, or fails after `ms` naming what did not happen. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Streams that wait for their signal: the test registers a task id, the handler resolves it on abort. */
export const aborts = new Map<string, Deferred<void>>();

export const handler: A2AServiceHandler = {
  async sendMessage(request) {
    return {
      payload: {
        case: "message",
        value: { messageId: `re-${request.message?.messageId ?? ""}`, role: Role.AGENT, parts: [{ content: { case: "text", value: "pong" } }] },
      },
    };
  },
  async getTask(request, context) {
    if (request.id !== "t1") throw new TaskNotFoundError(`no task ${request.id}`);
    return { id: "t1", contextId: `ctx-${context.tenant ?? "none"}`, status: { state: TaskState.WORKING } };
  },
  async *sendStreamingMessage() {
    yield create(StreamResponseSchema, {
      payload: { case: "task", value: { id: "t1", contextId: "c1", status: { state: TaskState.SUBMITTED } } },
    });
    for (const state of [TaskState.WORKING, TaskState.COMPLETED]) {
      yield create(StreamResponseSchema, {
        payload: { case: "statusUpdate", value: { taskId: "t1", contextId: "c1", status: { state } } },
      });
    }
  },
  async *subscribeToTask(request, context) {
    yield create(StreamResponseSchema, { payload: { case: "task", value: { id: request.id, contextId: "c1" } } });
    const seen = aborts.get(request.id);
    await new Promise<void>((resolve) => {
      if (context.signal.aborted) resolve();
      context.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    seen?.resolve();
  },
};

/** What a suite may set on both cores besides the defaults here (a short body timeout, say). */
export interface CoreOptions {
  readonly bodyTimeoutMs?: number;
  readonly heartbeatMs?: number;
}

export function cores(extra: CoreOptions = {}): { jsonRpc: Endpoint; rest: Endpoint } {
  const options = { bodyLimit: BODY_LIMIT, heartbeatMs: 0, ...extra };
  return {
    jsonRpc: createA2AServiceJsonRpcEndpoint(handler, options),
    // The adapters hand the core the full path, so the core knows where it is mounted.
    rest: createA2AServiceHttpJsonEndpoint(handler, { ...options, basePath: REST_PATH }),
  };
}

export interface Running {
  /** `http://127.0.0.1:port` */
  readonly base: string;
  close(): Promise<void>;
}

export interface Framework {
  readonly name: string;
  start(options?: CoreOptions): Promise<Running>;
}

function closeNode(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function listenNode(server: Server): Promise<Running> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({ base: `http://127.0.0.1:${port}`, close: () => closeNode(server) });
    });
  });
}

const notMounted = JSON.stringify({ error: { code: 404, status: "NOT_FOUND", message: "not mounted", details: [] } });

export const nodeHttp: Framework = {
  name: "node:http",
  start(options) {
    const { jsonRpc, rest } = cores(options);
    const rpcListener = createNodeListener(jsonRpc);
    const restListener = createNodeListener(rest);
    return listenNode(
      createServer((req, res) => {
        const path = (req.url ?? "/").split("?")[0] ?? "/";
        if (path === JSONRPC_PATH) return rpcListener(req, res);
        if (path === REST_PATH || path.startsWith(`${REST_PATH}/`)) return restListener(req, res);
        res.writeHead(404, { "content-type": "application/json" }).end(notMounted);
      }),
    );
  },
};

function expressFramework(name: string, factory: typeof express): Framework {
  return {
    name,
    start(options) {
      const { jsonRpc, rest } = cores(options);
      const app = factory();
      app.use(JSONRPC_PATH, createExpressMiddleware(jsonRpc));
      app.use(REST_PATH, createExpressMiddleware(rest));
      return listenNode(createServer(app));
    },
  };
}

export const express5 = expressFramework("express 5", express);
export const express4Framework = expressFramework("express 4", express4);
export { express, express4 };

export const fastify: Framework = {
  name: "fastify",
  async start(options) {
    const { jsonRpc, rest } = cores(options);
    const app = Fastify();
    await app.register(createFastifyPlugin(jsonRpc), { prefix: JSONRPC_PATH });
    await app.register(createFastifyPlugin(rest), { prefix: REST_PATH });
    const base = await app.listen({ port: 0, host: "127.0.0.1" });
    return {
      base,
      close: async () => {
        app.server.closeAllConnections();
        await app.close();
      },
    };
  },
};

export const hono: Framework = {
  name: "hono (@hono/node-server)",
  start(options) {
    const { jsonRpc, rest } = cores(options);
    const app = new Hono();
    // The fetch adapter on Hono's raw Request, spelled out and through the helper.
    const rpc = createFetchHandler(jsonRpc);
    app.all(JSONRPC_PATH, (c) => rpc(c.req.raw));
    const restHandler = createHonoHandler(rest);
    app.all(REST_PATH, restHandler);
    app.all(`${REST_PATH}/*`, restHandler);
    return new Promise((resolve) => {
      const server = honoServe({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
        resolve({ base: `http://127.0.0.1:${info.port}`, close: () => closeNode(server as Server) });
      });
    });
  },
};

export const frameworks: readonly Framework[] = [nodeHttp, express5, express4Framework, fastify, hono];
