/**
 * A caller's signal and deadline bound verifying a card (D29, D101): the
 * connect's `signal`, and a GetExtendedAgentCard call's `signal`/`timeoutMs`,
 * end the wait for a JWKS that never answers with CANCELLED or
 * DEADLINE_EXCEEDED, as a call's; the JWKS of a card's signatures are fetched
 * at once, so eight slow ones cost one `timeoutMs`, not eight; a fetch two
 * checks share goes on for the one that still waits.
 */
import { jest } from "@jest/globals";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { JsonObject } from "@bufbuild/protobuf";
import { exportJWK, FlattenedSign, generateKeyPair, type JWK } from "jose";
import { AgentCardSignatureError, canonicalJson, createCardVerifier, presenceJson } from "protoc-gen-a2a/runtime/signing";
import { createA2AServiceClient } from "../../generated/a2a_client.js";
import { AgentCardSchema } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { principalsAuthenticate } from "../support/task-clients.js";

jest.setTimeout(30_000);

let privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
let publicJwk: JWK;
// Serves the card at the well-known path; /hang/* never answers, /slow answers the JWKS after 600 ms.
let server: Server;
let base = "";
let card: JsonObject;
// The connections of JWKS fetches still waiting for an answer.
const open = new Set<Socket>();
const hangRequests: string[] = [];
let slowRequests = 0;

const unsignedCard = (origin: string): JsonObject => ({
  name: "Slow JWKS",
  description: "d",
  version: "1",
  supportedInterfaces: [{ url: `${origin}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
  capabilities: {},
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [],
});

async function signed(unsigned: JsonObject, jkus: readonly string[]): Promise<JsonObject> {
  const payload = new TextEncoder().encode(canonicalJson(presenceJson(AgentCardSchema, unsigned)));
  const signatures: JsonObject[] = [];
  for (const [i, jku] of jkus.entries()) {
    const jws = await new FlattenedSign(payload).setProtectedHeader({ alg: "ES256", kid: `k${i}`, jku }).sign(privateKey);
    signatures.push({ protected: jws.protected!, signature: jws.signature });
  }
  return { ...unsigned, signatures };
}

beforeAll(async () => {
  const pair = await generateKeyPair("ES256", { extractable: true });
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: "k0" };
  server = createServer((req, res) => {
    if (req.url === "/.well-known/agent-card.json") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(card));
    if (req.url === "/slow") {
      slowRequests++;
      return void setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [publicJwk] })), 600);
    }
    hangRequests.push(req.url ?? "");
    open.add(req.socket);
    req.socket.on("close", () => open.delete(req.socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  card = await signed(unsignedCard(base), Array.from({ length: 8 }, (_, i) => `${base}/hang/${i}`));
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const settle = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as Error);
const jwksSockets = async () => {
  await new Promise((resolve) => setTimeout(resolve, 200));
  return open.size;
};

test("the connect's signal ends verifying the card: DEADLINE_EXCEEDED for a timeout, CANCELLED for an abort, and the JWKS fetches are let go", async () => {
  const verifyCard = { jwks: { allow: ["127.0.0.1"], timeoutMs: 10_000 } } as const;
  let started = Date.now();
  const late = await settle(createA2AServiceClient(`${base}/.well-known/agent-card.json`, { signal: AbortSignal.timeout(300), verifyCard }));
  expect(Date.now() - started).toBeLessThan(1500);
  expect(late).toMatchObject({ name: "DeadlineExceededError" });
  // All eight were asked at once, and no fetch outlives the connect that wanted it.
  expect(new Set(hangRequests).size).toBe(8);
  expect(await jwksSockets()).toBe(0);

  const aborting = new AbortController();
  setTimeout(() => aborting.abort(), 200);
  started = Date.now();
  const cancelled = await settle(createA2AServiceClient(`${base}/.well-known/agent-card.json`, { signal: aborting.signal, verifyCard }));
  expect(Date.now() - started).toBeLessThan(1500);
  expect(cancelled).toMatchObject({ name: "CancelledError" });
  expect(await jwksSockets()).toBe(0);
});

test("without a signal, eight slow JWKS cost one timeoutMs, each signature's failure named", async () => {
  const verifier = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"], timeoutMs: 500 } });
  const started = Date.now();
  const error = await settle(verifier.verify(card, `${base}/.well-known/agent-card.json`));
  expect(Date.now() - started).toBeLessThan(2000);
  expect(error).toBeInstanceOf(AgentCardSignatureError);
  expect((error as AgentCardSignatureError).failures.map((f) => [f.index, f.problem])).toEqual(Array.from({ length: 8 }, (_, i) => [i, "jwks-unavailable"]));
});

test("a JWKS fetch two checks share goes on for the one still waiting when the other's deadline passes", async () => {
  slowRequests = 0;
  const slowCard = await signed(unsignedCard(base), [`${base}/slow`]);
  const verifier = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"] } });
  const cardUrl = `${base}/.well-known/agent-card.json`;
  const [hurried, patient] = await Promise.all([settle(verifier.verify(slowCard, cardUrl, { signal: AbortSignal.timeout(100) })), verifier.verify(slowCard, cardUrl)]);
  expect(hurried).toMatchObject({ name: "DeadlineExceededError" });
  expect(patient).toEqual({ kid: "k0", alg: "ES256", jku: `${base}/slow` });
  expect(slowRequests).toBe(1);
});

test("GetExtendedAgentCard's timeoutMs and signal bound the verification of its answer", async () => {
  // The agent signs with a jku at a JWKS that answers once (the public card verifies), then never.
  let jwksCalls = 0;
  const jwks = createServer((_req, res) => {
    if (jwksCalls++ === 0) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [{ ...publicJwk, kid: "k1" }] }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
  const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
  const cardInit = { name: "A", description: "d", version: "1", capabilities: { extendedAgentCard: true }, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"], skills: [{ id: "a", name: "A", description: "a", tags: ["a"] }] };
  const agent = await serveA2AService(
    {
      async getExtendedAgentCard() {
        return { ...cardInit, description: "extended", supportedInterfaces: agent.card.supportedInterfaces as never };
      },
    },
    cardInit,
    { port: 0, grpcPort: false, authenticate: principalsAuthenticate, signing: { keys: [{ privateKey, alg: "ES256", kid: "k1", jku: jwksUrl }] } },
  );
  try {
    const client = await createA2AServiceClient(agent.cardUrl, {
      bindings: ["JSONRPC"],
      headers: { authorization: "Bearer alice-token" },
      verifyCard: { jwks: { allow: ["127.0.0.1"], urls: [jwksUrl], cacheMs: 0, timeoutMs: 10_000 } },
    });
    let started = Date.now();
    expect(await settle(client.getExtendedAgentCard({}, { timeoutMs: 300 }))).toMatchObject({ name: "DeadlineExceededError" });
    expect(Date.now() - started).toBeLessThan(1500);
    const aborting = new AbortController();
    setTimeout(() => aborting.abort(), 300);
    started = Date.now();
    expect(await settle(client.getExtendedAgentCard({}, { signal: aborting.signal }))).toMatchObject({ name: "CancelledError" });
    expect(Date.now() - started).toBeLessThan(1500);
    client.close();
  } finally {
    jwks.closeAllConnections();
    await new Promise((resolve) => jwks.close(resolve));
    await agent.close();
  }
});
