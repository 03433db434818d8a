/**
 * A body sent too slowly is answered 408 after the endpoint's bodyTimeoutMs
 * (D32) on every framework, the fetch adapter (Hono) included: it read the
 * body with no timeout at all, so a client that sent its headers and part of
 * its body held the call until the platform's own limit (node:http's
 * requestTimeout, 300 s by default; none on some platforms).
 */
import { connect } from "node:net";
import { JSONRPC_PATH, REST_PATH, frameworks, type Running } from "./frameworks.js";

const TIMEOUT_MS = 400;

interface Reply {
  readonly head: string;
  readonly body: string;
  readonly ms: number;
}

/** Sends the headers and half the body, then nothing more; resolves with the answer's status line, body and when it came. */
function stalledBody(base: string, path: string): Promise<Reply> {
  const { hostname, port } = new URL(base);
  const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t1" } }));
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      socket.write(body.subarray(0, body.length >> 1));
    });
    let text = "";
    // Not waiting for the answer past this: the platform's own timeout is minutes away.
    const giveUp = setTimeout(() => socket.destroy(), 5_000);
    const settle = () => {
      clearTimeout(giveUp);
      const [head = "", rest = ""] = text.split("\r\n\r\n");
      resolve({ head, body: rest, ms: performance.now() - started });
    };
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (/\r\n\r\n[\s\S]*\}/.test(text)) {
        socket.destroy();
        settle();
      }
    });
    socket.on("close", settle);
    socket.on("error", (err: NodeJS.ErrnoException) => (err.code === "ECONNRESET" ? settle() : reject(err)));
  });
}

describe.each(frameworks)("$name", (framework) => {
  let server: Running;
  beforeAll(async () => {
    server = await framework.start({ bodyTimeoutMs: TIMEOUT_MS });
  });
  afterAll(() => server.close());

  test.each([
    ["JSON-RPC", JSONRPC_PATH],
    ["HTTP+JSON", `${REST_PATH}/message:send`],
  ])("%s: a body that stops halfway is answered 408 after bodyTimeoutMs", async (_, path) => {
    const reply = await stalledBody(server.base, path);
    expect(reply.head).toMatch(/^HTTP\/1\.1 408/);
    expect(reply.body).toContain(`did not arrive within ${TIMEOUT_MS} ms`);
    expect(reply.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    // The timeout plus a quarter of it (how often the reads are looked at) and slack for a busy machine.
    expect(reply.ms).toBeLessThan(2_000);
  });
});
