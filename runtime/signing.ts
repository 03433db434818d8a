/**
 * "protoc-gen-a2a/runtime/signing": Signed Agent Cards (spec 8.4). Verifying
 * a card's signatures (what `verifyCard` of a generated client does, D101),
 * and the canonical form they cover (D100), which works for any message.
 * Signing is `serveA2AService`'s `signing` option ("protoc-gen-a2a/runtime/server").
 * jose is loaded only when a card is verified (D102).
 */
export { AgentCardSignatureError, createCardVerifier } from "./a2a/client/card-verification.js";
export type { CardJwksOptions, CardSignaturePolicy, CardSignatureProblem, CardVerificationOptions, CardVerifier, VerifiedSignature } from "./a2a/client/card-verification.js";
export type { CardSigningKey, CardSigningOptions, Jwk } from "./a2a/card-signing.js";
export { canonicalJson, JcsError } from "./core/jcs.js";
export { presenceJson, presenceJsonOf, PresenceJsonError } from "./core/codec/presence-json.js";
export type { PresenceJsonOptions } from "./core/codec/presence-json.js";
