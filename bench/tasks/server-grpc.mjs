// Target "ours-tasks" of bench/tasks.mjs, gRPC: the echo agent on the task
// runtime (./agent.mjs) added with the generated addA2AServiceToServer on a
// grpc-js Server, as bench/grpc/server-ours.mjs adds the directly
// implemented handler. The Server is createGrpcServer()'s, the one the README
// builds and serveA2AService serves on (its limits, channelz off: D80).
import { ServerCredentials } from "@grpc/grpc-js";
import { createGrpcServer } from "protoc-gen-a2a/runtime/grpc";
import { addA2AServiceToServer } from "../.build/generated/a2a_grpc.js";
import { listen } from "../grpc/listen.mjs";
import { createEchoAgent } from "./agent.mjs";

export function startBenchServer() {
  const server = createGrpcServer();
  addA2AServiceToServer(server, createEchoAgent());
  return listen(server, ServerCredentials);
}
