/**
 * The reference agent's public card, its extended card, its bearer-token
 * authentication rule and its signing key, shared by main.ts and the equivalence suite
 * (test/equivalence) so both serve the same agent.
 */
import { generateKeyPairSync } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { CardSigningOptions, Jwk } from "protoc-gen-a2a/runtime/server";
import { UnauthenticatedError } from "protoc-gen-a2a/runtime";
import { AgentCardSchema, type AgentCard } from "../../generated/a2a_pb.js";
import type { AuthRequest } from "protoc-gen-a2a/runtime";

/** The public card: streaming, push notifications and an extended card for authenticated callers. */
export const referenceCard: AgentCard = create(AgentCardSchema, {
  name: "Reference Echo Agent",
  description: "Echoes what it is sent, as a task with a streamed artifact.",
  version: "1.0.0",
  capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "echo", name: "Echo", description: "Echoes the text of a message, word by word", tags: ["echo"] }],
  securitySchemes: { bearer: { scheme: { case: "httpAuthSecurityScheme", value: { scheme: "Bearer" } } } },
});

/** What GetExtendedAgentCard hands an authenticated caller. */
export const referenceExtendedCard: AgentCard = create(AgentCardSchema, {
  ...referenceCard,
  description: `${referenceCard.description} (extended card)`,
});

/**
 * Anonymous callers may use the agent; `Authorization: Bearer <token>` makes
 * the caller "demo-user" (needed for the extended card); any other
 * Authorization header is UnauthenticatedError.
 */
export function bearerAuthenticate(token: string) {
  return ({ headers }: AuthRequest): { subject: string } | undefined => {
    const auth = headers.get("authorization");
    if (auth === null) return undefined;
    if (auth !== `Bearer ${token}`) throw new UnauthenticatedError("the bearer token is not valid");
    return { subject: "demo-user" };
  };
}

/**
 * How the reference agent signs its cards (D101): with the private JWK in
 * A2A_SIGNING_JWK (its `kid` and `alg`, else "reference-agent" and ES256),
 * or with a P-256 key made at start. Both cards carry a signature whose
 * `jku` is the agent's own JWKS, so a caller can verify against `npm start`.
 */
export function referenceSigning(env: Readonly<Record<string, string | undefined>> = process.env): CardSigningOptions {
  const given = env["A2A_SIGNING_JWK"];
  if (given === undefined || given === "") {
    return { keys: [{ privateKey: generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey, alg: "ES256", kid: "reference-agent", jku: true }] };
  }
  let jwk: Jwk;
  try {
    jwk = JSON.parse(given) as Jwk;
  } catch {
    throw new Error("A2A_SIGNING_JWK must be a private JWK as JSON");
  }
  return { keys: [{ privateKey: jwk, alg: typeof jwk.alg === "string" ? jwk.alg : "ES256", kid: typeof jwk.kid === "string" ? jwk.kid : "reference-agent", jku: true }] };
}
