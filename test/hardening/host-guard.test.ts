/**
 * The DNS rebinding guard of the one-call server (D119), over raw sockets: a
 * page on `http://rebind.attacker.example:PORT` whose name is rebound to
 * 127.0.0.1 is same-origin with the agent for its browser, so it may send JSON
 * and read answers; its Host (and Origin) give it away. A request from a page
 * of another origin is refused too. Clients that are no browser send no Origin
 * and name the agent by IP, `localhost` or its public URL.
 */
import { connect } from "node:net";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { textOf } from "protoc-gen-a2a/runtime";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler } from "../../generated/a2a_tasks.js";
import { referenceCard } from "../../examples/reference-agent/config.js";
import { freePorts } from "../support/nginx.js";
import { createHostGuard } from "../../runtime/core/http/host-guard.js";

const handler = createA2AServiceTaskHandler(async function* ({ message }) {
  yield { artifact: { parts: [{ content: { case: "text", value: textOf(message) } }] } };
});

/** One request on a raw socket (fetch sets Host itself): the status line and body of the answer. */
function raw(port: number, headers: Record<string, string>, path = "/a2a/rest/tasks", method = "GET", body = ""): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (c: Buffer) => {
      text += c.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, end))?.[1];
      if (end >= 0 && length !== undefined && text.length >= end + 4 + Number(length)) {
        socket.destroy();
        resolve({ status: Number(text.slice(9, 12)), body: text.slice(end + 4) });
      }
    });
    socket.on("error", reject);
    const lines = Object.entries({ "A2A-Version": "1.0", ...headers, ...(body === "" ? {} : { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) }) }).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.write(`${method} ${path} HTTP/1.1\r\n${lines.join("")}\r\n${body}`);
  });
}

describe("defaults", () => {
  let server: AgentServer;
  let port: number;
  beforeAll(async () => {
    // The port is picked here: with publicUrl the server's URLs are the public ones.
    [port] = (await freePorts(1)) as [number];
    server = await serveA2AService(handler, referenceCard, { port, grpcPort: false, publicUrl: "http://agent.example.com:9000", drainMs: 100 });
  });
  afterAll(() => server.close());

  test("a page rebound to 127.0.0.1 can neither read tasks nor send a message (421)", async () => {
    const attacker = { Host: `rebind.attacker.example:${port}`, Origin: `http://rebind.attacker.example:${port}` };
    const read = await raw(port, attacker);
    expect(read.status).toBe(421);
    expect(read.body).toContain('this agent does not answer to the host \\"rebind.attacker.example\\": add it to the server\'s allowedHosts');
    // The AIP-193 body's code is the status sent.
    expect(JSON.parse(read.body)).toMatchObject({ error: { code: 421, status: "PERMISSION_DENIED" } });
    const send = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } } });
    const rpc = await raw(port, attacker, "/a2a/jsonrpc", "POST", send);
    expect(rpc.status).toBe(421);
    // On the JSON-RPC path, a JSON-RPC error its clients read (PermissionDenied), naming the option.
    expect(JSON.parse(rpc.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -31403, message: expect.stringContaining("allowedHosts") } });
    expect((await raw(port, { Host: `rebind.attacker.example:${port}` }, "/.well-known/agent-card.json")).status).toBe(421);
  });

  test.each(["127.0.0.1", "localhost", "LOCALHOST.", "[::1]:8080", "10.1.2.3", "agent.example.com", "agent.example.com:9000"])("Host %s is answered", async (host) => {
    expect((await raw(port, { Host: host })).status).toBe(200);
  });

  test("a request without Host (HTTP/1.0) is answered", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1");
      let text = "";
      socket.on("data", (c: Buffer) => (text += c.toString("latin1")));
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
      socket.write("GET /.well-known/agent-card.json HTTP/1.0\r\n\r\n");
    });
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  test("a page of another origin is refused (403); the agent's own origin is not", async () => {
    const other = await raw(port, { Host: `127.0.0.1:${port}`, Origin: "https://evil.example" });
    expect(other.status).toBe(403);
    expect(other.body).toContain("requests from pages of another origin (https://evil.example) are refused: add it to the server's allowedOrigins");
    expect((await raw(port, { Host: `127.0.0.1:${port}`, Origin: "null" })).status).toBe(403);
    expect((await raw(port, { Host: `127.0.0.1:${port}`, Origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    // The listen address's origin, port and all, is the agent's own whatever name the request uses; the same host on port 80 is not.
    expect((await raw(port, { Host: `localhost:${port}`, Origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect((await raw(port, { Host: `localhost:${port}`, Origin: "http://127.0.0.1" })).status).toBe(403);
    // A page of the public URL's origin, through a proxy that forwards the upstream address as Host.
    expect((await raw(port, { Host: `127.0.0.1:${port}`, Origin: "http://agent.example.com:9000" })).status).toBe(200);
  });

  test("a name under localhost (RFC 6761: loopback, resolved so by browsers) is answered", async () => {
    expect((await raw(port, { Host: `agent.localhost:${port}` })).status).toBe(200);
  });

  test("fetch, which names the agent by its address and sends no Origin, is answered", async () => {
    const r = await fetch(`http://127.0.0.1:${port}/a2a/rest/tasks`, { headers: { "a2a-version": "1.0" } });
    expect(r.status).toBe(200);
  });
});

describe("options", () => {
  let server: AgentServer;
  let port: number;
  beforeAll(async () => {
    server = await serveA2AService(handler, referenceCard, { port: 0, grpcPort: false, drainMs: 100, allowedHosts: ["MyAgent.local"], allowedOrigins: ["https://console.example.com/"] });
    port = Number(new URL(server.jsonRpcUrl!).port);
  });
  afterAll(() => server.close());

  test("a listed host and a listed origin are answered; others are not", async () => {
    expect((await raw(port, { Host: `myagent.local:${port}` })).status).toBe(200);
    expect((await raw(port, { Host: `other.local:${port}` })).status).toBe(421);
    expect((await raw(port, { Host: `myagent.local:${port}`, Origin: "https://console.example.com" })).status).toBe(200);
    expect((await raw(port, { Host: `myagent.local:${port}`, Origin: "https://console.example.com:8443" })).status).toBe(403);
  });

  test('"any" turns each check off', async () => {
    const open = await serveA2AService(handler, referenceCard, { port: 0, grpcPort: false, drainMs: 100, allowedHosts: "any", allowedOrigins: "any" });
    try {
      const p = Number(new URL(open.jsonRpcUrl!).port);
      expect((await raw(p, { Host: `rebind.attacker.example:${p}`, Origin: "https://evil.example" })).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});

test("the host a server listens on, when it is a name, is its own: the card's URLs name it", () => {
  const guard = createHostGuard({}, ["http://vm", "https://agent.example.com/a2a"]);
  const request = (headers: Record<string, string>) => ({ header: (name: string) => headers[name] ?? null });
  expect(guard(request({ host: "vm:8080" }))).toBeUndefined();
  expect(guard(request({ host: "vm:8080", origin: "http://vm:8080" }))).toBeUndefined();
  expect(guard(request({ host: "127.0.0.1:8080", origin: "https://agent.example.com" }))).toBeUndefined();
  expect(guard(request({ host: "other:8080" }))?.status).toBe(421);
});

test("the generated client tells what a refused card fetch was told (the agent's error message), not only its status", async () => {
  const { createServer } = await import("node:http");
  const { createA2AServiceClient } = await import("../../generated/a2a_client.js");
  const refusing = createServer((_req, res) => {
    res.statusCode = 421;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ error: { code: 421, status: "PERMISSION_DENIED", message: 'this agent does not answer to the host "vm": add it to the server\'s allowedHosts' } }));
  });
  await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
  try {
    const url = `http://127.0.0.1:${(refusing.address() as { port: number }).port}`;
    await expect(createA2AServiceClient(url)).rejects.toThrow(/answered HTTP 421: this agent does not answer to the host "vm": add it to the server's allowedHosts/);
  } finally {
    await new Promise((resolve) => refusing.close(resolve));
  }
});

test("a publicUrl that is no http(s) URL is refused, naming the option (it names the card's URLs and the agent's own origin)", async () => {
  for (const publicUrl of ["agent.example.com:8080", "ftp://agent.example.com", "/a2a"]) {
    await expect(serveA2AService(handler, referenceCard, { port: 0, grpcPort: false, publicUrl })).rejects.toThrow(`serveAgent: publicUrl must be an absolute http(s) URL, e.g. "https://agent.example.com", got ${JSON.stringify(publicUrl)}`);
  }
});
