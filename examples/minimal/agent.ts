import { textOf } from "protoc-gen-a2a/runtime";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler } from "../../generated/a2a_tasks.js";

// The agent: one function per message. Tasks, streams, history, listing and cancel come with the handler.
const handler = createA2AServiceTaskHandler(async function* ({ message }) {
  yield { artifact: { name: "echo", parts: [{ content: { case: "text", value: `You said: ${textOf(message)}` } }] } };
});

const server = await serveA2AService(handler, {
  name: "Echo", description: "Answers what it is told", version: "1.0.0",
  capabilities: { streaming: true }, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"],
  skills: [{ id: "echo", name: "Echo", description: "Echoes text", tags: ["echo"] }],
}, { port: Number(process.env.PORT ?? 8080), grpcPort: Number(process.env.GRPC_PORT ?? 50051) });
console.log(`Agent card: ${server.cardUrl}`);
