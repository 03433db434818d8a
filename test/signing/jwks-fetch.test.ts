/**
 * The JWKS a card's jku names, as the client keeps them (D101): a rotation's
 * new key is found without waiting out the cache, a key never published does
 * not make every card fetch again, and what is kept is bounded, since a card
 * names its jku and a hostile agent could name a new one per answer.
 */
import { exportJWK, generateKeyPair, type JWK } from "jose";
import { createCardVerifier } from "protoc-gen-a2a/runtime/signing";
import { createJwksFetcher } from "../../runtime/a2a/client/jwks-fetch.js";
import { createCardSigner } from "../../runtime/a2a/card-signing.js";
import { AgentCardSchema } from "../../generated/a2a_pb.js";
import { serveJwks, type JwksServer } from "../support/jwks-server.js";

const cardInit = { name: "A", description: "d", version: "1", capabilities: {}, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"], skills: [] };

let jwks: JwksServer;
let base = "";
const requests = new Map<string, number>();
let published: JWK[] = [];
beforeAll(async () => {
  jwks = await serveJwks(
    () => published,
    (path) => requests.set(path, (requests.get(path) ?? 0) + 1),
  );
  base = jwks.base;
});
afterAll(() => jwks.close());

async function signedWith(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const signer = await createCardSigner(AgentCardSchema, { keys: [{ privateKey: await exportJWK(privateKey), alg: "ES256", kid, jku: `${base}/jwks.json` }] }, () => undefined);
  return { publicJwk: { ...(await exportJWK(publicKey)), kid, alg: "ES256" }, card: await signer.sign(cardInit as never) };
}

test("a key the kept JWKS lacks (the agent rotated) is looked up again once the cooldown has passed since it was fetched; calls that come meanwhile share one fetch", async () => {
  requests.clear();
  const cardUrl = `${base}/.well-known/agent-card.json`;
  const k1 = await signedWith("k1");
  published = [k1.publicJwk];
  // No cooldown: the rotation is seen at once.
  const eager = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"], cooldownMs: 0 } });
  await expect(eager.verify(k1.card, cardUrl)).resolves.toMatchObject({ kid: "k1" });
  const k2 = await signedWith("k2");
  published = [k1.publicJwk, k2.publicJwk];
  const many = await Promise.all(Array.from({ length: 20 }, () => eager.verify(k2.card, cardUrl)));
  expect(many.every((r) => r?.kid === "k2")).toBe(true);
  expect(requests.get("/jwks.json")).toBe(2);
});

test("with the default cooldown, a key never published does not make each card fetch the JWKS again, nor do twenty calls at once", async () => {
  requests.clear();
  const cardUrl = `${base}/.well-known/agent-card.json`;
  const k1 = await signedWith("k1");
  published = [k1.publicJwk];
  const verifier = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"] } });
  const stray = await signedWith("stray");
  const outcomes = await Promise.all(Array.from({ length: 20 }, () => verifier.verify(stray.card, cardUrl).then(() => "verified", (e: Error) => e.message)));
  // The JWKS was asked, and said so: not only the trusted keys.
  expect(outcomes.every((o) => o.includes(`no trusted key, and no key of the JWKS at ${base}/jwks.json has kid "stray"`))).toBe(true);
  await expect(verifier.verify(stray.card, cardUrl)).rejects.toThrow(/no key of the JWKS at .* has kid "stray"/);
  expect(requests.get("/jwks.json")).toBe(1);
});

test("at most 64 JWKS are kept: the oldest goes first", async () => {
  requests.clear();
  published = [];
  const fetcher = createJwksFetcher({ allow: ["127.0.0.1"] });
  await fetcher.keys(`${base}/first.json`);
  await fetcher.keys(`${base}/first.json`);
  expect(requests.get("/first.json")).toBe(1);
  for (let i = 0; i < 64; i++) await fetcher.keys(`${base}/other-${i}.json`);
  await fetcher.keys(`${base}/first.json`);
  expect(requests.get("/first.json")).toBe(2);
});
