/**
 * An agent mounted in an app of its own (D17, D110), on each framework of
 * the adapter suite: the generated JSON-RPC and HTTP+JSON endpoints made with
 * `compat: { v0_3: true }`, and the card (and its JWKS) from
 * createAgentCardEndpoint, each mounted with the framework's adapter. The
 * card is served with ETag, Cache-Control and 304, signed, and verified by the
 * generated client, which then calls the agent; @a2a-js/sdk 1.x and the 0.3
 * SDK (`a2a-js-sdk-v03`) find the agent from the same card and call it on both
 * JSON bindings, each in its own version.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { serve as honoServe } from "@hono/node-server";
import { exportJWK, generateKeyPair } from "jose";
import { ClientFactory as ClientFactory03, JsonRpcTransportFactory as JsonRpc03, RestTransportFactory as Rest03 } from "a2a-js-sdk-v03/client";
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from "@a2a-js/sdk/client";
import { createExpressMiddleware, createFastifyPlugin, createHonoHandler, createNodeListener, type Endpoint } from "protoc-gen-a2a/runtime/adapters";
import { createAgentCardEndpoint, type AgentCardEndpoint } from "protoc-gen-a2a/runtime/server";
import { createA2AServiceClient } from "../../generated/a2a_client.js";
import { createA2AServiceHttpJsonEndpoint } from "../../generated/a2a_http.js";
import { createA2AServiceJsonRpcEndpoint } from "../../generated/a2a_jsonrpc.js";
import { AgentCardSchema, Role } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { express4, handler, JSONRPC_PATH, REST_PATH } from "./frameworks.js";

const CARD_PATH = "/.well-known/agent-card.json";
const JWKS_PATH = "/.well-known/jwks.json";

// REQUIRED fields not at their defaults: the canonical form @a2a-js/sdk computes is then ours (D100).
const card = {
  name: "Mounted Agent",
  description: "Served by an app of its own",
  version: "1.0.0",
  capabilities: { streaming: true },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "pong", name: "Pong", description: "Answers pong", tags: ["pong"] }],
};

/** What the app mounts; the card is made once the port is known, so it is reached through `card.current`. */
interface Mounted {
  readonly jsonRpc: Endpoint;
  readonly rest: Endpoint;
  readonly card: { current: AgentCardEndpoint | undefined };
}

/** An endpoint that hands each request to the card made after listening. */
const late = (slot: Mounted["card"], pick: (card: AgentCardEndpoint) => Endpoint | undefined): Endpoint => ({
  handle: async (req) => {
    const endpoint = slot.current === undefined ? undefined : pick(slot.current);
    if (endpoint === undefined) throw new Error("the card is not made yet");
    return endpoint.handle(req);
  },
});

interface Running {
  readonly base: string;
  close(): Promise<void>;
}

function listenNode(server: Server): Promise<Running> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        base: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

type Mount = (m: Mounted) => Promise<Running>;

const expressMount =
  (factory: typeof express): Mount =>
  (m) => {
    const app = factory();
    app.use(JSONRPC_PATH, createExpressMiddleware(m.jsonRpc));
    app.use(REST_PATH, createExpressMiddleware(m.rest));
    app.get(CARD_PATH, createExpressMiddleware(late(m.card, (c) => c)));
    app.get(JWKS_PATH, createExpressMiddleware(late(m.card, (c) => c.jwks)));
    return listenNode(createServer(app));
  };

const mounts: readonly (readonly [string, Mount])[] = [
  [
    "node:http",
    (m) => {
      const rpc = createNodeListener(m.jsonRpc);
      const rest = createNodeListener(m.rest);
      const cardListener = createNodeListener(late(m.card, (c) => c));
      const jwks = createNodeListener(late(m.card, (c) => c.jwks));
      return listenNode(
        createServer((req, res) => {
          const path = (req.url ?? "/").split("?")[0] ?? "/";
          if (path === JSONRPC_PATH) return rpc(req, res);
          if (path === REST_PATH || path.startsWith(`${REST_PATH}/`)) return rest(req, res);
          if (path === CARD_PATH) return cardListener(req, res);
          if (path === JWKS_PATH) return jwks(req, res);
          res.writeHead(404).end();
        }),
      );
    },
  ],
  ["express 5", expressMount(express)],
  ["express 4", expressMount(express4)],
  [
    "fastify",
    async (m) => {
      const app = Fastify();
      await app.register(createFastifyPlugin(m.jsonRpc), { prefix: JSONRPC_PATH });
      await app.register(createFastifyPlugin(m.rest), { prefix: REST_PATH });
      await app.register(createFastifyPlugin(late(m.card, (c) => c)), { prefix: CARD_PATH });
      await app.register(createFastifyPlugin(late(m.card, (c) => c.jwks)), { prefix: JWKS_PATH });
      const base = await app.listen({ port: 0, host: "127.0.0.1" });
      return {
        base,
        close: async () => {
          app.server.closeAllConnections();
          await app.close();
        },
      };
    },
  ],
  [
    "hono (@hono/node-server)",
    (m) => {
      const app = new Hono();
      app.all(JSONRPC_PATH, createHonoHandler(m.jsonRpc));
      const rest = createHonoHandler(m.rest);
      app.all(REST_PATH, rest);
      app.all(`${REST_PATH}/*`, rest);
      app.get(CARD_PATH, createHonoHandler(late(m.card, (c) => c)));
      app.get(JWKS_PATH, createHonoHandler(late(m.card, (c) => c.jwks)));
      return new Promise((resolve) => {
        const server = honoServe({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
          resolve({
            base: `http://127.0.0.1:${info.port}`,
            close: () =>
              new Promise((done) => {
                (server as Server).close(() => done());
                (server as Server).closeAllConnections();
              }),
          });
        });
      });
    },
  ],
];

describe.each(mounts)("an agent mounted on %s", (_name, mount) => {
  let running: Running;
  let served: AgentCardEndpoint;

  beforeAll(async () => {
    const options = { heartbeatMs: 0, compat: { v0_3: true } };
    const slot: Mounted["card"] = { current: undefined };
    running = await mount({
      jsonRpc: createA2AServiceJsonRpcEndpoint(handler, options),
      rest: createA2AServiceHttpJsonEndpoint(handler, { ...options, basePath: REST_PATH }),
      card: slot,
    });
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    served = await createAgentCardEndpoint(AgentCardSchema, card, {
      interfaces: [
        { binding: "JSONRPC", url: `${running.base}${JSONRPC_PATH}` },
        { binding: "HTTP+JSON", url: `${running.base}${REST_PATH}` },
      ],
      maxAgeSeconds: 60,
      signing: { keys: [{ privateKey: await exportJWK(privateKey), alg: "ES256", kid: "mounted-1", jku: true }], jwksUrl: `${running.base}${JWKS_PATH}` },
      compat: { v0_3: true },
    });
    slot.current = served;
  });

  afterAll(() => running.close());

  test("serves the card with its interfaces, 0.3's fields, an ETag, Cache-Control and 304", async () => {
    const response = await fetch(`${running.base}${CARD_PATH}`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual(served.card);
    expect(body.supportedInterfaces).toEqual([
      { url: `${running.base}${JSONRPC_PATH}`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${running.base}${REST_PATH}`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      { url: `${running.base}${JSONRPC_PATH}`, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
      { url: `${running.base}${REST_PATH}`, protocolBinding: "HTTP+JSON", protocolVersion: "0.3" },
    ]);
    expect(body).toMatchObject({ protocolVersion: "0.3.0", url: `${running.base}${JSONRPC_PATH}`, preferredTransport: "JSONRPC" });
    expect(response.headers.get("cache-control")).toBe("public, max-age=60");
    const etag = response.headers.get("etag");
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await fetch(`${running.base}${CARD_PATH}`, { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    const jwks = await fetch(`${running.base}${JWKS_PATH}`);
    expect(jwks.headers.get("content-type")).toBe("application/jwk-set+json");
    expect(((await jwks.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid)).toEqual(["mounted-1"]);
  });

  test.each(["JSONRPC", "HTTP+JSON"] as const)("the generated client verifies the signed card (key by its jku) and calls %s", async (binding) => {
    const client = await createA2AServiceClient(running.base, { bindings: [binding], verifyCard: { jwks: { allow: ["127.0.0.1"] } } });
    try {
      // With 0.3's fields beside the card, the key signs the card as served and the 1.0 card alone (D111).
      expect(client.card.signatures).toHaveLength(2);
      const answer = await client.sendMessage({ message: { messageId: "m1", role: Role.USER, parts: [{ content: { case: "text", value: "ping" } }] } });
      expect(answer.payload.case === "message" && answer.payload.value.messageId).toBe("re-m1");
    } finally {
      client.close();
    }
  });

  test.each(["JSONRPC", "HTTP+JSON"])("@a2a-js/sdk 1.x finds the agent from the card and calls %s in 1.0", async (binding) => {
    const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory(), new RestTransportFactory()], preferredTransports: [binding] }).createFromUrl(running.base);
    const result = await client.sendMessage({
      message: { messageId: "m2", role: 1, parts: [{ content: { $case: "text", value: "ping" }, metadata: undefined, filename: "", mediaType: "" }], contextId: "", taskId: "", extensions: [], referenceTaskIds: [], metadata: undefined },
      tenant: "",
      configuration: undefined,
      metadata: undefined,
    });
    expect(result).toMatchObject({ messageId: "re-m2" });
  });

  test.each(["JSONRPC", "HTTP+JSON"])("the A2A 0.3 SDK finds the agent from the card and calls %s in 0.3", async (transport) => {
    const client = await new ClientFactory03({ transports: [new JsonRpc03(), new Rest03()], preferredTransports: [transport] }).createFromUrl(running.base);
    const result = await client.sendMessage({ message: { kind: "message", messageId: "m3", role: "user", parts: [{ kind: "text", text: "ping" }] } });
    expect(result).toMatchObject({ kind: "message", messageId: "re-m3", role: "agent", parts: [{ kind: "text", text: "pong" }] });
  });
});

test("the card endpoint's policy gates the mounted endpoints as serveA2AService's card does (D18): no streaming declared, SendStreamingMessage refused", async () => {
  const quiet = await createAgentCardEndpoint(AgentCardSchema, { ...card, capabilities: { streaming: false } }, { interfaces: [{ binding: "JSONRPC", url: "http://127.0.0.1/a2a/jsonrpc" }] });
  const server = createServer(createNodeListener(createA2AServiceJsonRpcEndpoint(handler, { heartbeatMs: 0, policy: { ...quiet.policy } })));
  const running = await listenNode(server);
  try {
    const response = await fetch(running.base, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "ping" }] } } }),
    });
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(((await response.json()) as { error?: { code: number } }).error?.code).toBe(-32004);
  } finally {
    await running.close();
  }
});

describe("what is refused where it is made, naming the fix", () => {
  test("compat.v0_3 with versions.acceptMissing (a request without A2A-Version cannot be both 0.3 and the newest)", () => {
    const versions = { supported: ["1.0"], acceptMissing: true };
    expect(() => createA2AServiceJsonRpcEndpoint(handler, { compat: { v0_3: true }, versions })).toThrow("compat.v0_3 reads a request without A2A-Version as 0.3");
    expect(() => createA2AServiceHttpJsonEndpoint(handler, { compat: { v0_3: true }, versions })).toThrow("versions.acceptMissing as the newest: choose one");
  });

  test("a card with compat.v0_3 and no interfaces, a relative interface URL, a jku: true with no jwksUrl", async () => {
    await expect(createAgentCardEndpoint(AgentCardSchema, card, { compat: { v0_3: true } })).rejects.toThrow("name them in `interfaces`");
    await expect(createAgentCardEndpoint(AgentCardSchema, card, { interfaces: [{ binding: "JSONRPC", url: "/a2a/jsonrpc" }] })).rejects.toThrow("interfaces[0].url must be an absolute http(s) URL");
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    await expect(createAgentCardEndpoint(AgentCardSchema, card, { signing: { keys: [{ privateKey: await exportJWK(privateKey), alg: "ES256", kid: "k", jku: true }] } })).rejects.toThrow("signing.jwksUrl does not say where");
  });

  test("a relative signing.jwksUrl: what jku names must be absolute (it was node's bare TypeError: Invalid URL)", async () => {
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const keys = [{ privateKey: await exportJWK(privateKey), alg: "ES256", kid: "k", jku: true as const }];
    await expect(createAgentCardEndpoint(AgentCardSchema, card, { signing: { keys, jwksUrl: "/.well-known/jwks.json" } })).rejects.toThrow('signing.jwksUrl must be an absolute http(s) URL, e.g. "https://agent.example.com/.well-known/jwks.json", got "/.well-known/jwks.json"');
  });

  test("a max-age that is no whole number of seconds, on the card endpoint and on serveA2AService (it went out as max-age=-1 or max-age=NaN)", async () => {
    for (const bad of [-1, Number.NaN, 1.5]) {
      await expect(createAgentCardEndpoint(AgentCardSchema, card, { maxAgeSeconds: bad })).rejects.toThrow(`createAgentCardEndpoint: maxAgeSeconds must be a whole number of seconds, 0 or more, got ${String(bad)}`);
      await expect(serveA2AService(handler, card, { port: 0, grpcPort: false, cardMaxAgeSeconds: bad })).rejects.toThrow(`serveAgent: cardMaxAgeSeconds must be a whole number of seconds, 0 or more, got ${String(bad)}`);
    }
    const zero = await createAgentCardEndpoint(AgentCardSchema, card, { maxAgeSeconds: 0 });
    expect(zero.card).toBeDefined();
  });

  test("compat.v0_3 with only a gRPC interface: the 0.3 card would send 0.3 callers to gRPC, where a mounted app serves no 0.3 service", async () => {
    await expect(createAgentCardEndpoint(AgentCardSchema, card, { interfaces: [{ binding: "GRPC", url: "agent.example.com:443" }], compat: { v0_3: true } })).rejects.toThrow(
      "compat.v0_3 needs a JSONRPC or HTTP+JSON interface",
    );
  });
});
