/**
 * Starts the reference agent on every binding: `npm start`.
 * PORT (default 8080) serves JSON-RPC, HTTP+JSON and the card; GRPC_PORT
 * (default 50051) serves gRPC; HOST (default 127.0.0.1) is where both listen.
 * The extended card needs `Authorization: Bearer <A2A_TOKEN>` (default "demo").
 */
import { create } from "@bufbuild/protobuf";
import { UnauthenticatedError } from "../../generated/a2a_errors.js";
import { AgentCardSchema } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createReferenceAgent } from "./agent.js";

const port = Number(process.env.PORT ?? 8080);
const grpcPort = Number(process.env.GRPC_PORT ?? 50051);
const host = process.env.HOST ?? "127.0.0.1";
const token = process.env.A2A_TOKEN ?? "demo";

const card = create(AgentCardSchema, {
  name: "Reference Echo Agent",
  description: "Echoes what it is sent, as a task with a streamed artifact.",
  version: "1.0.0",
  capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "echo", name: "Echo", description: "Echoes the text of a message, word by word", tags: ["echo"] }],
  securitySchemes: { bearer: { scheme: { case: "httpAuthSecurityScheme", value: { scheme: "Bearer" } } } },
});
const extendedCard = create(AgentCardSchema, { ...card, description: `${card.description} (extended card)` });

const server = await serveA2AService(createReferenceAgent(extendedCard), card, {
  host,
  port,
  grpcPort,
  // Anonymous callers may use the agent; the extended card needs the token.
  authenticate: ({ headers }) => {
    const auth = headers.get("authorization");
    if (auth === null) return undefined;
    if (auth !== `Bearer ${token}`) throw new UnauthenticatedError("the bearer token is not valid");
    return { subject: "demo-user" };
  },
});

console.log(`Agent card: ${server.cardUrl}`);
console.log(`JSON-RPC:   ${server.jsonRpcUrl}`);
console.log(`HTTP+JSON:  ${server.httpJsonUrl}`);
console.log(`gRPC:       ${server.grpcAddress}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void server.close().then(() => process.exit(0));
  });
}
