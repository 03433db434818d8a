/**
 * Tracing that fails, and calls that end badly, on every binding (D35):
 * a span processor or sampler that throws never fails a call (a gRPC unary
 * call's escaped throw ended the process); a stream refused before its first
 * event records that refusal on the JSON bindings as on gRPC; a client that
 * leaves is no server failure, and a gRPC deadline is DEADLINE_EXCEEDED.
 */
import { jest } from "@jest/globals";
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, SamplingDecision, type ReadableSpan, type Sampler, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { create } from "@bufbuild/protobuf";
import { TaskNotFoundError } from "protoc-gen-a2a/runtime";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient, type A2AServiceClient } from "../../generated/a2a_client.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { StreamResponseSchema, TaskSchema, TaskState } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { deferred, within } from "../support/task-clients.js";

jest.setTimeout(30_000);

/** Ended server spans, waited for by a match; and a processor that can be made to throw. */
class Processor implements SpanProcessor {
  throwing = false;
  readonly spans: ReadableSpan[] = [];
  readonly #waiters: { match: (s: ReadableSpan) => boolean; resolve: (s: ReadableSpan) => void }[] = [];
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    this.spans.push(span);
    for (const w of [...this.#waiters]) {
      if (!w.match(span)) continue;
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve(span);
    }
    if (this.throwing) throw new Error("a span processor that throws");
  }
  next(match: (s: ReadableSpan) => boolean): Promise<ReadableSpan> {
    const found = this.spans.find(match);
    return found !== undefined ? Promise.resolve(found) : new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }
  forceFlush = () => Promise.resolve();
  shutdown = () => Promise.resolve();
}

const processor = new Processor();
const sampling = { throwing: false };
const sampler: Sampler = {
  shouldSample() {
    if (sampling.throwing) throw new Error("a sampler that throws");
    return { decision: SamplingDecision.RECORD_AND_SAMPLED };
  },
  toString: () => "throwing on demand",
};
const provider = new BasicTracerProvider({ sampler, spanProcessors: [processor] });
const contextManager = new AsyncLocalStorageContextManager().enable();
api.trace.setGlobalTracerProvider(provider);
api.context.setGlobalContextManager(contextManager);

const task = (id: string) => create(TaskSchema, { id, contextId: "c", status: { state: TaskState.WORKING } });
let entered = deferred();
let release = deferred();
const handler: A2AServiceHandler = {
  async getTask(request, context) {
    if (request.id === "gated") {
      entered.resolve();
      await release.promise;
    }
    if (request.id === "leaves") {
      entered.resolve();
      // A handler that honours its signal: the client leaving makes it fail.
      await new Promise((_, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason), { once: true }));
    }
    return task(request.id);
  },
  async *subscribeToTask(request, context) {
    if (request.id === "missing") throw new TaskNotFoundError(`no task ${request.id}`);
    if (request.id === "waits") {
      // Slow to its first event, and honouring its signal: the client leaving makes it fail.
      entered.resolve();
      await new Promise((_, reject) => context.signal.addEventListener("abort", () => reject(context.signal.reason), { once: true }));
    }
    yield create(StreamResponseSchema, { payload: { case: "task", value: task(request.id) } });
  },
};

let server: AgentServer;
const clients: Partial<Record<"JSONRPC" | "HTTP+JSON" | "GRPC", A2AServiceClient>> = {};
beforeAll(async () => {
  server = await serveA2AService(handler, { name: "T", description: "t", version: "1", capabilities: { streaming: true }, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"] }, { port: 0, grpcPort: 0, drainMs: 100, tracing: api, onError: () => undefined });
  clients.JSONRPC = createA2AServiceJsonRpcClient(server.jsonRpcUrl!);
  clients["HTTP+JSON"] = createA2AServiceHttpJsonClient(server.httpJsonUrl!);
  clients.GRPC = createA2AServiceGrpcClient(server.grpcAddress!);
});
afterAll(async () => {
  for (const client of Object.values(clients)) client.close();
  await server.close();
  contextManager.disable();
  await provider.shutdown();
});
afterEach(() => {
  processor.throwing = false;
  sampling.throwing = false;
});

const rpcSystem = { JSONRPC: "jsonrpc", "HTTP+JSON": "http_json", GRPC: "grpc" } as const;
/** The span of `method` for the task `id` on `binding`. */
const methodSpan = (binding: keyof typeof rpcSystem, method: string, id: string) => (s: ReadableSpan) =>
  s.kind === api.SpanKind.SERVER && s.name.endsWith(`/${method}`) && s.attributes["rpc.system"] === rpcSystem[binding] && s.attributes["a2a.task.id"] === id;

describe.each(["JSONRPC", "HTTP+JSON", "GRPC"] as const)("%s", (binding) => {
  test("a span processor that throws at a span's end, or a sampler that throws at its start, fails no call, unary or streamed", async () => {
    const client = clients[binding]!;
    processor.throwing = true;
    await expect(client.getTask({ id: "ok" })).resolves.toMatchObject({ id: "ok" });
    const events: string[] = [];
    for await (const event of client.subscribeToTask({ id: "s" })) events.push(event.payload.case ?? "");
    expect(events).toEqual(["task"]);
    processor.throwing = false;
    sampling.throwing = true;
    await expect(client.getTask({ id: "ok" })).resolves.toMatchObject({ id: "ok" });
  });

  test("a stream refused before its first event (TaskNotFound) records that refusal on its span", async () => {
    const client = clients[binding]!;
    await expect((async () => {
      for await (const event of client.subscribeToTask({ id: "missing" })) void event;
    })()).rejects.toBeInstanceOf(TaskNotFoundError);
    const span = await processor.next((s) => s.kind === api.SpanKind.SERVER && s.name.endsWith("/SubscribeToTask") && s.attributes["a2a.error.reason"] !== undefined && s.attributes["rpc.system"] === rpcSystem[binding]);
    expect(span.attributes["a2a.error.reason"]).toBe("TASK_NOT_FOUND");
    if (binding === "HTTP+JSON") expect(span.attributes["http.response.status_code"]).toBe(404);
    if (binding === "JSONRPC") expect(span.attributes["rpc.jsonrpc.error_code"]).toBe(-32001);
  });

  test("a stream whose client leaves before its first event ends its span (as the client's leaving)", async () => {
    entered = deferred();
    const controller = new AbortController();
    const reading = (async () => {
      for await (const event of clients[binding]!.subscribeToTask({ id: "waits" }, { signal: controller.signal })) void event;
    })().catch((e: unknown) => e);
    await entered.promise;
    const ended = processor.next(methodSpan(binding, "SubscribeToTask", "waits"));
    controller.abort();
    await reading;
    const span = await within("the span to end", ended);
    expect(span.status.code).not.toBe(api.SpanStatusCode.ERROR);
  });

  test("a client that leaves a unary call whose handler honours its signal is no server failure (not ERROR, not Internal)", async () => {
    entered = deferred();
    const client = clients[binding]!;
    const controller = new AbortController();
    const call = client.getTask({ id: "leaves" }, { signal: controller.signal }).catch((e: unknown) => e);
    await entered.promise;
    const ended = processor.next(methodSpan(binding, "GetTask", "leaves"));
    controller.abort();
    await call;
    const span = await ended;
    expect(span.status.code).not.toBe(api.SpanStatusCode.ERROR);
    expect([span.attributes["rpc.jsonrpc.error_code"], span.attributes["http.response.status_code"]]).toEqual([undefined, undefined]);
    if (binding === "GRPC") expect(span.attributes["rpc.grpc.status_code"]).toBe(1);
  });
});

test("gRPC unary: a deadline that passes while the handler runs ends its span DEADLINE_EXCEEDED (ERROR), not OK", async () => {
  entered = deferred();
  release = deferred();
  const failed = clients.GRPC!.getTask({ id: "gated" }, { timeoutMs: 100 }).catch((e: unknown) => e);
  await entered.promise;
  expect(await failed).toMatchObject({ name: expect.stringMatching(/Deadline/) });
  // The server's deadline runs from when the call arrived, a little after the client's: the answer
  // comes past both (a client that cancels at its own deadline, before the server's, is CANCELLED).
  await new Promise((resolve) => setTimeout(resolve, 50));
  const ended = processor.next(methodSpan("GRPC", "GetTask", "gated"));
  release.resolve();
  const span = await ended;
  expect([span.attributes["rpc.grpc.status_code"], span.status.code]).toEqual([4, api.SpanStatusCode.ERROR]);
});
