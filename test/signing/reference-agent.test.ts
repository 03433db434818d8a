/**
 * The reference agent signs both of its cards (D101), with a key made at
 * start or the one A2A_SIGNING_JWK gives, and serves the JWKS its
 * signatures' jku names: a generated client asking for verification gets
 * both cards through, over a real socket.
 */
import { jest } from "@jest/globals";
import type { JsonObject } from "@bufbuild/protobuf";
import { verifyAgentCardSignature, type AgentCard as SdkAgentCard } from "@a2a-js/sdk";
import { exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { AgentCardSignatureError, createCardVerifier } from "protoc-gen-a2a/runtime/signing";
import { AgentCardSchema } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceClient } from "../../generated/a2a_client.js";
import { createReferenceAgent } from "../../examples/reference-agent/handler.js";
import { bearerAuthenticate, referenceCard, referenceExtendedCard, referenceSigning } from "../../examples/reference-agent/config.js";

jest.setTimeout(30_000);

async function startReference(env: Record<string, string>) {
  // As main.ts serves it: signed, and with 0.3's fields beside the signed 1.0 card (D111), which verification must not see.
  return serveA2AService(createReferenceAgent(referenceExtendedCard), referenceCard, { port: 0, grpcPort: 0, authenticate: bearerAuthenticate("demo"), signing: referenceSigning(env), compat: { v0_3: true } });
}

test.each([
  ["a key made at start", async () => ({})],
  ["the key A2A_SIGNING_JWK gives", async () => ({ A2A_SIGNING_JWK: JSON.stringify({ ...(await exportJWK((await generateKeyPair("Ed25519", { extractable: true })).privateKey)), kid: "env-key", alg: "EdDSA" }) })],
])("with %s, both cards verify through the agent's own JWKS", async (_what, envOf) => {
  const env: Record<string, string> = await envOf();
  const server = await startReference(env);
  try {
    expect(server.jwksUrl).toBe(new URL("/.well-known/jwks.json", server.cardUrl).href);
    expect(server.card).toMatchObject({ protocolVersion: "0.3.0", url: server.jsonRpcUrl });
    const header = JSON.parse(Buffer.from(((server.card.signatures as JsonObject[])[0]!.protected as string), "base64url").toString()) as JsonObject;
    expect(header).toEqual(env.A2A_SIGNING_JWK === undefined ? { alg: "ES256", typ: "JOSE", kid: "reference-agent", jku: server.jwksUrl } : { alg: "EdDSA", typ: "JOSE", kid: "env-key", jku: server.jwksUrl });
    for (const binding of ["JSONRPC", "HTTP+JSON", "GRPC"] as const) {
      const client = await createA2AServiceClient(server.cardUrl, { bindings: [binding], headers: { authorization: "Bearer demo" }, verifyCard: { jwks: { allow: ["127.0.0.1"] } } });
      try {
        const extended = await client.getExtendedAgentCard({});
        expect(extended.description).toContain("(extended card)");
        expect(extended.signatures).toHaveLength(1);
      } finally {
        client.close();
      }
    }
  } finally {
    await server.close();
  }
});

test("an A2A_SIGNING_JWK that is not JSON is refused by name", () => {
  expect(() => referenceSigning({ A2A_SIGNING_JWK: "{not json" })).toThrow("A2A_SIGNING_JWK must be a private JWK as JSON");
});

test("the hybrid card (0.3's fields beside the 1.0 card) verifies in @a2a-js/sdk, which rebuilds the card from its proto, and in ours, which refuses a changed 0.3 field (D111)", async () => {
  const server = await startReference({});
  try {
    const text = await (await fetch(server.cardUrl)).text();
    const card = JSON.parse(text) as JsonObject;
    const keys = ((await (await fetch(server.jwksUrl!)).json()) as { keys: JWK[] }).keys;
    const resolve = async (kid: string) => (await importJWK(keys.find((k) => k.kid === kid)!, "ES256")) as Exclude<Awaited<ReturnType<typeof importJWK>>, Uint8Array>;
    await expect(verifyAgentCardSignature(resolve)(card as unknown as SdkAgentCard)).resolves.toBeUndefined();
    const ours = createCardVerifier(AgentCardSchema, { keys });
    await expect(ours.verify(card)).resolves.toMatchObject({ kid: "reference-agent" });
    // The second signature (over the card alone) does not let a 0.3 field be changed past ours.
    await expect(ours.verify({ ...card, url: "https://evil.example/a2a" })).rejects.toThrow(AgentCardSignatureError);
  } finally {
    await server.close();
  }
});
