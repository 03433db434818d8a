/**
 * The agent of test/grpc/http2-floods.test.ts, in a process of its own so
 * its heap is its own to measure: the generated task handler (an echo that
 * answers with a message, so no task is stored) served by serveA2AService
 * with the gRPC settings in $GRPC_OPTIONS (JSON; the defaults when absent,
 * as the test runs it).
 * Run by `fork` with `--import test/support/ts-loader.mjs --expose-gc`. It
 * sends `{ grpcAddress }` once listening and answers on IPC:
 * "heap" with `{ heapUsed }` after two full collections, "close" by closing
 * and disconnecting.
 */
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler } from "../../generated/a2a_tasks.js";
import { Role } from "../../generated/a2a_pb.js";

const send = (message: object) => process.send?.(message);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined || process.send === undefined) throw new Error("flood-agent.ts runs forked, with --expose-gc");

const handler = createA2AServiceTaskHandler(async function* ({ message }) {
  yield { reply: { messageId: crypto.randomUUID(), role: Role.AGENT, parts: message.parts } };
});
const server = await serveA2AService(
  handler,
  {
    name: "Flood target",
    description: "Echoes; its heap is measured",
    version: "1.0.0",
    capabilities: { streaming: true },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "echo", name: "Echo", description: "Echoes", tags: ["echo"] }],
  },
  { host: "127.0.0.1", port: 0, grpcPort: 0, drainMs: 100, grpc: JSON.parse(process.env.GRPC_OPTIONS ?? "{}") },
);

process.on("message", (message) => {
  if (message === "heap") {
    gc();
    gc();
    send({ heapUsed: process.memoryUsage().heapUsed });
  } else if (message === "close") {
    void server.close().then(() => process.disconnect());
  }
});
send({ grpcAddress: server.grpcAddress });
