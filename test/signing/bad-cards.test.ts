/**
 * What a card verifier refuses, and why (D101): a card changed in any field,
 * a signature moved to another card, `alg: none`, an HMAC made with the
 * public key (algorithm confusion), an unknown kid, a jku inside the network
 * or on another origin (never fetched: the JWKS server counts its requests),
 * truncated base64url, a huge card; and the signing options a server refuses
 * before it listens.
 */
import { jest } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { JsonObject } from "@bufbuild/protobuf";
import { exportJWK, FlattenedSign, generateKeyPair, type JWK } from "jose";
import { isRpcError } from "protoc-gen-a2a/runtime";
import { AgentCardSignatureError, createCardVerifier, type CardSignatureProblem } from "protoc-gen-a2a/runtime/signing";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { createA2AServiceClient } from "../../generated/a2a_client.js";
import { AgentCardSchema } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";

jest.setTimeout(30_000);

const cardInit = {
  name: "Bad Input Agent",
  description: "Signs its card",
  version: "1.0.0",
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "a", name: "A", description: "a", tags: ["a"] }],
};

let server: AgentServer;
let otherServer: AgentServer;
let privateJwk: JWK;
let publicJwk: JWK;
let signedCard: JsonObject;
let otherCard: JsonObject;

// A JWKS server that counts what it is asked: a refused jku must leave it at zero.
let jwksServer: Server;
let jwksUrl: string;
let jwksRequests = 0;

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  privateJwk = await exportJWK(privateKey);
  publicJwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256" };
  const signing = { keys: [{ privateKey: privateJwk, alg: "ES256", kid: "k1" }] } as const;
  server = await serveA2AService({}, cardInit, { port: 0, grpcPort: false, signing });
  otherServer = await serveA2AService({}, { ...cardInit, name: "Another Agent" }, { port: 0, grpcPort: false, signing });
  signedCard = (await (await fetch(server.cardUrl)).json()) as JsonObject;
  otherCard = (await (await fetch(otherServer.cardUrl)).json()) as JsonObject;
  jwksServer = createServer((_req, res) => {
    jwksRequests++;
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve));
  jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;
});
afterAll(async () => {
  await Promise.all([server.close(), otherServer.close(), new Promise((resolve) => jwksServer.close(resolve))]);
});

const trusting = () => createCardVerifier(AgentCardSchema, { keys: [publicJwk] });

/** The refusal of `card`: its class, reason and the problem of its first signature. */
async function refusal(card: JsonObject, verifier = trusting(), cardUrl?: string): Promise<{ reason: string; problem: CardSignatureProblem | undefined; message: string }> {
  // A card is refused with this class and nothing else, whatever is wrong with it.
  const error = await verifier.verify(card, cardUrl).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AgentCardSignatureError);
  const e = error as AgentCardSignatureError;
  return { reason: e.reason, problem: e.failures[0]?.problem, message: e.message };
}

const signatureOf = (card: JsonObject) => (card.signatures as JsonObject[])[0]!;
const withSignature = (card: JsonObject, signature: JsonObject): JsonObject => ({ ...card, signatures: [signature] });
const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

test("the card as served verifies (the baseline of every refusal below)", async () => {
  await expect(trusting().verify(signedCard)).resolves.toEqual({ kid: "k1", alg: "ES256" });
});

test.each<[string, (card: JsonObject) => JsonObject]>([
  ["name", (c) => ({ ...c, name: "Bad Input Agent!" })],
  ["description emptied (a REQUIRED field at its default)", (c) => ({ ...c, description: "" })],
  ["version removed", ({ version: _version, ...c }) => c],
  ["an optional capability flipped", (c) => ({ ...c, capabilities: { streaming: true, pushNotifications: true } })],
  ["an optional capability left out", (c) => ({ ...c, capabilities: { streaming: true } })],
  ["a skill's tag", (c) => ({ ...c, skills: [{ ...(c.skills as JsonObject[])[0], tags: ["b"] }] })],
  ["an interface URL", (c) => ({ ...c, supportedInterfaces: [{ ...(c.supportedInterfaces as JsonObject[])[0], url: "http://evil.example/a2a" }] })],
  ["a field this proto does not know added", (c) => ({ ...c, futureField: "x" })],
  ["documentationUrl added, even empty (optional, so present counts)", (c) => ({ ...c, documentationUrl: "" })],
])("a card with %s is refused as invalid", async (_what, change) => {
  const result = await refusal(change(signedCard));
  expect(result).toMatchObject({ reason: "invalid", problem: "invalid-signature" });
  expect(result.message).toMatch(/has no valid signature \(signature 0: it does not verify/);
});

test("a field left out that is at its default anyway changes nothing (defaultOutputModes order does)", async () => {
  // supportedInterfaces' tenant is not set; writing it "" is its default, which the canonical form leaves out.
  const interfaces = (signedCard.supportedInterfaces as JsonObject[]).map((i) => ({ ...i, tenant: "" }));
  await expect(trusting().verify({ ...signedCard, supportedInterfaces: interfaces })).resolves.toBeDefined();
  expect((await refusal({ ...signedCard, defaultOutputModes: ["text/plain", "text/plain"] })).problem).toBe("invalid-signature");
});

test("a signature moved to another card is refused", async () => {
  expect(await refusal(withSignature(otherCard, signatureOf(signedCard)))).toMatchObject({ reason: "invalid", problem: "invalid-signature" });
});

test("alg none is refused whatever the key, and so is an HMAC made with the public key as its secret (algorithm confusion)", async () => {
  const none = withSignature(signedCard, { protected: b64({ alg: "none", typ: "JOSE", kid: "k1" }), signature: "AAAA" });
  const result = await refusal(none);
  expect(result).toMatchObject({ reason: "invalid", problem: "algorithm" });
  expect(result.message).toContain('alg "none" is not accepted');
  const noSignature = withSignature(signedCard, { protected: b64({ alg: "none", typ: "JOSE", kid: "k1" }), signature: "" });
  expect((await refusal(noSignature)).problem).toBe("malformed");

  // HS256 keyed with the bytes of the public JWK a verifier trusts.
  const { canonicalJson, presenceJson } = await import("protoc-gen-a2a/runtime/signing");
  const payload = new TextEncoder().encode(canonicalJson(presenceJson(AgentCardSchema, signedCard, { omit: ["signatures"] })));
  const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
  const hmac = await new FlattenedSign(payload).setProtectedHeader({ alg: "HS256", typ: "JOSE", kid: "k1" }).sign(secret);
  expect(await refusal(withSignature(signedCard, { protected: hmac.protected!, signature: hmac.signature }))).toMatchObject({ problem: "algorithm" });
  // A verifier cannot be configured into it either.
  expect(() => createCardVerifier(AgentCardSchema, { algorithms: ["HS256"] })).toThrow(/never none or an HMAC/);
  expect(() => createCardVerifier(AgentCardSchema, { algorithms: ["none"] })).toThrow(/never none or an HMAC/);
  expect(() => createCardVerifier(AgentCardSchema, { keys: [privateJwk as JWK & { kid: string }] })).toThrow(/has no kid/);
  expect(() => createCardVerifier(AgentCardSchema, { keys: [{ ...privateJwk, kid: "p" }] })).toThrow(/must be a public key/);
});

test("a key trusted for another algorithm is not used for this one", async () => {
  const verifier = createCardVerifier(AgentCardSchema, { keys: [{ ...publicJwk, alg: "ES384" }] });
  const result = await refusal(signedCard, verifier);
  expect(result.problem).toBe("algorithm");
  expect(result.message).toContain("is for ES384, the signature says ES256");
});

test("an unknown kid is refused, and without a jku nothing is fetched", async () => {
  const before = jwksRequests;
  const verifier = createCardVerifier(AgentCardSchema, { keys: [{ ...publicJwk, kid: "someone-else" }] });
  const result = await refusal(signedCard, verifier);
  expect(result).toMatchObject({ reason: "invalid", problem: "unknown-key" });
  expect(result.message).toContain('no trusted key has kid "k1"');
  expect(jwksRequests).toBe(before);
});

/** The served card re-signed with the test's key and a jku of its choosing. */
async function signedWithJku(jku: string): Promise<JsonObject> {
  const { canonicalJson, presenceJson } = await import("protoc-gen-a2a/runtime/signing");
  const payload = new TextEncoder().encode(canonicalJson(presenceJson(AgentCardSchema, signedCard, { omit: ["signatures"] })));
  const { importJWK } = await import("jose");
  const jws = await new FlattenedSign(payload).setProtectedHeader({ alg: "ES256", typ: "JOSE", kid: "k1", jku }).sign(await importJWK(privateJwk, "ES256"));
  return withSignature(signedCard, { protected: jws.protected!, signature: jws.signature });
}

test("a jku inside the network is refused by the SSRF guard, and nothing is fetched", async () => {
  const card = await signedWithJku(jwksUrl);
  const before = jwksRequests;
  // The card claims to come from the JWKS server's origin, so the jku is trusted as same-origin; the guard still refuses loopback.
  const result = await refusal(card, createCardVerifier(AgentCardSchema, {}), new URL(jwksUrl).origin + "/.well-known/agent-card.json");
  expect(result).toMatchObject({ reason: "invalid", problem: "jwks-unavailable" });
  expect(result.message).toMatch(/refused by the SSRF guard: 127\.0\.0\.1 is loopback/);
  expect(jwksRequests).toBe(before);
  // Allowed by the caller, the same card verifies, with one fetch, then from the cache.
  const allowed = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"] } });
  const cardUrl = new URL(jwksUrl).origin + "/.well-known/agent-card.json";
  await expect(allowed.verify(card, cardUrl)).resolves.toEqual({ kid: "k1", alg: "ES256", jku: jwksUrl });
  await expect(allowed.verify(card, cardUrl)).resolves.toBeDefined();
  expect(jwksRequests).toBe(before + 1);
});

test("a jku on another origin than the card's is not fetched unless listed in jwks.urls", async () => {
  const card = await signedWithJku(jwksUrl);
  const before = jwksRequests;
  const verifier = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"] } });
  const result = await refusal(card, verifier, "https://agent.example/.well-known/agent-card.json");
  expect(result).toMatchObject({ problem: "jku-refused" });
  expect(result.message).toContain("is neither on the card's origin nor in verifyCard.jwks.urls");
  // With trusted keys and no jwks option, no jku is ever fetched.
  expect((await refusal(card, createCardVerifier(AgentCardSchema, { keys: [{ ...publicJwk, kid: "other" }] }), new URL(jwksUrl).origin)).problem).toBe("jku-refused");
  expect(jwksRequests).toBe(before);
  const listed = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"], urls: [jwksUrl], cacheMs: 0 } });
  await expect(listed.verify(card, "https://agent.example/.well-known/agent-card.json")).resolves.toBeDefined();
  expect(jwksRequests).toBe(before + 1);
});

test("truncated or non-base64url values are refused as malformed or invalid, never thrown as something else", async () => {
  const { protected: protectedHeader, signature } = signatureOf(signedCard) as { protected: string; signature: string };
  expect((await refusal(withSignature(signedCard, { protected: protectedHeader.slice(0, -5), signature }))).problem).toBe("malformed");
  expect((await refusal(withSignature(signedCard, { protected: protectedHeader, signature: signature.slice(0, -2) }))).problem).toBe("invalid-signature");
  expect((await refusal(withSignature(signedCard, { protected: protectedHeader, signature: signature.slice(0, -1) }))).problem).toBe("malformed");
  expect((await refusal(withSignature(signedCard, { protected: protectedHeader, signature: `${signature}==` }))).problem).toBe("malformed");
  expect((await refusal(withSignature(signedCard, { protected: `${protectedHeader}.x`, signature }))).problem).toBe("malformed");
  expect((await refusal({ ...signedCard, signatures: ["just a string"] } as JsonObject)).problem).toBe("malformed");
});

test("a huge card is refused: by the client before it is parsed, by the verifier before it is checked", async () => {
  const huge = { ...signedCard, description: "x".repeat(2 << 20) };
  const hugeServer = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(huge)));
  await new Promise<void>((resolve) => hugeServer.listen(0, "127.0.0.1", resolve));
  try {
    const url = `http://127.0.0.1:${(hugeServer.address() as AddressInfo).port}/.well-known/agent-card.json`;
    const error = await createA2AServiceClient(url, { verifyCard: { keys: [publicJwk] } }).catch((e: unknown) => e);
    expect(isRpcError(error) && error.entry.grpcStatus).toBe("RESOURCE_EXHAUSTED");
    expect((error as Error).message).toContain("is larger than 1048576 bytes (maxCardBytes)");
  } finally {
    await new Promise((resolve) => hugeServer.close(resolve));
  }
  expect(await refusal(huge)).toMatchObject({ reason: "too-large" });
});

test("a card with no canonical form (a field of the wrong JSON type, data nested past any real card) is refused as malformed", async () => {
  expect(await refusal({ ...signedCard, skills: "all of them" })).toMatchObject({ reason: "malformed" });
  let deep: JsonObject = {};
  for (let i = 0; i < 2000; i++) deep = { d: deep };
  const card = { ...signedCard, capabilities: { extensions: [{ uri: "x", params: deep }] } };
  const result = await refusal(card);
  expect(result.reason).toBe("malformed");
  expect(result.message).toMatch(/nested more than 500 levels deep/);
});

test("a server refuses signing options it cannot honour before it listens, naming the option", async () => {
  const serve = (signing: object) => serveA2AService({}, cardInit, { port: 0, grpcPort: false, signing: signing as never });
  await expect(serve({ keys: [] })).rejects.toThrow("signing.keys must list at least one key");
  await expect(serve({ keys: [{ privateKey: privateJwk, alg: "none", kid: "k" }] })).rejects.toThrow(/signing\.keys\[0\]\.alg is "none"/);
  await expect(serve({ keys: [{ privateKey: privateJwk, alg: "HS256", kid: "k" }] })).rejects.toThrow(/never none or an HMAC/);
  await expect(serve({ keys: [{ privateKey: privateJwk, alg: "ES256", kid: "" }] })).rejects.toThrow(/signing\.keys\[0\]\.kid must be a non-empty string/);
  await expect(serve({ keys: [{ privateKey: publicJwk, alg: "ES256", kid: "k" }] })).rejects.toThrow(/is a public key; signing needs the private key/);
  await expect(serve({ keys: [{ privateKey: privateJwk, alg: "RS256", kid: "k" }] })).rejects.toThrow(/signing\.keys\[0\]: the key cannot sign RS256/);
  await expect(serve({ keys: [{ privateKey: privateJwk, alg: "ES256", kid: "k", jku: true }], jwksPath: false })).rejects.toThrow(/jku is true .* but signing.jwksPath is false/);
  await expect(serve({ keys: [{ privateKey: privateJwk, alg: "ES256", kid: "k", jku: "not a url" }] })).rejects.toThrow(/jku "not a url" is not an absolute URL/);
});
