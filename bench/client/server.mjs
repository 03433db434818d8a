// The one server of bench/client.mjs, run by bench/lib/serve.mjs: this
// project's serveA2AService (generated a2a_server.ts + dist/runtime) on every
// binding at once (JSON-RPC and HTTP+JSON on one node:http port, gRPC on its
// own), with a directly implemented handler: the unary one of the other
// benchmarks (bench/lib/ours-handler.mjs: SendMessage answers a completed
// Task echoing the text) and the streaming one of bench/streams
// (bench/streams/ours-handler.mjs: "stream <N>" answers a working Task then N
// artifact chunks). Every client target of the benchmark, ours and
// @a2a-js/sdk's, calls this same server; its card (with capabilities.streaming,
// which the SDK's client checks before it streams) lists the three interfaces.
import { serveA2AService } from "../.build/generated/a2a_server.js";
import { handler as unary } from "../lib/ours-handler.mjs";
import { handler as streaming } from "../streams/ours-handler.mjs";

export const card = {
  name: "client bench",
  description: "the benchmark agent of bench/client.mjs",
  version: "1.0.0",
  capabilities: { streaming: true },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
};

const handler = { sendMessage: unary.sendMessage, getTask: unary.getTask, sendStreamingMessage: streaming.sendStreamingMessage };

export async function startBenchServer() {
  const server = await serveA2AService(handler, card, { host: "127.0.0.1", port: 0, grpcPort: 0, drainMs: 0 });
  return {
    port: Number(new URL(server.cardUrl).port),
    close: () => server.close(),
    info: { cardUrl: server.cardUrl, jsonRpcUrl: server.jsonRpcUrl, httpJsonUrl: server.httpJsonUrl, grpcAddress: server.grpcAddress },
  };
}
