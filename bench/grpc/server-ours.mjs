// Target "ours": the generated addA2AServiceToServer on a grpc-js Server,
// with the handler of every binding (bench/lib/ours-handler.mjs: SendMessage
// answers a completed Task echoing the text). The generated TypeScript is
// transpiled by the harness into bench/.build/generated/, whose
// "protoc-gen-a2a/runtime/grpc" import resolves to dist/runtime/grpc.js. The
// Server is createGrpcServer()'s, as the README builds it (channelz off: D80).
import { ServerCredentials } from "@grpc/grpc-js";
import { createGrpcServer } from "protoc-gen-a2a/runtime/grpc";
import { addA2AServiceToServer } from "../.build/generated/a2a_grpc.js";
import { handler } from "../lib/ours-handler.mjs";
import { listen } from "./listen.mjs";

export function startBenchServer() {
  const server = createGrpcServer();
  addA2AServiceToServer(server, handler);
  return listen(server, ServerCredentials);
}
