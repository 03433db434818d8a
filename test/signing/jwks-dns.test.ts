/**
 * The DNS lookup of a JWKS host (the SSRF guard's, D101) is bounded like the
 * fetch: by `jwks.timeoutMs` and by the caller's signal. A resolver that
 * never answered held the fetch past `timeoutMs`, so a verify without a
 * signal (and every verify sharing its fetch) waited for the resolver's own
 * give-up. The lookup here is a real resolver (node:dns's Resolver) asking a
 * DNS server on loopback, which answers `jwks.test` or stays silent.
 */
import { jest } from "@jest/globals";
import { createSocket, type Socket } from "node:dgram";
import { promises as dns } from "node:dns";
import type { AddressInfo, LookupFunction } from "node:net";
import type { JsonObject } from "@bufbuild/protobuf";
import { exportJWK, FlattenedSign, generateKeyPair, type JWK } from "jose";
import { AgentCardSignatureError, canonicalJson, createCardVerifier, presenceJson } from "protoc-gen-a2a/runtime/signing";
import { AgentCardSchema } from "../../generated/a2a_pb.js";
import { serveJwks, type JwksServer } from "../support/jwks-server.js";

jest.setTimeout(20_000);

let dnsServer: Socket;
let answering = true;
let queries = 0;
let jwks: JwksServer;
let published: JWK[] = [];
let origin = "";
let signed: JsonObject;
const resolvers: dns.Resolver[] = [];
const unhandled: unknown[] = [];
const noteUnhandled = (reason: unknown) => unhandled.push(reason);

/** An A record of 127.0.0.1 for the question in `query` (RFC 1035 4.1), with its id. */
function answerTo(query: Buffer): Buffer {
  let end = 12;
  while (query[end] !== 0) end += query[end]! + 1;
  const question = query.subarray(12, end + 5);
  const header = Buffer.from([0, 0, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0]);
  query.copy(header, 0, 0, 2);
  const record = Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1]);
  return Buffer.concat([header, question, record]);
}

/** A socket lookup through a real resolver asking the loopback DNS server, for IPv4. */
function lookupVia(timeoutMs: number): LookupFunction {
  const resolver = new dns.Resolver({ timeout: timeoutMs, tries: 1 });
  resolver.setServers([`127.0.0.1:${(dnsServer.address() as AddressInfo).port}`]);
  resolvers.push(resolver);
  return (hostname, options, callback) => {
    resolver.resolve4(hostname).then(
      (addresses) => {
        const all = addresses.map((address) => ({ address, family: 4 }));
        if (options.all) callback(null, all);
        else callback(null, all[0]!.address, 4);
      },
      (err: NodeJS.ErrnoException) => callback(err, ""),
    );
  };
}

beforeAll(async () => {
  process.on("unhandledRejection", noteUnhandled);
  dnsServer = createSocket("udp4");
  dnsServer.on("message", (query, from) => {
    queries++;
    if (answering) dnsServer.send(answerTo(query), from.port, from.address);
  });
  await new Promise<void>((resolve) => dnsServer.bind(0, "127.0.0.1", resolve));
  jwks = await serveJwks(() => published);
  // The JWKS server listens on 127.0.0.1; the card names it by a name only the test's DNS server knows.
  origin = `http://jwks.test:${new URL(jwks.base).port}`;
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  published = [{ ...(await exportJWK(publicKey)), kid: "k1" }];
  const card: JsonObject = { name: "X", description: "d", version: "1", capabilities: {}, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"], skills: [] };
  const payload = new TextEncoder().encode(canonicalJson(presenceJson(AgentCardSchema, card)));
  const jws = await new FlattenedSign(payload).setProtectedHeader({ alg: "ES256", kid: "k1", jku: `${origin}/jwks.json` }).sign(privateKey);
  signed = { ...card, signatures: [{ protected: jws.protected!, signature: jws.signature }] };
});

afterAll(async () => {
  // The lookups still waiting end now, with ECANCELLED: dropped, not an unhandled rejection.
  for (const resolver of resolvers) resolver.cancel();
  await new Promise((resolve) => setTimeout(resolve, 100));
  process.off("unhandledRejection", noteUnhandled);
  dnsServer.close();
  await jwks.close();
  expect(unhandled).toEqual([]);
});

const cardUrl = () => `${origin}/.well-known/agent-card.json`;
const settle = (p: Promise<unknown>) => p.then(() => undefined, (err: unknown) => err);

test("the jwks lookup option resolves the host for the SSRF check and the connection alike", async () => {
  answering = true;
  const verifier = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"], cacheMs: 0, lookup: lookupVia(5_000) } });
  const before = queries;
  await expect(verifier.verify(signed, cardUrl())).resolves.toEqual({ kid: "k1", alg: "ES256", jku: `${origin}/jwks.json` });
  // The guard's check, then the socket's own lookup at connect time.
  expect(queries - before).toBe(2);
});

test("a jwks lookup that answers one address whatever it is asked (all: true left aside) is read as that address, for the check and the connection", async () => {
  answering = true;
  const real = lookupVia(5_000);
  const single: LookupFunction = (hostname, options, callback) => real(hostname, { ...options, all: false }, callback);
  const verifier = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"], cacheMs: 0, lookup: single } });
  await expect(verifier.verify(signed, cardUrl())).resolves.toEqual({ kid: "k1", alg: "ES256", jku: `${origin}/jwks.json` });
});

test("a resolver that never answers: a verify without a signal is refused within jwks.timeoutMs, saying the lookup did not answer", async () => {
  answering = false;
  const verifier = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"], timeoutMs: 300, lookup: lookupVia(60_000) } });
  const started = Date.now();
  const error = await settle(verifier.verify(signed, cardUrl()));
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(error).toBeInstanceOf(AgentCardSignatureError);
  expect((error as AgentCardSignatureError).failures).toEqual([
    { index: 0, problem: "jwks-unavailable", message: expect.stringContaining("the DNS lookup of its host did not answer within 300 ms (jwks.timeoutMs)") },
  ]);
  // The fetch that timed out is not kept: the next verify asks again.
  const before = queries;
  await settle(verifier.verify(signed, cardUrl()));
  expect(queries).toBe(before + 1);
});

test("a resolver that never answers: the caller's signal ends the verify at once, DEADLINE_EXCEEDED for a timeout, CANCELLED for an abort", async () => {
  answering = false;
  const verifier = createCardVerifier(AgentCardSchema, { jwks: { allow: ["127.0.0.1"], timeoutMs: 10_000, lookup: lookupVia(60_000) } });
  let started = Date.now();
  expect(await settle(verifier.verify(signed, cardUrl(), { signal: AbortSignal.timeout(200) }))).toMatchObject({ name: "DeadlineExceededError" });
  expect(Date.now() - started).toBeLessThan(1_500);
  const aborting = new AbortController();
  setTimeout(() => aborting.abort(), 200);
  started = Date.now();
  expect(await settle(verifier.verify(signed, cardUrl(), { signal: aborting.signal }))).toMatchObject({ name: "CancelledError" });
  expect(Date.now() - started).toBeLessThan(1_500);
});
