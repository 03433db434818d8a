/**
 * A handler's unexpected failures (issue 17), on all three bindings over real
 * sockets: the client gets the table's Internal error and never the failure's
 * text, and the server hears of each one once, with its binding, method and
 * request id: through `onError`, through a `logger` (pino itself, writing
 * JSON lines), or by default as one JSON line on stderr. A handler result
 * that cannot be encoded (a plain object where a google.protobuf.Value goes)
 * fails the same way on every binding, where gRPC used to send it empty.
 */
import { Writable } from "node:stream";
import { jest } from "@jest/globals";
import { create } from "@bufbuild/protobuf";
import pino from "pino";
import { InternalError, TaskNotFoundError } from "protoc-gen-a2a/runtime";
import type { AgentServer, FailureInfo, ServeOptions } from "protoc-gen-a2a/runtime/server";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { GetTaskRequestSchema, TaskSchema, TaskState, type StreamResponse } from "../../generated/a2a_pb.js";

const SECRET = "the database password is hunter2";

/** GetTask fails as its id says; SubscribeToTask streams one event, then fails, or fails at once for id "at-once". */
const handler: A2AServiceHandler = {
  async getTask(request) {
    switch (request.id) {
      case "throws":
        throw new Error(SECRET);
      case "missing":
        throw new TaskNotFoundError(request.id);
      case "plain-value":
        // A plain object where Part.data's google.protobuf.Value goes: the mistake of issue 17.
        return {
          id: "plain-value",
          contextId: "c",
          status: { state: TaskState.COMPLETED },
          artifacts: [{ artifactId: "a", parts: [{ content: { case: "data", value: { answer: 42 } as never } }] }],
        };
      default:
        return create(TaskSchema, { id: request.id, contextId: "c", status: { state: TaskState.WORKING } });
    }
  },
  async *subscribeToTask(request) {
    if (request.id === "at-once") throw new Error(SECRET);
    yield { payload: { case: "task", value: create(TaskSchema, { id: request.id, contextId: "c", status: { state: TaskState.WORKING } }) } } as StreamResponse;
    throw new Error(SECRET);
  },
};

const card = {
  name: "Failing",
  description: "Fails on purpose",
  version: "1.0.0",
  capabilities: { streaming: true },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [],
};

async function serve(options: ServeOptions): Promise<AgentServer> {
  return serveA2AService(handler, card, { port: 0, grpcPort: 0, ...options });
}

const jsonRpc = async (server: AgentServer, method: string, params: object, id: string | number = 7) => {
  const res = await fetch(server.jsonRpcUrl as string, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
  });
  return res.text();
};

const rest = async (server: AgentServer, path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${server.httpJsonUrl}${path}`, { headers: { "a2a-version": "1.0", ...headers } });
  return { status: res.status, text: await res.text() };
};

async function grpcFailure(server: AgentServer, call: (client: ReturnType<typeof createA2AServiceGrpcClient>) => Promise<unknown>): Promise<unknown> {
  const client = createA2AServiceGrpcClient(server.grpcAddress as string);
  try {
    await call(client);
    return undefined;
  } catch (err) {
    return err;
  } finally {
    client.close();
  }
}

describe("onError hears each unexpected failure once; the client never sees its text", () => {
  let server: AgentServer;
  const seen: { error: unknown; info: FailureInfo }[] = [];
  beforeAll(async () => {
    server = await serve({ onError: (error, info) => seen.push({ error, info }) });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    seen.length = 0;
  });

  test("JSON-RPC: -32603, reported with the method and the JSON-RPC id", async () => {
    const text = await jsonRpc(server, "GetTask", { id: "throws" }, "req-1");
    expect(JSON.parse(text).error.code).toBe(-32603);
    expect(text).not.toContain("hunter2");
    expect(seen.map((s) => s.info)).toEqual([{ binding: "JSONRPC", method: "GetTask", requestId: "req-1" }]);
    expect((seen[0]?.error as Error).message).toBe(SECRET);
  });

  test("HTTP+JSON: 500, reported with the method and the client's x-request-id", async () => {
    const r = await rest(server, "/tasks/throws", { "x-request-id": "abc-123" });
    expect(r.status).toBe(500);
    expect(r.text).not.toContain("hunter2");
    expect(seen.map((s) => s.info)).toEqual([{ binding: "HTTP+JSON", method: "GetTask", requestId: "abc-123" }]);
  });

  test("gRPC: INTERNAL, reported with the method and the x-request-id metadata", async () => {
    const err = await grpcFailure(server, (c) => c.getTask({ id: "throws" }, { headers: { "x-request-id": "g-9" } }));
    expect(err).toBeInstanceOf(InternalError);
    expect(String((err as Error).message)).not.toContain("hunter2");
    expect(seen.map((s) => s.info)).toEqual([{ binding: "GRPC", method: "GetTask", requestId: "g-9" }]);
  });

  test("an error the handler meant (an A2AError) is answered as it is and not reported", async () => {
    expect(JSON.parse(await jsonRpc(server, "GetTask", { id: "missing" })).error.code).toBe(-32001);
    expect((await rest(server, "/tasks/missing")).status).toBe(404);
    expect(await grpcFailure(server, (c) => c.getTask({ id: "missing" }))).toBeInstanceOf(TaskNotFoundError);
    expect(seen).toEqual([]);
  });

  test("a stream that fails after its first event: reported once per binding, the last frame says Internal", async () => {
    const rpc = await fetch(server.jsonRpcUrl as string, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "SubscribeToTask", params: { id: "s" } }),
    }).then((r) => r.text());
    expect(rpc).toContain('"code":-32603');
    const http = await rest(server, "/tasks/s:subscribe");
    expect(http.text).toContain("event: error");
    expect(http.text).not.toContain("hunter2");
    const grpcErr = await grpcFailure(server, async (c) => {
      for await (const _ of c.subscribeToTask({ id: "s" })) void _;
    });
    expect(grpcErr).toBeInstanceOf(InternalError);
    expect(seen.map((s) => `${s.info.binding} ${s.info.method}`)).toEqual(["JSONRPC SubscribeToTask", "HTTP+JSON SubscribeToTask", "GRPC SubscribeToTask"]);
  });

  test("a stream that fails before its first event: reported once per binding, answered Internal", async () => {
    const rpc = await fetch(server.jsonRpcUrl as string, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 4, method: "SubscribeToTask", params: { id: "at-once" } }),
    }).then((r) => r.text());
    expect(JSON.parse(rpc).error.code).toBe(-32603);
    const http = await rest(server, "/tasks/at-once:subscribe", { "x-request-id": "h-4" });
    expect(http.status).toBe(500);
    expect(`${rpc}${http.text}`).not.toContain("hunter2");
    const grpcErr = await grpcFailure(server, async (c) => {
      for await (const _ of c.subscribeToTask({ id: "at-once" })) void _;
    });
    expect(grpcErr).toBeInstanceOf(InternalError);
    // The JSON bindings let the handler go (its signal aborted) before answering, which once made
    // the failure read as a client that left: it was answered and never reported.
    expect(seen.map((s) => s.info)).toEqual([
      { binding: "JSONRPC", method: "SubscribeToTask", requestId: "4" },
      { binding: "HTTP+JSON", method: "SubscribeToTask", requestId: "h-4" },
      { binding: "GRPC", method: "SubscribeToTask", requestId: undefined },
    ]);
  });

  test("a result that cannot be encoded (a plain object as a Value) is Internal on all three bindings, and reported", async () => {
    expect(JSON.parse(await jsonRpc(server, "GetTask", { id: "plain-value" })).error.code).toBe(-32603);
    expect((await rest(server, "/tasks/plain-value")).status).toBe(500);
    const err = await grpcFailure(server, (c) => c.getTask(create(GetTaskRequestSchema, { id: "plain-value" })));
    expect(err).toBeInstanceOf(InternalError);
    expect(seen.map((s) => s.info.binding)).toEqual(["JSONRPC", "HTTP+JSON", "GRPC"]);
    // The binary writer says what is wrong, for the server's log.
    expect(String((seen[2]?.error as Error).message)).toContain("google.protobuf.Value must have a kind");
  });

  test("a hook that throws does not change the answer", async () => {
    const throwing = await serve({
      onError: () => {
        throw new Error("the hook broke");
      },
    });
    try {
      expect(JSON.parse(await jsonRpc(throwing, "GetTask", { id: "throws" })).error.code).toBe(-32603);
    } finally {
      await throwing.close();
    }
  });
});

describe("loggers", () => {
  test("pino as the logger: one JSON line per failure with err, binding, method and requestId", async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split("\n").filter((l) => l !== ""));
        done();
      },
    });
    const server = await serve({ logger: pino({ base: undefined }, destination) });
    try {
      await jsonRpc(server, "GetTask", { id: "throws" }, 5);
      await jsonRpc(server, "GetTask", { id: "missing" }, 6);
    } finally {
      await server.close();
    }
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] as string);
    expect(line).toMatchObject({ level: 50, msg: "handler failed", binding: "JSONRPC", method: "GetTask", requestId: "5" });
    expect(line.err).toMatchObject({ type: "Error", message: SECRET });
    expect(line.err.stack).toContain("handler-failures.test.ts");
  });

  test("by default: one JSON line on stderr", async () => {
    const printed: unknown[][] = [];
    const spy = jest.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
      printed.push(args);
    });
    const server = await serve({});
    try {
      await rest(server, "/tasks/throws");
    } finally {
      spy.mockRestore();
      await server.close();
    }
    expect(printed).toHaveLength(1);
    const line = JSON.parse(String(printed[0]?.[0]));
    expect(line).toMatchObject({ level: "error", msg: "handler failed", binding: "HTTP+JSON", method: "GetTask", err: { type: "Error", message: SECRET } });
    expect(typeof line.time).toBe("string");
  });
});
