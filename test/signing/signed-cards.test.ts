/**
 * Signed Agent Cards over real sockets (D101): an agent served by
 * serveA2AService with `signing` serves its public card signed and its JWKS,
 * and GetExtendedAgentCard answers a signed card on each of the three
 * bindings; each verifies in the generated client (the key found through the
 * card's jku, fetched through the SSRF guard) and in @a2a-js/sdk 1.3.0's
 * verifyAgentCardSignature; a card @a2a-js/sdk signed verifies here.
 */
import { jest } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { create, toJson, type JsonObject } from "@bufbuild/protobuf";
import { generateAgentCardSignature, verifyAgentCardSignature, type AgentCard as SdkAgentCard } from "@a2a-js/sdk";
import { exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { AgentCardSignatureError, createCardVerifier } from "protoc-gen-a2a/runtime/signing";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { createA2AServiceClient } from "../../generated/a2a_client.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { AgentCardSchema, type AgentCard } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { BINDINGS, principalsAuthenticate } from "../support/task-clients.js";

jest.setTimeout(30_000);

// REQUIRED fields all set (not at their defaults): the cards both canonical forms agree on.
const cardInit = {
  name: "Signed Agent",
  description: "Signs its cards",
  version: "2.1.0",
  provider: { organization: "Example Org", url: "https://example.org" },
  capabilities: { streaming: true, extendedAgentCard: true },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain", "application/json"],
  skills: [{ id: "echo", name: "Echo", description: "Echoes", tags: ["echo"], examples: ["hi"] }],
};

let server: AgentServer;
let publicJwk: JWK;
let extendedDescription = "The card for signed-in callers";
const auth = { authorization: "Bearer alice-token" };

const handler: A2AServiceHandler = {
  async getExtendedAgentCard() {
    return { ...cardInit, description: extendedDescription, supportedInterfaces: server.card.supportedInterfaces as never, skills: [...cardInit.skills, { id: "secret", name: "Secret", description: "For members", tags: ["members"] }] };
  },
};

/** The key @a2a-js/sdk's verifier is given, found by kid in the agent's JWKS as a caller would. */
const sdkKeyResolver = (jwksUrl: string) => async (kid: string) => {
  const jwks = (await (await fetch(jwksUrl)).json()) as { keys: JWK[] };
  const jwk = jwks.keys.find((k) => k.kid === kid);
  if (jwk === undefined) throw new Error(`no key ${kid}`);
  return (await importJWK(jwk, jwk.alg)) as Exclude<Awaited<ReturnType<typeof importJWK>>, Uint8Array>;
};

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  publicJwk = { ...(await exportJWK(publicKey)), kid: "agent-key-1", alg: "ES256" };
  server = await serveA2AService(handler, cardInit, {
    port: 0,
    grpcPort: 0,
    authenticate: principalsAuthenticate,
    signing: { keys: [{ privateKey: await exportJWK(privateKey), alg: "ES256", kid: "agent-key-1", jku: true }] },
  });
});
afterAll(() => server.close());

const jwksUrl = () => new URL("/.well-known/jwks.json", server.cardUrl).href;
// The agent is on loopback: the SSRF guard refuses that unless the caller allows it.
const verifyCard = { jwks: { allow: ["127.0.0.1"] } } as const;

describe("the public card", () => {
  test("is served signed (alg, typ JOSE, kid, jku), with an ETag over the signed bytes, and the JWKS beside it", async () => {
    const response = await fetch(server.cardUrl);
    const body = await response.text();
    const card = JSON.parse(body) as JsonObject;
    const signatures = card.signatures as { protected: string; signature: string }[];
    expect(signatures).toHaveLength(1);
    expect(JSON.parse(Buffer.from(signatures[0]!.protected, "base64url").toString())).toEqual({ alg: "ES256", typ: "JOSE", kid: "agent-key-1", jku: jwksUrl() });
    const etag = response.headers.get("etag")!;
    expect((await fetch(server.cardUrl, { headers: { "if-none-match": etag } })).status).toBe(304);
    const jwks = await fetch(jwksUrl());
    expect(jwks.headers.get("content-type")).toBe("application/jwk-set+json");
    const keys = ((await jwks.json()) as { keys: JWK[] }).keys;
    expect(keys).toEqual([expect.objectContaining({ kty: "EC", crv: "P-256", kid: "agent-key-1", alg: "ES256", use: "sig" })]);
    expect(keys[0]).not.toHaveProperty("d");
  });

  test("verifies in the generated client (key by jku, through the SSRF guard) and in @a2a-js/sdk's verifier", async () => {
    const client = await createA2AServiceClient(server.cardUrl, { verifyCard });
    expect(client.card.signatures).toHaveLength(1);
    client.close();
    const card = (await (await fetch(server.cardUrl)).json()) as SdkAgentCard;
    await expect(verifyAgentCardSignature(sdkKeyResolver(jwksUrl()))(card)).resolves.toBeUndefined();
  });

  test("the ETag covers the signatures: the same card signed with another key is another ETag", async () => {
    const other = await generateKeyPair("ES256", { extractable: true });
    const serve = async (privateKey: JWK) =>
      // No binding mounted: both cards list no interface, so they differ in their signatures alone.
      serveA2AService({}, cardInit, { port: 0, grpcPort: false, jsonRpcPath: false, httpJsonPath: false, signing: { keys: [{ privateKey: privateKey as never, alg: "ES256", kid: "k" }] } });
    const a = await serve(await exportJWK(other.privateKey));
    const b = await serve(await exportJWK((await generateKeyPair("ES256", { extractable: true })).privateKey));
    try {
      const [ra, rb] = await Promise.all([fetch(a.cardUrl), fetch(b.cardUrl)]);
      const [ja, jb] = (await Promise.all([ra.json(), rb.json()])) as JsonObject[];
      expect({ ...ja, signatures: [] }).toEqual({ ...jb, signatures: [] });
      expect(ra.headers.get("etag")).not.toBe(rb.headers.get("etag"));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe.each(BINDINGS)("the extended card on %s", (binding) => {
  test("as GetExtendedAgentCard returns it, verifies in the generated client and in @a2a-js/sdk's verifier", async () => {
    const client = await createA2AServiceClient(server.cardUrl, { bindings: [binding], headers: auth, verifyCard });
    try {
      expect(client.chosenInterface.protocolBinding).toBe(binding);
      const card: AgentCard = await client.getExtendedAgentCard({});
      expect(card.skills.map((s) => s.id)).toEqual(["echo", "secret"]);
      expect(card.signatures).toHaveLength(1);
      const sdkCard = toJson(AgentCardSchema, card) as unknown as SdkAgentCard;
      await expect(verifyAgentCardSignature(sdkKeyResolver(jwksUrl()))(sdkCard)).resolves.toBeUndefined();
    } finally {
      client.close();
    }
  });
});

test("an extended card that changes is signed as it is now; one that does not keeps its signatures", async () => {
  const client = await createA2AServiceClient(server.cardUrl, { bindings: ["JSONRPC"], headers: auth, verifyCard });
  try {
    const first = await client.getExtendedAgentCard({});
    expect((await client.getExtendedAgentCard({})).signatures).toEqual(first.signatures);
    extendedDescription = "Changed while running";
    const changed = await client.getExtendedAgentCard({});
    expect(changed.description).toBe("Changed while running");
    expect(changed.signatures[0]!.signature).not.toBe(first.signatures[0]!.signature);
  } finally {
    extendedDescription = "The card for signed-in callers";
    client.close();
  }
});

describe("a card @a2a-js/sdk signed", () => {
  let sdkServer: Server;
  let sdkCardUrl: string;
  let sdkPublic: JWK;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256");
    sdkPublic = { ...(await exportJWK(publicKey)), kid: "sdk-key" };
    const unsigned = { ...(toJson(AgentCardSchema, create(AgentCardSchema, { ...cardInit, supportedInterfaces: [{ url: "http://127.0.0.1:9/a2a/jsonrpc", protocolBinding: "JSONRPC", protocolVersion: "1.0" }] })) as object) } as SdkAgentCard;
    const signed = await generateAgentCardSignature(privateKey, { alg: "ES256", kid: "sdk-key", typ: "JOSE" })(unsigned);
    sdkServer = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(signed)));
    await new Promise<void>((resolve) => sdkServer.listen(0, "127.0.0.1", resolve));
    sdkCardUrl = `http://127.0.0.1:${(sdkServer.address() as AddressInfo).port}/.well-known/agent-card.json`;
  });
  afterAll(() => new Promise((resolve) => sdkServer.close(resolve)));

  test("verifies in the generated client with the SDK signer's public key", async () => {
    const client = await createA2AServiceClient(sdkCardUrl, { verifyCard: { keys: [sdkPublic] } });
    expect(client.card.name).toBe("Signed Agent");
    client.close();
  });

  test("and with another key it is refused as invalid", async () => {
    const { publicKey } = await generateKeyPair("ES256");
    const wrong = { ...(await exportJWK(publicKey)), kid: "sdk-key" };
    const failure = await createA2AServiceClient(sdkCardUrl, { verifyCard: { keys: [wrong] } }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AgentCardSignatureError);
    expect((failure as AgentCardSignatureError).reason).toBe("invalid");
    expect((failure as AgentCardSignatureError).failures[0]?.problem).toBe("invalid-signature");
  });
});

test("multiple signatures (keys rotating): the card is valid when any allowed one verifies", async () => {
  const oldKey = await generateKeyPair("ES256", { extractable: true });
  const newKey = await generateKeyPair("Ed25519", { extractable: true });
  const rotating = await serveA2AService({}, cardInit, {
    port: 0,
    grpcPort: false,
    signing: {
      keys: [
        { privateKey: await exportJWK(oldKey.privateKey), alg: "ES256", kid: "old" },
        { privateKey: newKey.privateKey, alg: "EdDSA", kid: "new" },
      ],
    },
  });
  try {
    const card = (await (await fetch(rotating.cardUrl)).json()) as JsonObject;
    expect(card.signatures).toHaveLength(2);
    // A caller who knows only the new key: the first signature's kid is unknown, the second verifies.
    const onlyNew = createCardVerifier(AgentCardSchema, { keys: [{ ...(await exportJWK(newKey.publicKey)), kid: "new" }] });
    await expect(onlyNew.verify(card)).resolves.toEqual({ kid: "new", alg: "EdDSA" });
    // One who accepts only ES256 gets the old key's signature.
    const es256 = createCardVerifier(AgentCardSchema, { algorithms: ["ES256"], jwks: { allow: ["127.0.0.1"] } });
    await expect(es256.verify(card, rotating.cardUrl)).rejects.toThrow(/no trusted key|jku/);
    const es256Keys = createCardVerifier(AgentCardSchema, { algorithms: ["ES256"], keys: [{ ...(await exportJWK(oldKey.publicKey)), kid: "old" }, { ...(await exportJWK(newKey.publicKey)), kid: "new" }] });
    await expect(es256Keys.verify(card)).resolves.toEqual({ kid: "old", alg: "ES256" });
  } finally {
    await rotating.close();
  }
});

test("policies: require refuses an unsigned card, verify-if-present lets it through, skip checks nothing", async () => {
  const plain = await serveA2AService({}, cardInit, { port: 0, grpcPort: false });
  try {
    const failure = await createA2AServiceClient(plain.cardUrl, { verifyCard: { policy: "require", keys: [publicJwk] } }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AgentCardSignatureError);
    expect((failure as AgentCardSignatureError).reason).toBe("unsigned");
    expect((failure as Error).message).toContain(plain.cardUrl);
    (await createA2AServiceClient(plain.cardUrl, { verifyCard: { policy: "verify-if-present", keys: [publicJwk] } })).close();
    const tampered = { ...((await (await fetch(server.cardUrl)).json()) as JsonObject), name: "Someone Else" };
    await expect(createCardVerifier(AgentCardSchema, { policy: "skip" }).verify(tampered)).resolves.toBeUndefined();
    await expect(createCardVerifier(AgentCardSchema, { policy: "verify-if-present", keys: [publicJwk] }).verify(tampered)).rejects.toThrow(AgentCardSignatureError);
  } finally {
    await plain.close();
  }
});

test("a __proto__ member added to a signed card, at the top or nested, is refused like any other added key (D100)", async () => {
  const text = await (await fetch(server.cardUrl)).text();
  const verifier = createCardVerifier(AgentCardSchema, { keys: [publicJwk] });
  await expect(verifier.verify(JSON.parse(text) as JsonObject)).resolves.toMatchObject({ kid: "agent-key-1" });
  const top = JSON.parse(text.replace(/^\{/, '{"__proto__":{"iconUrl":"https://evil.example/i.png"},')) as JsonObject;
  expect(Object.hasOwn(top, "__proto__")).toBe(true);
  await expect(verifier.verify(top)).rejects.toThrow(AgentCardSignatureError);
  const nested = JSON.parse(text.replace('"protocolBinding":', '"__proto__":{"url":"https://evil.example"},"protocolBinding":')) as JsonObject;
  await expect(verifier.verify(nested)).rejects.toThrow(AgentCardSignatureError);
});

test("a card given with another server's signatures (a bridge passing on its upstream's) is served without them when it is rebuilt, so it does not fail verification (D101)", async () => {
  const passedOn = await serveA2AService({}, server.card, { port: 0, grpcPort: false });
  try {
    expect(server.card.signatures).toBeDefined();
    expect(passedOn.card).not.toHaveProperty("signatures");
    // verify-if-present: an unsigned card goes through; one with stale signatures was refused.
    (await createA2AServiceClient(passedOn.cardUrl, { verifyCard: { policy: "verify-if-present", jwks: { allow: ["127.0.0.1"] } } })).close();
  } finally {
    await passedOn.close();
  }
});

test("an extended card the handler returns with another server's signatures is served without them once its interfaces are this server's (D101)", async () => {
  const passedOn = await serveA2AService({ getExtendedAgentCard: async () => server.card as never }, cardInit, { port: 0, grpcPort: false, authenticate: principalsAuthenticate });
  try {
    const client = await createA2AServiceClient(passedOn.cardUrl, { headers: auth, verifyCard: { policy: "verify-if-present", jwks: { allow: ["127.0.0.1"] } } });
    try {
      const extended = await client.getExtendedAgentCard({});
      expect(extended.supportedInterfaces.map((i) => i.url)).toEqual([passedOn.jsonRpcUrl, passedOn.httpJsonUrl]);
      expect(extended.signatures).toEqual([]);
    } finally {
      client.close();
    }
  } finally {
    await passedOn.close();
  }
});
