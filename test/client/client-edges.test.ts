/**
 * The generated client at the edges D29 draws, against raw servers that
 * answer exactly what each test writes. A request HTTP+JSON cannot carry
 * (a path field left empty) is refused before it is sent, as the profile's
 * INVALID_ARGUMENT class (InvalidParamsError, what the other bindings'
 * agents answer for it). An answer the
 * client cannot read is INTERNAL (the agent answered: no transport
 * failure, so not UNAVAILABLE, which callers and stream recovery retry);
 * an answer of nothing (JSON-RPC `result: null`, HTTP 204) is the empty
 * message of a method that answers google.protobuf.Empty, as
 * @a2a-js/sdk's server answers DeleteTaskPushNotificationConfig, and
 * INTERNAL for any other; a bare gRPC UNKNOWN (what gRPC servers answer
 * for an exception that is no A2A error) is InternalError, as the same
 * failure is on JSON-RPC (-32603) and HTTP+JSON (500).
 */
import * as grpc from "@grpc/grpc-js";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { TaskSchema } from "../../generated/a2a_pb.js";
import { InternalError, InvalidParamsError, isRpcError } from "protoc-gen-a2a/runtime";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient, type A2AServiceClient } from "../../generated/a2a_client.js";
import { jsonAnswer, jsonRpcResult, jsonRpcStream, sseAnswer, startRawGrpc, startRawHttp, type RawAnswer, type RawHttpServer, type RawRequest } from "../support/raw-servers.js";

let server: RawHttpServer;
/** What the raw server answers next, by JSON-RPC method or HTTP path. */
let answer: (request: RawRequest) => RawAnswer = () => ({ status: 500 });

beforeAll(async () => {
  server = await startRawHttp((request) => answer(request));
});
afterAll(async () => {
  await server.close();
});

const clients: A2AServiceClient[] = [];
afterAll(() => clients.forEach((c) => c.close()));
const jsonRpc = () => {
  const c = createA2AServiceJsonRpcClient(`${server.origin}/rpc`);
  clients.push(c);
  return c;
};
const httpJson = () => {
  const c = createA2AServiceHttpJsonClient(`${server.origin}/rest`);
  clients.push(c);
  return c;
};

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("the call succeeded; an error was expected");
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

const codeOf = (err: unknown) => (isRpcError(err) ? { code: err.entry.grpcStatus, message: err.message } : { notAnRpcError: String(err) });

describe("an answer of the wrong shape is INTERNAL, not UNAVAILABLE", () => {
  // `id` is a string in a2a.proto: a number is a value of the wrong type, which no leniency reads.
  const wrongTask = { id: 42, status: { state: "TASK_STATE_COMPLETED" } };

  test("JSON-RPC, unary and stream", async () => {
    answer = (request) => jsonRpcResult(request, wrongTask);
    expect(codeOf(await rejectionOf(jsonRpc().getTask({ id: "t" })))).toEqual({ code: "INTERNAL", message: expect.stringMatching(/^the agent's answer is not a lf\.a2a\.v1\.Task: /) });
    answer = (request) => jsonRpcStream(request, [{ task: wrongTask }]);
    expect(codeOf(await rejectionOf(collect(jsonRpc().subscribeToTask({ id: "t" }))))).toEqual({
      code: "INTERNAL",
      message: expect.stringMatching(/^the agent's answer is not a lf\.a2a\.v1\.StreamResponse: /),
    });
  });

  test("HTTP+JSON, unary and stream", async () => {
    answer = () => jsonAnswer(wrongTask);
    expect(codeOf(await rejectionOf(httpJson().getTask({ id: "t" })))).toMatchObject({ code: "INTERNAL" });
    answer = () => sseAnswer([{ task: wrongTask }]);
    expect(codeOf(await rejectionOf(collect(httpJson().subscribeToTask({ id: "t" }))))).toMatchObject({ code: "INTERNAL" });
  });
});

test("HTTP+JSON: an interface URL with a query (an API key, say) keeps it, before the call's own query", async () => {
  answer = () => jsonAnswer({ id: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" } });
  const keyed = createA2AServiceHttpJsonClient(`${server.origin}/rest?key=k1`);
  clients.push(keyed);
  await keyed.getTask({ id: "t" });
  expect(server.requests.at(-1)?.path).toBe("/rest/tasks/t?key=k1");
  await keyed.getTask({ id: "t", historyLength: 2 });
  expect(server.requests.at(-1)?.path).toBe("/rest/tasks/t?key=k1&historyLength=2");
});

describe("an answer of nothing", () => {
  const del = { taskId: "t", id: "c" };

  test("JSON-RPC `result: null` is google.protobuf.Empty for Delete, INTERNAL for a method that answers a Task", async () => {
    answer = (request) => jsonRpcResult(request, null);
    expect(await jsonRpc().deleteTaskPushNotificationConfig(del)).toEqual({ $typeName: "google.protobuf.Empty" });
    expect(codeOf(await rejectionOf(jsonRpc().getTask({ id: "t" })))).toEqual({ code: "INTERNAL", message: "the agent answered nothing where a lf.a2a.v1.Task was due" });
  });

  test("HTTP+JSON 204 with no body is google.protobuf.Empty for Delete, INTERNAL for a method that answers a Task", async () => {
    answer = () => ({ status: 204 });
    expect(await httpJson().deleteTaskPushNotificationConfig(del)).toEqual({ $typeName: "google.protobuf.Empty" });
    expect(server.requests.at(-1)).toMatchObject({ method: "DELETE", path: "/rest/tasks/t/pushNotificationConfigs/c" });
    expect(codeOf(await rejectionOf(httpJson().getTask({ id: "t" })))).toEqual({ code: "INTERNAL", message: "the agent answered nothing where a lf.a2a.v1.Task was due" });
    // A body that is not JSON is still not an answer, Empty or not.
    answer = () => ({ status: 200, headers: { "content-type": "text/html" }, body: "<html>proxy</html>" });
    expect(codeOf(await rejectionOf(httpJson().deleteTaskPushNotificationConfig(del)))).toEqual({ code: "INTERNAL", message: "the agent's answer is not JSON" });
  });

  test("JSON-RPC: a 2xx that holds no JSON-RPC response (a wrong URL's page) is INTERNAL; a gateway's 502 with none is UNAVAILABLE (D29)", async () => {
    answer = () => ({ status: 200, headers: { "content-type": "text/html" }, body: "<html>not an agent</html>" });
    expect(codeOf(await rejectionOf(jsonRpc().getTask({ id: "t" })))).toEqual({ code: "INTERNAL", message: "the agent answered HTTP 200 with no JSON-RPC response" });
    answer = () => ({ status: 200, headers: { "content-type": "application/json" }, body: "{}" });
    expect(codeOf(await rejectionOf(jsonRpc().getTask({ id: "t" })))).toEqual({ code: "INTERNAL", message: "the agent answered HTTP 200 with no JSON-RPC response" });
    answer = () => ({ status: 502, headers: { "content-type": "text/html" }, body: "<html>bad gateway</html>" });
    expect(codeOf(await rejectionOf(jsonRpc().getTask({ id: "t" })))).toEqual({ code: "UNAVAILABLE", message: "HTTP 502" });
  });

  // An error of another request was read as this one's (client hunt).
  test("JSON-RPC: an error answered with another request's id is INTERNAL; with id null it is the error (JSON-RPC 2.0 §5)", async () => {
    const notFound = { code: -32001, message: "no task t" };
    answer = () => ({ status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 999, error: notFound }) });
    expect(codeOf(await rejectionOf(jsonRpc().getTask({ id: "t" })))).toEqual({ code: "INTERNAL", message: expect.stringMatching(/^the agent answered JSON-RPC id 999 to request \d+$/) });
    answer = () => ({ status: 200, headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: null, error: notFound }) });
    expect(codeOf(await rejectionOf(jsonRpc().getTask({ id: "t" })))).toEqual({ code: "NOT_FOUND", message: "no task t" });
  });
});

describe("an unexpected failure is InternalError on every binding", () => {
  test("gRPC UNKNOWN without details, unary and stream", async () => {
    const raw = await startRawGrpc(() => ({ error: { code: grpc.status.UNKNOWN, details: "boom" } }));
    const client = createA2AServiceGrpcClient(raw.address);
    try {
      const unary = await rejectionOf(client.getTask({ id: "t" }));
      expect(unary).toBeInstanceOf(InternalError);
      expect(codeOf(unary)).toEqual({ code: "INTERNAL", message: "boom" });
      expect(await rejectionOf(collect(client.subscribeToTask({ id: "t" })))).toBeInstanceOf(InternalError);
    } finally {
      client.close();
      raw.close();
    }
  });

  test("JSON-RPC -32603 and HTTP 500 without ErrorInfo", async () => {
    answer = (request) => ({ headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: (JSON.parse(request.body) as { id: number }).id, error: { code: -32603, message: "boom" } }) });
    expect(await rejectionOf(jsonRpc().getTask({ id: "t" }))).toBeInstanceOf(InternalError);
    answer = () => ({ status: 500, ...jsonAnswer({ error: { code: 500, status: "INTERNAL", message: "boom", details: [] } }) });
    expect(await rejectionOf(httpJson().getTask({ id: "t" }))).toBeInstanceOf(InternalError);
  });
});

describe("a request HTTP+JSON cannot carry", () => {
  test("GetTask with an empty id is InvalidParamsError, and nothing is sent (its path would be /tasks/, which is ListTasks)", async () => {
    const before = server.requests.length;
    const refused = await rejectionOf(httpJson().getTask({ id: "" }));
    expect(refused).toBeInstanceOf(InvalidParamsError);
    expect(codeOf(refused)).toEqual({ code: "INVALID_ARGUMENT", message: "GetTask needs id or tenant, id set to be sent over HTTP+JSON" });
    expect(server.requests.length).toBe(before);
  });
});

describe("one message is bounded by maxMessageBytes (4 MiB, D16): RESOURCE_EXHAUSTED, never retried", () => {
  const big = (bytes: number) => ({ id: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" }, metadata: { pad: "x".repeat(bytes) } });
  const exhausted = (err: unknown) => expect(codeOf(err)).toEqual({ code: "RESOURCE_EXHAUSTED", message: expect.stringContaining("maxMessageBytes (") });

  test("JSON-RPC and HTTP+JSON: a unary answer over the default 4 MiB", async () => {
    answer = (request) => (request.path === "/rpc" ? jsonRpcResult(request, big(5 * 1024 * 1024)) : jsonAnswer(big(5 * 1024 * 1024)));
    exhausted(await rejectionOf(jsonRpc().getTask({ id: "t" })));
    exhausted(await rejectionOf(httpJson().getTask({ id: "t" })));
    // Under it, read as before.
    answer = (request) => (request.path === "/rpc" ? jsonRpcResult(request, big(3 * 1024 * 1024)) : jsonAnswer(big(3 * 1024 * 1024)));
    expect((await jsonRpc().getTask({ id: "t" })).id).toBe("t");
    expect((await httpJson().getTask({ id: "t" })).id).toBe("t");
  });

  test("JSON-RPC and HTTP+JSON: one stream event over the client's maxMessageBytes, the events before it delivered", async () => {
    const small = { task: big(10) };
    const large = { task: big(64 * 1024) };
    const options = { maxMessageBytes: 32 * 1024 };
    const rpc = createA2AServiceJsonRpcClient(`${server.origin}/rpc`, options);
    const rest = createA2AServiceHttpJsonClient(`${server.origin}/rest`, options);
    clients.push(rpc, rest);
    for (const client of [rpc, rest]) {
      answer = (request) => (request.path === "/rpc" ? jsonRpcStream(request, [small, large]) : sseAnswer([small, large]));
      const seen: unknown[] = [];
      const err = await rejectionOf(
        (async () => {
          for await (const event of client.subscribeToTask({ id: "t" })) seen.push(event);
        })(),
      );
      exhausted(err);
      expect(seen).toHaveLength(1);
      // A unary answer is bounded by the same option.
      answer = (request) => (request.path === "/rpc" ? jsonRpcResult(request, big(64 * 1024)) : jsonAnswer(big(64 * 1024)));
      exhausted(await rejectionOf(client.getTask({ id: "t" })));
    }
  });

  test("gRPC: maxMessageBytes is the channel's receive limit", async () => {
    const task = create(TaskSchema, { id: "t", contextId: "c", metadata: { pad: "x".repeat(64 * 1024) } as never });
    const raw = await startRawGrpc(() => ({ messages: [toBinary(TaskSchema, task)] }));
    const client = createA2AServiceGrpcClient(raw.address, { maxMessageBytes: 32 * 1024 });
    const roomy = createA2AServiceGrpcClient(raw.address);
    try {
      expect(codeOf(await rejectionOf(client.getTask({ id: "t" })))).toMatchObject({ code: "RESOURCE_EXHAUSTED" });
      expect((await roomy.getTask({ id: "t" })).id).toBe("t");
    } finally {
      client.close();
      roomy.close();
      raw.close();
    }
  });

  test("an error of the language inside the transport (RangeError: Invalid string length) is INTERNAL, not UNAVAILABLE", async () => {
    // A fetch whose answer body fails as reading a string too long to make does.
    const failing: typeof fetch = async (url, init) => {
      const response = await fetch(url, init);
      await response.body?.cancel();
      const body = new ReadableStream<Uint8Array>({ pull: (c) => c.error(new RangeError("Invalid string length")) });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const rpc = createA2AServiceJsonRpcClient(`${server.origin}/rpc`, { fetch: failing });
    const rest = createA2AServiceHttpJsonClient(`${server.origin}/rest`, { fetch: failing });
    clients.push(rpc, rest);
    for (const client of [rpc, rest]) {
      answer = (request) => (request.path === "/rpc" ? jsonRpcResult(request, big(10)) : jsonAnswer(big(10)));
      expect(codeOf(await rejectionOf(client.getTask({ id: "t" })))).toEqual({ code: "INTERNAL", message: expect.stringContaining("Invalid string length") });
      answer = (request) => (request.path === "/rpc" ? jsonRpcStream(request, [{ task: big(10) }]) : sseAnswer([{ task: big(10) }]));
      expect(codeOf(await rejectionOf(collect(client.subscribeToTask({ id: "t" }))))).toMatchObject({ code: "INTERNAL" });
    }
  });

  // A first version read a bare TypeError as INTERNAL, never retried (review).
  test("a network error as the Fetch standard reports it (a bare TypeError, as browsers and mocks do) stays UNAVAILABLE", async () => {
    const offline: typeof fetch = () => Promise.reject(new TypeError("Failed to fetch"));
    const rpc = createA2AServiceJsonRpcClient(`${server.origin}/rpc`, { fetch: offline });
    const rest = createA2AServiceHttpJsonClient(`${server.origin}/rest`, { fetch: offline });
    clients.push(rpc, rest);
    for (const client of [rpc, rest]) expect(codeOf(await rejectionOf(client.getTask({ id: "t" })))).toEqual({ code: "UNAVAILABLE", message: "the connection failed: Failed to fetch" });
  });
});

describe("streamIdleTimeoutMs counts only the time a read waits (D30)", () => {
  // The caller's own time with an event was taken for the agent's silence, and the stream cut (review).
  test("a caller that spends longer than the bound on one event still gets the rest; a silent agent is still cut", async () => {
    const events = [1, 2, 3].map((n) => ({ task: { id: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" }, metadata: { n } } }));
    // Its headers, then nothing: a half-open connection looks so.
    const silent = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
    });
    const talking = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const { id } = JSON.parse(body) as { id: number };
        res.writeHead(200, { "content-type": "text/event-stream" });
        // Apart, so that each comes in a read of its own.
        events.forEach((event, i) => setTimeout(() => res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id, result: event })}\n\n`), i * 50));
        const beat = setInterval(() => res.write(": keep-alive\n\n"), 50);
        res.on("close", () => clearInterval(beat));
      });
    });
    const listen = async (s: ReturnType<typeof createServer>) => {
      await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
      return `http://127.0.0.1:${(s.address() as AddressInfo).port}/`;
    };
    const slowReader = createA2AServiceJsonRpcClient(await listen(talking), { streamIdleTimeoutMs: 200 });
    const toSilence = createA2AServiceJsonRpcClient(await listen(silent), { streamIdleTimeoutMs: 200 });
    clients.push(slowReader, toSilence);
    try {
      const seen: unknown[] = [];
      for await (const event of slowReader.subscribeToTask({ id: "t" })) {
        seen.push(event.payload.case === "task" ? event.payload.value.metadata?.["n"] : undefined);
        // The caller's own work, twice the bound, with the agent's heartbeats coming meanwhile.
        if (seen.length === 1) await new Promise((resolve) => setTimeout(resolve, 400));
        if (seen.length === 3) break;
      }
      expect(seen).toEqual([1, 2, 3]);
      const err = await rejectionOf(collect(toSilence.subscribeToTask({ id: "t" })));
      expect(codeOf(err)).toEqual({ code: "UNAVAILABLE", message: expect.stringContaining("streamIdleTimeoutMs") });
    } finally {
      for (const s of [silent, talking]) {
        s.closeAllConnections();
        await new Promise((resolve) => s.close(resolve));
      }
    }
  });
});
