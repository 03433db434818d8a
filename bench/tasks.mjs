#!/usr/bin/env node
// The task runtime's speed figures (the issue's targets), on loopback, for
// "ours-tasks": a whole agent written as one executor on the task runtime
// (createA2AServiceTaskHandler from generated/a2a_tasks.ts over
// dist/runtime/a2a/tasks/, default in-memory store; bench/tasks/agent.mjs),
// against @a2a-js/sdk's full stack (DefaultRequestHandler + InMemoryTaskStore
// + an AgentExecutor doing the same work) and the node:http / grpc-js floors,
// all measured in the same run. Three parts (BENCH_TASKS_PARTS):
//
// unary    SendMessage answered by the completed echo task, req/s with
//          autocannon (JSON-RPC, HTTP+JSON POST /message:send) or the
//          node:http2 gRPC driver (gRPC unary), on the machinery of
//          bench/jsonrpc.mjs, bench/http-json.mjs and bench/grpc.mjs
//          (bench/lib/harness.mjs: servers and driver in their own
//          processes, exact answers checked before, after the warm-up and at
//          the end, alternating runs, medians, disturbed runs discarded and
//          repeated). Targets per binding: ours-tasks (bench/tasks/
//          server-<binding>.mjs), ours (the directly implemented handler of
//          the other benches: what the task runtime costs on top of it),
//          a2a-js-full, ceiling (gRPC: raw). The JSON ceilings answer what
//          ours-tasks answers (bench/tasks/server-ceiling-<binding>.mjs: the
//          task with a minted id, its status timestamp and the user's message
//          in its history); opt-in, echo-ceiling is the binding benches'
//          ceiling (the echo task alone, as ours answers there). Goals:
//          ours-tasks/a2a-js-full >= 5x on JSON-RPC and HTTP+JSON, >= 2x on
//          gRPC; ours-tasks/ceiling >= 0.5x on JSON-RPC and HTTP+JSON.
// streams  events/s on ONE SendStreamingMessage of N artifact chunks, SSE,
//          N = 100, 1,000, 10,000, read by a client process as fast as it can
//          (bench/tasks/client.mjs); per run a target repeats the stream for
//          BENCH_STREAM_BUDGET_MS; targets ours-tasks-http-json and
//          ours-tasks-jsonrpc (bench/tasks/server.mjs), and bench/streams/
//          server.mjs's a2a-js-full-rest and a2a-js-full-jsonrpc (at their own
//          N, BENCH_FULL_STREAM_SIZES: their cost per event grows with the
//          stream), ours-http-json (the directly implemented streaming
//          handler) and ceiling-sse. Goals: >= 100,000 events/s at
//          N = 10,000, and flat: at no N more µs per event than 1.25x that at a smaller N.
// idle     heap per idle subscribed stream: BENCH_IDLE_STREAMS WORKING tasks
//          (SendMessage with returnImmediately, the executor waiting), then as
//          many SubscribeToTask SSE streams, one per task and connection,
//          opened at once; heapUsed after global.gc() in the server process
//          (over IPC) before and once every stream has its first event, per
//          stream; then the streams are closed and heap is compared again.
//          Targets ours-tasks-http-json (GET /tasks/{id}:subscribe),
//          ours-tasks-jsonrpc (SubscribeToTask), and ceiling-sse (the
//          node:http floor of an idle SSE stream, bench/streams/server.mjs).
//          Goal: < 10 KB per stream.
//
// Environment (besides the knobs of bench/jsonrpc.mjs and bench/grpc.mjs,
// which the unary part reads: BENCH_SECONDS, BENCH_RUNS, BENCH_WARMUP,
// BENCH_CONNECTIONS, BENCH_PIPELINING, BENCH_GRPC_SESSIONS,
// BENCH_GRPC_STREAMS, BENCH_OTHER_MAX, BENCH_RETRIES, BENCH_PIN):
//   BENCH_TASKS_PARTS=unary,streams,idle
//   BENCH_TASKS_BINDINGS=jsonrpc,http-json,grpc           (unary part)
//   BENCH_GRPC_DRIVER=h2load   gRPC unary's driver: h2load (nghttp2's, in C; apt-get
//                 install nghttp2-client; .ci/run installs it), the default here: it takes
//                 5-11% of a core, so the servers are what is measured; or node (node:http2,
//                 bench/grpc.mjs's default), which checks every call's grpc-status but takes
//                 as much of the 2 cores per call as a fast server does (bench/README.md)
//   BENCH_TARGETS=ours-tasks,ours,a2a-js-full,ceiling     (unary part; also ceiling-together,
//                 the JSON ceilings with their answers written at the end of their turn, D115,
//                 and echo-ceiling, the JSON ceiling of bench/jsonrpc.mjs and bench/http-json.mjs)
//   BENCH_STREAM_TARGETS=ours-tasks-http-json,ours-tasks-jsonrpc,a2a-js-full-rest,a2a-js-full-jsonrpc,ours-http-json,ceiling-sse
//   BENCH_STREAM_SIZES=100,1000,10000
//   BENCH_FULL_STREAM_SIZES=100,1000   (a2a-js-full-*; 10000 takes minutes per stream)
//   BENCH_STREAM_BUDGET_MS=1000
//   BENCH_IDLE_TARGETS=ours-tasks-http-json,ours-tasks-jsonrpc,ceiling-sse
//   BENCH_IDLE_STREAMS=1000
//   BENCH_PROFILE=<target>   unary: ours-tasks (or any unary target) runs
//                            under --cpu-prof, its top costs per request are
//                            printed per binding (bench/.profiles/
//                            tasks-<binding>-<target>.cpuprofile); streams:
//                            a streams target, per event
//   BENCH_HEAP_SNAPSHOT=1    idle: heap snapshots (base, open) and what one
//                            stream holds by constructor
//   BENCH_SMOKE=1            a short run of every part (1 s runs, one run,
//                            N = 100 and 1,000, 50 idle streams) that checks
//                            every target's answers end to end; its figures
//                            mean nothing
import { spawnSync } from "node:child_process";
import { existsSync, renameSync } from "node:fs";
import { connect } from "node:http2";
import { cpus } from "node:os";
import { join, relative } from "node:path";
import { isDeepStrictEqual } from "node:util";

const smoke = process.env.BENCH_SMOKE === "1";
if (smoke) {
  const defaults = {
    BENCH_SECONDS: "1",
    BENCH_RUNS: "1",
    BENCH_WARMUP: "0",
    BENCH_RETRIES: "0",
    BENCH_OTHER_MAX: "2",
    BENCH_STREAM_SIZES: "100,1000",
    BENCH_FULL_STREAM_SIZES: "100",
    BENCH_STREAM_BUDGET_MS: "200",
    BENCH_IDLE_STREAMS: "50",
  };
  for (const [k, v] of Object.entries(defaults)) process.env[k] ??= v;
}

const {
  benchDir,
  fmt,
  grpcDriver,
  load,
  loadSettings,
  measure: measureUnary,
  median,
  num,
  prepareOurs,
  printDriverNotes,
  printRatio,
  resultTable,
  root,
  startDriver,
  startNode,
  startServer: startUnaryServer,
  stopAll,
  summarize,
  table,
} = await import("./lib/harness.mjs");
const { printTopCosts } = await import("./lib/profile-top.mjs");
const { measureStreamRun, pct } = await import("./lib/stream-run.mjs");
const { echoTaskJson, echoTaskWithHistoryJson, message } = await import("./lib/a2a-fixture.mjs");
const { a2aVersion, idleText, jsonRpcBody, restBody, streamText, messageJson } = await import("./streams/fixture.mjs");

const list = (name, fallback) => (process.env[name] ?? fallback).split(",").map((s) => s.trim()).filter(Boolean);
const parts = list("BENCH_TASKS_PARTS", "unary,streams,idle");
for (const p of parts) if (!["unary", "streams", "idle"].includes(p)) throw new Error(`unknown part ${p} (unary, streams, idle)`);
const settings = loadSettings("ours-tasks,ours,a2a-js-full,ceiling");
const { runs, pin, profile, profileDir, otherMax, retries } = settings;
const bindings = list("BENCH_TASKS_BINDINGS", "jsonrpc,http-json,grpc");
// The issue's gRPC figure is the servers': h2load, unless told otherwise (see BENCH_GRPC_DRIVER above).
const unaryGrpcDriver = grpcDriver(process.env.BENCH_GRPC_DRIVER || "h2load");
// Told now, not after the JSON bindings' minutes of runs.
if (parts.includes("unary") && bindings.includes("grpc") && unaryGrpcDriver.label === "h2load" && spawnSync("h2load", ["--version"], { stdio: "ignore" }).status !== 0) {
  throw new Error("bench/tasks.mjs drives gRPC with nghttp2's h2load, which is not installed: apt-get install nghttp2-client (.ci/run installs it), or set BENCH_GRPC_DRIVER=node for the node:http2 driver");
}
const verdict = (ok) => (ok ? "met" : "MISSED");
/** Lines of the final summary: [what, figure, goal, verdict]. */
const goals = [];

prepareOurs("a2a_tasks.ts");
console.log(
  `Task runtime benchmarks (bench/tasks.mjs): parts ${parts.join(", ")}${smoke ? " (BENCH_SMOKE=1: a short check run, figures not meaningful)" : ""}; ` +
    `${cpus().length} CPUs, Node ${process.versions.node}${pin ? "; servers pinned to CPU 0, drivers and clients to CPU 1" : ""}`,
);

// ===================================================================== unary

/** What is minted per task (its id, its status timestamp), replaced by placeholders for the comparison. */
function withMintedFields(answer) {
  const task = answer?.task;
  if (typeof task?.id !== "string" || task.id === "") return undefined;
  if (typeof task.status?.timestamp !== "string" || Number.isNaN(Date.parse(task.status.timestamp))) return undefined;
  if (!Array.isArray(task.history) || !task.history.every((m) => m.taskId === task.id)) return undefined;
  const { timestamp: _, ...status } = task.status;
  return { task: { ...task, id: "(minted)", status, history: task.history.map((m) => ({ ...m, taskId: "(minted)" })) } };
}

/** ours-tasks' SendMessage answer: the full stack's (echo task with the user's message in its history) with the runtime's minted fields. */
const expectedTasksAnswer = (() => {
  const { task } = echoTaskWithHistoryJson(message);
  return { task: { ...task, id: "(minted)", history: [{ ...message, taskId: "(minted)" }] } };
})();

/** The answer (a ProtoJSON SendMessageResponse) `target` must give, how it is normalized first, and whether `target` mints its id and time. */
function expectedUnary(binding, target) {
  // The JSON ceilings answer what ours-tasks answers; raw (gRPC's ceiling) answers the echo task.
  const mints = target === "ours-tasks" || ((target === "ceiling" || target === "ceiling-together") && binding !== "grpc");
  if (mints) return { expected: expectedTasksAnswer, normalize: withMintedFields, mints };
  if (target === "a2a-js-full") return { expected: echoTaskWithHistoryJson(message), normalize: (x) => x, mints };
  return { expected: echoTaskJson(message), normalize: (x) => x, mints };
}

const unaryBindings = {
  jsonrpc: {
    name: "JSON-RPC SendMessage",
    dir: "jsonrpc",
    required: "a2a_jsonrpc.ts",
    async request() {
      const { requestBody, requestHeaders } = await import("./jsonrpc/fixture.mjs");
      return { path: "/", method: "POST", headers: requestHeaders, body: requestBody };
    },
    async answer(server, request) {
      const res = await fetch(server.origin + request.path, { method: request.method, headers: request.headers, body: request.body });
      const text = await res.text();
      const body = parseJson(text);
      const ok = res.status === 200 && /^application\/json/.test(res.headers.get("content-type") ?? "") && body?.jsonrpc === "2.0" && body.id === 1;
      return { ok, text, value: ok ? body.result : undefined, bytes: Buffer.byteLength(text) };
    },
    goals: { full: 5, ceiling: 0.5 },
  },
  "http-json": {
    name: "HTTP+JSON POST /message:send",
    dir: "http-json",
    required: "a2a_http.ts",
    async request() {
      const { routes } = await import("./http-json/fixture.mjs");
      return routes["send-message"].request;
    },
    async answer(server, request) {
      const res = await fetch(server.origin + request.path, { method: request.method, headers: request.headers, body: request.body });
      const text = await res.text();
      const ok = res.status === 200 && /^application\/(a2a\+)?json(;|$)/.test(res.headers.get("content-type") ?? "");
      return { ok, text, value: ok ? parseJson(text) : undefined, bytes: Buffer.byteLength(text) };
    },
    goals: { full: 5, ceiling: 0.5 },
  },
  grpc: {
    name: "gRPC unary SendMessage",
    dir: "grpc",
    required: "a2a_grpc.ts",
    ceilingModule: "raw",
    // h2load unless BENCH_GRPC_DRIVER=node (bench/lib/load-h2load.mjs says why and what it cannot check).
    driver: unaryGrpcDriver.script,
    async request() {
      const { metadata, path, requestBytes } = await import("./grpc/fixture.mjs");
      const sessions = Math.round(num("BENCH_GRPC_SESSIONS", 4));
      const streams = Math.round(num("BENCH_GRPC_STREAMS", 16));
      return { path, method: "POST", headers: metadata, body: requestBytes.toString("base64"), driverOptions: { sessions, streams }, bytes: requestBytes };
    },
    async answer(server, request) {
      const { decodeResponse } = await import("./grpc/fixture.mjs");
      const { grpcFrame } = await import("./lib/grpc-frame.mjs");
      const { headers, body, trailers } = await grpcCall(server.origin, request, grpcFrame(request.bytes));
      const grpcStatus = trailers["grpc-status"] ?? headers["grpc-status"];
      const one = body.length >= 5 && body[0] === 0 && body.readUInt32BE(1) === body.length - 5;
      let value;
      try {
        value = one ? decodeResponse(body.subarray(5)) : undefined;
      } catch {
        value = undefined;
      }
      const ok = headers[":status"] === 200 && grpcStatus === "0" && value !== undefined;
      return { ok, text: `:status ${headers[":status"]}, grpc-status ${grpcStatus}, ${JSON.stringify(value)}`, value, bytes: Math.max(0, body.length - 5) };
    },
    goals: { full: 2 },
  },
};
for (const b of bindings) if (unaryBindings[b] === undefined) throw new Error(`unknown binding ${b} (jsonrpc, http-json, grpc)`);

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** One gRPC call over node:http2: { headers, body, trailers }. */
function grpcCall(origin, request, frame) {
  return new Promise((resolve, reject) => {
    const session = connect(origin);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": request.path, "content-type": "application/grpc", te: "trailers", ...request.headers });
    let headers = {};
    let trailers = {};
    const chunks = [];
    stream.on("response", (h) => (headers = h));
    stream.on("trailers", (t) => (trailers = t));
    stream.on("data", (c) => chunks.push(c));
    stream.on("error", reject);
    stream.on("close", () => {
      session.close();
      resolve({ headers, body: Buffer.concat(chunks), trailers });
    });
    stream.end(frame);
  });
}

const labelOf = (binding, t) => (t === "ceiling" && unaryBindings[binding].ceilingModule === "raw" ? "raw" : t);
const moduleOf = (binding, t) => {
  const b = unaryBindings[binding];
  if (t === "ours-tasks") return `tasks/server-${binding}.mjs`;
  if (t === "ceiling" && b.ceilingModule !== undefined) return `${b.dir}/server-${b.ceilingModule}.mjs`;
  // The JSON ceilings here answer what ours-tasks answers; echo-ceiling is the binding benches' own.
  if (t === "ceiling" || t === "ceiling-together") return `tasks/server-${t}-${binding}.mjs`;
  if (t === "echo-ceiling") return `${b.dir}/server-ceiling.mjs`;
  return `${b.dir}/server-${t}.mjs`;
};

async function verifyUnary(binding, server, request) {
  const { expected, normalize, mints } = expectedUnary(binding, server.base);
  const r = await unaryBindings[binding].answer(server, request);
  const got = r.ok ? normalize(r.value) : undefined;
  if (got === undefined || !isDeepStrictEqual(got, expected)) {
    throw new Error(
      `${server.target} does not answer ${unaryBindings[binding].name} as expected (no benchmark of an error path):\n` +
        `  got      ${r.text.slice(0, 600)}\n  expected ${JSON.stringify(expected)}`,
    );
  }
  if (mints) {
    // Minted per answer: a target that answered a kept id would pass the shape check and spare itself the minting.
    // (Not the timestamp: two answers may come in one millisecond.)
    const { id } = r.value.task;
    if (id === server.mintedId) throw new Error(`${server.target} answered the task id of its previous answer again: ids must be minted per answer`);
    server.mintedId = id;
  }
  return r.bytes;
}

async function unaryPart() {
  const targets = settings.targets;
  for (const t of targets) if (!["ours-tasks", "ours", "a2a-js-full", "ceiling", "ceiling-together", "echo-ceiling"].includes(t)) throw new Error(`unknown unary target ${t}`);
  const { seconds, warmup } = settings;
  const summary = [];
  for (const binding of bindings) {
    const b = unaryBindings[binding];
    // ceiling-together (opt-in) has no gRPC form: node's HTTP/2 sessions already write at the turn's end;
    // echo-ceiling neither: raw already answers the echo task alone.
    const targets = settings.targets.filter((t) => (t !== "ceiling-together" && t !== "echo-ceiling") || binding !== "grpc");
    for (const t of targets) if (!existsSync(join(benchDir, moduleOf(binding, t)))) throw new Error(`missing ${moduleOf(binding, t)}`);
    const request = await b.request();
    console.log(
      `\n${b.name} on loopback: ${targets.map((t) => labelOf(binding, t)).join(", ")}; ${runs} x ${seconds} s per target (after ${warmup} s warm-up)` +
        (binding === "grpc"
          ? `, ${request.driverOptions.sessions} HTTP/2 sessions x ${request.driverOptions.streams} streams, ${unaryGrpcDriver.label} driver`
          : `, ${settings.connections} connections, pipelining ${settings.pipelining}, autocannon`) +
        " in its own process",
    );
    const driver = startDriver(settings, b.driver);
    const servers = [];
    try {
      for (const t of targets) {
        const s = await startUnaryServer(labelOf(binding, t), moduleOf(binding, t), settings);
        s.base = t;
        servers.push(s);
      }
      for (const s of servers) {
        const bytes = await verifyUnary(binding, s, request);
        const minted = "the echo task with the user's message in its history, the task id and status timestamp minted";
        const what =
          s.base === "ours-tasks"
            ? `${minted} by the runtime`
            : expectedUnary(binding, s.base).mints
              ? `${minted} by the ceiling`
              : s.base === "a2a-js-full"
                ? "the echo task with the user's message in its history, as the SDK adds it"
                : "the echo task";
        console.log(`  verified ${s.target}: ${what} (${bytes} bytes)`);
        // What every OK call to it carries, for a driver that cannot read grpc-status (h2load).
        s.request = { ...request, driverOptions: { ...request.driverOptions, answerBytes: bytes } };
      }
      if (warmup > 0) {
        for (const s of servers) await load(driver, s, s.request, warmup, settings);
        for (const s of servers) await verifyUnary(binding, s, request);
      }
      for (let i = 0; i < runs; i++) {
        console.log(`run ${i + 1}/${runs}`);
        for (const s of servers) await measureUnary(driver, s, s.request, settings);
      }
      for (const s of servers) await verifyUnary(binding, s, request);
    } finally {
      await stopAll(servers, driver);
    }
    const results = servers.filter((s) => s.runs.length > 0).map((s) => summarize(s.target, s.runs));
    const by = Object.fromEntries(results.map((r) => [r.target, r]));
    const unit = binding === "grpc" ? { unit: "call", unitName: "call" } : { unit: "req", unitName: "request" };
    console.log(`\n${b.name}: median of ${runs} runs x ${seconds} s per target; server/driver CPU in % of one core:\n`);
    console.log(resultTable(results, binding === "grpc" ? { unit: "call", latencyDigits: 2 } : {}));
    console.log("");
    const ceiling = labelOf(binding, "ceiling");
    printRatio(by, "ours-tasks", "a2a-js-full", b.goals.full, "", unit);
    printRatio(by, "ours-tasks", ceiling, b.goals.ceiling, "", unit);
    printRatio(by, "ours-tasks", "ours", undefined, "", unit);
    printRatio(by, "ours", "a2a-js-full", undefined, "", unit);
    // ours answers the echo task alone: the gRPC raw and the JSON echo-ceiling answer the same.
    printRatio(by, "ours", binding === "grpc" ? ceiling : "echo-ceiling", undefined, "", unit);
    printRatio(by, "ours-tasks", "ceiling-together", undefined, "", unit);
    printRatio(by, "ceiling-together", ceiling, undefined, "", unit);
    printRatio(by, "ours-tasks", "echo-ceiling", undefined, "", unit);
    printRatio(by, "echo-ceiling", ceiling, undefined, "", unit);
    printDriverNotes(results, `${b.name} `);
    const ratio = (x, y) => (by[x] && by[y] ? by[x].rps / by[y].rps : undefined);
    const rFull = ratio("ours-tasks", "a2a-js-full");
    const rCeil = ratio("ours-tasks", ceiling);
    if (rFull !== undefined) goals.push([`${b.name}: ours-tasks/a2a-js-full`, `${fmt(rFull, 2)}x`, `>= ${b.goals.full}x`, verdict(rFull >= b.goals.full)]);
    if (rCeil !== undefined && b.goals.ceiling !== undefined) goals.push([`${b.name}: ours-tasks/${ceiling}`, `${fmt(rCeil, 2)}x`, `>= ${b.goals.ceiling}x`, verdict(rCeil >= b.goals.ceiling)]);
    summary.push({ binding, by, ceiling });
    if (profile !== "" && servers.some((s) => s.target === profile)) {
      const file = join(profileDir, `tasks-${binding}-${profile}.cpuprofile`);
      renameSync(join(profileDir, `${profile}.cpuprofile`), file);
      console.log(`\n${profile} ran under --cpu-prof (its numbers above carry the profiler's overhead); profile: ${relative(root, file)}\n`);
      printTopCosts(file, { root, requests: servers.find((s) => s.target === profile)?.requests });
    }
  }
  if (summary.length > 0) {
    console.log("\nUnary summary (median req/s or call/s; ratios of the same run):\n");
    const r = (by, x, y) => (by[x] && by[y] ? `${fmt(by[x].rps / by[y].rps, 2)}x` : "-");
    const v = (by, x) => (by[x] ? fmt(by[x].rps, 0) : "-");
    console.log(
      table([
        ["benchmark", "ours-tasks", "ours", "a2a-js-full", "ceiling / raw", "ours-tasks/a2a-js-full", "ours-tasks/ceiling", "ours-tasks/ours", "ours-tasks µs/req", "a2a-js-full µs/req"],
        ...summary.map(({ binding, by, ceiling }) => [
          unaryBindings[binding].name,
          v(by, "ours-tasks"),
          v(by, "ours"),
          v(by, "a2a-js-full"),
          v(by, ceiling),
          r(by, "ours-tasks", "a2a-js-full"),
          r(by, "ours-tasks", ceiling),
          r(by, "ours-tasks", "ours"),
          by["ours-tasks"] ? fmt(by["ours-tasks"].us, 1) : "-",
          by["a2a-js-full"] ? fmt(by["a2a-js-full"].us, 1) : "-",
        ]),
      ]),
    );
  }
}

// =========================================================== stream servers

const jsonHeaders = { "content-type": "application/json", "A2A-Version": a2aVersion };
const sseRest = { path: "/message:stream", headers: jsonHeaders, body: restBody, envelope: false };
const sseJsonRpc = { path: "/", headers: jsonHeaders, body: jsonRpcBody, envelope: true };
const STREAM_TARGETS = {
  "ours-tasks-http-json": { ...sseRest, script: "tasks/server.mjs", tasks: true, what: "the task runtime, HTTP+JSON SSE (POST /message:stream)" },
  "ours-tasks-jsonrpc": { ...sseJsonRpc, script: "tasks/server.mjs", tasks: true, what: "the task runtime, JSON-RPC SSE (SendStreamingMessage)" },
  "a2a-js-full-rest": { ...sseRest, script: "streams/server.mjs", what: "a2a-js full stack, REST SSE (express)" },
  "a2a-js-full-jsonrpc": { ...sseJsonRpc, script: "streams/server.mjs", what: "a2a-js full stack, JSON-RPC SSE (express)" },
  "ours-http-json": { ...sseRest, script: "streams/server.mjs", what: "ours, the directly implemented streaming handler, HTTP+JSON SSE" },
  "ours-jsonrpc": { ...sseJsonRpc, script: "streams/server.mjs", what: "ours, the directly implemented streaming handler, JSON-RPC SSE" },
  "ceiling-sse": { ...sseRest, script: "streams/server.mjs", what: "bare node:http SSE (JSON.stringify per frame, drain)" },
};
/** Events of an N-chunk stream: the task runtime adds the COMPLETED status update at the end. */
const eventsOf = (target, n) => n + (STREAM_TARGETS[target].tasks ? 2 : 1);

async function startStreamServer(target, { prof = false } = {}) {
  const execArgv = ["--expose-gc"];
  if (prof) execArgv.push("--cpu-prof", "--cpu-prof-dir", profileDir, "--cpu-prof-name", `tasks-streams-${target}.cpuprofile`);
  const child = startNode(join(benchDir, STREAM_TARGETS[target].script), [target], { cpu: 0, pin, execArgv });
  const { port } = await child.request();
  return { target, child, port, runs: {}, events: 0 };
}

async function stopStreamServer(s) {
  await s.child.request({ cmd: "exit" }).catch(() => undefined);
  await new Promise((r) => (s.child.exitCode !== null ? r() : s.child.once("exit", r)));
}

const serverCpuMs = async (s) => {
  const { cpu } = await s.child.request({ cmd: "cpu" });
  return (cpu.user + cpu.system) / 1000;
};

// =================================================================== streams

async function streamsPart(client) {
  const sizes = list("BENCH_STREAM_SIZES", "100,1000,10000").map(Number);
  const fullSizes = list("BENCH_FULL_STREAM_SIZES", "100,1000").map(Number);
  const budgetMs = num("BENCH_STREAM_BUDGET_MS", 1000);
  const targets = list("BENCH_STREAM_TARGETS", "ours-tasks-http-json,ours-tasks-jsonrpc,a2a-js-full-rest,a2a-js-full-jsonrpc,ours-http-json,ceiling-sse");
  for (const t of targets) if (STREAM_TARGETS[t] === undefined) throw new Error(`unknown streams target ${t}`);
  const sizesOf = (t) => (t.startsWith("a2a-js-full-") ? fullSizes : sizes);
  console.log(
    `\nStreams: events/s on one SendStreamingMessage of N chunks, SSE, N = ${sizes.join(", ")} (a2a-js-full-*: ${fullSizes.join(", ")}); ` +
      `${runs} runs per target and N, each repeating the stream for ${budgetMs} ms (at least once), targets rotated; client in its own process`,
  );
  const run = async (s, n, reps, budget) => {
    const t = STREAM_TARGETS[s.target];
    const r = await client.request({
      stream: { port: s.port, path: t.path, headers: t.headers, body: t.body(streamText(n)), envelope: t.envelope, n, events: eventsOf(s.target, n), reps, budgetMs: budget },
    });
    if (r.error !== undefined) throw new Error(`${s.target}, ${n} chunks: ${r.error}`);
    s.events += r.streams.reduce((a, x) => a + x.events, 0);
    return r;
  };
  const measure = (s, n) => measureStreamRun({ s, n, read: () => run(s, n, 1_000_000, budgetMs), serverCpuMs, otherMax, retries, width: 20 });

  const servers = [];
  const heapAfter = {};
  try {
    for (const t of targets) servers.push(await startStreamServer(t, { prof: profile === t }));
    for (const s of servers) {
      await run(s, 10, 1, 0);
      console.log(`  verified ${s.target}: ${STREAM_TARGETS[s.target].what}: ${eventsOf(s.target, 10)} events, chunk 9 with lastChunk` + (STREAM_TARGETS[s.target].tasks ? ", then the COMPLETED status" : ""));
    }
    for (const s of servers) {
      await run(s, 1000, 1_000_000, smoke ? 100 : 1000);
      // One stream of every size (a2a-js-full-*: up to 1,000; one of 10,000 chunks takes minutes there).
      for (const n of sizesOf(s.target)) if (!(s.target.startsWith("a2a-js-full-") && n > 1000)) await run(s, n, 1, 0);
    }
    const allSizes = [...new Set(servers.flatMap((s) => sizesOf(s.target)))].sort((x, y) => x - y);
    for (let i = 0; i < runs; i++) {
      console.log(`run ${i + 1}/${runs}`);
      for (const n of allSizes) {
        const at = servers.filter((s) => sizesOf(s.target).includes(n));
        for (let j = 0; j < at.length; j++) await measure(at[(i + j) % at.length], n);
      }
    }
    // What the task runtime's default store holds after the part: every finished task, its artifact's parts included.
    for (const s of servers) if (STREAM_TARGETS[s.target].tasks) heapAfter[s.target] = await s.child.request({ cmd: "mem" });
  } finally {
    for (const s of servers) await stopStreamServer(s);
  }

  const medians = {};
  const rows = [];
  for (const s of servers) {
    const by = (medians[s.target] = {});
    for (const n of sizesOf(s.target)) {
      const rs = s.runs[n] ?? [];
      if (rs.length === 0) continue;
      const m = (k) => median(rs.map((r) => r[k]));
      by[n] = { eps: m("eps"), us: m("usPerEvent"), server: m("serverUsPerEvent") };
      rows.push([
        s.target,
        fmt(n, 0),
        fmt(m("eps"), 0),
        `${fmt(Math.min(...rs.map((r) => r.eps)), 0)}..${fmt(Math.max(...rs.map((r) => r.eps)), 0)}`,
        fmt(m("usPerEvent"), 2),
        fmt(m("serverUsPerEvent"), 2),
        fmt(m("firstMs"), 2),
        pct(m("serverCpu")),
        pct(m("clientCpu")),
        fmt(m("streams"), 0),
      ]);
    }
  }
  console.log(`\nMedian of ${runs} runs per target and N; events/s and µs/event over whole streams (request to last event, as the client saw them):\n`);
  console.log(table([["target", "N chunks", "events/s", "min..max events/s", "µs/event", "server CPU µs/event", "first event ms", "server CPU", "client CPU", "streams/run"], ...rows]));

  // Flat = the cost per event does not grow with the stream: at every N, µs/event within 1.25x of that at
  // every smaller N (as bench/streams.mjs judges it). A short stream costs more per event on every target,
  // the ceiling included: its request and response headers are spread over fewer events; the marginal cost
  // per event between the two largest N leaves them out.
  const flatRows = [];
  for (const s of servers) {
    const by = medians[s.target];
    const ns = sizesOf(s.target).filter((n) => by[n] !== undefined);
    if (ns.length < 2) continue;
    let growth = 0;
    for (let i = 0; i < ns.length; i++) for (let j = i + 1; j < ns.length; j++) growth = Math.max(growth, by[ns[j]].us / by[ns[i]].us);
    const [na, nb] = ns.slice(-2);
    const ea = eventsOf(s.target, na);
    const eb = eventsOf(s.target, nb);
    const marginal = (by[nb].us * eb - by[na].us * ea) / (eb - ea);
    const big = nb;
    flatRows.push([
      s.target,
      ...sizes.map((n) => (by[n] === undefined ? "-" : fmt(by[n].us, 2))),
      `${fmt(growth, 2)}x`,
      `${fmt(marginal, 2)} (${fmt(1e6 / marginal, 0)} events/s)`,
      `${fmt(by[big].eps, 0)} (N = ${fmt(big, 0)})`,
      verdict(by[big].eps >= 100_000 && big >= 10_000),
      verdict(growth <= 1.25),
    ]);
    if (STREAM_TARGETS[s.target].tasks) {
      goals.push([`SSE stream ${s.target}: events/s at N = ${fmt(big, 0)}`, fmt(by[big].eps, 0), ">= 100,000 at N = 10,000", verdict(by[big].eps >= 100_000 && big >= 10_000)]);
      goals.push([`SSE stream ${s.target}: flat, largest growth of µs/event over N = ${ns.join(", ")}`, `${fmt(growth, 2)}x`, "<= 1.25x", verdict(growth <= 1.25)]);
    }
  }
  if (flatRows.length > 0) {
    console.log(
      "\nFlatness: µs per event at every N; growth = the largest ratio of µs/event at a larger N over a smaller one (flat: <= 1.25); " +
        "marginal = µs per added event between the two largest N (per-stream costs left out); target >= 100,000 events/s at N = 10,000:\n",
    );
    console.log(
      table([["target", ...sizes.map((n) => `µs/event N=${fmt(n, 0)}`), "growth", "marginal µs/event", "events/s at largest N", ">= 100k events/s at 10,000", "flat"], ...flatRows]),
    );
  }
  const pairs = [
    ["ours-tasks-http-json", "a2a-js-full-rest"],
    ["ours-tasks-jsonrpc", "a2a-js-full-jsonrpc"],
    ["ours-tasks-http-json", "ours-http-json"],
    ["ours-tasks-jsonrpc", "ours-jsonrpc"],
    ["ours-tasks-http-json", "ceiling-sse"],
    ["ours-tasks-jsonrpc", "ceiling-sse"],
  ];
  const lines = [];
  for (const [o, x] of pairs) {
    const common = Object.keys(medians[o] ?? {}).map(Number).filter((n) => medians[x]?.[n] !== undefined).sort((p, q) => p - q);
    if (common.length === 0) continue;
    const digits = (r) => (r >= 0.1 ? 2 : 3);
    lines.push(`${o}/${x}: ${common.map((n, k) => `${fmt(medians[o][n].eps / medians[x][n].eps, digits(medians[o][n].eps / medians[x][n].eps))}x${k === 0 ? " events/s" : ""} at N = ${fmt(n, 0)}`).join(", ")}`);
  }
  if (lines.length > 0) console.log(`\n${lines.join("\n")}`);
  for (const [t, m] of Object.entries(heapAfter)) {
    console.log(`${t}: heap after the part ${fmt(m.heap / 1048576, 1)} MB (the in-memory store keeps every finished task, its artifact's parts included, for an hour or up to 10,000 tasks)`);
  }
  for (const s of servers) {
    const c = median((s.runs[sizesOf(s.target)[0]] ?? []).map((r) => r.clientCpu));
    if (c > 0.9) console.log(`note: the client used ${pct(c)} of a core against ${s.target}: it may be what limits that target.`);
  }
  if (profile !== "" && servers.some((s) => s.target === profile)) {
    const file = join(profileDir, `tasks-streams-${profile}.cpuprofile`);
    console.log(`\n${profile} ran under --cpu-prof (its numbers above carry the profiler's overhead); profile: ${relative(root, file)}; µs below are per event\n`);
    printTopCosts(file, { root, requests: servers.find((s) => s.target === profile).events });
  }
}

// ====================================================================== idle

async function idlePart(client) {
  const count = Math.round(num("BENCH_IDLE_STREAMS", 1000));
  const targets = list("BENCH_IDLE_TARGETS", "ours-tasks-http-json,ours-tasks-jsonrpc,ceiling-sse");
  const snapshots = process.env.BENCH_HEAP_SNAPSHOT === "1";
  for (const t of targets) if (!["ours-tasks-http-json", "ours-tasks-jsonrpc", "ceiling-sse"].includes(t)) throw new Error(`unknown idle target ${t}`);
  console.log(
    `\nIdle subscribed streams: ${fmt(count, 0)} WORKING tasks (the executor waits), then ${fmt(count, 0)} SubscribeToTask SSE streams at once, ` +
      "one per task and connection; heap after global.gc() in a fresh server process per target (ceiling-sse: idle SSE streams of bare node:http)",
  );
  const KB = (b) => fmt(b / 1024, 1);
  const rows = [];
  for (const t of targets) {
    const s = await startStreamServer(t);
    try {
      const tasks = STREAM_TARGETS[t].tasks === true;
      let requests;
      if (tasks) {
        // The WORKING tasks, before anything is measured.
        const jsonrpc = t === "ours-tasks-jsonrpc";
        const send = { message: messageJson(idleText), configuration: { returnImmediately: true } };
        const body = jsonrpc ? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: send }) : JSON.stringify(send);
        const p = await client.request({ prepare: { port: s.port, path: jsonrpc ? "/" : "/message:send", headers: jsonHeaders, body, count, envelope: jsonrpc } });
        if (p.error !== undefined) throw new Error(`${t}: ${p.error}`);
        requests = p.ids.map((id, k) =>
          jsonrpc
            ? { method: "POST", path: "/", headers: jsonHeaders, body: JSON.stringify({ jsonrpc: "2.0", id: k + 1, method: "SubscribeToTask", params: { id } }) }
            : { method: "GET", path: `/tasks/${encodeURIComponent(id)}:subscribe`, headers: { "A2A-Version": a2aVersion } },
        );
      } else {
        requests = Array.from({ length: count }, () => ({ method: "POST", path: "/message:stream", headers: jsonHeaders, body: restBody(idleText) }));
      }
      const open = async (rs) => {
        const o = await client.request({ open: { port: s.port, requests: rs } });
        if (o.error !== undefined) throw new Error(`${t}: ${o.error}`);
        return o;
      };
      // Closed: the task servers by their sockets (the subscriber goes with its caller's signal), ceiling-sse by its count.
      const settle = async (closedTarget) => {
        if (tasks) return (await s.child.request({ cmd: "connections", max: 0, ms: 3000 })).connections === 0;
        return (await s.child.request({ cmd: "wait", closed: closedTarget, ms: 3000 })).closed >= closedTarget;
      };
      const closedCount = async () => (await s.child.request({ cmd: "counts" })).closed;
      if (tasks) await settle();
      // Warm-up: 10, then every stream opened and closed, so code is compiled and node's pools are full before the baseline.
      for (const k of [10, count]) {
        const before = await closedCount();
        await open(requests.slice(0, k));
        await client.request({ close: true });
        await settle(before + k);
      }
      const base = await s.child.request({ cmd: "mem" });
      if (snapshots) await s.child.request({ cmd: "snapshot", file: join(profileDir, `tasks-idle-${t}-base.heapsnapshot`) });
      const before = await closedCount();
      const o = await open(requests);
      const atOpen = await s.child.request({ cmd: "mem" });
      if (snapshots) await s.child.request({ cmd: "snapshot", file: join(profileDir, `tasks-idle-${t}-open.heapsnapshot`) });
      await client.request({ close: true });
      const t0 = performance.now();
      const allClosed = await settle(before + count);
      const closeMs = performance.now() - t0;
      const afterClose = await s.child.request({ cmd: "mem" });
      let executors = "";
      if (tasks) {
        // The agent's next event: every idle executor returns, every task ends COMPLETED.
        const c = await s.child.request({ cmd: "counts" });
        await s.child.request({ cmd: "release" });
        const done = await s.child.request({ cmd: "wait", closed: c.opened, ms: 10_000 });
        executors = `${done.closed}/${c.opened}`;
      }
      const heapPer = (atOpen.heap - base.heap) / count;
      const back = (afterClose.heap - base.heap) / base.heap;
      console.log(
        `  ${t.padEnd(20)} opened ${o.opened} in ${fmt(o.ms, 0)} ms; heap ${KB(base.heap)} -> ${KB(atOpen.heap)} KB open (${KB(heapPer)} KB/stream) -> ` +
          `${KB(afterClose.heap)} KB after close (${allClosed ? "all closed" : "NOT all closed"} in ${fmt(closeMs, 0)} ms)` +
          (executors === "" ? "" : `; executors ended after release: ${executors}`),
      );
      rows.push([
        t,
        KB(heapPer),
        KB((atOpen.rss - base.rss) / count),
        KB(base.heap),
        KB(atOpen.heap),
        KB(afterClose.heap),
        `${back >= 0 ? "+" : ""}${fmt(back * 100, 1)}%`,
        verdict(heapPer < 10 * 1024),
      ]);
      if (tasks) goals.push([`idle SubscribeToTask stream ${t}: heap per stream`, `${KB(heapPer)} KB`, "< 10 KB", verdict(heapPer < 10 * 1024)]);
      if (snapshots) {
        const { printHeapDiff } = await import("./streams/heap-diff.mjs");
        printHeapDiff(join(profileDir, `tasks-idle-${t}-base.heapsnapshot`), join(profileDir, `tasks-idle-${t}-open.heapsnapshot`), count);
      }
    } finally {
      await stopStreamServer(s);
    }
  }
  console.log(`\nHeap per idle subscribed stream (${fmt(count, 0)} streams; heapUsed after gc; target < 10 KB per stream):\n`);
  console.log(table([["target", "heap KB/stream", "RSS KB/stream", "heap base KB", "heap open KB", "heap after close KB", "after close vs base", "< 10 KB"], ...rows]));
}

// ====================================================================== main

if (parts.includes("unary")) await unaryPart();
if (parts.includes("streams") || parts.includes("idle")) {
  const client = startNode(join(benchDir, "tasks/client.mjs"), [], { cpu: 1, pin });
  try {
    if (parts.includes("streams")) await streamsPart(client);
    if (parts.includes("idle")) await idlePart(client);
  } finally {
    client.disconnect();
  }
}
if (goals.length > 0) {
  console.log(`\nThe issue's targets${smoke ? " (BENCH_SMOKE=1: not meaningful)" : ""}:\n`);
  console.log(table([["figure", "measured", "target", ""], ...goals]));
}
