// The client targets of bench/client.mjs, each an A2A client of one binding
// made the way its library says, with what the driver needs of it:
//   ours-<binding>     the generated clients (createA2AServiceJsonRpcClient,
//                      createA2AServiceHttpJsonClient from a2a_client.ts,
//                      createA2AServiceGrpcClient from a2a_grpc.ts; transpiled
//                      into bench/.build/generated/ over dist/runtime) at the
//                      interface URLs the server's card lists
//   a2a-js-<binding>   @a2a-js/sdk's Client from its ClientFactory with its
//                      JsonRpcTransportFactory, RestTransportFactory and
//                      GrpcTransportFactory, the binding preferred, from the
//                      server's card URL (createFromUrl), as its README and
//                      this project's interop tests make one
// binding: jsonrpc | http-json | grpc.
//
// Each target builds a fresh request per call (as a caller would), in its
// library's own shape, and says how to check an answer: cheaply on every
// call or stream of a measured run (the task id, the last chunk), and
// exactly before and after (as ProtoJSON, to compare with the fixture).
import { toJson } from "@bufbuild/protobuf";
import { message as messageJson } from "../lib/a2a-fixture.mjs";
import { artifactId, chunkText, contextId, streamText, taskId as streamTaskId } from "../streams/fixture.mjs";

export const bindings = ["jsonrpc", "http-json", "grpc"];
export const TARGETS = bindings.flatMap((b) => [`ours-${b}`, `a2a-js-${b}`]);

const unaryTaskId = `task-${messageJson.messageId}`;
const unaryText = messageJson.parts[0].text;

/** The client of `target` for the server whose URLs are `info` (bench/client/server.mjs). */
export async function createTarget(target, info) {
  const binding = bindings.find((b) => target.endsWith(`-${b}`));
  if (binding === undefined || !TARGETS.includes(target)) throw new Error(`unknown target ${target} (${TARGETS.join(", ")})`);
  return target.startsWith("ours-") ? ours(binding, info) : a2aJs(binding, info);
}

async function ours(binding, info) {
  const { createA2AServiceJsonRpcClient, createA2AServiceHttpJsonClient } = await import("../.build/generated/a2a_client.js");
  const { Role, SendMessageResponseSchema, StreamResponseSchema } = await import("../.build/generated/a2a_pb.js");
  let client;
  if (binding === "jsonrpc") client = createA2AServiceJsonRpcClient(info.jsonRpcUrl);
  else if (binding === "http-json") client = createA2AServiceHttpJsonClient(info.httpJsonUrl);
  else {
    const { createA2AServiceGrpcClient } = await import("../.build/generated/a2a_grpc.js");
    client = createA2AServiceGrpcClient(info.grpcAddress);
  }
  const request = (messageId, ctx, text) => ({ message: { messageId, contextId: ctx, role: Role.USER, parts: [{ content: { case: "text", value: text } }] } });
  return {
    what: `the generated ${{ jsonrpc: "createA2AServiceJsonRpcClient", "http-json": "createA2AServiceHttpJsonClient", grpc: "createA2AServiceGrpcClient" }[binding]}`,
    unary: () => client.sendMessage(request(messageJson.messageId, messageJson.contextId, unaryText)),
    stream: (n) => client.sendStreamingMessage(request("msg-stream", contextId, streamText(n))),
    unaryOk: (r) => r.payload.case === "task" && r.payload.value.id === unaryTaskId,
    lastOk: (e, n) => e.payload.case === "artifactUpdate" && e.payload.value.lastChunk && e.payload.value.artifact?.parts[0]?.content.value === chunkText(n - 1),
    unaryJson: (r) => toJson(SendMessageResponseSchema, r),
    eventJson: (e) => toJson(StreamResponseSchema, e),
    close: () => client.close(),
  };
}

async function a2aJs(binding, info) {
  const { Role, StreamResponse, Task } = await import("@a2a-js/sdk");
  const { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } = await import("@a2a-js/sdk/client");
  const { GrpcTransportFactory } = await import("@a2a-js/sdk/client/grpc");
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory(), new RestTransportFactory(), new GrpcTransportFactory()],
    preferredTransports: [{ jsonrpc: "JSONRPC", "http-json": "HTTP+JSON", grpc: "GRPC" }[binding]],
  });
  const client = await factory.createFromUrl(new URL(info.cardUrl).origin);
  const part = (value) => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" });
  const request = (messageId, ctx, text) => ({
    tenant: "",
    message: { messageId, contextId: ctx, taskId: "", role: Role.ROLE_USER, parts: [part(text)], metadata: undefined, extensions: [], referenceTaskIds: [] },
    configuration: undefined,
    metadata: undefined,
  });
  return {
    what: `@a2a-js/sdk ClientFactory.createFromUrl, ${client.transport.protocolName} transport`,
    unary: () => client.sendMessage(request(messageJson.messageId, messageJson.contextId, unaryText)),
    stream: (n) => client.sendMessageStream(request("msg-stream", contextId, streamText(n))),
    // sendMessage answers the payload: a Task (or a Message).
    unaryOk: (r) => r.id === unaryTaskId && r.status !== undefined,
    lastOk: (e, n) => e.payload?.$case === "artifactUpdate" && e.payload.value.lastChunk && e.payload.value.artifact?.parts[0]?.content?.value === chunkText(n - 1),
    unaryJson: (r) => ("status" in r ? { task: Task.toJSON(r) } : { message: r }),
    eventJson: (e) => StreamResponse.toJSON(e),
    close: () => {
      // Its gRPC transport keeps a grpc-js client (channel) of its own.
      client.transport.grpcClient?.close();
    },
  };
}

/** The ProtoJSON answer every target must give to SendMessage (bench/lib/a2a-fixture.mjs's echo task). */
export { echoTaskJson as expectedUnaryJson } from "../lib/a2a-fixture.mjs";
export { messageJson };

/** The ProtoJSON events of a stream of `n` chunks (bench/streams/fixture.mjs). */
export function expectedStreamJson(n) {
  const events = [{ task: { id: streamTaskId, contextId, status: { state: "TASK_STATE_WORKING" } } }];
  for (let i = 0; i < n; i++) {
    const update = { taskId: streamTaskId, contextId, artifact: { artifactId, parts: [{ text: chunkText(i) }] } };
    if (i > 0) update.append = true;
    if (i === n - 1) update.lastChunk = true;
    events.push({ artifactUpdate: update });
  }
  return events;
}
