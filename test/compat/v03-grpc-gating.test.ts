/**
 * D18 on the 0.3 gRPC service (D113): it goes through the same profile as
 * 1.0's, under the 1.0 names of its methods, two of which 0.3 names otherwise
 * (TaskSubscription, ListTaskPushNotificationConfig). An agent whose card
 * declares neither streaming nor push notifications refuses them there as
 * on 1.0, and refuses a push config that comes inside a 0.3 message.
 */
import * as grpc from "@grpc/grpc-js";
import { create, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { v03GrpcDefinition } from "../../runtime/a2a/compat/v03-grpc.js";
import { A2AErrorTable } from "../../runtime/a2a/errors.js";
import {
  ListTaskPushNotificationConfigRequestSchema,
  Role as Role03,
  SendMessageRequestSchema as SendMessageRequest03Schema,
  TaskSubscriptionRequestSchema,
} from "../../runtime/gen/a2a/v0_3/a2a_pb.js";
import { referenceCard } from "../../examples/reference-agent/config.js";
import { AgentCapabilitiesSchema, AgentCardSchema, TaskState } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler } from "../../generated/a2a_tasks.js";

const card = create(AgentCardSchema, { ...referenceCard, capabilities: create(AgentCapabilitiesSchema, { streaming: false, pushNotifications: false }) });
const handler = createA2AServiceTaskHandler(async function* () {
  yield { state: TaskState.COMPLETED };
});

let server: AgentServer;
let client: grpc.Client & Record<string, (request: unknown, callback: (err: grpc.ServiceError | null, answer: unknown) => void) => void> & Record<string, (request: unknown) => grpc.ClientReadableStream<unknown>>;
beforeAll(async () => {
  server = await serveA2AService(handler, card, { port: 0, grpcPort: 0, drainMs: 100, compat: { v0_3: true }, tracing: false });
  const Client = grpc.makeGenericClientConstructor(v03GrpcDefinition, "A2AService");
  client = new Client(server.grpcAddress!, grpc.credentials.createInsecure()) as typeof client;
});
afterAll(async () => {
  client.close();
  await server.close();
});

/** A 0.3 unary call (no a2a-version: 0.3): OK, or its status code and message. */
function unary<D extends DescMessage>(method: string, schema: D, init: MessageInitShape<D>): Promise<{ code: number; details: string }> {
  return new Promise((resolve) =>
    client[method]!(create(schema, init), (err) => resolve(err === null ? { code: grpc.status.OK, details: "" } : { code: err.code, details: err.details })),
  );
}

const message = { messageId: "m-1", role: Role03.USER, content: [{ part: { case: "text" as const, value: "hi" } }] };

test("TaskSubscription (1.0's SubscribeToTask) needs capabilities.streaming", async () => {
  const refused = await new Promise<{ code: number; details: string }>((resolve) => {
    const call = client.taskSubscription!(create(TaskSubscriptionRequestSchema, { name: "tasks/any" }));
    call.on("data", () => undefined);
    call.on("error", (err: grpc.ServiceError) => resolve({ code: err.code, details: err.details }));
    call.on("end", () => resolve({ code: grpc.status.OK, details: "" }));
  });
  expect(refused).toEqual({ code: grpc.status[A2AErrorTable.UnsupportedOperation.grpcStatus], details: "SubscribeToTask needs capabilities.streaming, which this agent does not declare" });
});

test("ListTaskPushNotificationConfig (1.0's ListTaskPushNotificationConfigs) needs capabilities.pushNotifications", async () => {
  expect(await unary("listTaskPushNotificationConfig", ListTaskPushNotificationConfigRequestSchema, { parent: "tasks/any" })).toEqual({
    code: grpc.status[A2AErrorTable.PushNotificationNotSupported.grpcStatus],
    details: "ListTaskPushNotificationConfigs needs capabilities.pushNotifications, which this agent does not declare",
  });
});

test("a push config inside a 0.3 SendMessage is refused; the same message without one is served", async () => {
  const withPush = await unary("sendMessage", SendMessageRequest03Schema, { request: message, configuration: { pushNotification: { url: "https://hooks.example.com/03" } } });
  expect(withPush).toEqual({
    code: grpc.status[A2AErrorTable.PushNotificationNotSupported.grpcStatus],
    details: "SendMessage with a push notification config needs capabilities.pushNotifications, which this agent does not declare",
  });
  expect(await unary("sendMessage", SendMessageRequest03Schema, { request: { ...message, messageId: "m-2" } })).toEqual({ code: grpc.status.OK, details: "" });
});

test("an extended card the agent does not offer, asked for anonymously, is UnsupportedOperation, not Unauthenticated (spec 3.3.4, D18)", async () => {
  const res = await fetch(server.jsonRpcUrl!, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard", params: {} }),
  });
  const { error } = (await res.json()) as { error: { code: number; message: string } };
  expect(error).toMatchObject({ code: A2AErrorTable.UnsupportedOperation.jsonRpcCode, message: "GetExtendedAgentCard needs capabilities.extendedAgentCard, which this agent does not declare" });
});
