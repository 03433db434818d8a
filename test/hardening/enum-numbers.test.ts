/**
 * D34: an enum number a request carries that the proto does not name
 * (`role: 99`) is kept, as proto3's open enums are, on all three bindings
 * alike, and an unknown enum *name* is refused (D10). Over real sockets.
 */
import { create } from "@bufbuild/protobuf";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { MessageSchema, SendMessageRequestSchema, type Role } from "../../generated/a2a_pb.js";

const roles: number[] = [];
const handler: A2AServiceHandler = {
  async sendMessage(request) {
    const role = request.message?.role ?? -1;
    roles.push(role);
    // Answered with the message as received: the number goes back out as it came in.
    return { payload: { case: "message", value: create(MessageSchema, { messageId: "r", role: role as Role, parts: [{ content: { case: "text", value: "ok" } }] }) } };
  },
};

const card = { name: "Enums", description: "d", version: "1", capabilities: {}, defaultInputModes: [], defaultOutputModes: [], skills: [] };
let server: AgentServer;
beforeAll(async () => {
  server = await serveA2AService(handler, card, { port: 0, grpcPort: 0 });
});
afterAll(() => server.close());
beforeEach(() => {
  roles.length = 0;
});

/** What the JSON bindings answer here: a JSON-RPC envelope, or HTTP+JSON's SendMessageResponse. */
interface Answer {
  readonly result?: { readonly message: { readonly role: unknown } };
  readonly error?: { readonly code: number };
  readonly message?: { readonly role: unknown };
}

const message = (role: unknown) => ({ messageId: "m", role, parts: [{ text: "hi" }] });

test("role 99 reaches the handler as 99 on JSON-RPC, HTTP+JSON and gRPC, and is answered as 99", async () => {
  const rpc = await fetch(server.jsonRpcUrl as string, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: message(99) } }),
  }).then((r) => r.json() as Promise<Answer>);
  expect(rpc.result?.message.role).toBe(99);

  const rest = await fetch(`${server.httpJsonUrl}/message:send`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ message: message(99) }),
  }).then((r) => r.json() as Promise<Answer>);
  expect(rest.message?.role).toBe(99);

  const client = createA2AServiceGrpcClient(server.grpcAddress as string);
  try {
    const answer = await client.sendMessage(
      create(SendMessageRequestSchema, { message: { messageId: "m", role: 99 as Role, parts: [{ content: { case: "text", value: "hi" } }] } }),
    );
    expect(answer.payload.case === "message" && answer.payload.value.role).toBe(99);
  } finally {
    client.close();
  }
  expect(roles).toEqual([99, 99, 99]);
});

test("an enum name the proto does not have is refused on both JSON bindings (D10)", async () => {
  const rpc = await fetch(server.jsonRpcUrl as string, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: message("ROLE_ROBOT") } }),
  }).then((r) => r.json() as Promise<Answer>);
  expect(rpc.error?.code).toBe(-32602);
  const rest = await fetch(`${server.httpJsonUrl}/message:send`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ message: message("ROLE_ROBOT") }),
  });
  expect(rest.status).toBe(400);
  expect(roles).toEqual([]);
});
