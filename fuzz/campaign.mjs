// The campaign's engine, shared by `npm run fuzz` (fuzz/fuzz.mjs) and the
// smoke in `npm test` (test/fuzz/fuzz-smoke.test.ts): starts the server
// child (fuzz/server.mjs), and for each binding sends generated requests
// with a fixed number in flight, judges every answer, and reports.
//
// Per request the oracle is: an answer comes (no hang: FUZZ_TIMEOUT_MS), and
// it is not Internal (JSON-RPC -32603 or -32006, HTTP 5xx, gRPC INTERNAL or
// UNKNOWN). Per binding: the child saw no uncaughtException, no
// unhandledRejection, no onError (an unexpected handler failure) and no
// executor failure, and its heap (heapUsed after gc, less V8's compiled code: fuzz/server.mjs weigh()) is back within 5% of
// its baseline, taken after a warm-up that fills the task store to its
// bound. Each finding keeps its fast-check seed and path; the first few are
// replayed one at a time and shrunk, and the minimized request is printed.
import { fork } from "node:child_process";
import { join } from "node:path";
import fc from "fast-check";
import { Pool } from "undici";
import { fuzzDir, prepare } from "./build.mjs";
import { createPool, learn } from "./values.mjs";
import { weighInto } from "./report.mjs";

/** With FUZZ_HEAP_SNAPSHOTS=<dir>, a heap snapshot of the server child (after gc), to diff baseline and end. */
async function snapshot(server, name) {
  const dir = process.env.FUZZ_HEAP_SNAPSHOTS;
  if (dir !== undefined) await server.child.request({ cmd: "snapshot", path: join(dir, `${name}.heapsnapshot`) });
}

/** Starts fuzz/server.mjs in `mode` with an IPC channel; `request(msg)` sends and resolves with the next answer. */
export async function startServer(mode = "fuzz") {
  const child = fork(join(fuzzDir, "server.mjs"), [mode], { execArgv: ["--expose-gc"], stdio: ["ignore", "ignore", "pipe", "ipc"] });
  let stderr = "";
  child.stderr.on("data", (d) => {
    if (stderr.length < 100_000) stderr += d;
  });
  const waiters = [];
  let exited;
  child.on("message", (m) => waiters.shift()?.resolve(m));
  child.on("exit", (code, signal) => {
    exited = { code, signal };
    for (const w of waiters.splice(0)) w.reject(new Error(`the server child exited (${code ?? signal}): ${stderr.slice(-2000)}`));
  });
  child.request = (msg) =>
    new Promise((resolve, reject) => {
      if (exited !== undefined) return reject(new Error(`the server child exited (${exited.code ?? exited.signal}): ${stderr.slice(-2000)}`));
      waiters.push({ resolve, reject });
      if (msg !== undefined) child.send(msg);
    });
  const ready = await child.request();
  return {
    child,
    ...ready,
    stderr: () => stderr,
    exited: () => exited,
    async stop() {
      if (exited !== undefined) return;
      await child.request({ cmd: "exit" }).catch(() => undefined);
    },
  };
}

/** An HTTP client of the server: undici's pool, `connections` sockets, no retries. */
export function httpClient(server, connections, timeoutMs) {
  const pool = new Pool(`http://127.0.0.1:${server.httpPort}`, { connections, pipelining: 1, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 4000 });
  return {
    pool,
    /**
     * One request; the whole answer, except an SSE stream still open after
     * `streamMs` (a subscription to a task that waits for input stays open by
     * design, D24), which is read that long and then cut (`cut: true`).
     */
    async send({ method, path, headers, body }, streamMs = 500) {
      const res = await pool.request({ method, path, headers, body: method === "GET" || method === "HEAD" ? undefined : body });
      if (!String(res.headers["content-type"] ?? "").startsWith("text/event-stream")) {
        return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
      }
      let text = "";
      let cut = false;
      const timer = setTimeout(() => {
        cut = true;
        res.body.destroy();
      }, streamMs);
      try {
        for await (const chunk of res.body) text += chunk;
      } catch (e) {
        if (!cut) throw e;
      } finally {
        clearTimeout(timer);
      }
      return { status: res.statusCode, headers: res.headers, text, cut };
    },
    close: () => pool.destroy(),
  };
}

/** A JSON-RPC call by the harness itself (seeding, refreshing the pool). */
async function rpc(http, method, params) {
  const answer = await http.send({ method: "POST", path: "/a2a/jsonrpc", headers: { "content-type": "application/json", "a2a-version": "1.0" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  return JSON.parse(answer.text);
}

/** Keeps at least 8 tasks that wait for input (and a push config on each) in the pool. */
export async function seed(http, pool) {
  const waiting = await rpc(http, "ListTasks", { status: "TASK_STATE_INPUT_REQUIRED", pageSize: 100 });
  const tasks = waiting.result?.tasks ?? [];
  for (const t of tasks) learn(pool, t);
  for (let i = tasks.length; i < 8; i++) {
    const sent = await rpc(http, "SendMessage", { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: "__ask" }] } });
    const task = sent.result?.task;
    if (task === undefined) throw new Error(`seeding failed: ${JSON.stringify(sent)}`);
    learn(pool, task);
    const config = await rpc(http, "CreateTaskPushNotificationConfig", { taskId: task.id, url: "https://192.0.2.1/hook" });
    if (config.result === undefined) throw new Error(`seeding a push config failed: ${JSON.stringify(config)}`);
    learn(pool, config.result);
  }
}

/**
 * Runs `count` requests of one binding (or for `seconds`, whichever ends
 * first), `concurrency` in flight. `binding` is one of fuzz/jsonrpc.mjs,
 * fuzz/http-json.mjs, fuzz/grpc.mjs: { name, arbitrary, open(server, ctx) ->
 * client }, a client being { build(value) -> request, send(request) ->
 * answer, judge(answer) -> problem or undefined, kind(answer), printable(request), printableAnswer(answer), close() }.
 */
export async function runBinding(binding, options) {
  const { count, seconds = Infinity, concurrency = 32, seed: baseSeed = 1, timeoutMs = 15_000, warmup = 20_000, minimize = 3, log = () => {} } = options;
  const server = await startServer("fuzz");
  const http = httpClient(server, concurrency + 4, timeoutMs);
  const pool = createPool();
  const report = { binding: binding.name, requests: 0, warmup: 0, problems: {}, outcomes: {}, findings: [], minimized: [], heap: {}, child: {}, seconds: 0 };
  let client;
  try {
    await seed(http, pool);
    client = await binding.open(server, { http, pool, timeoutMs, concurrency });
    const chunk = 500;
    let chunkNo = 0;
    const run = async (n, deadline, counting) => {
      // Values come in chunks of 500 from fast-check, each chunk from its own seed, so a
      // finding is replayed (and shrunk) from its chunk's seed and its index as the path.
      let values = [];
      let chunkSeed = 0;
      let next = 0;
      let taken = 0;
      let refreshing;
      const take = () => {
        if (taken >= n || Date.now() >= deadline) return undefined;
        if (next >= values.length) {
          chunkSeed = baseSeed * 1_000_003 + chunkNo++;
          values = fc.sample(binding.arbitrary, { seed: chunkSeed, numRuns: Math.min(chunk, n - taken) });
          next = 0;
          // Every 5,000 requests, the seed tasks are topped up (fuzzed messages end and cancel them).
          if (chunkNo % 10 === 0) refreshing = seed(http, pool);
          if (counting && chunkNo % 100 === 0) log(`${binding.name}: ${report.requests} requests, ${Math.round(report.requests / ((Date.now() - t0) / 1000))}/s, ${report.findings.length} findings`);
        }
        taken++;
        return { value: values[next], seed: chunkSeed, path: String(next++) };
      };
      const worker = async () => {
        for (let item = take(); item !== undefined; item = take()) {
          if (refreshing !== undefined) await refreshing;
          const outcome = await judgeOne(client, item.value, timeoutMs);
          report.outcomes[outcome.kind] = (report.outcomes[outcome.kind] ?? 0) + 1;
          if (!counting) {
            report.warmup++;
            continue;
          }
          report.requests++;
          if (outcome.problem !== undefined) {
            const key = outcome.problem.slice(0, 100);
            report.problems[key] = (report.problems[key] ?? 0) + 1;
            if (report.findings.length < 50) report.findings.push({ problem: outcome.problem, seed: item.seed, path: item.path, request: outcome.request, answer: outcome.answer });
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
      await refreshing;
    };
    let t0 = Date.now();
    await run(warmup, Infinity, false);
    weighInto(report.heap, "baseline", await server.child.request({ cmd: "mem" }));
    await snapshot(server, `fuzz-${binding.name}-baseline`);
    t0 = Date.now();
    await run(count, t0 + seconds * 1000, true);
    report.seconds = (Date.now() - t0) / 1000;
    weighInto(report.heap, "after", await server.child.request({ cmd: "mem" }));
    await snapshot(server, `fuzz-${binding.name}-after`);
    // Findings, replayed one at a time and shrunk by fast-check.
    for (const f of report.findings.slice(0, minimize)) {
      const out = await fc.check(
        fc.asyncProperty(binding.arbitrary, async (v) => (await judgeOne(client, v, timeoutMs)).problem === undefined),
        { seed: f.seed, path: f.path, numRuns: 1, endOnFailure: false },
      );
      if (out.failed) {
        const again = await judgeOne(client, out.counterexample[0], timeoutMs);
        report.minimized.push({ problem: again.problem ?? f.problem, shrinks: out.numShrinks, request: again.request, answer: again.answer });
      } else report.minimized.push({ problem: f.problem, note: "did not fail again when replayed alone", request: f.request, answer: f.answer });
    }
  } finally {
    await client?.close();
    report.child = await server.child.request({ cmd: "counts" }).catch((e) => ({ error: String(e) }));
    await http.close();
    await server.stop();
  }
  report.ok =
    report.findings.length === 0 &&
    report.child.uncaught === 0 &&
    report.child.unhandled === 0 &&
    report.child.onError === 0 &&
    report.child.executorErrors === 0 &&
    report.heap.ok === true;
  return report;
}

/** Sends one value and judges the answer: { kind, problem?, request?, answer? } (request and answer printed only for a problem). */
export async function judgeOne(client, value, timeoutMs) {
  const request = client.build(value);
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ hang: `no answer in ${timeoutMs + 2000} ms` }), timeoutMs + 2000);
  });
  try {
    const answer = await Promise.race([client.send(request).catch((e) => ({ error: e })), timeout]);
    let kind;
    let problem;
    if (answer.hang !== undefined) {
      kind = "hang";
      problem = `hang: ${answer.hang}`;
    } else if (answer.error !== undefined) {
      const code = answer.error?.code ?? answer.error?.name ?? "error";
      kind = `client error ${code}`;
      if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") problem = `hang: ${code}`;
    } else {
      kind = client.kind(answer);
      problem = client.judge(answer);
    }
    return problem === undefined ? { kind } : { kind, problem, request: client.printable(request), answer: answer.error !== undefined ? String(answer.error) : answer.hang !== undefined ? undefined : client.printableAnswer(answer) };
  } finally {
    clearTimeout(timer);
  }
}
