/**
 * The fetch-style adapter runs the same JSON-RPC core as the node:http one:
 * Request in, Response out, SSE as a pulled ReadableStream.
 */
import { create } from "@bufbuild/protobuf";
import { createFetchHandler } from "../../runtime/adapters/fetch.js";
import { TaskNotFoundError } from "../../runtime/a2a/errors.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { createA2AServiceJsonRpcEndpoint } from "../../generated/a2a_jsonrpc.js";
import { StreamResponseSchema, TaskState } from "../../generated/a2a_pb.js";

let aborted: () => void = () => undefined;
const abortSeen = new Promise<void>((resolve) => (aborted = resolve));

const handler: A2AServiceHandler = {
  async getTask(request) {
    if (request.id !== "t1") throw new TaskNotFoundError(`no task ${request.id}`);
    return { id: "t1", contextId: "c1", status: { state: TaskState.WORKING } };
  },
  async *subscribeToTask(request, context) {
    yield create(StreamResponseSchema, { payload: { case: "task", value: { id: request.id, contextId: "c1" } } });
    await new Promise<void>((resolve) => context.signal.addEventListener("abort", () => resolve(), { once: true }));
    aborted();
  },
};

const fetchHandler = createFetchHandler(createA2AServiceJsonRpcEndpoint(handler, { heartbeatMs: 0, bodyLimit: 256 }));

function call(body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetchHandler(
    new Request("http://agent.test/a2a", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify(body),
      ...init,
    }),
  );
}

test("a unary call answers with the JSON-RPC result", async () => {
  const res = await call({ jsonrpc: "2.0", id: 7, method: "GetTask", params: { id: "t1" } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json");
  expect(await res.json()).toEqual({
    jsonrpc: "2.0",
    id: 7,
    result: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_WORKING" } },
  });
});

test("an A2A error carries its code and ErrorInfo", async () => {
  const res = await call({ jsonrpc: "2.0", id: "a", method: "GetTask", params: { id: "nope" } });
  expect(await res.json()).toEqual({
    jsonrpc: "2.0",
    id: "a",
    error: {
      code: -32001,
      message: "no task nope",
      data: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" }],
    },
  });
});

test("a body over the limit is 413 with a JSON-RPC error body", async () => {
  const res = await call({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x".repeat(300) } });
  expect(res.status).toBe(413);
  expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
});

test("a stream is SSE, and cancelling the body aborts the handler", async () => {
  const res = await call({ jsonrpc: "2.0", id: 0, method: "SubscribeToTask", params: { id: "t1" } });
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toBe(
    `data: ${JSON.stringify({ jsonrpc: "2.0", id: 0, result: { task: { id: "t1", contextId: "c1" } } })}\n\n`,
  );
  await reader.cancel();
  await abortSeen;
});
