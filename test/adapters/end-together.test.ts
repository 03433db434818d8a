/**
 * D115: the node:http listener writes the unary answers that finish in one
 * turn of the event loop together, at the turn's end, in groups of at most
 * MOST_ANSWERS_TOGETHER; a client that left, or an answer whose end()
 * throws, keeps no other client from its answer. Real sockets; the order of
 * "answered" (the core returned) and "ended" (node's res.end ran) shows
 * when each answer was written.
 */
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { createNodeListener, type Endpoint } from "protoc-gen-a2a/runtime";
import { MOST_ANSWERS_TOGETHER } from "../../runtime/adapters/end-together.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { TaskState } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { deferred, taskCard, within } from "../support/task-clients.js";

interface Turn {
  server: Server;
  port: number;
  /** "answered <n>" when the core returned the answer to request n, "ended <n>" when node's end() ran for it. */
  readonly events: string[];
  /** Request n's response, for a test to break. */
  readonly responses: Map<number, ServerResponse>;
}

/**
 * A server whose core holds every request until `count` have arrived, then
 * answers each in a macrotask of its own within one turn (setImmediate
 * callbacks queued together run in the same check phase): the way answers
 * finish when requests arrive together on many sockets.
 */
async function holdingServer(count: number, beforeAnswer: (n: number, turn: Turn) => void = () => {}): Promise<Turn> {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  const turn = { events: [] as string[], responses: new Map<number, ServerResponse>() } as Turn;
  const listener = createNodeListener({
    async handle(req: Parameters<Endpoint["handle"]>[0]): ReturnType<Endpoint["handle"]> {
      const n = Number(req.header("x-n"));
      if (++arrived === count) release();
      await all;
      await new Promise((resolve) => setImmediate(resolve));
      beforeAnswer(n, turn);
      turn.events.push(`answered ${n}`);
      return { kind: "body", status: 200, headers: { "content-type": "text/plain" }, body: `answer ${n}` };
    },
  });
  turn.server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const n = Number(req.headers["x-n"]);
    turn.responses.set(n, res);
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      turn.events.push(`ended ${n}`);
      return end(...args);
    }) as ServerResponse["end"];
    listener(req, res);
  });
  await new Promise<void>((resolve) => turn.server.listen(0, "127.0.0.1", resolve));
  turn.port = (turn.server.address() as AddressInfo).port;
  return turn;
}

/** GETs with header x-n on a connection of its own: the answer's text, or the error the socket ended with. */
function get(port: number, n: number): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/", headers: { "x-n": String(n) }, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve(text));
      res.on("error", (err) => resolve(`error ${err.message}`));
    });
    req.on("error", (err) => resolve(`error ${err.message}`));
    // An answer that never comes fails the test rather than hanging it.
    req.setTimeout(2000, () => req.destroy(new Error("no answer within 2 s")));
    req.end();
  });
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * serveA2AService over an executor that goes WORKING, says it runs, waits for `gate`, then goes
 * on with `afterGate` (the task COMPLETES when it returns). drainMs is far beyond node's keep-alive
 * timeout (5 s): only a connection's own end can let close() finish early.
 */
async function gatedServer(afterGate?: A2AServiceExecutor) {
  const gate = deferred();
  const running = deferred();
  const executor: A2AServiceExecutor = async function* (context) {
    yield { state: TaskState.WORKING };
    running.resolve();
    await gate.promise;
    if (afterGate !== undefined) yield* afterGate(context);
  };
  const served = await serveA2AService(createA2AServiceTaskHandler(executor), taskCard, { port: 0, grpcPort: false, host: "127.0.0.1", drainMs: 30_000 });
  return { served, gate, running, agent: new Agent({ keepAlive: true }) };
}

/** A JSON-RPC call of `method` with a message over `agent`; `onResponse` settles what it returns. */
function callJsonRpc<T>(jsonRpcUrl: string, agent: Agent, method: string, onResponse: (res: IncomingMessage, resolve: (value: T) => void) => void): Promise<T> {
  const url = new URL(jsonRpcUrl);
  return new Promise<T>((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { message: { messageId: `m-${method}`, role: "ROLE_USER", parts: [{ text: "hi" }] } } });
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "a2a-version": "1.0" };
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", agent, headers }, (res) => onResponse(res, resolve));
    req.on("error", reject);
    req.end(body);
  });
}

/** Starts close(), lets the executor go on, and gives when close() finished. */
function closeThenRelease(served: { close(): Promise<void> }, gate: { resolve(): void }): { closedAt(): number; closing: Promise<void> } {
  let at = 0;
  const closing = served.close().then(() => void (at = Date.now()));
  gate.resolve();
  return { closedAt: () => at, closing };
}

test("answers that finish in one turn are written after the last of them, each with its own body", async () => {
  const turn = await holdingServer(8);
  try {
    const texts = await Promise.all(range(8).map((n) => get(turn.port, n)));
    expect(texts).toEqual(range(8).map((n) => `answer ${n}`));
    const answered = turn.events.filter((e) => e.startsWith("answered"));
    // Every answer was out of the core before the first was written: one wake-up of the clients, not eight.
    expect(turn.events.slice(0, 8)).toEqual(answered);
    expect([...turn.events.slice(8)].sort()).toEqual(range(8).map((n) => `ended ${n}`).sort());
  } finally {
    turn.server.close();
  }
});

test(`a turn that finishes more than ${MOST_ANSWERS_TOGETHER} answers writes them in groups of ${MOST_ANSWERS_TOGETHER}`, async () => {
  const count = MOST_ANSWERS_TOGETHER + 6;
  const turn = await holdingServer(count);
  try {
    const texts = await Promise.all(range(count).map((n) => get(turn.port, n)));
    expect(texts).toEqual(range(count).map((n) => `answer ${n}`));
    const firstEnd = turn.events.findIndex((e) => e.startsWith("ended"));
    // The group was written as its last answer joined it, before the next answer finished.
    expect(firstEnd).toBe(MOST_ANSWERS_TOGETHER);
    expect(turn.events.slice(firstEnd, firstEnd + MOST_ANSWERS_TOGETHER).every((e) => e.startsWith("ended"))).toBe(true);
    expect(turn.events.slice(firstEnd + MOST_ANSWERS_TOGETHER, firstEnd + MOST_ANSWERS_TOGETHER + 6).every((e) => e.startsWith("answered"))).toBe(true);
    expect(turn.events.filter((e) => e.startsWith("ended"))).toHaveLength(count);
  } finally {
    turn.server.close();
  }
});

test("a client that left before its turn ended, and an answer whose end() throws, keep no other client from its answer", async () => {
  const turn = await holdingServer(6, (n, t) => {
    const res = t.responses.get(n)!;
    if (n === 1) res.socket!.destroy();
    if (n === 4) {
      const end = res.end;
      res.end = (() => {
        t.events.push("ended 4");
        throw new Error("end() broke");
      }) as unknown as typeof end;
    }
  });
  try {
    const texts = await Promise.all(range(6).map((n) => get(turn.port, n)));
    expect(texts[0]).toBe("answer 0");
    expect(texts[1]).toMatch(/^error /);
    expect(texts[2]).toBe("answer 2");
    expect(texts[3]).toBe("answer 3");
    // Its socket was destroyed rather than left open with no answer to come.
    expect(texts[4]).toMatch(/^error /);
    expect(texts[5]).toBe("answer 5");
    expect(turn.responses.get(4)!.destroyed).toBe(true);
  } finally {
    turn.server.close();
  }
});

test("an end() node refuses (a body on a HEAD answer, rejectNonStandardBodyWrites) is answered as any escaped failure: the headers without the body, and reported", async () => {
  const reported: string[] = [];
  const listener = createNodeListener({
    handle: async () => ({ kind: "body", status: 405, headers: { "content-type": "application/json" }, body: "{}" }),
    report: (err) => void reported.push((err as NodeJS.ErrnoException).code ?? String(err)),
  });
  const server = createServer({ rejectNonStandardBodyWrites: true }, listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const status = await new Promise<number | string>((resolve) => {
      const req = request({ host: "127.0.0.1", port, method: "HEAD", path: "/", agent: false }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", (err) => resolve(`error ${err.message}`));
      req.end();
    });
    expect(status).toBe(405);
    expect(reported).toEqual(["ERR_HTTP_BODY_NOT_ALLOWED"]);
  } finally {
    server.close();
  }
});

test("serveA2AService's close() lets go of a keep-alive connection whose call was answered after close() began (connection: close), without waiting for its keep-alive timeout", async () => {
  const { served, gate, running, agent } = await gatedServer();
  try {
    const answered = callJsonRpc<{ status: number; connection: string | undefined }>(served.jsonRpcUrl as string, agent, "SendMessage", (res, resolve) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    await within("the executor to run", running.promise);
    // The call is answered (the task COMPLETED) once close() began.
    const { closedAt, closing } = closeThenRelease(served, gate);
    // Answered after close() began: the answer says so, and node closes the connection once it is out.
    expect(await within("the answer", answered)).toEqual({ status: 200, connection: "close" });
    const answeredAt = Date.now();
    await within("close()", closing, 4000);
    expect(closedAt() - answeredAt).toBeLessThan(2000);
  } finally {
    agent.destroy();
  }
});

test("an answer queued before its server's close() began, and written after, still ends its keep-alive connection once it is out, even for a client that keeps its side open", async () => {
  let server!: Server;
  let closedAt = 0;
  let closing: Promise<void> | undefined;
  server = createServer(
    createNodeListener({
      async handle() {
        // Runs before the answer's own end of turn: close() begins while the answer waits in the queue.
        setImmediate(() => (closing = new Promise<void>((resolve) => server.close(() => resolve(void (closedAt = Date.now()))))));
        return { kind: "body", status: 200, headers: { "content-type": "text/plain" }, body: "queued" };
      },
    }),
  );
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  // A client that never closes its side (allowHalfOpen): only the server can end the connection.
  const socket = connect({ host: "127.0.0.1", port, allowHalfOpen: true });
  try {
    let text = "";
    const answered = new Promise<void>((resolve) =>
      socket.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
        if (text.endsWith("\r\n\r\nqueued")) resolve();
      }),
    );
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await within("the answer", answered);
    const answeredAt = Date.now();
    // Its headers were written before close() began: they kept the connection alive.
    expect(text).toMatch(/\r\nConnection: keep-alive\r\n/i);
    expect(closing).toBeDefined();
    await within("close()", closing as Promise<void>, 4000);
    expect(closedAt - answeredAt).toBeLessThan(2000);
  } finally {
    socket.destroy();
    server.close();
  }
});

test("an SSE stream that ends after serveA2AService's close() began ends its keep-alive connection once it is out", async () => {
  const { served, gate, running, agent } = await gatedServer();
  try {
    const ended = callJsonRpc<string>(served.jsonRpcUrl as string, agent, "SendStreamingMessage", (res, resolve) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve(text));
    });
    await within("the executor to run", running.promise);
    // The executor returns: the task COMPLETES and its stream ends, after close() began.
    const { closedAt, closing } = closeThenRelease(served, gate);
    expect(await within("the stream's end", ended)).toContain("TASK_STATE_COMPLETED");
    const endedAt = Date.now();
    await within("close()", closing, 4000);
    expect(closedAt() - endedAt).toBeLessThan(2000);
  } finally {
    agent.destroy();
  }
});

test("a large answer written after close() began reaches a slow reader whole before its connection ends", async () => {
  // Larger than loopback's socket buffers take at once, so part of it waits in node's own buffer.
  const big = "x".repeat(8_000_000);
  const { served, gate, running, agent } = await gatedServer(async function* () {
    yield { artifact: { artifactId: "big", parts: [{ content: { case: "text", value: big } }] } };
  });
  try {
    const answered = callJsonRpc<string>(served.jsonRpcUrl as string, agent, "SendMessage", (res, resolve) => {
      const want = Number(res.headers["content-length"]);
      let got = 0;
      // A reader slower than loopback (a client across a network): it starts reading later.
      res.pause();
      setTimeout(() => res.resume(), 300);
      res.on("data", (c: Buffer) => (got += c.length));
      res.on("end", () => resolve(`status ${res.statusCode} got ${got} of ${want}`));
      res.on("aborted", () => resolve(`aborted after ${got} of ${want}`));
      res.on("error", (err) => resolve(`error ${err.message} after ${got} of ${want}`));
    }).catch((err: Error) => `error ${err.message}`);
    await within("the executor to run", running.promise);
    const { closing } = closeThenRelease(served, gate);
    expect(await within("the answer", answered, 10_000)).toMatch(/^status 200 got (\d+) of \1$/);
    await within("close()", closing, 10_000);
  } finally {
    agent.destroy();
  }
}, 30_000);

test("a large answer already ended but still being sent when close() begins reaches its slow reader whole", async () => {
  const big = "x".repeat(8_000_000);
  const { served, gate, running, agent } = await gatedServer(async function* () {
    yield { artifact: { artifactId: "big", parts: [{ content: { case: "text", value: big } }] } };
  });
  try {
    const headers = deferred();
    let resume: () => void = () => undefined;
    const answered = callJsonRpc<string>(served.jsonRpcUrl as string, agent, "SendMessage", (res, resolve) => {
      const want = Number(res.headers["content-length"]);
      let got = 0;
      // A reader slower than loopback: it reads once close() has begun.
      res.pause();
      resume = () => res.resume();
      res.on("data", (c: Buffer) => (got += c.length));
      res.on("end", () => resolve(`status ${res.statusCode} got ${got} of ${want}`));
      res.on("aborted", () => resolve(`aborted after ${got} of ${want}`));
      res.on("error", (err) => resolve(`error ${err.message} after ${got} of ${want}`));
      headers.resolve();
    }).catch((err: Error) => `error ${err.message}`);
    await within("the executor to run", running.promise);
    gate.resolve();
    // The answer is ended (its headers are here); most of its 8 MB waits in the server's socket.
    await within("the answer's headers", headers.promise);
    const closing = served.close();
    resume();
    expect(await within("the answer", answered, 10_000)).toMatch(/^status 200 got (\d+) of \1$/);
    await within("close()", closing, 10_000);
  } finally {
    agent.destroy();
  }
}, 30_000);
