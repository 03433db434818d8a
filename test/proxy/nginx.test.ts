/**
 * The agent behind a real nginx (Debian's package, started by the test on
 * free loopback ports, test/support/nginx.ts) configured with the README's
 * example, examples/nginx/a2a.conf, read from that file with its ports and
 * its read timeouts (60 s there; 2 s for SSE and 1.5 s for gRPC here) put in:
 * so what the README shows is what runs here.
 *
 * - SSE over HTTP/1.1 on both JSON bindings, unbuffered: the agent's
 *   heartbeats (D14) keep a stream that is quiet for longer than nginx's
 *   `proxy_read_timeout` open, before its first event too (the stream opens
 *   after a heartbeat period), and an agent without them is cut (so the
 *   timeout is real, and the first tests could fail).
 * - gRPC through `grpc_pass`: a stream quiet for longer than
 *   `grpc_read_timeout` is cut by nginx, and the generated client's
 *   recovery (followA2AServiceTask, D30) resumes it each time, with every
 *   artifact chunk once.
 */
import { jest } from "@jest/globals";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { request as undiciRequest } from "undici";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import type { FollowedEvent } from "protoc-gen-a2a/runtime";
import { createA2AServiceClient, followA2AServiceTask } from "../../generated/a2a_client.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { Role, TaskState, type StreamResponse, type Task } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler } from "../../generated/a2a_tasks.js";
import { freePorts, nginxAvailable, nginxBin, startNginx, type Nginx } from "../support/nginx.js";
import { projectRoot } from "../support/protos.js";
import { Scripts, chunk, deferred, taskCard, within, type Deferred } from "../support/task-clients.js";

jest.setTimeout(30_000);

/**
 * nginx's `proxy_read_timeout` in this test: how long an SSE stream may be
 * quiet toward nginx. Ten heartbeats fit in it, so a test process stalled
 * for a second by a busy machine does not get a stream cut that heartbeats
 * would have kept.
 */
const SSE_READ_TIMEOUT_MS = 2000;
/** The agent's SSE heartbeat. */
const HEARTBEAT_MS = 200;
/**
 * nginx's `grpc_read_timeout` in this test. A stall longer than it before a
 * stream's first event fails the recovery test (nginx answers 504 and a
 * failure before the first event is not retried, D30); after it, a stall
 * only delays.
 */
const GRPC_READ_TIMEOUT_MS = 1500;

const exampleConfPath = join(projectRoot, "examples/nginx/a2a.conf");

/**
 * examples/nginx/a2a.conf with the test's ports and read timeout. Each value
 * replaced must be there: an example edited so that one is gone fails here
 * rather than being tested with a default nginx picked instead.
 */
function exampleConf(ports: { http: number; grpc: number; agentHttp: number; agentGrpc: number }): string {
  let conf = readFileSync(exampleConfPath, "utf8");
  const replace = (from: RegExp, to: string) => {
    if (!from.test(conf)) throw new Error(`examples/nginx/a2a.conf no longer has ${from}`);
    conf = conf.replace(from, to);
  };
  replace(/listen 8000;/g, `listen 127.0.0.1:${ports.http};`);
  replace(/listen 8001 http2;/g, `listen 127.0.0.1:${ports.grpc} http2;`);
  replace(/server 127\.0\.0\.1:8080;/g, `server 127.0.0.1:${ports.agentHttp};`);
  replace(/server 127\.0\.0\.1:50051;/g, `server 127.0.0.1:${ports.agentGrpc};`);
  replace(/proxy_read_timeout 60s;/g, `proxy_read_timeout ${SSE_READ_TIMEOUT_MS}ms;`);
  replace(/grpc_read_timeout 60s;/g, `grpc_read_timeout ${GRPC_READ_TIMEOUT_MS}ms;`);
  return conf;
}

interface Fronted {
  readonly agent: AgentServer;
  readonly nginx: Nginx;
  /** nginx's HTTP origin (JSON-RPC, HTTP+JSON, the card). */
  readonly origin: string;
  /** nginx's gRPC address. */
  readonly grpcAddress: string;
  close(): Promise<void>;
}

const scripts = new Scripts();

/** The task runtime around the test's scripts, served with `heartbeatMs`, behind nginx with the example config. */
async function fronted(heartbeatMs: number): Promise<Fronted> {
  // The agent's ports are picked here too: with publicUrl and publicGrpcAddress its addresses are nginx's.
  const [http, grpc, agentHttp, agentGrpc] = await freePorts(4);
  const origin = `http://127.0.0.1:${http}`;
  const grpcAddress = `127.0.0.1:${grpc}`;
  const handler = createA2AServiceTaskHandler(scripts.executor);
  const agent = await serveA2AService(handler, taskCard, { host: "127.0.0.1", port: agentHttp, grpcPort: agentGrpc, heartbeatMs, drainMs: 200, publicUrl: origin, publicGrpcAddress: grpcAddress });
  let nginx: Nginx;
  try {
    nginx = await startNginx(exampleConf({ http: http!, grpc: grpc!, agentHttp: agentHttp!, agentGrpc: agentGrpc! }));
  } catch (err) {
    await agent.close();
    throw err;
  }
  return { agent, nginx, origin, grpcAddress, close: async () => (await nginx.stop(), await agent.close()) };
}

beforeAll(() => {
  if (!nginxAvailable()) throw new Error(`nginx is not installed at ${nginxBin} (apt-get install nginx; .ci/run installs it), or set NGINX`);
});

const message = (text: string) => ({ messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text" as const, value: text } }] });

/** An SSE response read as it arrives: its `data:` lines and heartbeat comments, each with when it came. */
interface SseRead {
  readonly data: { readonly at: number; readonly json: unknown }[];
  readonly comments: number[];
  /** How the body ended: "end", or the error's text. */
  readonly ended: Promise<string>;
  /** Resolves when `test` holds for what has arrived, checked at each line. */
  until(what: string, test: () => boolean, ms?: number): Promise<void>;
}

async function readSse(url: string, body: unknown): Promise<SseRead> {
  const res = await undiciRequest(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", "a2a-version": "1.0" },
    body: JSON.stringify(body),
  });
  expect(res.statusCode).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^text\/event-stream/);
  const data: SseRead["data"][number][] = [];
  const comments: number[] = [];
  const waiters = new Set<{ test: () => boolean; wake: () => void }>();
  const check = () => {
    for (const w of waiters) if (w.test()) (waiters.delete(w), w.wake());
  };
  const ended = (async () => {
    let buffered = "";
    try {
      for await (const piece of res.body) {
        buffered += (piece as Buffer).toString();
        let nl: number;
        while ((nl = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, nl).replace(/\r$/, "");
          buffered = buffered.slice(nl + 1);
          if (line.startsWith("data:")) data.push({ at: Date.now(), json: JSON.parse(line.slice(5)) });
          else if (line.startsWith(":")) comments.push(Date.now());
          check();
        }
      }
      return "end";
    } catch (err) {
      return String(err);
    } finally {
      for (const w of waiters) w.wake();
    }
  })();
  return {
    data,
    comments,
    ended,
    until: (what, test, ms = 10_000) => within(what, test() ? Promise.resolve() : new Promise<void>((wake) => waiters.add({ test, wake })), ms),
  };
}

/** The StreamResponse of a data line: JSON-RPC's `result`, HTTP+JSON's body as it is. */
const streamResponseOf = (binding: "JSONRPC" | "HTTP+JSON", json: unknown) => (binding === "JSONRPC" ? (json as { result?: unknown }).result : json) as Record<string, unknown> | undefined;

const JSON_BINDINGS = [
  { binding: "JSONRPC" as const, path: "/a2a/jsonrpc", url: (origin: string) => `${origin}/a2a/jsonrpc`, body: (m: object) => ({ jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message: m } }) },
  { binding: "HTTP+JSON" as const, path: "/a2a/rest/message:stream", url: (origin: string) => `${origin}/a2a/rest/message:stream`, body: (m: object) => ({ message: m }) },
];

/** ProtoJSON of the test's message (the SSE tests speak the wire format, not the client). */
const jsonMessage = (text: string) => ({ messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] });

/** A task that says WORKING, then is quiet until `gate`, then sends one artifact and COMPLETED. */
function quietTask(gate: Deferred): string {
  return scripts.add("quiet", async function* ({ signal }) {
    yield { state: TaskState.WORKING };
    await Promise.race([gate.promise, new Promise((resolve) => signal.addEventListener("abort", resolve))]);
    if (signal.aborted) return;
    yield chunk("after the quiet", "out", { last: true });
    yield { state: TaskState.COMPLETED };
  });
}

describe("SSE through nginx (HTTP/1.1, proxy_buffering off)", () => {
  let withHeartbeats: Fronted;
  let without: Fronted;
  beforeAll(async () => {
    [withHeartbeats, without] = await Promise.all([fronted(HEARTBEAT_MS), fronted(0)]);
  });
  afterAll(async () => {
    await Promise.all([withHeartbeats?.close(), without?.close()]);
  });

  // The two bindings at once: each test waits on nginx's timeout, not on the CPU.
  test.concurrent.each(JSON_BINDINGS)("$binding: heartbeats keep a stream open through nginx while it is quiet for 1.5 times proxy_read_timeout", async ({ binding, url, body, path }) => {
    const gate = deferred();
    const sse = await readSse(url(withHeartbeats.origin), body(jsonMessage(quietTask(gate))));
    try {
      // The Task and WORKING, then nothing but heartbeats: each passes nginx as it is written.
      await sse.until("the task and WORKING", () => sse.data.length >= 2);
      const quietFrom = sse.data[1]!.at;
      await sse.until("heartbeats for 1.5 read timeouts", () => sse.comments.some((at) => at - quietFrom >= 1.5 * SSE_READ_TIMEOUT_MS));
      expect(sse.data).toHaveLength(2);
      gate.resolve();
      expect(await within("the stream ending", sse.ended)).toBe("end");
      const cases = sse.data.map((d) => Object.keys(streamResponseOf(binding, d.json) ?? {})[0]);
      expect(cases).toEqual(["task", "statusUpdate", "artifactUpdate", "statusUpdate"]);
      expect(JSON.stringify(sse.data.at(-1)!.json)).toContain("TASK_STATE_COMPLETED");
      // Heartbeats came through all along, never a read timeout apart.
      const gaps = [quietFrom, ...sse.comments.filter((at) => at > quietFrom)].map((at, i, all) => (i === 0 ? 0 : at - all[i - 1]!));
      expect(Math.max(...gaps)).toBeLessThan(SSE_READ_TIMEOUT_MS);
      expect(timeoutsOf(withHeartbeats.nginx, path)).toBe(0);
    } finally {
      gate.resolve();
    }
  });

  // Before D14's period, a stream was opened only with its first event: nginx answered 504 here.
  test.concurrent.each(JSON_BINDINGS)("$binding: a stream whose first event comes after 1.5 times proxy_read_timeout is opened through nginx and kept open until it comes", async ({ binding, url, body, path }) => {
    const gate = deferred();
    const key = scripts.add("slow to start", async function* ({ signal }) {
      await Promise.race([gate.promise, new Promise((resolve) => signal.addEventListener("abort", resolve))]);
      if (signal.aborted) return;
      yield { state: TaskState.WORKING };
      yield chunk("at last", "out", { last: true });
    });
    const opened = Date.now();
    const sse = await readSse(url(withHeartbeats.origin), body(jsonMessage(key)));
    try {
      await sse.until("heartbeats for 1.5 read timeouts", () => sse.comments.some((at) => at - opened >= 1.5 * SSE_READ_TIMEOUT_MS));
      expect(sse.data).toHaveLength(0);
      gate.resolve();
      expect(await within("the stream ending", sse.ended)).toBe("end");
      const cases = sse.data.map((d) => Object.keys(streamResponseOf(binding, d.json) ?? {})[0]);
      expect(cases).toEqual(["task", "statusUpdate", "artifactUpdate", "statusUpdate"]);
      expect(JSON.stringify(sse.data.at(-1)!.json)).toContain("TASK_STATE_COMPLETED");
      expect(timeoutsOf(withHeartbeats.nginx, path)).toBe(0);
    } finally {
      gate.resolve();
    }
  });

  test.concurrent.each(JSON_BINDINGS)("$binding: without heartbeats, nginx cuts the same quiet stream at proxy_read_timeout", async ({ url, body, path }) => {
    const gate = deferred();
    const sse = await readSse(url(without.origin), body(jsonMessage(quietTask(gate))));
    try {
      await sse.until("the task and WORKING", () => sse.data.length >= 2);
      const how = await within("nginx cutting the stream", sse.ended);
      // Cut, not ended: nginx closes the connection without the last chunk, and says why.
      expect(how).not.toBe("end");
      expect(sse.comments).toEqual([]);
      expect(sse.data).toHaveLength(2);
      expect(timeoutsOf(without.nginx, path)).toBe(1);
    } finally {
      gate.resolve();
    }
  });
});

/** How many requests for `path` nginx's error log says timed out reading from the agent. */
function timeoutsOf(nginx: Nginx, path: string): number {
  return nginx.errorLog().split("\n").filter((line) => line.includes("upstream timed out") && line.includes(` ${path} HTTP/`)).length;
}

describe("bodies through nginx", () => {
  let front: Fronted;
  beforeAll(async () => {
    front = await fronted(0);
  });
  afterAll(async () => {
    await front?.close();
  });

  test.each(["GRPC", "JSONRPC", "HTTP+JSON"] as const)("%s: a 2 MiB message passes nginx (its own default limit is 1 MiB)", async (binding) => {
    const big = new Uint8Array(2 * 1024 * 1024).fill(7);
    const key = scripts.add(`big ${binding}`, async function* ({ message: m }) {
      const part = m.parts[1]?.content;
      const got = part?.case === "raw" ? part.value.length : 0;
      yield { reply: { messageId: crypto.randomUUID(), role: Role.AGENT, parts: [{ content: { case: "text", value: `got ${got} bytes` } }] } };
    });
    const client = binding === "GRPC" ? createA2AServiceGrpcClient(front.grpcAddress) : await createA2AServiceClient(front.origin, { bindings: [binding] });
    try {
      const request = message(key);
      const answer = await client.sendMessage({ message: { ...request, parts: [...request.parts, { content: { case: "raw", value: big } }] } });
      expect(answer.payload.case === "message" ? answer.payload.value.parts[0]?.content.value : answer.payload.case).toBe(`got ${big.length} bytes`);
    } finally {
      client.close();
    }
  });
});

const CHUNKS = 2;
const chunkText = (i: number) => `chunk ${i}; `;
const FULL = Array.from({ length: CHUNKS }, (_, i) => chunkText(i)).join("");

/** The text of an event's artifact parts ("" for other events). */
function textOfEvent(item: FollowedEvent<StreamResponse, Task>): string {
  const p = item.event.payload;
  return p.case === "artifactUpdate" ? (p.value.artifact?.parts ?? []).map((part) => (part.content.case === "text" ? part.content.value : "")).join("") : "";
}

describe("stream recovery through nginx's read timeout", () => {
  let front: Fronted;
  beforeAll(async () => {
    // No heartbeats: the JSON streams are cut by nginx like the gRPC one (which has none).
    front = await fronted(0);
  });
  afterAll(async () => {
    await front?.close();
  });

  // The three bindings at once: each test waits on nginx's timeouts, not on the CPU.
  test.concurrent.each(["GRPC", "JSONRPC", "HTTP+JSON"] as const)("%s: a stream cut by nginx each time the executor pauses is resumed, every chunk once", async (binding) => {
    // The executor yields a chunk, then pauses until the follower has been cut off by nginx and
    // has reconnected: each pause outlasts the read timeout by construction, not by a timer.
    const gates = Array.from({ length: CHUNKS }, () => deferred());
    const key = scripts.add(`paced ${binding}`, async function* ({ signal }) {
      yield { state: TaskState.WORKING };
      for (let i = 0; i < CHUNKS; i++) {
        await Promise.race([gates[i]!.promise, new Promise((resolve) => signal.addEventListener("abort", resolve))]);
        if (signal.aborted) return;
        yield chunk(chunkText(i), "doc", { append: i > 0, last: i === CHUNKS - 1 });
      }
      yield { state: TaskState.COMPLETED };
    });
    const client =
      binding === "GRPC"
        ? createA2AServiceGrpcClient(front.grpcAddress)
        : await createA2AServiceClient(front.origin, { bindings: [binding] });
    const retries: { attempt: number; error: string }[] = [];
    let retried: Deferred = deferred();
    const follow = followA2AServiceTask(client, { message: message(key) }, {
      backoffMs: 5,
      onRetry: ({ attempt, error }) => {
        retries.push({ attempt, error: error.entry.grpcStatus });
        retried.resolve();
      },
    });
    const items: FollowedEvent<StreamResponse, Task>[] = [];
    const done = (async () => {
      for await (const item of follow) items.push(item);
    })();
    try {
      for (let i = 0; i < CHUNKS; i++) {
        // Cut by nginx while the executor waits; the chunk goes out while the follower reconnects.
        // A follow that fails instead (an error it does not retry) fails the test with that error.
        await within(`cut ${i + 1} and the follower retrying`, Promise.race([retried.promise, done]), 5000);
        retried = deferred();
        gates[i]!.resolve();
      }
      await within("the follow ending", done, 10_000);
    } finally {
      for (const g of gates) g.resolve();
      client.close();
    }
    expect(items.map(textOfEvent).join("")).toBe(FULL);
    expect(items[0]?.event.payload.case).toBe("task");
    expect(follow.task?.status?.state).toBe(TaskState.COMPLETED);
    expect(follow.task?.artifacts.map((a) => a.parts.map((p) => (p.content.case === "text" ? p.content.value : "")).join(""))).toEqual([FULL]);
    // Every cut was nginx's, and each was seen as a transport failure (UNAVAILABLE), so retried.
    expect(retries.length).toBeGreaterThanOrEqual(CHUNKS);
    expect(retries.every((r) => r.error === "UNAVAILABLE")).toBe(true);
    const marker = binding === "GRPC" ? "/lf.a2a.v1.A2AService/" : binding === "JSONRPC" ? "/a2a/jsonrpc " : "/a2a/rest/";
    expect(front.nginx.errorLog().split("\n").filter((line) => line.includes("upstream timed out") && line.includes(marker)).length).toBeGreaterThanOrEqual(CHUNKS);
  });
});
