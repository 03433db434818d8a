// The "protoc-gen-a2a/runtime/server" entry: one call serving an agent on every
// binding. Apart from the main entry since it loads @grpc/grpc-js.
export * from "./a2a/serve.js";
// What serveA2AService (and each endpoint) tells of a handler's unexpected failures.
export type { FailureInfo, Logger, OnError } from "./core/failures.js";
// What the `tracing` option of serveA2AService, the endpoints and the clients takes: `@opentelemetry/api` (D35).
export type { TracingApi } from "./core/tracing.js";
// The `signing` option of serveA2AService (D101).
export type { CardSigningKey, CardSigningOptions, Jwk } from "./a2a/card-signing.js";
export { defaultJwksPath } from "./a2a/card-signing.js";
// The card (and its JWKS) as an endpoint of its own, for an agent mounted in an app's own server (D17).
export { createAgentCardEndpoint } from "./a2a/card-endpoint.js";
export type { AgentCardEndpoint, AgentCardEndpointOptions, MountedCardSigning, MountedInterface } from "./a2a/card-endpoint.js";
