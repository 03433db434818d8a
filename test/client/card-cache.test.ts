/**
 * The cards a client keeps for their ETag (revalidated with If-None-Match):
 * only a card a connect accepted (read as an AgentCard, and verified when
 * `verifyCard` is on), the last 64 used, each of at most 256 KiB. A caller
 * that connects to URLs it is given kept every card it was sent, refused
 * ones too, for the life of the process (300 cards of 1 MiB held 289 MiB).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createA2AServiceClient } from "../../generated/a2a_client.js";

let server: Server;
let base = "";
/** The If-None-Match each URL came with, in order. */
const asked = new Map<string, (string | undefined)[]>();

const cardOf = (url: string) => {
  const card = {
    name: "Kept",
    // 100 K characters of three bytes each: 300 KiB of UTF-8, under 256 K characters (a review).
    description: url.includes("big") ? "a".repeat(300 * 1024) : url.includes("wide") ? "\u4e2d".repeat(100 * 1024) : "d",
    supportedInterfaces: url.includes("no-interface")
      ? [{ url: `${base}/a2a`, protocolBinding: "SOAP", protocolVersion: "1.0" }]
      : [{ url: `${base}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    version: "1",
    capabilities: {},
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [],
  };
  // Not an AgentCard: a string field holding an object.
  return url.includes("unreadable") ? { ...card, name: { not: "a string" } } : card;
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? "";
    const etag = `"${url}"`;
    const given = req.headers["if-none-match"];
    asked.set(url, [...(asked.get(url) ?? []), given]);
    if (given === etag) return void res.writeHead(304, { etag }).end();
    res.writeHead(200, { "content-type": "application/json", etag }).end(JSON.stringify(cardOf(url)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const connect = (path: string, options: Parameters<typeof createA2AServiceClient>[1] = {}) =>
  createA2AServiceClient(`${base}${path}`, options).then(
    (client) => {
      client.close();
      return "connected";
    },
    (err: Error) => `failed: ${err.name}`,
  );

test("an accepted card is revalidated with its ETag; one refused by verifyCard, or not an AgentCard, is not kept", async () => {
  expect(await connect("/accepted.json")).toBe("connected");
  expect(await connect("/accepted.json")).toBe("connected");
  expect(asked.get("/accepted.json")).toEqual([undefined, '"/accepted.json"']);

  // Unsigned, and the policy requires a signature: refused, and asked for afresh next time.
  expect(await connect("/unsigned.json", { verifyCard: { policy: "require" } })).toBe("failed: AgentCardSignatureError");
  expect(await connect("/unsigned.json", { verifyCard: { policy: "require" } })).toBe("failed: AgentCardSignatureError");
  expect(asked.get("/unsigned.json")).toEqual([undefined, undefined]);

  expect(await connect("/unreadable.json")).toMatch(/^failed/);
  expect(await connect("/unreadable.json")).toMatch(/^failed/);
  expect(asked.get("/unreadable.json")).toEqual([undefined, undefined]);
});

test("a card larger than 256 KiB is not kept, counted in UTF-8 bytes", async () => {
  expect(await connect("/big.json")).toBe("connected");
  expect(await connect("/big.json")).toBe("connected");
  expect(asked.get("/big.json")).toEqual([undefined, undefined]);
  expect(await connect("/wide.json")).toBe("connected");
  expect(await connect("/wide.json")).toBe("connected");
  expect(asked.get("/wide.json")).toEqual([undefined, undefined]);
});

test("a card no client could be made from (no interface the client speaks) is not kept", async () => {
  expect(await connect("/no-interface.json")).toBe("failed: FailedPreconditionError");
  expect(await connect("/no-interface.json")).toBe("failed: FailedPreconditionError");
  expect(asked.get("/no-interface.json")).toEqual([undefined, undefined]);
});

test("64 cards are kept at most, the one used longest ago dropped first", async () => {
  expect(await connect("/first.json")).toBe("connected");
  expect(await connect("/second.json")).toBe("connected");
  for (let i = 0; i < 62; i++) expect(await connect(`/other-${i}.json`)).toBe("connected");
  // 64 kept; using first makes second the oldest, and one more card drops it.
  expect(await connect("/first.json")).toBe("connected");
  expect(await connect("/one-more.json")).toBe("connected");
  expect(await connect("/first.json")).toBe("connected");
  expect(await connect("/second.json")).toBe("connected");
  expect(asked.get("/first.json")).toEqual([undefined, '"/first.json"', '"/first.json"']);
  expect(asked.get("/second.json")).toEqual([undefined, undefined]);
});
