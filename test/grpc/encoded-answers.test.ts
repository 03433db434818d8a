/**
 * A gRPC stream's messages reach grpc-js encoded (the stream encodes them, D33), and its
 * serializer passes such bytes through; a unary answer never comes encoded: bytes a handler
 * returned as its answer are not sent as they are (a review found them passed through, a Task
 * of the handler's choosing on the wire with no encoding check).
 */
import { create, toBinary } from "@bufbuild/protobuf";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { TaskSchema, TaskState } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";

const forged = Buffer.from(toBinary(TaskSchema, create(TaskSchema, { id: "forged", contextId: "c", status: { state: TaskState.COMPLETED } })));
const handler: Partial<A2AServiceHandler> = {
  async getTask() {
    return forged as never;
  },
};
const card = { name: "Bytes", description: "d", version: "1", capabilities: {}, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"], skills: [] };

let server: AgentServer;
beforeAll(async () => {
  server = await serveA2AService(handler as A2AServiceHandler, card, { port: 0, grpcPort: 0, jsonRpcPath: false, httpJsonPath: false, onError: () => undefined });
});
afterAll(() => server.close());

test("a unary handler's Buffer is no encoded answer: the forged Task does not go out", async () => {
  const client = createA2AServiceGrpcClient(server.grpcAddress!);
  try {
    const answer = await client.getTask({ id: "t" }).then(
      (task) => task.id,
      (err: Error) => err.name,
    );
    expect(answer).not.toBe("forged");
  } finally {
    client.close();
  }
});
