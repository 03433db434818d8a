/**
 * OpenTelemetry (issue 17, D35) with the real SDK (in-memory exporter,
 * AsyncLocalStorage context manager, W3C trace context propagator), over
 * real sockets on all three bindings: a server span per call with the
 * standard rpc.* attributes and the A2A ones, child of the caller's span
 * through the generated client's traceparent; status from the error table;
 * a stream's span ending with the stream; the handler's own spans its
 * children; a trace continued across the bridge's two hops; and no span,
 * no header, when tracing is off.
 */
import { jest } from "@jest/globals";
import * as api from "@opentelemetry/api";
import { type ReadableSpan, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { create } from "@bufbuild/protobuf";
import { TaskNotFoundError } from "protoc-gen-a2a/runtime";
import type { AgentServer, TracingApi } from "protoc-gen-a2a/runtime/server";
import { createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient, type A2AServiceClient } from "../../generated/a2a_client.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { Role, TaskSchema, TaskState, type StreamResponse } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceHttpJsonListener } from "../../generated/a2a_http.js";
import { createA2AServiceJsonRpcListener } from "../../generated/a2a_jsonrpc.js";
import { addA2AServiceToServer } from "../../generated/a2a_grpc.js";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createGrpcServer, listenGrpc } from "protoc-gen-a2a/runtime/grpc";
import { deferred } from "../support/task-clients.js";
import { installOtelSdk } from "../support/otel-sdk.js";

jest.setTimeout(30_000);

// The module as it is: what the option takes is a structural type of it (a type error here if they part).
const tracingApi: TracingApi = api;

/** Every ended span, and a way to wait for one (the span of a stream the client left ends when the server notices). */
class Ended implements SpanProcessor {
  readonly #waiters: { match: (s: ReadableSpan) => boolean; resolve: (s: ReadableSpan) => void }[] = [];
  readonly spans: ReadableSpan[] = [];
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    this.spans.push(span);
    for (const w of [...this.#waiters]) {
      if (w.match(span)) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve(span);
      }
    }
  }
  /** The first ended span that matches, now or when it ends. */
  next(match: (s: ReadableSpan) => boolean): Promise<ReadableSpan> {
    const found = this.spans.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const ended = new Ended();
const { exporter, tracer, shutdown: shutdownSdk } = installOtelSdk(ended);

/** A gate a stream waits at, so a test can cut it mid-way. */
let releaseWait: () => void = () => {};
const waiting = new Promise<void>((resolve) => (releaseWait = resolve));

/** The gate of the "gated" stream, made anew by the test that opens one. */
let gate = deferred();

const task = (id: string, state = TaskState.WORKING) => create(TaskSchema, { id, contextId: "c", status: { state } });

const handler: A2AServiceHandler = {
  async getTask(request) {
    // A span of the handler's own: a child of the call's.
    tracer.startActiveSpan("handler work", (span) => span.end());
    if (request.id === "missing") throw new TaskNotFoundError(`no task ${request.id}`);
    if (request.id === "throws") throw new Error("the database is down");
    if (request.id === "plain-value") {
      // A plain object where Part.data's google.protobuf.Value goes: an answer no binding can encode (D33).
      return { id: "plain-value", contextId: "c", status: { state: TaskState.COMPLETED }, artifacts: [{ artifactId: "a", parts: [{ content: { case: "data", value: { answer: 42 } as never } }] }] };
    }
    return task(request.id);
  },
  async sendMessage(request) {
    return { payload: { case: "task", value: task(request.message?.taskId || "t-new") } };
  },
  async *subscribeToTask(request) {
    yield { payload: { case: "task", value: task(request.id) } } as StreamResponse;
    if (request.id === "wait") await waiting;
    if (request.id === "gated") await gate.promise;
    if (request.id === "fails") throw new Error("the stream broke");
    if (request.id.startsWith("plain-later")) {
      const unencodable = { payload: { case: "artifactUpdate", value: { taskId: request.id, contextId: "c", artifact: { artifactId: "a", parts: [{ content: { case: "data", value: { answer: 42 } } }] } } } };
      try {
        yield unencodable as never as StreamResponse;
        // An endless stream: every pull after the failure is one too many.
        for (;;) {
          pulledAfterFailure++;
          yield { payload: { case: "statusUpdate", value: { taskId: request.id, contextId: "c", status: { state: TaskState.WORKING } } } } as StreamResponse;
        }
      } finally {
        released.resolve();
      }
    }
    yield { payload: { case: "statusUpdate", value: { taskId: request.id, contextId: "c", status: { state: TaskState.COMPLETED } } } } as StreamResponse;
  },
};

let pulledAfterFailure = 0;
let released = deferred();

const card = {
  name: "Traced",
  description: "Traced calls",
  version: "1.0.0",
  capabilities: { streaming: true },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [],
};

let server: AgentServer;
const clients: Record<string, A2AServiceClient> = {};

beforeAll(async () => {
  // tracing left to its default: serveA2AService loads @opentelemetry/api, installed here.
  server = await serveA2AService(handler, card, { port: 0, grpcPort: 0, drainMs: 100, onError: () => undefined });
  clients.JSONRPC = createA2AServiceJsonRpcClient(server.jsonRpcUrl!);
  clients["HTTP+JSON"] = createA2AServiceHttpJsonClient(server.httpJsonUrl!);
  clients.GRPC = createA2AServiceGrpcClient(server.grpcAddress!);
});

afterAll(async () => {
  releaseWait();
  for (const c of Object.values(clients)) c.close();
  await server.close();
  await shutdownSdk();
});

beforeEach(() => {
  exporter.reset();
  ended.spans.length = 0;
});

const system = { JSONRPC: "jsonrpc", "HTTP+JSON": "http_json", GRPC: "grpc" } as const;
const serverSpans = () => exporter.getFinishedSpans().filter((s) => s.kind === api.SpanKind.SERVER);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** Runs `fn` in a new active span; returns what it returned and the span's context. */
async function inSpan<T>(name: string, fn: () => Promise<T>): Promise<{ value: T; caller: api.SpanContext }> {
  return tracer.startActiveSpan(name, async (span) => {
    try {
      return { value: await fn(), caller: span.spanContext() };
    } finally {
      span.end();
    }
  });
}

describe.each(["JSONRPC", "HTTP+JSON", "GRPC"] as const)("%s", (binding) => {
  test("a call made in a span: the server span is its child, named and attributed by the conventions", async () => {
    const { caller } = await inSpan("caller", () => clients[binding]!.getTask({ id: "t-1" }));
    const [span, ...more] = serverSpans();
    expect(more).toEqual([]);
    expect(span!.name).toBe("lf.a2a.v1.A2AService/GetTask");
    expect(span!.spanContext().traceId).toBe(caller.traceId);
    expect(parentOf(span!)).toBe(caller.spanId);
    expect(span!.attributes).toMatchObject({
      "rpc.system": system[binding],
      "rpc.service": "lf.a2a.v1.A2AService",
      "rpc.method": "GetTask",
      "a2a.method": "GetTask",
      "a2a.task.id": "t-1",
    });
    expect(span!.status.code).toBe(api.SpanStatusCode.UNSET);
    if (binding === "GRPC") expect(span!.attributes["rpc.grpc.status_code"]).toBe(0);
    if (binding === "JSONRPC") expect(span!.attributes).toMatchObject({ "rpc.jsonrpc.version": "2.0", "rpc.jsonrpc.request_id": expect.any(String) });
    if (binding === "HTTP+JSON") expect(span!.attributes).toMatchObject({ "http.request.method": "GET", "http.route": "/a2a/rest/tasks/{id=*}", "http.response.status_code": 200 });
    // The handler ran in the span's context: its own span is the call's child.
    const work = exporter.getFinishedSpans().find((s) => s.name === "handler work");
    expect(parentOf(work!)).toBe(span!.spanContext().spanId);
  });

  test("the task id of a result, when the request names none", async () => {
    await clients[binding]!.sendMessage({ message: { messageId: "m", role: Role.USER, parts: [{ content: { case: "text", value: "hi" } }] } });
    expect(serverSpans().map((s) => [s.name, s.attributes["a2a.task.id"]])).toEqual([["lf.a2a.v1.A2AService/SendMessage", "t-new"]]);
  });

  test("a caller's mistake (TaskNotFound): its reason and code on the span, status left unset", async () => {
    await expect(clients[binding]!.getTask({ id: "missing" })).rejects.toBeInstanceOf(TaskNotFoundError);
    const [span] = serverSpans();
    expect(span!.attributes["a2a.error.reason"]).toBe("TASK_NOT_FOUND");
    expect(span!.status.code).toBe(api.SpanStatusCode.UNSET);
    if (binding === "GRPC") expect(span!.attributes["rpc.grpc.status_code"]).toBe(5);
    if (binding === "JSONRPC") expect(span!.attributes["rpc.jsonrpc.error_code"]).toBe(-32001);
    if (binding === "HTTP+JSON") expect(span!.attributes["http.response.status_code"]).toBe(404);
  });

  test("a handler's failure: status ERROR, the exception recorded on the span (not sent to the client)", async () => {
    await expect(clients[binding]!.getTask({ id: "throws" })).rejects.toMatchObject({ name: "InternalError" });
    const [span] = serverSpans();
    expect(span!.status.code).toBe(api.SpanStatusCode.ERROR);
    expect(span!.events.map((e) => [e.name, e.attributes?.["exception.message"]])).toEqual([["exception", "the database is down"]]);
    if (binding === "GRPC") expect(span!.attributes["rpc.grpc.status_code"]).toBe(13);
    if (binding === "JSONRPC") expect(span!.attributes["rpc.jsonrpc.error_code"]).toBe(-32603);
    if (binding === "HTTP+JSON") expect(span!.attributes["http.response.status_code"]).toBe(500);
  });

  test("an answer that cannot be encoded: status ERROR, as INTERNAL (gRPC finds out only as grpc-js writes it)", async () => {
    await expect(clients[binding]!.getTask({ id: "plain-value" })).rejects.toMatchObject({ name: "InternalError" });
    const [span] = serverSpans();
    expect(span!.status.code).toBe(api.SpanStatusCode.ERROR);
    if (binding === "GRPC") expect(span!.attributes["rpc.grpc.status_code"]).toBe(13);
    if (binding === "JSONRPC") expect(span!.attributes["rpc.jsonrpc.error_code"]).toBe(-32603);
    if (binding === "HTTP+JSON") expect(span!.attributes["http.response.status_code"]).toBe(500);
  });

  test("a stream's span ends when the stream does, with the task of its first event", async () => {
    gate = deferred();
    const events: string[] = [];
    const { caller } = await inSpan("caller", async () => {
      for await (const event of clients[binding]!.subscribeToTask({ id: "gated" })) {
        events.push(event.payload.case ?? "");
        if (event.payload.case === "task") {
          // The handler waits at the gate for its next event: the call is under way, its span open.
          expect(serverSpans()).toEqual([]);
          gate.resolve();
        }
      }
    });
    expect(events).toEqual(["task", "statusUpdate"]);
    const span = await ended.next((s) => s.name === "lf.a2a.v1.A2AService/SubscribeToTask");
    expect(parentOf(span)).toBe(caller.spanId);
    expect(span.attributes["a2a.task.id"]).toBe("gated");
    expect(span.status.code).toBe(api.SpanStatusCode.UNSET);
  });

  test("a stream that fails after its first event: status ERROR", async () => {
    await expect(
      (async () => {
        for await (const _ of clients[binding]!.subscribeToTask({ id: "fails" })) void _;
      })(),
    ).rejects.toMatchObject({ name: "InternalError" });
    const span = await ended.next((s) => s.name === "lf.a2a.v1.A2AService/SubscribeToTask");
    expect(span.status.code).toBe(api.SpanStatusCode.ERROR);
    // The status sent was 200, the failure an event of the stream (it said 500; tracing hunt).
    if (binding === "HTTP+JSON") expect([span.attributes["http.response.status_code"], span.attributes["error.type"]]).toEqual([200, "INTERNAL"]);
  });

  // On gRPC, grpc-js answered INTERNAL by itself: the span ended as a success (or as the client
  // leaving), and the handler was pulled on (tracing hunt).
  test("a stream event after the first that cannot be encoded: status ERROR, as INTERNAL, and the handler released, pulled no further", async () => {
    pulledAfterFailure = 0;
    released = deferred();
    await expect(
      (async () => {
        for await (const _ of clients[binding]!.subscribeToTask({ id: "plain-later" })) void _;
      })(),
    ).rejects.toMatchObject({ name: "InternalError" });
    const span = await ended.next((s) => s.name === "lf.a2a.v1.A2AService/SubscribeToTask");
    expect(span.status.code).toBe(api.SpanStatusCode.ERROR);
    if (binding === "GRPC") expect(span.attributes["rpc.grpc.status_code"]).toBe(13);
    await released.promise;
    expect(pulledAfterFailure).toBe(0);
  });

  test("a stream the client leaves: its span ends, not as a server error", async () => {
    const controller = new AbortController();
    const iterator = clients[binding]!.subscribeToTask({ id: "wait" }, { signal: controller.signal })[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.payload.case).toBe("task");
    expect(serverSpans()).toEqual([]);
    controller.abort();
    await iterator.next().catch(() => undefined);
    const span = await ended.next((s) => s.name === "lf.a2a.v1.A2AService/SubscribeToTask");
    expect(span.status.code).toBe(api.SpanStatusCode.UNSET);
    if (binding === "GRPC") expect(span.attributes["rpc.grpc.status_code"]).toBe(1);
  });
});

test("a request's own traceparent and tracestate are the parent, with no client in between", async () => {
  const traceId = "0af7651916cd43dd8448eb211c80319c";
  const parentId = "b7ad6b7169203331";
  const res = await fetch(`${server.httpJsonUrl}/tasks/raw`, {
    headers: { "a2a-version": "1.0", traceparent: `00-${traceId}-${parentId}-01`, tracestate: "vendor=value" },
  });
  expect(res.status).toBe(200);
  const [span] = serverSpans();
  expect(span!.spanContext().traceId).toBe(traceId);
  expect(parentOf(span!)).toBe(parentId);
  expect(span!.spanContext().traceState?.get("vendor")).toBe("value");
});

test("JSON-RPC: a call refused as a whole (an unsupported A2A-Version) still has its span, with the error", async () => {
  const res = await fetch(server.jsonRpcUrl!, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "9.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }),
  });
  expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32009);
  const [span] = serverSpans();
  expect(span!.attributes).toMatchObject({ "rpc.method": "GetTask", "a2a.error.reason": "VERSION_NOT_SUPPORTED", "rpc.jsonrpc.error_code": -32009 });
});

test("JSON-RPC: a streaming call refused in a batch has its span, with the error, beside the batch's unary call's", async () => {
  const res = await fetch(server.jsonRpcUrl!, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify([
      { jsonrpc: "2.0", id: 1, method: "SubscribeToTask", params: { id: "x" } },
      { jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: "x" } },
    ]),
  });
  const replies = (await res.json()) as { id: number; error?: { code: number } }[];
  expect(replies.find((r) => r.id === 1)?.error?.code).toBe(-32600);
  const spans = serverSpans();
  expect(spans.map((s) => s.attributes["rpc.method"]).sort()).toEqual(["GetTask", "SubscribeToTask"]);
  expect(spans.find((s) => s.attributes["rpc.method"] === "SubscribeToTask")!.attributes).toMatchObject({ "rpc.jsonrpc.request_id": "1", "rpc.jsonrpc.error_code": -32600 });
});

test("the bridge: one trace across two hops (client -> JSON-RPC bridge -> gRPC upstream)", async () => {
  const upstream = createA2AServiceGrpcClient(server.grpcAddress!);
  // The API module given as it is, where the server above loaded it itself.
  const bridge = await serveA2AService(upstream, card, { port: 0, grpcPort: false, drainMs: 100, tracing: tracingApi });
  const client = createA2AServiceJsonRpcClient(bridge.jsonRpcUrl!);
  try {
    const { caller } = await inSpan("caller", () => client.getTask({ id: "hop" }));
    const spans = serverSpans();
    const atBridge = spans.find((s) => s.attributes["rpc.system"] === "jsonrpc");
    const atUpstream = spans.find((s) => s.attributes["rpc.system"] === "grpc");
    expect(parentOf(atBridge!)).toBe(caller.spanId);
    expect(parentOf(atUpstream!)).toBe(atBridge!.spanContext().spanId);
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([caller.traceId]));
  } finally {
    client.close();
    await bridge.close();
    upstream.close();
  }
});

describe("tracing off", () => {
  let quiet: AgentServer;
  beforeAll(async () => {
    quiet = await serveA2AService(handler, card, { port: 0, grpcPort: 0, drainMs: 100, tracing: false });
  });
  afterAll(() => quiet.close());

  test.each(["JSONRPC", "HTTP+JSON", "GRPC"] as const)("%s: no server span, no traceparent sent by a client told not to", async (binding) => {
    const seen: (string | null)[] = [];
    const listening = await serveA2AService(
      {
        async getTask(request, context) {
          seen.push(context.headers.get("traceparent"));
          return task(request.id);
        },
      },
      card,
      { port: 0, grpcPort: 0, drainMs: 100, tracing: false },
    );
    const make = {
      JSONRPC: () => createA2AServiceJsonRpcClient(listening.jsonRpcUrl!, { tracing: false }),
      "HTTP+JSON": () => createA2AServiceHttpJsonClient(listening.httpJsonUrl!, { tracing: false }),
      GRPC: () => createA2AServiceGrpcClient(listening.grpcAddress!, { tracing: false }),
    }[binding];
    const quietClient = make();
    const tracedClient = { JSONRPC: () => createA2AServiceJsonRpcClient(listening.jsonRpcUrl!), "HTTP+JSON": () => createA2AServiceHttpJsonClient(listening.httpJsonUrl!), GRPC: () => createA2AServiceGrpcClient(listening.grpcAddress!) }[binding]();
    try {
      await inSpan("caller", async () => {
        await quietClient.getTask({ id: "q" });
        await tracedClient.getTask({ id: "q" });
      });
      // The default client sends the caller's trace context; the one told not to sends none.
      expect(seen[0]).toBeNull();
      expect(seen[1]).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      expect(serverSpans()).toEqual([]);
    } finally {
      quietClient.close();
      tracedClient.close();
      await listening.close();
    }
  });

  test("a server with tracing off makes no span for a traced caller", async () => {
    await inSpan("caller", () => createA2AServiceJsonRpcClient(quiet.jsonRpcUrl!).getTask({ id: "q" }));
    expect(serverSpans()).toEqual([]);
  });
});

describe("the generated listeners and addA2AServiceToServer: traced with the module as `tracing`, not without it", () => {
  const listen = async (listener: Parameters<typeof createServer>[1]): Promise<{ url: string; close: () => Promise<void> }> => {
    const http: HttpServer = createServer(listener);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    return {
      url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => http.close(() => resolve())),
    };
  };

  test.each([true, false])("tracing given: %s", async (given) => {
    const options = given ? { tracing: tracingApi } : {};
    const jsonRpc = await listen(createA2AServiceJsonRpcListener(handler, options));
    const rest = await listen(createA2AServiceHttpJsonListener(handler, options));
    const grpc = createGrpcServer();
    addA2AServiceToServer(grpc, handler, options);
    const port = await listenGrpc(grpc, { host: "127.0.0.1", port: 0 });
    const made = [createA2AServiceJsonRpcClient(jsonRpc.url), createA2AServiceHttpJsonClient(rest.url), createA2AServiceGrpcClient(`127.0.0.1:${port}`)];
    try {
      const { caller } = await inSpan("caller", async () => {
        for (const client of made) await client.getTask({ id: "l-1" });
      });
      const spans = serverSpans();
      if (!given) {
        expect(spans).toEqual([]);
        return;
      }
      expect(spans.map((s) => s.attributes["rpc.system"]).sort()).toEqual(["grpc", "http_json", "jsonrpc"]);
      for (const span of spans) {
        expect(parentOf(span)).toBe(caller.spanId);
        expect(span.attributes["a2a.task.id"]).toBe("l-1");
      }
    } finally {
      for (const client of made) client.close();
      grpc.forceShutdown();
      await Promise.all([jsonRpc.close(), rest.close()]);
    }
  });
});
