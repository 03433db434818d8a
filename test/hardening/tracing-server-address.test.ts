/**
 * A server span's `server.address` and `server.port` (D35; OTel's HTTP server conventions, which
 * the RPC ones follow), with the real SDK over real sockets on all three bindings: the host and
 * port the client addressed (`Host`, gRPC's `:authority` through `getHost()`), the same rule on
 * every binding; and the connection's local address and port for an HTTP/1.0 request that names
 * no host. They had neither.
 */
import { jest } from "@jest/globals";
import * as api from "@opentelemetry/api";
import { type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { create } from "@bufbuild/protobuf";
import { credentials as grpcCredentials } from "@grpc/grpc-js";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient, type A2AServiceClient } from "../../generated/a2a_client.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { TaskSchema, TaskState } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { parseAuthority } from "../../runtime/core/tracing.js";
import { installOtelSdk } from "../support/otel-sdk.js";

jest.setTimeout(30_000);

const { exporter, shutdown: shutdownSdk } = installOtelSdk();

const handler: Partial<A2AServiceHandler> = {
  async getTask(request) {
    return create(TaskSchema, { id: request.id, contextId: "c", status: { state: TaskState.WORKING } });
  },
};

const card = { name: "Traced", description: "Traced calls", version: "1.0.0", capabilities: {}, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"], skills: [] };

let server: AgentServer;

beforeAll(async () => {
  server = await serveA2AService(handler as A2AServiceHandler, card, { port: 0, grpcPort: 0, drainMs: 100, onError: () => undefined, tracing: api, allowedHosts: "any" });
});

afterAll(async () => {
  await server.close();
  await shutdownSdk();
});

beforeEach(() => exporter.reset());

const serverSpan = (): ReadableSpan => {
  const spans = exporter.getFinishedSpans().filter((s) => s.kind === api.SpanKind.SERVER);
  expect(spans).toHaveLength(1);
  return spans[0]!;
};

const portOf = (address: string): number => Number(address.slice(address.lastIndexOf(":") + 1));

/** Each binding's client, addressing the server by `host`. */
const clientsAt = (host: string): Record<"JSONRPC" | "HTTP+JSON" | "GRPC", { client: () => A2AServiceClient; port: () => number }> => ({
  JSONRPC: { client: () => createA2AServiceJsonRpcClient(server.jsonRpcUrl!.replace("127.0.0.1", host)), port: () => Number(new URL(server.jsonRpcUrl!).port) },
  "HTTP+JSON": { client: () => createA2AServiceHttpJsonClient(server.httpJsonUrl!.replace("127.0.0.1", host)), port: () => Number(new URL(server.httpJsonUrl!).port) },
  GRPC: { client: () => createA2AServiceGrpcClient(server.grpcAddress!.replace("127.0.0.1", host)), port: () => portOf(server.grpcAddress!) },
});

describe.each(["127.0.0.1", "localhost"])("addressed as %s", (host) => {
  test.each(["JSONRPC", "HTTP+JSON", "GRPC"] as const)("%s: server.address is the host the client named, server.port its port", async (binding) => {
    const { client: make, port } = clientsAt(host)[binding];
    const client = make();
    try {
      await client.getTask({ id: "t-1" });
    } finally {
      client.close();
    }
    expect(serverSpan().attributes).toMatchObject({ "server.address": host, "server.port": port() });
  });
});

/** Sends `request` as it is over a new connection; resolves with the whole answer once the server closes it (HTTP/1.0). */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString()));
  });
}

test.each(["JSONRPC", "HTTP+JSON"] as const)("%s: an HTTP/1.0 request without Host has the connection's local address and port", async (binding) => {
  const url = new URL(binding === "JSONRPC" ? server.jsonRpcUrl! : server.httpJsonUrl!);
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t-1" } });
  const request =
    binding === "JSONRPC"
      ? `POST ${url.pathname} HTTP/1.0\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
      : `GET ${url.pathname}/tasks/t-1 HTTP/1.0\r\nA2A-Version: 1.0\r\n\r\n`;
  const answer = await raw(Number(url.port), request);
  expect(answer).toMatch(/^HTTP\/1\.[01] 200 /);
  expect(serverSpan().attributes).toMatchObject({ "server.address": "127.0.0.1", "server.port": Number(url.port) });
});

// Host values no client addressing a server sends: a port that is no port is left out, never
// the scheme's default (the client did not address port 80); a host that is no host (RFC 3986's
// grammar: a space, a quote, a slash) names none, and the connection's side is recorded, as for a
// request without Host. The guard lets them through (allowedHosts: "any", as behind a proxy).
test.each([
  ["agent.example.com:99999", { "server.address": "agent.example.com" }],
  ["agent.example.com:8o", { "server.address": "agent.example.com" }],
  ["agent.example.com:", { "server.address": "agent.example.com", "server.port": 80 }],
  ["a b", "local"],
  ['"><img src=x>', "local"],
  ["agent.example.com/x", "local"],
  ["[::1]x", "local"],
])("Host %j: server.address and server.port as the rule gives them", async (host, expected) => {
  const url = new URL(server.httpJsonUrl!);
  const answer = await raw(Number(url.port), `GET ${url.pathname}/tasks/t-1 HTTP/1.1\r\nHost: ${host}\r\nA2A-Version: 1.0\r\nConnection: close\r\n\r\n`);
  expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  const attributes = serverSpan().attributes;
  const recorded = { "server.address": attributes["server.address"], ...(attributes["server.port"] === undefined ? {} : { "server.port": attributes["server.port"] }) };
  expect(recorded).toEqual(expected === "local" ? { "server.address": "127.0.0.1", "server.port": Number(url.port) } : expected);
});

test("authorities as clients send them: brackets and userinfo dropped, a port that is not one left out", () => {
  expect(parseAuthority("[::1]:8443")).toEqual({ address: "::1", port: 8443 });
  expect(parseAuthority("agent.example.com")).toEqual({ address: "agent.example.com" });
  expect(parseAuthority("user:secret@agent.example.com:80")).toEqual({ address: "agent.example.com", port: 80 });
  expect(parseAuthority("agent.example.com:99999")).toEqual({ address: "agent.example.com", port: null });
  expect(parseAuthority("agent.example.com:")).toEqual({ address: "agent.example.com" });
  expect(parseAuthority("[fe80::1%25eth0]:8080")).toEqual({ address: "fe80::1%25eth0", port: 8080 });
  expect(parseAuthority("a b")).toBeUndefined();
  expect(parseAuthority("::1")).toBeUndefined();
  expect(parseAuthority("")).toBeUndefined();
});

// gRPC over TLS with no client certificate (the usual server): grpc-js's getAuthContext() names
// the transport only for a client it authorized, so a TLS call read as plaintext and an authority
// without a port was recorded as port 80, where D35 says 443 over TLS.
test("GRPC over TLS without a client certificate: an authority without a port is port 443", async () => {
  const dir = mkdtempSync(join(tmpdir(), "a2a-tls-"));
  try {
    await promisify(execFile)("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=localhost",
      "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")]);
    const cert = readFileSync(join(dir, "cert.pem"));
    const tls = await serveA2AService(handler as A2AServiceHandler, card, { port: 0, grpcPort: 0, drainMs: 100, onError: () => undefined, tracing: api, grpc: { tls: { cert, key: readFileSync(join(dir, "key.pem")) } } });
    try {
      // The client names the host alone, as one addressing `agent.example.com` on 443 does.
      const client = createA2AServiceGrpcClient(tls.grpcAddress!, { credentials: grpcCredentials.createSsl(cert), channelOptions: { "grpc.default_authority": "localhost" } });
      try {
        await client.getTask({ id: "t-1" });
      } finally {
        client.close();
      }
      expect(serverSpan().attributes).toMatchObject({ "server.address": "localhost", "server.port": 443 });
    } finally {
      await tls.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
