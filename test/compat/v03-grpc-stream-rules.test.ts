/**
 * D15 on the 0.3 gRPC service (D113): its calls go to the handler directly,
 * not through 1.0's binding, so the stream rules are applied there too. A
 * handler whose stream breaks them (an artifact update before any Task or
 * Message) fails the 0.3 call as it fails the 1.0 one, with nothing handed
 * on first; a well-formed stream goes through.
 */
import * as grpc from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { isRpcError } from "protoc-gen-a2a/runtime";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { v03GrpcDefinition } from "../../runtime/a2a/compat/v03-grpc.js";
import { SendMessageRequestSchema as SendMessageRequest03Schema, Role as Role03 } from "../../runtime/gen/a2a/v0_3/a2a_pb.js";
import { referenceCard } from "../../examples/reference-agent/config.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { Role, StreamResponseSchema, TaskState } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";

/** "bad": an artifact update first (D15 refuses it); anything else: the task, then COMPLETED. */
const handler: Partial<A2AServiceHandler> = {
  async *sendStreamingMessage(request) {
    const text = request.message?.parts[0]?.content.value;
    if (text === "bad") {
      yield create(StreamResponseSchema, { payload: { case: "artifactUpdate", value: { taskId: "t", contextId: "c", artifact: { artifactId: "a", parts: [{ content: { case: "text", value: "x" } }] } } } });
      return;
    }
    yield create(StreamResponseSchema, { payload: { case: "task", value: { id: "t", contextId: "c", status: { state: TaskState.WORKING } } } });
    yield create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId: "t", contextId: "c", status: { state: TaskState.COMPLETED } } } });
  },
};

let server: AgentServer;
beforeAll(async () => {
  server = await serveA2AService(handler as A2AServiceHandler, referenceCard, { port: 0, grpcPort: 0, drainMs: 100, compat: { v0_3: true }, tracing: false });
});
afterAll(async () => {
  await server.close();
});

/** A 0.3 SendStreamingMessage (no a2a-version): its events' payload kinds, or its status code. */
function stream03(text: string): Promise<{ events: string[]; code: number }> {
  const Client = grpc.makeGenericClientConstructor(v03GrpcDefinition, "A2AService");
  const client = new Client(server.grpcAddress!, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    sendStreamingMessage(request: unknown): grpc.ClientReadableStream<{ payload: { case: string | undefined } }>;
  };
  const request = create(SendMessageRequest03Schema, { request: { messageId: `m-${text}`, role: Role03.USER, content: [{ part: { case: "text", value: text } }] } });
  const events: string[] = [];
  return new Promise((resolve) => {
    const call = client.sendStreamingMessage(request);
    call.on("data", (e) => events.push(String(e.payload.case)));
    call.on("error", (err: grpc.ServiceError) => {
      client.close();
      resolve({ events, code: err.code });
    });
    call.on("end", () => {
      client.close();
      resolve({ events, code: grpc.status.OK });
    });
  });
}

async function stream10(text: string): Promise<{ events: string[]; code: string }> {
  const client = createA2AServiceGrpcClient(server.grpcAddress!);
  const events: string[] = [];
  try {
    for await (const e of client.sendStreamingMessage({ message: { messageId: `m-${text}`, role: Role.USER, parts: [{ content: { case: "text", value: text } }] } })) events.push(String(e.payload.case));
    return { events, code: "OK" };
  } catch (err) {
    if (!isRpcError(err)) throw err;
    return { events, code: err.entry.grpcStatus };
  } finally {
    client.close();
  }
}

test("a stream that breaks D15 fails on 0.3's service as on 1.0's, with nothing handed on", async () => {
  const v10 = await stream10("bad");
  expect(v10.code).not.toBe("OK");
  expect(v10.events).toEqual([]);
  const v03 = await stream03("bad");
  expect(grpc.status[v03.code]).toBe(v10.code);
  expect(v03.events).toEqual([]);
});

test("a well-formed stream goes through on 0.3's service", async () => {
  expect(await stream03("good")).toEqual({ events: ["task", "statusUpdate"], code: grpc.status.OK });
});
