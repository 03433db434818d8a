/**
 * A task that runs on after its call was answered (returnImmediately, a
 * client gone) holds the call's context for as long as it runs, hours
 * maybe. The transports let go of what they held for the call once they
 * answered it: node's IncomingMessage and ServerResponse (with their
 * socket's state, about 3 KB a task), grpc-js's call, the fetch Request.
 * Shown by weak references that the collector clears while the executor is
 * still waiting, on each transport (node:http after a unary answer, after an
 * SSE stream its client left, and under express with a body parser mounted
 * first; fetch; gRPC unary and a stream its client cancelled; a 0.3 caller's
 * translated body); and the executor still reads the call's headers after
 * the answer.
 */
import { jest } from "@jest/globals";
import { request as httpRequest, createServer, type IncomingMessage, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Server, ServerCredentials, credentials, type UntypedServiceImplementation } from "@grpc/grpc-js";
import express from "express";
import { createFetchHandler, createNodeListener } from "protoc-gen-a2a/runtime";
import { createExpressMiddleware } from "protoc-gen-a2a/runtime/adapters";
import { serveA2AService } from "../../generated/a2a_server.js";
import { addA2AServiceToServer, createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { createA2AServiceJsonRpcEndpoint } from "../../generated/a2a_jsonrpc.js";
import { Role, TaskState } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { deferred, taskCard, within, type Deferred } from "../support/task-clients.js";

jest.setTimeout(30_000);

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Collects, then says whether the object behind `ref` is gone. */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 10 && ref.deref() !== undefined; i++) {
    // Let the turn that answered finish (its frames hold the call), then collect.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  return ref.deref() === undefined;
}

/**
 * Collects until the object behind `ref` is gone, for up to 3 s: a SendMessage whose caller left
 * is let go at the runtime's next look at the calls still waiting (once a second).
 */
async function collectedWithin(ref: WeakRef<object>): Promise<boolean> {
  for (const end = Date.now() + 3000; Date.now() < end; ) {
    if (await collected(ref)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** Per message text, released by the test; the executor reports the header it read after the answer. */
const gates = new Map<string, Deferred<void>>();
const readHeaders = new Map<string, Deferred<string | null>>();

/** Per message text: the executor is running, past its WORKING (for callers that wait, then leave). */
const working = new Map<string, Deferred<void>>();

const executor: A2AServiceExecutor = async function* ({ message, call }) {
  const text = message.parts[0]?.content.case === "text" ? message.parts[0].content.value : "";
  yield { state: TaskState.WORKING };
  working.get(text)?.resolve();
  await gates.get(text)!.promise;
  readHeaders.get(text)!.resolve(call.headers.get("x-probe"));
};

const handler = createA2AServiceTaskHandler(executor);
afterAll(() => handler.close());

const body = (text: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "SendMessage",
    params: { message: { messageId: `m-${text}`, role: "ROLE_USER", parts: [{ text }] }, configuration: { returnImmediately: true } },
  });

function expectRunning(text: string) {
  gates.set(text, deferred());
  readHeaders.set(text, deferred());
  working.set(text, deferred());
}

/** A blocking SendMessage (JSON-RPC) of `text`. */
const blockingBody = (text: string) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: `m-${text}`, role: "ROLE_USER", parts: [{ text }] } } });

/** The executor, released after the check, still reads the call's header. */
async function headerReadLater(text: string): Promise<string | null> {
  gates.get(text)!.resolve();
  return within("the executor to read the header", readHeaders.get(text)!.promise);
}

/** POSTs `payload` over a connection of its own (node keeps a keep-alive socket's last request), answering the body as text. */
function postAlone(port: number, payload: string, headers: Record<string, string>, path = "/"): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, method: "POST", path, agent: false, headers: { "content-type": "application/json", connection: "close", ...headers } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => (text += d)).on("end", () => resolve(text));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

/** The task handler's JSON-RPC endpoint on node:http, each IncomingMessage also put in `seen()` (a WeakRef). */
async function nodeWatched() {
  let seen: WeakRef<IncomingMessage> | undefined;
  const listener = createNodeListener(createA2AServiceJsonRpcEndpoint(handler));
  const server: HttpServer = createServer((req, res) => {
    seen = new WeakRef(req);
    listener(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, seen: () => seen! };
}

test("node:http: a running task keeps neither node's request nor its response once the call was answered", async () => {
  const { server, seen } = await nodeWatched();
  try {
    expectRunning("node");
    const answer = await postAlone((server.address() as AddressInfo).port, body("node"), { "a2a-version": "1.0", "x-probe": "node" });
    expect(JSON.parse(answer)).toMatchObject({ result: { task: { status: { state: "TASK_STATE_WORKING" } } } });
    expect(await collected(seen())).toBe(true);
    expect(await headerReadLater("node")).toBe("node");
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test("fetch adapter: a running task does not keep the Request once the call was answered", async () => {
  const fetchHandler = createFetchHandler(createA2AServiceJsonRpcEndpoint(handler));
  expectRunning("fetch");
  let seen: WeakRef<Request> | undefined;
  const answer = await (async () => {
    const request = new Request("http://agent.test/", { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0", "x-probe": "fetch" }, body: body("fetch") });
    seen = new WeakRef(request);
    const response = await fetchHandler(request);
    return response.json() as Promise<{ result: { task: { status: { state: string } } } }>;
  })();
  expect(answer).toMatchObject({ result: { task: { status: { state: "TASK_STATE_WORKING" } } } });
  expect(await collected(seen!)).toBe(true);
  expect(await headerReadLater("fetch")).toBe("fetch");
});

/**
 * A gRPC server of the task handler whose every call object grpc-js hands a method is also put in
 * `seen()` (a WeakRef), and a generated client of it.
 */
async function grpcWatched() {
  const server = new Server();
  let seen: WeakRef<object> | undefined;
  const addService = server.addService.bind(server);
  server.addService = (definition, implementation: UntypedServiceImplementation) => {
    const wrapped: UntypedServiceImplementation = {};
    for (const [name, fn] of Object.entries(implementation)) {
      wrapped[name] = ((call: object, callback: unknown) => {
        seen = new WeakRef(call);
        return (fn as (c: unknown, cb: unknown) => unknown)(call, callback);
      }) as (typeof implementation)[string];
    }
    addService(definition, wrapped);
  };
  addA2AServiceToServer(server, handler);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  const client = createA2AServiceGrpcClient(`127.0.0.1:${port}`, { credentials: credentials.createInsecure() });
  return {
    client,
    seen: () => seen!,
    close() {
      client.close();
      server.forceShutdown();
    },
  };
}

test("gRPC: a running task does not keep grpc-js's call once the call was answered", async () => {
  const { client, seen, close } = await grpcWatched();
  try {
    expectRunning("grpc");
    const answer = await client.sendMessage({
      message: { messageId: "m-grpc", role: Role.USER, parts: [{ content: { case: "text", value: "grpc" } }] },
      configuration: { returnImmediately: true },
    }, { headers: { "x-probe": "grpc" } });
    expect(answer.payload.case === "task" && answer.payload.value.status?.state).toBe(TaskState.WORKING);
    expect(await collected(seen())).toBe(true);
    expect(await headerReadLater("grpc")).toBe("grpc");
  } finally {
    close();
  }
});

test("express with a body parser mounted first: a running task keeps neither request nor response once the call was answered", async () => {
  let seen: WeakRef<IncomingMessage> | undefined;
  const app = express();
  app.use((req, _res, next) => {
    seen = new WeakRef(req);
    next();
  });
  app.use(express.json());
  app.use(createExpressMiddleware(createA2AServiceJsonRpcEndpoint(handler)));
  const server = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  try {
    expectRunning("express");
    const answer = await postAlone((server.address() as AddressInfo).port, body("express"), { "a2a-version": "1.0", "x-probe": "express" });
    expect(JSON.parse(answer)).toMatchObject({ result: { task: { status: { state: "TASK_STATE_WORKING" } } } });
    expect(await collected(seen!)).toBe(true);
    expect(await headerReadLater("express")).toBe("express");
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test("node:http SSE: a task whose stream's client left runs on without node's request", async () => {
  const { server, seen } = await nodeWatched();
  try {
    expectRunning("sse");
    const streamed = JSON.parse(body("sse")) as { method: string; params: { configuration?: object } };
    streamed.method = "SendStreamingMessage";
    delete streamed.params.configuration;
    // The client reads the first events (the task, WORKING), then leaves.
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        { host: "127.0.0.1", port: (server.address() as AddressInfo).port, method: "POST", path: "/", agent: false, headers: { "content-type": "application/json", "a2a-version": "1.0", "x-probe": "sse" } },
        (res) => {
          let text = "";
          res.setEncoding("utf8").on("data", (d: string) => {
            text += d;
            if (text.includes("TASK_STATE_WORKING")) {
              res.destroy();
              resolve();
            }
          });
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify(streamed));
    });
    expect(await collected(seen())).toBe(true);
    expect(await headerReadLater("sse")).toBe("sse");
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test("gRPC stream: a task whose stream's client cancelled runs on without grpc-js's call", async () => {
  const { client, seen, close } = await grpcWatched();
  try {
    expectRunning("grpc-stream");
    const cancel = new AbortController();
    const stream = client.sendStreamingMessage(
      { message: { messageId: "m-grpc-stream", role: Role.USER, parts: [{ content: { case: "text", value: "grpc-stream" } }] } },
      { headers: { "x-probe": "grpc-stream" }, signal: cancel.signal },
    );
    for await (const event of stream) {
      if (event.payload.case === "statusUpdate" && event.payload.value.status?.state === TaskState.WORKING) break;
    }
    cancel.abort();
    expect(await collected(seen())).toBe(true);
    expect(await headerReadLater("grpc-stream")).toBe("grpc-stream");
  } finally {
    close();
  }
});

test("node:http: a blocking SendMessage whose caller left keeps neither node's request nor its response while the task runs on", async () => {
  const { server, seen } = await nodeWatched();
  try {
    expectRunning("node-left");
    const req = httpRequest({ host: "127.0.0.1", port: (server.address() as AddressInfo).port, method: "POST", path: "/", agent: false, headers: { "content-type": "application/json", "a2a-version": "1.0", "x-probe": "node-left" } });
    req.on("error", () => undefined);
    req.end(blockingBody("node-left"));
    await within("the executor to run", working.get("node-left")!.promise);
    // The caller gives up (a client's timeout); the task waits on its gate.
    req.destroy();
    expect(await collectedWithin(seen())).toBe(true);
    expect(await headerReadLater("node-left")).toBe("node-left");
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test("fetch adapter: a blocking SendMessage whose caller left does not keep the Request while the task runs on", async () => {
  const fetchHandler = createFetchHandler(createA2AServiceJsonRpcEndpoint(handler));
  expectRunning("fetch-left");
  const leave = new AbortController();
  let seen: WeakRef<Request> | undefined;
  const answered = (() => {
    const request = new Request("http://agent.test/", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0", "x-probe": "fetch-left" },
      body: blockingBody("fetch-left"),
      signal: leave.signal,
    });
    seen = new WeakRef(request);
    return fetchHandler(request);
  })();
  await within("the executor to run", working.get("fetch-left")!.promise);
  leave.abort();
  await within("the handler to let the call go", answered, 3000);
  expect(await collectedWithin(seen!)).toBe(true);
  expect(await headerReadLater("fetch-left")).toBe("fetch-left");
});

test("gRPC: a blocking SendMessage whose caller cancelled does not keep grpc-js's call while the task runs on", async () => {
  const { client, seen, close } = await grpcWatched();
  try {
    expectRunning("grpc-left");
    const cancel = new AbortController();
    const call = client
      .sendMessage({ message: { messageId: "m-grpc-left", role: Role.USER, parts: [{ content: { case: "text", value: "grpc-left" } }] } }, { headers: { "x-probe": "grpc-left" }, signal: cancel.signal })
      .catch((err: unknown) => err);
    await within("the executor to run", working.get("grpc-left")!.promise);
    cancel.abort();
    await call;
    expect(await collectedWithin(seen())).toBe(true);
    expect(await headerReadLater("grpc-left")).toBe("grpc-left");
  } finally {
    close();
  }
});

/** A 0.3 caller's message/send (`blocking: false`) on either JSON binding, as the body the binding takes, and the state the answer says. */
const sends03 = {
  "JSON-RPC": {
    url: (served: { jsonRpcUrl?: string | undefined }) => new URL(served.jsonRpcUrl!),
    body: (text: string, pad: string) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "message/send",
        params: { message: { kind: "message", messageId: `m-${text}`, role: "user", parts: [{ kind: "text", text }, { kind: "text", text: pad }] }, configuration: { blocking: false } },
      }),
    state: (answer: Record<string, unknown>) => (answer.result as { status?: { state?: string } } | undefined)?.status?.state,
    working: "working",
  },
  "HTTP+JSON": {
    url: (served: { httpJsonUrl?: string | undefined }) => new URL(`${served.httpJsonUrl!}/v1/message:send`),
    body: (text: string, pad: string) =>
      JSON.stringify({ message: { messageId: `m-${text}`, role: "ROLE_USER", content: [{ text }, { text: pad }] }, configuration: { blocking: false } }),
    state: (answer: Record<string, unknown>) => (answer.task as { status?: { state?: string } } | undefined)?.status?.state,
    working: "TASK_STATE_WORKING",
  },
} as const;

test.each(Object.keys(sends03) as (keyof typeof sends03)[])("A2A 0.3 caller on %s: a running task does not keep the translated body once the call was answered", async (binding) => {
  const send = sends03[binding];
  // A handler of its own: closing the server closes its handler.
  const served = await serveA2AService(createA2AServiceTaskHandler(executor), taskCard, { port: 0, grpcPort: false, host: "127.0.0.1", compat: { v0_3: true } });
  try {
    const url = send.url(served);
    // Large bodies, so that keeping them shows in the process's ArrayBuffers (the task keeps the text as a string).
    const pad = "x".repeat(256 * 1024);
    const texts = Array.from({ length: 16 }, (_, i) => `v03-${binding}-${i}`);
    for (const text of texts) expectRunning(text);
    gc();
    const before = process.memoryUsage().arrayBuffers;
    for (const text of texts) {
      const answer = JSON.parse(await postAlone(Number(url.port), send.body(text, pad), { "x-probe": text }, url.pathname)) as Record<string, unknown>;
      expect(send.state(answer)).toBe(send.working);
    }
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    // 16 bodies of 256 KB kept would be 4 MB.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1 << 20);
    for (const text of texts) expect(await headerReadLater(text)).toBe(text);
  } finally {
    await served.close();
  }
});

test("a task handler dropped without close() is not kept, with its executor, by the runtime's timer that watches waiting callers", async () => {
  let made: WeakRef<object> | undefined;
  (() => {
    // An executor of its own, which only the handler's runtime holds.
    const own: A2AServiceExecutor = async function* () {
      yield { state: TaskState.COMPLETED };
    };
    made = new WeakRef(own);
    createA2AServiceTaskHandler(own);
  })();
  expect(await collected(made!)).toBe(true);
});
