/**
 * An agent reachable only over gRPC, served over JSON-RPC and HTTP+JSON:
 * the generated gRPC client has the handler's shape, so it is handed to
 * serveA2AService as the handler. Each call is made on the upstream agent,
 * its answer or error (the same class) goes back to the caller, streams
 * stream through, and a caller who leaves cancels the upstream call.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import type { AgentCardSchema } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";

export interface Bridge {
  readonly server: AgentServer;
  close(): Promise<void>;
}

/** Serves the gRPC agent at `upstream` (`host:port`) under `card` on JSON-RPC and HTTP+JSON. */
export async function serveBridge(upstream: string, card: MessageInitShape<typeof AgentCardSchema>, options: { host?: string; port?: number } = {}): Promise<Bridge> {
  const client = createA2AServiceGrpcClient(upstream);
  const server = await serveA2AService(client, card, { ...options, grpcPort: false });
  return {
    server,
    async close() {
      await server.close();
      client.close();
    },
  };
}
