// Target "ours-tasks" of bench/tasks.mjs, HTTP+JSON: the echo agent on the
// task runtime (./agent.mjs) behind the generated
// createA2AServiceHttpJsonListener on node:http, as bench/http-json/
// server-ours.mjs serves the directly implemented handler.
import { createServer } from "node:http";
import { createA2AServiceHttpJsonListener } from "../.build/generated/a2a_http.js";
import { createEchoAgent } from "./agent.mjs";

export function createBenchServer() {
  return createServer(createA2AServiceHttpJsonListener(createEchoAgent()));
}
