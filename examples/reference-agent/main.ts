/**
 * Starts the reference agent on every binding: `npm start`.
 * PORT (default 8080) serves JSON-RPC, HTTP+JSON and the card; GRPC_PORT
 * (default 50051) serves gRPC; HOST (default 127.0.0.1) is where both listen.
 * PUBLIC_URL is where clients reach it when not at HOST:PORT (a proxy, a container's
 * name), and ALLOWED_HOSTS (comma-separated) more names it answers to (D119).
 * The extended card needs `Authorization: Bearer <A2A_TOKEN>` (default "demo").
 * Both cards are signed with A2A_SIGNING_JWK (a private JWK), or a key made at
 * start; the public key is served at /.well-known/jwks.json.
 * A2A 0.3 clients are served beside 1.0 ones (`compat.v0_3`).
 */
import { serveA2AService } from "../../generated/a2a_server.js";
import { createReferenceAgent } from "./handler.js";
import { bearerAuthenticate, referenceCard, referenceExtendedCard, referenceSigning } from "./config.js";

const port = Number(process.env.PORT ?? 8080);
const grpcPort = Number(process.env.GRPC_PORT ?? 50051);
const host = process.env.HOST ?? "127.0.0.1";
const token = process.env.A2A_TOKEN ?? "demo";

const server = await serveA2AService(createReferenceAgent(referenceExtendedCard), referenceCard, {
  host,
  port,
  grpcPort,
  ...(process.env.PUBLIC_URL ? { publicUrl: process.env.PUBLIC_URL } : {}),
  ...(process.env.ALLOWED_HOSTS ? { allowedHosts: process.env.ALLOWED_HOSTS.split(",").map((h) => h.trim()) } : {}),
  // Anonymous callers may use the agent; the extended card needs the token.
  authenticate: bearerAuthenticate(token),
  // grpc.health.v1 and server reflection: `buf curl --reflect` and health probes work with no .proto files.
  grpc: { health: true, reflection: true, keepalive: { timeMs: 30_000, timeoutMs: 10_000 } },
  // Both cards signed; the JWKS at /.well-known/jwks.json is named by each signature's jku.
  signing: referenceSigning(),
  // A2A 0.3 clients too, on the same endpoints (D110): most clients in use still speak 0.3.
  compat: { v0_3: true },
});

console.log(`Agent card: ${server.cardUrl}`);
console.log(`JSON-RPC:   ${server.jsonRpcUrl}`);
console.log(`HTTP+JSON:  ${server.httpJsonUrl}`);
console.log(`gRPC:       ${server.grpcAddress}`);
console.log(`JWKS:       ${server.jwksUrl}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void server.close().then(() => process.exit(0));
  });
}
