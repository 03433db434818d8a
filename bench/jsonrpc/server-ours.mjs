// Target "ours": the generated createA2AServiceJsonRpcListener on node:http.
// generated/*.ts is TypeScript; the harness transpiles it (type-free,
// ts.transpileModule) into bench/.build/generated/, whose imports of
// "protoc-gen-a2a/runtime" resolve to this package's own dist/runtime (the
// package self-reference), i.e. the runtime exactly as it is shipped.
import { createServer } from "node:http";
import { createA2AServiceJsonRpcListener } from "../.build/generated/a2a_jsonrpc.js";
import { handler } from "../lib/ours-handler.mjs";

export function createBenchServer() {
  return createServer(createA2AServiceJsonRpcListener(handler));
}
