// Client child process of bench/streams.mjs: reads streams as fast as it can
// and reports over IPC. SSE is read with raw node:http (counting `data:`
// frames); gRPC with a lean node:http2 client that frames messages itself
// (5-byte length prefix), so neither grpc-js nor an SSE library is what limits.
//   <- { stream: { kind, port, path, headers, body, n, envelope, reps, budgetMs } }
//        runs streams one after the other (at least 1, at most `reps`, until
//        `budgetMs` is spent) over one kept-alive connection / session
//   -> { streams: [{ events, wallMs, firstMs }], error?, cpuMs, wallMs }
//   <- { open: { kind, port, path, headers, body, count } }
//        opens `count` streams at once, each on its own connection (SSE) or all
//        on one HTTP/2 session (gRPC), and answers once every one received its
//        first event
//   -> { opened, ms }
//   <- { close: true }   destroys every open socket (SSE) / the session (gRPC)
//   -> { closed }
import http from "node:http";
import http2 from "node:http2";
import { create, fromBinary, toBinary, toJson } from "@bufbuild/protobuf";
import { SendMessageRequestSchema, StreamResponseSchema, Role } from "../.build/generated/a2a_pb.js";
import { sseStream as sseStreamOn } from "../lib/sse-stream.mjs";
import { checkLastEvent, contextId } from "./fixture.mjs";

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
// One kept-alive session per server: each gRPC target must be measured on its own port.
const sessions = new Map();

function grpcSession(port) {
  let session = sessions.get(port);
  if (session === undefined || session.destroyed || session.closed) {
    session = http2.connect(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 1 << 20 } });
    session.on("error", () => undefined);
    const opened = session;
    opened.on("connect", () => opened.setLocalWindowSize(16 << 20));
    sessions.set(port, session);
  }
  return session;
}

function grpcFrame(text) {
  const msg = create(SendMessageRequestSchema, {
    message: { messageId: "msg-stream", contextId, role: Role.USER, parts: [{ content: { case: "text", value: text } }] },
  });
  const bytes = toBinary(SendMessageRequestSchema, msg);
  const frame = Buffer.alloc(5 + bytes.length);
  frame.writeUInt32BE(bytes.length, 1);
  frame.set(bytes, 5);
  return frame;
}

/** One SSE stream: resolves with { events, firstMs, wallMs, last } (last = text of the last data frame). */
const sseStream = (spec, agent = keepAlive) => sseStreamOn(spec, agent);

/** One gRPC server stream over the shared session: resolves like sseStream (last = the last message's bytes). */
function grpcStream({ port, path, headers, body }) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let firstMs = NaN;
    let events = 0;
    let carry;
    let last;
    let status;
    const req = grpcSession(port).request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...headers });
    req.on("response", (h) => (status = h["grpc-status"] ?? status));
    req.on("trailers", (h) => (status = h["grpc-status"]));
    req.on("data", (chunk) => {
      let buf = carry === undefined ? chunk : Buffer.concat([carry, chunk]);
      let pos = 0;
      while (buf.length - pos >= 5) {
        const len = buf.readUInt32BE(pos + 1);
        if (buf.length - pos - 5 < len) break;
        last = buf.subarray(pos + 5, pos + 5 + len);
        if (events++ === 0) firstMs = performance.now() - t0;
        pos += 5 + len;
      }
      carry = pos === buf.length ? undefined : buf.subarray(pos);
    });
    req.on("end", () => {
      if (status !== "0") reject(new Error(`grpc-status ${status}`));
      else resolve({ events, firstMs, wallMs: performance.now() - t0, last });
    });
    req.on("error", reject);
    req.end(body);
  });
}

function lastEventJson(kind, envelope, last) {
  if (kind === "grpc") return toJson(StreamResponseSchema, fromBinary(StreamResponseSchema, last));
  const value = JSON.parse(last);
  return envelope ? value.result : value;
}

async function runStreams(spec) {
  const { kind, n, envelope, reps, budgetMs } = spec;
  const request = { ...spec, body: kind === "grpc" ? grpcFrame(spec.body) : spec.body };
  const one = kind === "grpc" ? grpcStream : sseStream;
  const streams = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let error;
  try {
    do {
      const r = await one(request);
      // Every stream is checked: N + 1 events (the Task, then N chunks), the last one chunk N-1.
      if (r.events !== n + 1) throw new Error(`${r.events} events, expected ${n + 1}`);
      const bad = checkLastEvent(lastEventJson(kind, envelope, r.last), n);
      if (bad !== undefined) throw new Error(bad);
      streams.push({ events: r.events, wallMs: r.wallMs, firstMs: r.firstMs });
    } while (streams.length < reps && performance.now() - t0 < budgetMs);
  } catch (err) {
    error = String(err?.message ?? err);
  }
  const cpu = process.cpuUsage(cpu0);
  return { streams, error, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0 };
}

// --- many idle streams ---

let open = [];
let idleSession;

async function openStreams({ kind, port, path, headers, body, count }) {
  const t0 = performance.now();
  let first = 0;
  let resolveAll;
  let rejectAll;
  const all = new Promise((res, rej) => ((resolveAll = res), (rejectAll = rej)));
  const gotFirst = () => {
    if (++first === count) resolveAll();
  };
  if (kind === "grpc") {
    // Its own session (not the one part 1 kept alive), closed by closeStreams.
    const s = (idleSession = http2.connect(`http://127.0.0.1:${port}`));
    s.on("error", () => undefined);
    const frame = grpcFrame(body);
    for (let i = 0; i < count; i++) {
      const req = s.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...headers });
      req.once("data", gotFirst);
      req.on("error", () => undefined);
      req.end(frame);
      open.push(req);
    }
  } else {
    const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
    for (let i = 0; i < count; i++) {
      const req = http.request({ host: "127.0.0.1", port, path, method: "POST", headers: { ...headers, "content-length": Buffer.byteLength(body) }, agent }, (res) => {
        if (res.statusCode !== 200) rejectAll(new Error(`status ${res.statusCode}`));
        res.setEncoding("utf8");
        let seen = "";
        const onData = (c) => {
          seen += c;
          if (seen.includes("data:")) {
            res.off("data", onData);
            res.on("data", () => undefined);
            gotFirst();
          }
        };
        res.on("data", onData);
      });
      req.on("error", (err) => rejectAll(err));
      req.end(body);
      open.push(req);
    }
  }
  await all;
  return { opened: first, ms: performance.now() - t0 };
}

async function closeStreams() {
  const n = open.length;
  if (idleSession !== undefined) {
    // gRPC: all streams share the session; destroying it cancels every one.
    const s = idleSession;
    idleSession = undefined;
    if (!s.destroyed) {
      await new Promise((r) => {
        s.once("close", r);
        s.destroy();
      });
    }
  } else {
    await Promise.all(
      open.map(
        (req) =>
          new Promise((r) => {
            req.once("close", r);
            req.destroy();
          }),
      ),
    );
  }
  open = [];
  return { closed: n };
}

process.on("message", async (msg) => {
  try {
    if (msg?.stream !== undefined) process.send(await runStreams(msg.stream));
    else if (msg?.open !== undefined) process.send(await openStreams(msg.open));
    else if (msg?.close !== undefined) process.send(await closeStreams());
  } catch (err) {
    process.send({ error: String(err?.message ?? err) });
  }
});
process.on("disconnect", () => process.exit(0));
