/**
 * HTTP/2 abuse on the gRPC port of serveA2AService with its default
 * settings (D80), from raw node:http2 clients: a rapid-reset burst (HEADERS
 * then RST_STREAM, thousands, over several connections), a PING flood, a
 * SETTINGS flood, and a connection opening a thousand calls it never sends.
 * Meanwhile a real gRPC client (the generated one, its own connection) keeps
 * calling and must get every answer, and the agent's heap, measured in the
 * agent's own process (test/support/flood-agent.ts, forked; heapUsed after
 * two full collections), must stay within a few megabytes of where it began.
 */
import { jest } from "@jest/globals";
import { fork, type ChildProcess } from "node:child_process";
import { connect as http2Connect, constants as h2, type ClientHttp2Session, type ClientSessionOptions } from "node:http2";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createGrpcServer, defaultMaxConcurrentStreams, defaultMaxSessionMemoryMb, grpcServerOptions, listenGrpc } from "protoc-gen-a2a/runtime/grpc";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { Role } from "../../generated/a2a_pb.js";
import { projectRoot } from "../support/protos.js";
import { within } from "../support/task-clients.js";

jest.setTimeout(60_000);

interface Agent {
  readonly child: ChildProcess;
  readonly grpcAddress: string;
  heap(): Promise<number>;
  close(): Promise<void>;
}

/** test/support/flood-agent.ts in a process of its own, with serveA2AService's default gRPC settings. */
async function startAgent(): Promise<Agent> {
  const loader = pathToFileURL(join(projectRoot, "test/support/ts-loader.mjs")).href;
  const child = fork(join(projectRoot, "test/support/flood-agent.ts"), [], {
    execArgv: ["--import", loader, "--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`the agent exited (${code})`))));
  exited.catch(() => undefined);
  const next = <T>(what: string): Promise<T> => within(what, Promise.race([new Promise<T>((resolve) => child.once("message", (m) => resolve(m as T))), exited]), 30_000);
  const { grpcAddress } = await next<{ grpcAddress: string }>("the agent listening");
  return {
    child,
    grpcAddress,
    heap: async () => {
      const reply = next<{ heapUsed: number }>("the agent's heap");
      child.send("heap");
      return (await reply).heapUsed;
    },
    close: async () => {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.send("close");
      await within("the agent exiting", gone);
    },
  };
}

let agent: Agent;
beforeAll(async () => {
  agent = await startAgent();
});
afterAll(async () => {
  await agent?.close();
});

const MB = 1024 * 1024;
/** How far the agent's heap may rise over its baseline, after a flood or during one. */
const HEAP_SLACK = 4 * MB;

/** A real client calling SendMessage over and over until `stop`; every call must be answered. */
function keepCalling(address: string) {
  const client = createA2AServiceGrpcClient(address);
  let running = true;
  let answered = 0;
  const waiters: { n: number; wake: () => void }[] = [];
  const done = (async () => {
    while (running) {
      const answer = await client.sendMessage({ message: { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text", value: "still there?" } }] } }, { timeoutMs: 10_000 });
      expect(answer.payload.case).toBe("message");
      answered++;
      for (const w of waiters.filter((w) => answered >= w.n)) (waiters.splice(waiters.indexOf(w), 1), w.wake());
    }
  })();
  return {
    get answered() {
      return answered;
    },
    /** Resolves once `n` calls in all have been answered (rejects if a call fails first). */
    reached(n: number): Promise<void> {
      return Promise.race([answered >= n ? Promise.resolve() : new Promise<void>((wake) => waiters.push({ n, wake })), done.then(() => undefined)]);
    },
    /** Stops after the call in flight and rejects with the first failure. */
    async stop() {
      running = false;
      try {
        await within("the last call", done, 10_000);
      } finally {
        client.close();
      }
    },
  };
}

/** A raw HTTP/2 connection to the gRPC port, connected; its GOAWAY (if any) and errors recorded. */
async function rawSession(address: string, options: Parameters<typeof http2Connect>[1] = {}): Promise<{ session: ClientHttp2Session; goaway: { code?: number } }> {
  const session = http2Connect(`http://${address}`, options);
  const goaway: { code?: number } = {};
  session.on("goaway", (code) => (goaway.code = code));
  // The agent closing an abusive connection is an expected outcome, not a test error.
  session.on("error", () => undefined);
  await within("the raw connection", new Promise((resolve, reject) => (session.once("connect", resolve), session.once("error", reject))));
  return { session, goaway };
}

const grpcHeaders = { ":method": "POST", ":path": "/lf.a2a.v1.A2AService/SendMessage", "content-type": "application/grpc", te: "trailers" };

/** Lets the event loop turn, so the frames written so far go out and answers come in. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("the default settings, against floods", () => {
  let baseline: number;
  beforeAll(async () => {
    // Warm: the first calls load and compile what every later one uses.
    const warm = keepCalling(agent.grpcAddress);
    await within("20 warm-up calls", warm.reached(20));
    await warm.stop();
    baseline = await agent.heap();
  });

  /**
   * Runs `flood` on one fresh raw connection after another until the real
   * client has had `answers` answers since the flood began (the flood goes
   * on the whole time, whatever the agent does to each connection), then
   * checks the heap. Returns what the floods reported and the GOAWAY codes.
   */
  async function floodWhileCalling(flood: (session: ClientHttp2Session) => Promise<number>, options: Parameters<typeof http2Connect>[1] = {}, answers = 20) {
    const caller = keepCalling(agent.grpcAddress);
    const before = caller.answered;
    let frames = 0;
    let connections = 0;
    const goaways: (number | undefined)[] = [];
    try {
      await within(`${answers} real answers during the flood`, (async () => {
        while (caller.answered - before < answers) {
          const { session, goaway } = await rawSession(agent.grpcAddress, options);
          connections++;
          try {
            frames += await flood(session);
          } finally {
            session.destroy();
          }
          goaways.push(goaway.code);
        }
      })(), 40_000);
    } finally {
      await caller.stop();
    }
    const heap = await agent.heap();
    expect(heap).toBeLessThan(baseline + HEAP_SLACK);
    return { frames, connections, goaways, heapOver: ((heap - baseline) / MB).toFixed(2) };
  }

  test("a rapid-reset burst: HEADERS then RST_STREAM, 500 a turn, thousands per connection", async () => {
    const r = await floodWhileCalling(async (session) => {
      let streams = 0;
      for (let round = 0; round < 6 && !session.closed && !session.destroyed; round++) {
        for (let i = 0; i < 500 && !session.closed && !session.destroyed; i++) {
          const stream = session.request(grpcHeaders, { endStream: false });
          stream.on("error", () => undefined);
          stream.close(h2.NGHTTP2_CANCEL);
          streams++;
        }
        await turn();
      }
      return streams;
    });
    expect(r.frames).toBeGreaterThanOrEqual(3000);
    console.log(`rapid reset: ${r.frames} streams opened and reset over ${r.connections} connections (GOAWAY codes ${JSON.stringify(r.goaways)}) while 20 real calls were answered; heap ${r.heapOver} MB over baseline`);
  });

  test("a PING flood: 1,000 PINGs a turn", async () => {
    const r = await floodWhileCalling(async (session) => {
      let sent = 0;
      const acks: Promise<void>[] = [];
      for (let round = 0; round < 20 && !session.closed && !session.destroyed; round++) {
        for (let i = 0; i < 1000; i++) {
          acks.push(new Promise((resolve) => {
            try {
              if (session.ping(() => resolve())) sent++;
              else resolve();
            } catch {
              resolve(); // the session is gone: the agent closed it
            }
          }));
        }
        await turn();
      }
      await within("every PING answered or failed", Promise.all(acks), 20_000);
      return sent;
    }, { maxOutstandingPings: 100_000 });
    expect(r.frames).toBeGreaterThanOrEqual(1000);
    console.log(`PING flood: ${r.frames} PINGs over ${r.connections} connections (GOAWAY codes ${JSON.stringify(r.goaways)}) while 20 real calls were answered; heap ${r.heapOver} MB over baseline`);
  });

  test("a SETTINGS flood: 500 SETTINGS frames a turn", async () => {
    let acked = 0;
    const r = await floodWhileCalling(async (session) => {
      let sent = 0;
      for (let round = 0; round < 10 && !session.closed && !session.destroyed; round++) {
        for (let i = 0; i < 500; i++) {
          try {
            session.settings({ initialWindowSize: 65_535 + i, headerTableSize: 4096 + (i % 8) }, (err) => void (err === null && acked++));
            sent++;
          } catch {
            break; // the session is gone: the agent closed it
          }
        }
        await turn();
      }
      // One PING after them: the agent reads frames in order, so its answer (or the connection's
      // end) means it has dealt with every SETTINGS before it. (node does not call back every
      // SETTINGS of such a flood, so their callbacks are counted, not awaited.)
      await within("a PING after the flood answered", new Promise<void>((resolve) => {
        try {
          if (!session.ping(() => resolve())) resolve();
        } catch {
          resolve();
        }
      }), 20_000);
      return sent;
    }, { maxOutstandingSettings: 100_000 } as ClientSessionOptions); // node takes it; @types/node lacks it
    expect(r.frames).toBeGreaterThanOrEqual(5000);
    console.log(`SETTINGS flood: ${r.frames} SETTINGS (${acked} acknowledged) over ${r.connections} connections (GOAWAY codes ${JSON.stringify(r.goaways)}) while 20 real calls were answered; heap ${r.heapOver} MB over baseline`);
  });

  test("1,000 calls opened on one connection and never sent: 100 are let in, the rest refused, others unaffected", async () => {
    // An attacker ignores the limit the agent announces; node's client keeps to it once it has read
    // the agent's SETTINGS, so every call is asked for before the connection is up: all 1,000
    // HEADERS go out with the preface, before the agent's SETTINGS can be read.
    const session = http2Connect(`http://${agent.grpcAddress}`, { peerMaxConcurrentStreams: 100_000 });
    session.on("error", () => undefined);
    let refused = 0;
    const allRefused = new Promise<void>((resolve) => {
      for (let i = 0; i < 1000; i++) {
        const stream = session.request(grpcHeaders, { endStream: false });
        stream.on("error", () => undefined);
        stream.on("close", () => {
          if (stream.rstCode === h2.NGHTTP2_REFUSED_STREAM && ++refused === 1000 - defaultMaxConcurrentStreams) resolve();
        });
      }
    });
    await within("the streams past the limit refused", allRefused);
    // The agent announced its limit too.
    expect(session.remoteSettings.maxConcurrentStreams).toBe(defaultMaxConcurrentStreams);
    // With the other 100 still open and waiting for their messages, a real client is answered, and the heap holds.
    const caller = keepCalling(agent.grpcAddress);
    await within("10 real calls", caller.reached(10));
    const heapWhileOpen = await agent.heap();
    await caller.stop();
    session.destroy();
    expect(refused).toBe(900);
    expect(heapWhileOpen).toBeLessThan(baseline + HEAP_SLACK);
    expect(await agent.heap()).toBeLessThan(baseline + HEAP_SLACK);
    console.log(`stream flood: ${refused} of 1000 refused, heap ${((heapWhileOpen - baseline) / MB).toFixed(2)} MB over baseline with 100 open`);
  });
});

describe("the settings are options", () => {
  test("createGrpcServer announces maxConcurrentStreams, and passes both limits to grpc-js", async () => {
    expect(grpcServerOptions({})).toMatchObject({ "grpc.max_concurrent_streams": 100, "grpc-node.max_session_memory": defaultMaxSessionMemoryMb });
    expect(grpcServerOptions({ maxConcurrentStreams: 7, maxSessionMemoryMb: 3 })).toMatchObject({ "grpc.max_concurrent_streams": 7, "grpc-node.max_session_memory": 3 });
    const server = createGrpcServer({ maxConcurrentStreams: 7 });
    const port = await listenGrpc(server, { host: "127.0.0.1", port: 0 });
    const session = http2Connect(`http://127.0.0.1:${port}`);
    try {
      await within("the server's SETTINGS", new Promise((resolve) => session.once("remoteSettings", resolve)));
      expect(session.remoteSettings.maxConcurrentStreams).toBe(7);
    } finally {
      session.destroy();
      server.forceShutdown();
    }
  });
});
