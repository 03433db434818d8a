/**
 * The public Agent Card as an endpoint of its own (D17), for an agent mounted
 * in an express, fastify, Hono or node:http app rather than served by
 * serveA2AService: the same card that server serves (interfaces filled in,
 * 0.3's fields with compat, D111; signed, D101), with the same caching
 * (ETag, Cache-Control, Last-Modified, 304), mounted with any adapter as the
 * generated JSON-RPC and HTTP+JSON endpoints are. serveA2AService builds its
 * card with `servedCard` below too.
 */
import { create, toJson, type DescMessage, type JsonObject, type MessageInitShape } from "@bufbuild/protobuf";
import type { Endpoint } from "../core/transport.js";
import { agentCardPath, checkMaxAgeSeconds, isAbsoluteHttpUrl, createStaticJsonEndpoint, policyOf, withInterfaces, withServedInterfaces, type MountedInterface } from "./agent-card.js";
import { createCardSigner, type CardSigner, type CardSigningKey } from "./card-signing.js";
import { v03CardFields } from "./compat/v03-card.js";
import type { AgentPolicy } from "./policy.js";
import type { CompatOptions } from "./profile.js";

export type { MountedInterface } from "./agent-card.js";

/** `createAgentCardEndpoint`'s `signing`: serveA2AService's, with the JWKS's URL where the app serves it. */
export interface MountedCardSigning {
  /** The keys; each adds one signature to the card (more than one while keys rotate). */
  readonly keys: readonly CardSigningKey[];
  /** The absolute URL at which the app serves the endpoint's `jwks`: what a key's `jku: true` names. */
  readonly jwksUrl?: string;
}

export interface AgentCardEndpointOptions {
  /**
   * Where the app serves the agent, the preferred first: `{ binding: "JSONRPC", url:
   * "https://agent.example.com/a2a/jsonrpc" }`, `HTTP+JSON` at its base path, `GRPC` as
   * `host:port`. The card's `supportedInterfaces` is made of them as serveA2AService makes it
   * (D17): protocol version 1.0, the tenant the card declares for the binding, the card's own
   * custom bindings after them. Without it the card's `supportedInterfaces` is served as given.
   */
  readonly interfaces?: readonly MountedInterface[];
  /** `Cache-Control: max-age`, in seconds. Default 300. */
  readonly maxAgeSeconds?: number;
  /** Signs the card with each key (spec 8.4, D101); the endpoint's `jwks` serves their public keys. */
  readonly signing?: MountedCardSigning;
  /**
   * `v0_3`: the JSON-RPC and HTTP+JSON interfaces listed again as 0.3, and 0.3's card fields
   * (`url`, `preferredTransport`, `additionalInterfaces`, ...) beside 1.0's (D111), for endpoints
   * made with the same `compat` option. Needs `interfaces`.
   */
  readonly compat?: CompatOptions;
}

/** The card's endpoint: GET and HEAD of the card at whatever path it is mounted (`/.well-known/agent-card.json`). */
export interface AgentCardEndpoint extends Endpoint {
  /** The card as served: interfaces, 0.3's fields and signatures included. */
  readonly card: JsonObject;
  /**
   * What the card says, as the JSON endpoints' `policy` (D18): its capabilities gate their RPCs,
   * its required extensions are asked for, its security schemes give a 401's challenge, as
   * serveA2AService does from its card. Pass it on with the app's `authenticate`:
   * `createA2AServiceJsonRpcEndpoint(handler, { policy: { ...card.policy, authenticate } })`.
   */
  readonly policy: Pick<AgentPolicy, "capabilities" | "requiredExtensions" | "challenge">;
  /** With `signing`, the keys' JWKS (`application/jwk-set+json`), to mount at `signing.jwksUrl`; else undefined. */
  readonly jwks: Endpoint | undefined;
}

/**
 * The public card of an agent whose endpoints the app mounts itself, as an
 * endpoint: `schema` is the generated AgentCardSchema (what the card is read,
 * and signed, as). Async, since keys are checked and the card signed first.
 */
export async function createAgentCardEndpoint<Desc extends DescMessage>(schema: Desc, card: MessageInitShape<Desc>, options: AgentCardEndpointOptions = {}): Promise<AgentCardEndpoint> {
  const v03 = options.compat?.v0_3 === true;
  const given = options.interfaces;
  checkMaxAgeSeconds(options.maxAgeSeconds, "createAgentCardEndpoint: maxAgeSeconds");
  if (v03 && given === undefined) {
    throw new Error("createAgentCardEndpoint: compat.v0_3 lists each JSON-RPC and HTTP+JSON interface again as 0.3: name them in `interfaces`");
  }
  for (const [i, m] of (given ?? []).entries()) {
    if (m.binding !== "GRPC" && !isAbsoluteHttpUrl(m.url)) throw new Error(`createAgentCardEndpoint: interfaces[${i}].url must be an absolute http(s) URL, e.g. "https://agent.example.com/a2a/jsonrpc", got ${JSON.stringify(m.url)}`);
  }
  // 0.3's fields name a JSON interface (D111): with only gRPC's, 0.3 callers would be sent to a gRPC port where an app serves no 0.3 service (D113).
  if (v03 && given !== undefined && given.every((m) => m.binding === "GRPC")) {
    throw new Error("createAgentCardEndpoint: compat.v0_3 needs a JSONRPC or HTTP+JSON interface in `interfaces`: 0.3 is served on the JSON bindings of a mounted agent, and 0.3's gRPC service by serveA2AService only");
  }
  const jwksUrl = options.signing?.jwksUrl;
  // What a key's `jku: true` names, and a verifier fetches: relative, it names nothing a verifier can resolve.
  if (jwksUrl !== undefined && !isAbsoluteHttpUrl(jwksUrl)) {
    throw new Error(`createAgentCardEndpoint: signing.jwksUrl must be an absolute http(s) URL, e.g. "https://agent.example.com/.well-known/jwks.json", got ${JSON.stringify(jwksUrl)}`);
  }
  if (options.signing?.keys.some((k) => k.jku === true) === true && jwksUrl === undefined) {
    throw new Error("createAgentCardEndpoint: a key's jku is true (the JWKS this app serves), but signing.jwksUrl does not say where: pass the URL the endpoint's jwks is mounted at");
  }
  const signer = options.signing === undefined ? undefined : await createCardSigner(schema, { keys: options.signing.keys }, () => jwksUrl);
  const json = toJson(schema, create(schema, card)) as JsonObject;
  // 0.3 is served on the JSON bindings (D110); a 0.3 gRPC service only by serveA2AService (D113).
  const mounted = given === undefined ? undefined : v03 ? [...given, ...given.filter((m) => m.binding !== "GRPC").map((m) => ({ ...m, protocolVersion: "0.3" }))] : given;
  const served = await servedCard(json, mounted, { v03, signer });
  const cache = options.maxAgeSeconds === undefined ? {} : { maxAgeSeconds: options.maxAgeSeconds };
  const endpoint = createStaticJsonEndpoint(agentCardPath, served, cache);
  const jwks = signer === undefined ? undefined : createStaticJsonEndpoint(jwksUrl === undefined ? "/.well-known/jwks.json" : new URL(jwksUrl).pathname, signer.jwks as unknown as JsonObject, { ...cache, contentType: "application/jwk-set+json" });
  return { handle: async (req) => endpoint.handle(req), card: served, policy: policyOf(served), jwks: jwks === undefined ? undefined : { handle: async (req) => jwks.handle(req) } };
}

/**
 * The public card as served (D17, D101, D111): `supportedInterfaces` made of
 * `mounted` (none: as the card has it), with `v03` 0.3's fields beside, and
 * signed when there is a signer. The card served is the form that was signed,
 * so a verifier of these bytes computes what the signer did.
 */
export async function servedCard(card: JsonObject, mounted: readonly MountedInterface[] | undefined, serving: { readonly v03: boolean; readonly signer: CardSigner | undefined }): Promise<JsonObject> {
  const interfaces = mounted ?? [];
  // D111: 0.3's own fields beside the 1.0 card (none is a 1.0 field), signed with it.
  const beside = serving.v03 ? v03CardFields(withInterfaces(card, interfaces, "1.0"), "jsonrpc") : {};
  // Another agent's card passed on (a bridge) loses the signatures that covered it as it was (D101).
  const unsigned = mounted === undefined ? card : withServedInterfaces(card, interfaces, "1.0", beside);
  return serving.signer === undefined ? { ...unsigned, ...beside } : serving.signer.sign(unsigned, beside);
}
