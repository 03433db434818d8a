/**
 * Request bodies from clients that misbehave, over raw sockets against the
 * one-call server (serveA2AService), issue 17's findings as regressions:
 * - a body over the limit, written in full before the client reads, must
 *   still let the client read its 413 (it used to get a TCP reset in 3 of 5
 *   tries: the server closed with the client's bytes unread); D16, D32;
 * - a body sent slowly is answered 408 after the body timeout, a request
 *   whose headers never end is cut after the headers timeout, and an idle
 *   keep-alive connection is closed after its timeout (D32).
 */
import { connect, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { connect as connectHttp2 } from "node:http2";
import { textOf } from "protoc-gen-a2a/runtime";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler } from "../../generated/a2a_tasks.js";
import { referenceCard } from "../../examples/reference-agent/config.js";

const LIMIT = 4 << 20;

/** What came back on a raw connection: the status of the first answer and whether the connection was reset. */
interface RawReply {
  readonly status: number | undefined;
  readonly head: string;
  readonly body: string;
  readonly reset: boolean;
  readonly closedAfterMs: number;
}

/**
 * Writes `request` (headers) and then `body` in full, without reading
 * anything until the last byte is handed to the kernel, then reads until the
 * first answer is complete (Content-Length) or the connection ends.
 */
function rawExchange(port: number, head: string, body: Buffer | undefined, options: { bodyRate?: { bytes: number; everyMs: number } } = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket: Socket = connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    let reset = false;
    let reading = false;
    let settled = false;
    const chunks: Buffer[] = [];
    const finish = () => {
      if (settled) return;
      settled = true;
      clearInterval(drip);
      const text = received.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const headText = end < 0 ? text : text.slice(0, end);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(headText)?.[1];
      resolve({
        status: status === undefined ? undefined : Number(status),
        head: headText,
        body: end < 0 ? "" : text.slice(end + 4),
        reset,
        closedAfterMs: performance.now() - started,
      });
      socket.destroy();
    };
    const complete = () => {
      const text = received.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return false;
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, end))?.[1];
      return length !== undefined && received.length >= end + 4 + Number(length);
    };
    socket.on("data", (chunk) => chunks.push(chunk));
    const read = () => {
      reading = true;
      received = Buffer.concat(chunks);
      if (complete()) finish();
      socket.on("data", () => {
        received = Buffer.concat(chunks);
        if (complete()) finish();
      });
    };
    socket.pause();
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ECONNRESET" || err.code === "EPIPE") reset = true;
      else if (!settled) reject(err);
      finish();
    });
    socket.on("close", finish);
    let drip: ReturnType<typeof setInterval> | undefined;
    socket.on("connect", () => {
      socket.write(head);
      if (body === undefined) {
        socket.resume();
        read();
        return;
      }
      if (options.bodyRate !== undefined) {
        // A slow client: a few bytes at a time, reading all along.
        socket.resume();
        read();
        let at = 0;
        const { bytes, everyMs } = options.bodyRate;
        drip = setInterval(() => {
          if (socket.destroyed || at >= body.length) return clearInterval(drip);
          socket.write(body.subarray(at, at + bytes));
          at += bytes;
        }, everyMs);
        return;
      }
      // The whole body, then read: the client of the issue, for which a failed write is a failed call.
      socket.write(body, (err) => {
        if (settled) return;
        if (err) {
          reset = true;
          finish();
          return;
        }
        socket.resume();
        if (!reading) read();
      });
    });
  });
}

const echo = createA2AServiceTaskHandler(async function* ({ message }) {
  yield { artifact: { parts: [{ content: { case: "text", value: textOf(message) } }] } };
});

describe("over the body limit, written in full before reading (D16, D32)", () => {
  let server: AgentServer;
  /** A small limit, for bodies larger than loopback's socket buffers can hold. */
  let small: AgentServer;
  beforeAll(async () => {
    server = await serveA2AService(echo, referenceCard, { port: 0, grpcPort: false });
    small = await serveA2AService(echo, referenceCard, { port: 0, grpcPort: false, bodyLimit: 64 << 10 });
  });
  afterAll(() => Promise.all([server.close(), small.close()]));

  const port = () => Number(new URL(server.cardUrl).port);
  const oversized = Buffer.alloc(LIMIT + 1, 0x20);

  test.each([
    ["JSON-RPC", "/a2a/jsonrpc"],
    ["HTTP+JSON", "/a2a/rest/message:send"],
  ])("%s: a body 8 MB over a 64 KiB limit, more than the socket buffers take, still gets its 413", async (_, path) => {
    const body = Buffer.alloc(8_000_000, 0x20);
    for (let i = 0; i < 3; i++) {
      const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${body.length}\r\n\r\n`;
      const reply = await rawExchange(Number(new URL(small.cardUrl).port), head, body);
      expect({ try: i, status: reply.status, reset: reply.reset }).toEqual({ try: i, status: 413, reset: false });
    }
  });

  test.each([
    ["JSON-RPC", "/a2a/jsonrpc"],
    ["HTTP+JSON", "/a2a/rest/message:send"],
  ])("%s: every one of 5 clients reads its 413 (Content-Length declared)", async (_, path) => {
    for (let i = 0; i < 5; i++) {
      const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${oversized.length}\r\n\r\n`;
      const reply = await rawExchange(port(), head, oversized);
      expect({ try: i, status: reply.status, reset: reply.reset }).toEqual({ try: i, status: 413, reset: false });
      expect(reply.body).toContain("exceeds the limit of 4194304 bytes");
    }
  });

  test.each([
    ["JSON-RPC", "/a2a/jsonrpc"],
    ["HTTP+JSON", "/a2a/rest/message:send"],
  ])("%s: a chunked body over the limit, written in full, gets its 413", async (_, path) => {
    const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunk = Buffer.alloc(1 << 20, 0x20);
    const framed = Buffer.concat([
      ...Array.from({ length: 5 }, () => Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")])),
      Buffer.from("0\r\n\r\n"),
    ]);
    const reply = await rawExchange(port(), head, framed);
    expect({ status: reply.status, reset: reply.reset }).toEqual({ status: 413, reset: false });
  });

  test.each([
    ["an unknown path (404)", "POST /nowhere"],
    ["a wrong method (405)", "PUT /a2a/jsonrpc"],
  ])("a body the answer never read, %s, is drained only up to the bound, then the client is cut (D32)", async (_, start) => {
    const socket = connect(port(), "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    let answer = "";
    socket.on("data", (c: Buffer) => (answer += c.toString("latin1")));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => undefined);
    socket.write(`${start} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000000000\r\n\r\n`);
    // Send as fast as the server takes it, up to 256 MiB: node's own dump would take it all.
    const chunk = Buffer.alloc(1 << 20, 0x20);
    let sent = 0;
    let open = true;
    void closed.then(() => (open = false));
    while (open && sent < 256 << 20) {
      if (!socket.write(chunk)) await new Promise<void>((resolve) => socket.once("drain", () => resolve()).once("close", () => resolve()));
      sent += chunk.length;
    }
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 40[45] /);
    // The bound is 16 MiB; what the kernel buffers on both sides comes on top of it.
    expect(sent).toBeLessThan(128 << 20);
  }, 30_000);

  /**
   * Sends the headers of a POST with `Expect: 100-continue` and waits for the server's first bytes
   * without sending the body; sends `body` only if they were a 100, then reads the final answer.
   */
  const expectContinue = (path: string, body: Buffer) =>
    new Promise<{ beforeBody: string; final: string; socket: Socket; closed: Promise<void> }>((resolve, reject) => {
      const socket = connect(port(), "127.0.0.1");
      const closed = new Promise<void>((done) => socket.once("close", () => done()));
      let text = "";
      let beforeBody: string | undefined;
      let settled = false;
      const finalOf = () => text.slice((beforeBody ?? "").startsWith("HTTP/1.1 100") ? (beforeBody ?? "").length : 0);
      const onData = (c: Buffer) => {
        text += c.toString("latin1");
        if (beforeBody === undefined) {
          const continued = text.startsWith("HTTP/1.1 100 Continue\r\n\r\n");
          beforeBody = continued ? "HTTP/1.1 100 Continue\r\n\r\n" : text;
          if (continued) socket.write(body);
        }
        const final = finalOf();
        const end = final.indexOf("\r\n\r\n");
        const length = /\r\ncontent-length: (\d+)/i.exec(final.slice(0, end))?.[1];
        if (!settled && end >= 0 && length !== undefined && Buffer.byteLength(final, "latin1") >= end + 4 + Number(length)) {
          settled = true;
          socket.off("data", onData);
          resolve({ beforeBody, final, socket, closed });
        }
      };
      socket.on("data", onData);
      socket.on("error", reject);
      socket.on("connect", () => {
        socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
      });
    });

  /** The connection is still open: a second request on it is answered. */
  const answersAgain = (socket: Socket) =>
    new Promise<string>((resolve) => {
      let text = "";
      socket.on("data", (c: Buffer) => {
        text += c.toString("latin1");
        if (text.includes("\r\n\r\n")) resolve(text);
      });
      socket.write("GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    });

  test.each([
    ["JSON-RPC", "/a2a/jsonrpc"],
    ["HTTP+JSON", "/a2a/rest/message:send"],
  ])("%s: Expect: 100-continue over the limit is answered 413 with no 100, and the body is never asked for (D32)", async (_, path) => {
    const reply = await expectContinue(path, oversized);
    expect(reply.beforeBody).toMatch(/^HTTP\/1\.1 413 /);
    expect(reply.final).not.toContain("100 Continue");
    expect(reply.final).toMatch(/\r\nconnection: close\r\n/i);
    await reply.closed;
  });

  test("Expect: 100-continue on a path that reads no body is answered 404 with no 100 (D32)", async () => {
    const reply = await expectContinue("/nowhere", Buffer.from("{}"));
    expect(reply.beforeBody).toMatch(/^HTTP\/1\.1 404 /);
    await reply.closed;
  });

  test("Expect: 100-continue within the limit gets its 100, then the answer to the body it sent", async () => {
    const call = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "nope" } }));
    const reply = await expectContinue("/a2a/jsonrpc", call);
    expect(reply.beforeBody).toBe("HTTP/1.1 100 Continue\r\n\r\n");
    expect(reply.final).toMatch(/^HTTP\/1\.1 200 /);
    expect(reply.final).toContain("TASK_NOT_FOUND");
    expect(await answersAgain(reply.socket)).toMatch(/^HTTP\/1\.1 200 /);
    reply.socket.destroy();
  });

  test.each([
    ["JSON-RPC", "/a2a/jsonrpc", "Content-Encoding: gzip", -32005],
    ["HTTP+JSON", "/a2a/rest/message:send", "Content-Encoding: gzip", "INVALID_ARGUMENT"],
    ["JSON-RPC", "/a2a/jsonrpc", "Transfer-Encoding: gzip, chunked", -32005],
  ])("%s at %s: a body with %s is 415 naming the coding, not a parse error of its compressed bytes", async (_, path, coding, code) => {
    const gz = gzipSync(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t" } }));
    const chunked = coding.startsWith("Transfer");
    const framed = chunked ? Buffer.concat([Buffer.from(`${gz.length.toString(16)}\r\n`), gz, Buffer.from("\r\n0\r\n\r\n")]) : gz;
    const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n${coding}\r\n${chunked ? "" : `Content-Length: ${gz.length}\r\n`}\r\n`;
    const reply = await rawExchange(port(), head, framed);
    expect(reply.status).toBe(415);
    expect(reply.body).toContain(`which this server does not decode; send it uncompressed`);
    expect(reply.body).toContain(chunked ? "Transfer-Encoding gzip" : "Content-Encoding gzip");
    expect(reply.body).toContain(JSON.stringify(code));
  });

  test("the connection stays usable after a drained 413", async () => {
    const small = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "nope" } });
    const head =
      `POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${oversized.length}\r\n\r\n`;
    const second = `POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${small.length}\r\n\r\n${small}`;
    const answers = await new Promise<string>((resolve, reject) => {
      const socket = connect(port(), "127.0.0.1", () => {
        socket.write(head);
        socket.write(oversized);
        socket.write(second);
      });
      let text = "";
      socket.on("data", (c) => {
        text += c.toString("latin1");
        if ((text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length >= 2 && text.endsWith("}")) {
          socket.destroy();
          resolve(text);
        }
      });
      socket.on("error", reject);
    });
    expect(answers.match(/HTTP\/1\.1 \d{3}/g)).toEqual(["HTTP/1.1 413", "HTTP/1.1 200"]);
    expect(answers).toContain("TASK_NOT_FOUND");
  });
});

describe("slow clients (D32)", () => {
  let server: AgentServer;
  beforeAll(async () => {
    server = await serveA2AService(echo, referenceCard, {
      port: 0,
      grpcPort: false,
      timeouts: { headersMs: 400, requestMs: 2_000, bodyMs: 400, keepAliveMs: 300 },
    });
  });
  afterAll(() => server.close());
  const port = () => Number(new URL(server.cardUrl).port);

  test.each([
    ["JSON-RPC", "/a2a/jsonrpc"],
    ["HTTP+JSON", "/a2a/rest/message:send"],
  ])("%s: a body at 1 byte per 50 ms is answered 408 after the body timeout", async (_, path) => {
    const body = Buffer.from(JSON.stringify({ message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hello there" }] } }));
    const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${body.length}\r\n\r\n`;
    const reply = await rawExchange(port(), head, body, { bodyRate: { bytes: 1, everyMs: 50 } });
    expect(reply.status).toBe(408);
    expect(reply.body).toContain("did not arrive within 400 ms");
    // Within the timeout plus the watch's period (a quarter of it) and some slack for a busy machine.
    expect(reply.closedAfterMs).toBeGreaterThanOrEqual(400);
    expect(reply.closedAfterMs).toBeLessThan(1_500);
  });

  test("headers that never end are cut after the headers timeout", async () => {
    const reply = await new Promise<{ ms: number; text: string }>((resolve, reject) => {
      const started = performance.now();
      const socket = connect(port(), "127.0.0.1", () => socket.write("POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "));
      let text = "";
      const drip = setInterval(() => socket.write("a"), 50);
      socket.on("data", (c) => (text += c.toString("latin1")));
      socket.on("close", () => {
        clearInterval(drip);
        resolve({ ms: performance.now() - started, text });
      });
      socket.on("error", (err: NodeJS.ErrnoException) => {
        if (err.code !== "ECONNRESET" && err.code !== "EPIPE") reject(err);
      });
    });
    expect(reply.text).toMatch(/^HTTP\/1\.1 408/);
    expect(reply.ms).toBeLessThan(1_900);
  });

  test("an idle keep-alive connection is closed after its timeout", async () => {
    const ms = await new Promise<number>((resolve, reject) => {
      const socket = connect(port(), "127.0.0.1", () => socket.write("GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
      let answeredAt = 0;
      socket.on("data", () => (answeredAt ||= performance.now()));
      socket.on("close", () => resolve(performance.now() - answeredAt));
      socket.on("error", reject);
    });
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(2_000);
  });

  test("an idle gRPC connection is sent GOAWAY and closed after timeouts.grpcIdleMs (default 5 min)", async () => {
    const agent = await serveA2AService(echo, referenceCard, { port: 0, grpcPort: 0, drainMs: 100, timeouts: { grpcIdleMs: 300 } });
    try {
      const session = connectHttp2(`http://${agent.grpcAddress}`);
      session.on("error", () => undefined);
      const started = performance.now();
      await new Promise<void>((resolve) => session.once("goaway", () => resolve()));
      expect(performance.now() - started).toBeGreaterThanOrEqual(250);
      session.destroy();
    } finally {
      await agent.close();
    }
  });

  test("timeouts that cannot work are refused, naming the option", async () => {
    await expect(serveA2AService(echo, referenceCard, { port: 0, grpcPort: false, timeouts: { headersMs: 0 } })).rejects.toThrow(
      "timeouts.headersMs must be a number of milliseconds > 0",
    );
    await expect(serveA2AService(echo, referenceCard, { port: 0, grpcPort: false, timeouts: { headersMs: 5_000, requestMs: 1_000 } })).rejects.toThrow(
      "timeouts.headersMs must not exceed timeouts.requestMs",
    );
  });
});
