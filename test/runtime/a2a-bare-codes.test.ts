/**
 * D37: a handler of an A2A service that throws a bare google.rpc.Code
 * (`new RpcError("NOT_FOUND")`, the core's way for services of no profile)
 * is answered with that code on every binding, and on JSON-RPC with a code
 * outside A2A's: the core's `-32000 - code` would be -32005 for NOT_FOUND,
 * A2A's ContentTypeNotSupported. The generated client reads the code back
 * on all three bindings, and A2A's own errors keep their codes.
 */
import { RpcError, TaskNotFoundError, isRpcError, type RpcCodeName } from "protoc-gen-a2a/runtime";
import { createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient, type A2AServiceClient } from "../../generated/a2a_client.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { serveA2AService } from "../../generated/a2a_server.js";
import { taskCard } from "../support/task-clients.js";

/** GetTask throws the code its id names: `NOT_FOUND`, ..., or `a2a` for TaskNotFoundError. */
const handler: Partial<A2AServiceHandler> = {
  getTask(request) {
    if (request.id === "a2a") throw new TaskNotFoundError("no task a2a");
    throw new RpcError(request.id as RpcCodeName, `thrown as ${request.id}`);
  },
};

let server: AgentServer;
let origin: string;
let grpcAddress: string;
const clients: A2AServiceClient[] = [];
beforeAll(async () => {
  server = await serveA2AService(handler as A2AServiceHandler, taskCard, { port: 0, grpcPort: 0, host: "127.0.0.1", tracing: false });
  origin = new URL(server.cardUrl).origin;
  const card = (await (await fetch(server.cardUrl)).json()) as { supportedInterfaces: { protocolBinding: string; url: string }[] };
  grpcAddress = card.supportedInterfaces.find((i) => i.protocolBinding === "GRPC")!.url;
  clients.push(createA2AServiceJsonRpcClient(`${origin}/a2a/jsonrpc`), createA2AServiceHttpJsonClient(`${origin}/a2a/rest`), createA2AServiceGrpcClient(grpcAddress));
});
afterAll(async () => {
  for (const c of clients) c.close();
  await server.close();
});

async function jsonRpcError(id: string): Promise<{ code: number; message: string; data?: unknown }> {
  const response = await fetch(`${origin}/a2a/jsonrpc`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id } }),
  });
  return ((await response.json()) as { error: { code: number; message: string } }).error;
}

async function failureOf(promise: Promise<unknown>): Promise<{ status: string; name: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    if (!isRpcError(err)) throw err;
    return { status: err.entry.grpcStatus, name: err.entry.name, message: err.message };
  }
  throw new Error("the call succeeded");
}

// Each code with the JSON-RPC code it goes out as: -31000 - its HTTP status, or JSON-RPC 2.0's own.
const cases: [RpcCodeName, number][] = [
  ["NOT_FOUND", -31404],
  ["ABORTED", -31409],
  ["RESOURCE_EXHAUSTED", -31429],
  ["FAILED_PRECONDITION", -31400],
  ["UNAVAILABLE", -31503],
  ["DEADLINE_EXCEEDED", -31504],
  ["CANCELLED", -31499],
  ["UNAUTHENTICATED", -31401],
  ["PERMISSION_DENIED", -31403],
  ["INVALID_ARGUMENT", -32602],
  ["UNIMPLEMENTED", -32601],
];

test.each(cases)("%s: JSON-RPC %i, never one of A2A's -32001..-32099", async (code, jsonRpc) => {
  expect(await jsonRpcError(code)).toEqual({ code: jsonRpc, message: `thrown as ${code}` });
});

test.each(cases)("%s reaches the generated client as that code on every binding", async (code) => {
  for (const client of clients) {
    expect(await failureOf(client.getTask({ id: code }))).toMatchObject({ status: code, message: `thrown as ${code}` });
  }
});

test("A2A's own errors keep A2A's codes", async () => {
  expect(await jsonRpcError("a2a")).toMatchObject({ code: -32001, message: "no task a2a" });
  for (const client of clients) expect(await failureOf(client.getTask({ id: "a2a" }))).toMatchObject({ name: "TaskNotFound", status: "NOT_FOUND" });
});
