/**
 * 0.3 callers on every binding, where 0.3 differs in small ways (D110, D113):
 * 0.3 named the extensions header X-A2A-Extensions, so a 0.3 caller's
 * extensions are read from it, the 0.3 gRPC service's metadata included, and
 * the activated ones are echoed under 0.3's name as well as 1.0's; a part of
 * none of 0.3's kinds is InvalidParams on each binding.
 */
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { v03GrpcDefinition } from "../../runtime/a2a/compat/v03-grpc.js";
import { GetTaskRequestSchema as GetTaskRequest03Schema, Role as Role03, SendMessageRequestSchema as SendMessageRequest03Schema } from "../../runtime/gen/a2a/v0_3/a2a_pb.js";
import { referenceCard } from "../../examples/reference-agent/config.js";
import { AgentCapabilitiesSchema, AgentCardSchema, Role, TaskState } from "../../generated/a2a_pb.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { serveA2AService } from "../../generated/a2a_server.js";

const EXT = "urn:example:required";
const card = create(AgentCardSchema, {
  ...referenceCard,
  capabilities: create(AgentCapabilitiesSchema, { streaming: true, extensions: [{ uri: EXT, required: true }] }),
});
// GetTask activates what was asked for and answers one task; SendMessage echoes.
const handler: A2AServiceHandler = {
  async sendMessage(request) {
    return { payload: { case: "message", value: { messageId: "re", role: Role.AGENT, parts: request.message?.parts ?? [] } } };
  },
  async getTask(request, context) {
    for (const uri of context.requestedExtensions) context.activatedExtensions.add(uri);
    return { id: request.id, contextId: "c1", status: { state: TaskState.WORKING } };
  },
};

let server: AgentServer;
beforeAll(async () => {
  server = await serveA2AService(handler, card, { port: 0, grpcPort: 0, drainMs: 100, compat: { v0_3: true }, tracing: false });
});
afterAll(() => server.close());

test("JSON-RPC and HTTP+JSON: X-A2A-Extensions is read, and the activated extension comes back under both names", async () => {
  const rpc = await fetch(server.jsonRpcUrl!, {
    method: "POST",
    headers: { "content-type": "application/json", "x-a2a-extensions": EXT },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "t1" } }),
  });
  expect(((await rpc.json()) as { result?: { id: string } }).result?.id).toBe("t1");
  expect([rpc.headers.get("x-a2a-extensions"), rpc.headers.get("a2a-extensions")]).toEqual([EXT, EXT]);
  const rest = await fetch(`${server.httpJsonUrl}/v1/tasks/t1`, { headers: { "x-a2a-extensions": EXT } });
  expect(rest.status).toBe(200);
  expect([rest.headers.get("x-a2a-extensions"), rest.headers.get("a2a-extensions")]).toEqual([EXT, EXT]);
  // A 1.0 call reads and answers 1.0's name only.
  const v1 = await fetch(`${server.httpJsonUrl}/tasks/t1`, { headers: { "a2a-version": "1.0", "x-a2a-extensions": EXT } });
  expect(v1.status).toBe(400);
});

test("the 0.3 gRPC service reads x-a2a-extensions metadata and echoes the activated extension under both names", async () => {
  const Client = grpc.makeGenericClientConstructor(v03GrpcDefinition, "A2AService");
  const client = new Client(server.grpcAddress!, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    getTask: (request: unknown, metadata: grpc.Metadata, callback: (err: grpc.ServiceError | null, answer: unknown) => void) => grpc.ClientUnaryCall;
  };
  try {
    const md = new grpc.Metadata();
    md.set("x-a2a-extensions", EXT);
    const got = await new Promise<{ err: grpc.ServiceError | null; headers: grpc.Metadata | undefined }>((resolve) => {
      let headers: grpc.Metadata | undefined;
      const call = client.getTask(create(GetTaskRequest03Schema, { name: "tasks/t1" }), md, (err) => resolve({ err, headers }));
      call.on("metadata", (m: grpc.Metadata) => (headers = m));
    });
    expect(got.err).toBeNull();
    expect([got.headers?.get("x-a2a-extensions"), got.headers?.get("a2a-extensions")]).toEqual([[EXT], [EXT]]);
  } finally {
    client.close();
  }
});

test("a part of none of 0.3's kinds is InvalidParams on JSON-RPC, HTTP+JSON and gRPC, not a message with empty text", async () => {
  const message = { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "file", url: "https://example.com/a.pdf", mediaType: "application/pdf" }] };
  const rpc = await fetch(server.jsonRpcUrl!, {
    method: "POST",
    headers: { "content-type": "application/json", "x-a2a-extensions": EXT },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: { message } }),
  });
  expect(((await rpc.json()) as { error?: { code: number; message: string } }).error).toEqual({
    code: -32602,
    message: "the params of message/send cannot be read as A2A 0.3's: a part has none of 0.3's text, file or data (kind \"file\")",
  });
  const rest = await fetch(`${server.httpJsonUrl}/v1/message:send`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-a2a-extensions": EXT },
    body: JSON.stringify({ message: { messageId: "m1", role: "ROLE_USER", content: [{}] } }),
  });
  expect([rest.status, ((await rest.json()) as { message?: string }).message]).toEqual([400, "a part has none of 0.3's text, file or data"]);
  const Client = grpc.makeGenericClientConstructor(v03GrpcDefinition, "A2AService");
  const client = new Client(server.grpcAddress!, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    sendMessage: (request: unknown, metadata: grpc.Metadata, callback: (err: grpc.ServiceError | null) => void) => void;
  };
  try {
    const md = new grpc.Metadata();
    md.set("x-a2a-extensions", EXT);
    const err = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.sendMessage(create(SendMessageRequest03Schema, { request: { messageId: "m1", role: Role03.USER, content: [{}] } }), md, resolve),
    );
    expect([err?.code, err?.details]).toEqual([grpc.status.INVALID_ARGUMENT, "the request cannot be read as A2A 0.3's: a part has none of 0.3's text, file or data"]);
  } finally {
    client.close();
  }
});

test("A2A-Version sent on two header lines with the same version is served as that version, 1.0 or 0.3", async () => {
  const twice = (version: string) => {
    const headers = new Headers({ "content-type": "application/json", "a2a-extensions": EXT });
    headers.append("a2a-version", version);
    headers.append("a2a-version", version);
    return headers;
  };
  const v1 = await fetch(server.jsonRpcUrl!, { method: "POST", headers: twice("1.0"), body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t1" } }) });
  expect(((await v1.json()) as { result?: { id: string } }).result?.id).toBe("t1");
  const v03 = await fetch(server.jsonRpcUrl!, { method: "POST", headers: twice("0.3"), body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "t1" } }) });
  expect(((await v03.json()) as { result?: { kind?: string } }).result?.kind).toBe("task");
});

test.each(["1e400", "9007199254740993"])("a 0.3 call whose id %s cannot be sent back exactly is -32600, as a 1.0 one is, not answered with another id", async (id) => {
  const res = await fetch(server.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json" }, body: `{"jsonrpc":"2.0","id":${id},"method":"tasks/get","params":{"id":"t1"}}` });
  expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
});
