// Target "ours": the generated createA2AServiceHttpJsonListener on node:http
// (generated code transpiled into bench/.build/generated/ over dist/runtime,
// see bench/lib/harness.mjs), with the same handler as the JSON-RPC bench.
import { createServer } from "node:http";
import { createA2AServiceHttpJsonListener } from "../.build/generated/a2a_http.js";
import { handler } from "../lib/ours-handler.mjs";

export function createBenchServer() {
  return createServer(createA2AServiceHttpJsonListener(handler));
}
