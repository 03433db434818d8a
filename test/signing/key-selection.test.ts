/**
 * Which key verifies a card's signature (D101): among the keys with its kid,
 * one that can verify its alg (kty, curve), published for signatures (`use`
 * absent or "sig", `key_ops` absent or with "verify") and whose own `alg`, if
 * any, is the header's, as jose's JWKS selection has it; each that fits is
 * tried. The verifier took the first key with the kid: an RSA and an EC key
 * under one kid (RFC 7517 4.5) refused a valid card, an encryption key
 * verified one. And a trusted key's signature does not claim the header's jku.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { exportJWK, FlattenedSign, generateKeyPair, type JWK } from "jose";
import { AgentCardSignatureError, canonicalJson, createCardVerifier, presenceJson } from "protoc-gen-a2a/runtime/signing";
import { AgentCardSchema } from "../../generated/a2a_pb.js";
import { serveJwks, type JwksServer } from "../support/jwks-server.js";

let jwks: JwksServer;
let base = "";
let published: JWK[] = [];
let requests = 0;
beforeAll(async () => {
  jwks = await serveJwks(
    () => published,
    () => requests++,
  );
  base = jwks.base;
});
afterAll(() => jwks.close());

const card: JsonObject = { name: "X", description: "d", version: "1", capabilities: {}, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"], skills: [] };
const cardUrl = () => `${base}/.well-known/agent-card.json`;
const jwksUrl = () => `${base}/jwks.json`;

async function publicOf(alg: string, kid = "k1", extra: Partial<JWK> = {}): Promise<JWK & { kid: string }> {
  const { publicKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(publicKey)), kid, ...extra };
}

/** The card signed ES256 under kid k1 with a jku at the test's JWKS, and the signing key's public JWK. */
async function signedCard(): Promise<{ signed: JsonObject; key: JWK & { kid: string } }> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const payload = new TextEncoder().encode(canonicalJson(presenceJson(AgentCardSchema, card)));
  const jws = await new FlattenedSign(payload).setProtectedHeader({ alg: "ES256", kid: "k1", jku: jwksUrl() }).sign(privateKey);
  return { signed: { ...card, signatures: [{ protected: jws.protected!, signature: jws.signature }] }, key: { ...(await exportJWK(publicKey)), kid: "k1" } };
}

const fetching = () => createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"], cacheMs: 0 } });
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => {
      expect(err).toBeInstanceOf(AgentCardSignatureError);
      return (err as AgentCardSignatureError).failures[0];
    },
  );

test("an RSA and an EC key under one kid (RFC 7517 4.5): the EC one verifies an ES256 signature, first or not", async () => {
  const { signed, key } = await signedCard();
  const rsa = await publicOf("RS256");
  for (const keys of [[rsa, key], [key, rsa]]) {
    published = keys;
    await expect(fetching().verify(signed, cardUrl())).resolves.toEqual({ kid: "k1", alg: "ES256", jku: jwksUrl() });
    await expect(createCardVerifier(AgentCardSchema, { keys }).verify(signed)).resolves.toEqual({ kid: "k1", alg: "ES256" });
  }
});

test("an old and a new key under one kid: each is tried, and a card signed by neither says it verified with none of them", async () => {
  const { signed, key } = await signedCard();
  const old = await publicOf("ES256");
  published = [old, key];
  await expect(fetching().verify(signed, cardUrl())).resolves.toMatchObject({ kid: "k1" });
  published = [old, await publicOf("ES256")];
  expect(await refusal(fetching().verify(signed, cardUrl()))).toMatchObject({ problem: "invalid-signature", message: expect.stringContaining('verifies with none of the 2 keys with kid "k1"') });
});

test('a key published for encryption (use "enc", or key_ops without "verify") does not verify a card it signed', async () => {
  const { signed, key } = await signedCard();
  published = [{ ...key, use: "enc" }];
  expect(await refusal(fetching().verify(signed, cardUrl()))).toMatchObject({ problem: "unknown-key", message: expect.stringContaining('published for "enc"') });
  published = [{ ...key, key_ops: ["encrypt"] }];
  expect(await refusal(fetching().verify(signed, cardUrl()))).toMatchObject({ problem: "unknown-key", message: expect.stringContaining("key_ops") });
  // As trusted keys too; and use "sig" with key_ops ["verify"] is what a signing key says.
  expect(await refusal(createCardVerifier(AgentCardSchema, { keys: [{ ...key, use: "enc" }] }).verify(signed))).toMatchObject({ problem: "unknown-key" });
  published = [{ ...key, use: "sig", key_ops: ["verify"], alg: "ES256" }];
  await expect(fetching().verify(signed, cardUrl())).resolves.toMatchObject({ kid: "k1" });
});

test("a key of another curve, or another type, is refused as the wrong algorithm's, saying what it is", async () => {
  const { signed } = await signedCard();
  published = [await publicOf("ES384")];
  expect(await refusal(fetching().verify(signed, cardUrl()))).toMatchObject({ problem: "algorithm", message: expect.stringContaining("EC P-384, not the EC P-256 key ES256 needs") });
  published = [await publicOf("ES384"), await publicOf("RS256")];
  expect(await refusal(fetching().verify(signed, cardUrl()))).toMatchObject({ problem: "algorithm", message: expect.stringContaining('none of the 2 keys with kid "k1" can verify it') });
});

test("a trusted key that verified a signature with a jku does not report that jku, and nothing is fetched", async () => {
  const { signed, key } = await signedCard();
  const before = requests;
  await expect(createCardVerifier(AgentCardSchema, { keys: [key], jwks: { allow: ["127.0.0.1"] } }).verify(signed, cardUrl())).resolves.toEqual({ kid: "k1", alg: "ES256" });
  expect(requests).toBe(before);
});

// One set of candidates, trusted keys first, then the jku's JWKS, as a jose key set would hold them:
// a trusted key under the kid that did not verify stopped the search, and the card was refused.
test("a trusted key under the kid of another type, or an old one, does not stop the search: the jku's JWKS verifies the card", async () => {
  const { signed, key } = await signedCard();
  published = [key];
  for (const pinned of [await publicOf("RS256"), await publicOf("ES256")]) {
    const verifier = createCardVerifier(AgentCardSchema, { keys: [pinned], jwks: { allow: ["127.0.0.1"], cacheMs: 0 } });
    await expect(verifier.verify(signed, cardUrl())).resolves.toEqual({ kid: "k1", alg: "ES256", jku: jwksUrl() });
  }
  // With nothing to fetch, the trusted key's refusal is the card's, and with a JWKS that does not
  // verify it either, both say why.
  const rsa = await publicOf("RS256");
  expect(await refusal(createCardVerifier(AgentCardSchema, { keys: [rsa] }).verify(signed, cardUrl()))).toMatchObject({ problem: "algorithm", message: expect.stringContaining("not the EC P-256 key ES256 needs") });
  published = [await publicOf("ES256")];
  const both = await refusal(createCardVerifier(AgentCardSchema, { keys: [rsa], jwks: { allow: ["127.0.0.1"], cacheMs: 0 } }).verify(signed, cardUrl()));
  expect(both).toMatchObject({ problem: "algorithm", message: expect.stringMatching(/not the EC P-256 key ES256 needs; from its jku: it does not verify/) });
});

test("a kept JWKS whose key under the kid cannot verify the alg is fetched again after the cooldown, as jose's remote JWKS does on no matching key", async () => {
  const { signed, key } = await signedCard();
  published = [await publicOf("RS256")];
  const verifier = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"], cacheMs: 60_000, cooldownMs: 0 } });
  expect(await refusal(verifier.verify(signed, cardUrl()))).toMatchObject({ problem: "algorithm" });
  // The agent rotated kid k1 from RSA to EC: the kept JWKS has k1, but no k1 that fits ES256.
  published = [key];
  const before = requests;
  await expect(verifier.verify(signed, cardUrl())).resolves.toMatchObject({ kid: "k1", jku: jwksUrl() });
  expect(requests).toBe(before + 1);
});

test("key_ops with an operation twice, or an ext that is not a boolean, is not a usable key, as jose has it", async () => {
  const { signed, key } = await signedCard();
  for (const bad of [{ key_ops: ["verify", "verify"] }, { ext: "yes" as unknown as boolean }]) {
    published = [{ ...key, ...bad }];
    expect(await refusal(fetching().verify(signed, cardUrl()))).toMatchObject({ problem: "unknown-key" });
  }
  published = [{ ...key, key_ops: ["verify"], ext: true }];
  await expect(fetching().verify(signed, cardUrl())).resolves.toMatchObject({ kid: "k1" });
});

// key_ops is checked for distinct entries as jose does, but jose's check (each entry's indexOf) is
// quadratic: one key of a JWKS whose key_ops lists tens of thousands of distinct strings held the
// client's event loop for seconds per signature (jose's import then refuses the key, as WebCrypto
// knows none of those operations), where the 4-key bound keeps a hostile JWKS to a few signature
// checks.
test("a key whose key_ops lists tens of thousands of operations is refused at the cost of a few signature checks", async () => {
  const { signed, key } = await signedCard();
  const ops: string[] = ["verify"];
  for (let i = 0, size = 0; size < 500_000; i++) {
    const op = i.toString(36);
    ops.push(op);
    size += op.length + 3;
  }
  published = [{ ...key, key_ops: ops }];
  const verifier = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"], maxBytes: 1 << 20 } });
  // The first verify fetches the JWKS; the second finds it kept (and asks whether it holds a usable key).
  for (let i = 0; i < 2; i++) {
    const started = performance.now();
    expect(await refusal(verifier.verify(signed, cardUrl()))).toMatchObject({ problem: "algorithm", message: expect.stringContaining('the key "k1" cannot verify ES256') });
    expect(performance.now() - started).toBeLessThan(1_000);
  }
  // One listed twice is refused as before, and the refusal does not repeat the whole list.
  published = [{ ...key, key_ops: [...ops, "verify"] }];
  const started = performance.now();
  const refused = await refusal(createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"], maxBytes: 1 << 20, cacheMs: 0 } }).verify(signed, cardUrl()));
  expect(performance.now() - started).toBeLessThan(1_000);
  expect(refused).toMatchObject({ problem: "unknown-key", message: expect.stringContaining("key_ops") });
  expect(refused!.message.length).toBeLessThan(1_000);
}, 60_000);
