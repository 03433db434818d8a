// Target "ours-tasks" of bench/tasks.mjs, JSON-RPC: the echo agent on the
// task runtime (./agent.mjs: createA2AServiceTaskHandler, in-memory store)
// behind the generated createA2AServiceJsonRpcListener on node:http, the
// same listener as bench/jsonrpc/server-ours.mjs (which serves a directly
// implemented handler instead).
import { createServer } from "node:http";
import { createA2AServiceJsonRpcListener } from "../.build/generated/a2a_jsonrpc.js";
import { createEchoAgent } from "./agent.mjs";

export function createBenchServer() {
  return createServer(createA2AServiceJsonRpcListener(createEchoAgent()));
}
