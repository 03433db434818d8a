#!/usr/bin/env node
// Streaming on loopback, for every binding of ours and for @a2a-js/sdk 1.x:
//
// 1. events/s on ONE SendStreamingMessage of N artifact chunks (a working
//    Task, then N chunks: N + 1 events), N = 1,000 and 10,000, so the cost
//    per event can be seen not to grow with the stream. The client reads as
//    fast as it can in its own process (raw node:http counting `data:`
//    frames for SSE, a lean node:http2 client for gRPC) and checks every
//    stream: N + 1 events, the last one chunk N-1 with lastChunk.
// 2. heap and RSS per idle stream: 1,000 streams whose handler waits after
//    its first event, opened at once; once all 1,000 have their first event
//    the server child reports heap (after global.gc()) and RSS over IPC;
//    then the client destroys them and, once every handler's finally block
//    ran, heap again against the baseline.
//
// Targets (bench/streams/server.mjs, handlers in bench/streams/):
//   ours-jsonrpc     createA2AServiceJsonRpcListener on node:http (SSE)
//   ours-http-json   createA2AServiceHttpJsonListener, POST /message:stream (SSE)
//   ours-grpc        addA2AServiceToServer on @grpc/grpc-js (server stream)
//   a2a-js-jsonrpc   @a2a-js/sdk express jsonRpcHandler over a directly
//                    implemented A2ARequestHandler (SSE)
//   a2a-js-rest      @a2a-js/sdk express restHandler, POST /message:stream (SSE)
//   a2a-js-full-jsonrpc, a2a-js-full-rest, a2a-js-full-grpc
//                    @a2a-js/sdk as its users run an agent ("full stack"): the
//                    same express mountings (and grpcService) over its
//                    DefaultRequestHandler, an InMemoryTaskStore and an
//                    AgentExecutor publishing the same events on the event bus
//                    (bench/streams/a2a-js-full.mjs); measured at their own N
//                    (BENCH_FULL_STREAM_SIZES), since their cost per event
//                    grows with the stream
//   ceiling-sse      bare node:http: JSON.parse the body, write the same frames
//                    (JSON.stringify each, wait for drain); the floor of an SSE
//                    stream, events/s and memory
//   ceiling-grpc     bare grpc-js: a server stream with identity serializers
//                    writing one pre-encoded message and held until cancelled;
//                    the floor of an idle gRPC stream (memory part only)
//
// Environment:
//   BENCH_RUNS=5                  measured runs per target and N (median reported)
//   BENCH_STREAM_SIZES=1000,10000 chunks per stream
//   BENCH_FULL_STREAM_SIZES=100,1000  chunks per stream for the a2a-js-full-* targets
//   BENCH_STREAM_BUDGET_MS=1000   per run, streams are repeated (one after the
//                                 other) until this is spent (at least one)
//   BENCH_STREAM_TARGETS=ours-jsonrpc,ours-http-json,ours-grpc,a2a-js-jsonrpc,a2a-js-rest,
//                        a2a-js-full-jsonrpc,a2a-js-full-rest,a2a-js-full-grpc,ceiling-sse
//   BENCH_IDLE_STREAMS=1000       idle streams in the memory test
//   BENCH_MEM_TARGETS=ours-jsonrpc,ours-http-json,ours-grpc,a2a-js-jsonrpc,a2a-js-full-jsonrpc,ceiling-sse,ceiling-grpc
//                                 (a2a-js-rest, a2a-js-full-rest and a2a-js-full-grpc can be added)
//   BENCH_OTHER_MAX=0.25, BENCH_RETRIES=2   disturbed runs (as in the other benches)
//   BENCH_PIN=1                   servers on CPU 0, the client on CPU 1 (taskset)
//   BENCH_PROFILE=<target>        run that target's server with --cpu-prof during
//                                 part 1 and print its top costs per event
//   BENCH_HEAP_SNAPSHOT=1         part 2 also writes heap snapshots (baseline, open
//                                 and closed) to bench/.profiles/ and prints what the
//                                 open streams hold, and what stays after they closed,
//                                 by constructor (bench/streams/heap-diff.mjs)
import { cpus } from "node:os";
import { join, relative } from "node:path";
import { mkdirSync } from "node:fs";
import { benchDir, fmt, median, num, prepareOurs, root, startNode, table } from "./lib/harness.mjs";
import { measureStreamRun, pct } from "./lib/stream-run.mjs";
import { printTopCosts } from "./lib/profile-top.mjs";
import { a2aVersion, idleText, jsonRpcBody, restBody, streamText } from "./streams/fixture.mjs";

const list = (name, fallback) => (process.env[name] ?? fallback).split(",").map((s) => s.trim()).filter(Boolean);
const runs = Math.round(num("BENCH_RUNS", 5));
const sizes = list("BENCH_STREAM_SIZES", "1000,10000").map(Number);
// The full-stack targets' cost per event grows with the stream (each event copies the whole task, its
// growing artifact included, out of and back into the task store): ~1 ms per event at N = 1,000, so a
// 10,000-chunk stream would take ~100 s. They are measured at their own, smaller N.
const fullSizes = list("BENCH_FULL_STREAM_SIZES", "100,1000").map(Number);
const isFull = (t) => t.startsWith("a2a-js-full-");
const sizesOf = (t) => (isFull(t) ? fullSizes : sizes);
const budgetMs = num("BENCH_STREAM_BUDGET_MS", 1000);
const streamTargets = list(
  "BENCH_STREAM_TARGETS",
  "ours-jsonrpc,ours-http-json,ours-grpc,a2a-js-jsonrpc,a2a-js-rest,a2a-js-full-jsonrpc,a2a-js-full-rest,a2a-js-full-grpc,ceiling-sse",
);
const idleCount = Math.round(num("BENCH_IDLE_STREAMS", 1000));
const memTargets = list("BENCH_MEM_TARGETS", "ours-jsonrpc,ours-http-json,ours-grpc,a2a-js-jsonrpc,a2a-js-full-jsonrpc,ceiling-sse,ceiling-grpc");
const otherMax = Number(process.env.BENCH_OTHER_MAX ?? 0.25);
const retries = Math.round(Number(process.env.BENCH_RETRIES ?? 2));
const pin = process.env.BENCH_PIN === "1";
const profile = process.env.BENCH_PROFILE ?? "";
const profileDir = join(benchDir, ".profiles");
const snapshots = process.env.BENCH_HEAP_SNAPSHOT === "1";

const jsonHeaders = { "content-type": "application/json", "A2A-Version": a2aVersion };
const sseJsonRpc = { kind: "sse", path: "/", headers: jsonHeaders, body: jsonRpcBody, envelope: true };
const sseRest = { kind: "sse", path: "/message:stream", headers: jsonHeaders, body: restBody, envelope: false };
const grpcStream = { kind: "grpc", path: "/lf.a2a.v1.A2AService/SendStreamingMessage", headers: { "a2a-version": a2aVersion }, body: (t) => t, envelope: false };
const TARGETS = {
  "ours-jsonrpc": { ...sseJsonRpc, what: "ours, JSON-RPC SSE" },
  "ours-http-json": { ...sseRest, what: "ours, HTTP+JSON SSE" },
  "ours-grpc": { ...grpcStream, what: "ours, gRPC server stream" },
  "a2a-js-jsonrpc": { ...sseJsonRpc, what: "a2a-js, JSON-RPC SSE (express)" },
  "a2a-js-rest": { ...sseRest, what: "a2a-js, REST SSE (express)" },
  "a2a-js-full-jsonrpc": { ...sseJsonRpc, what: "a2a-js full stack (DefaultRequestHandler, task store, event bus), JSON-RPC SSE (express)" },
  "a2a-js-full-rest": { ...sseRest, what: "a2a-js full stack, REST SSE (express)" },
  "a2a-js-full-grpc": { ...grpcStream, what: "a2a-js full stack, gRPC server stream (grpcService)" },
  "ceiling-sse": { ...sseRest, what: "bare node:http SSE (JSON.stringify per frame, drain)" },
  "ceiling-grpc": { ...grpcStream, what: "bare grpc-js server stream (identity serializers, one pre-encoded message)", memoryOnly: true },
};
for (const t of [...streamTargets, ...memTargets]) if (TARGETS[t] === undefined) throw new Error(`unknown target ${t}`);
// ceiling-grpc only ever holds an idle stream: it is the floor of part 2, not a part 1 server.
for (const t of streamTargets) if (TARGETS[t].memoryOnly === true) throw new Error(`${t} is a target of the memory part only (BENCH_MEM_TARGETS)`);

async function startServer(target, { prof = false } = {}) {
  const execArgv = ["--expose-gc"];
  if (prof) {
    mkdirSync(profileDir, { recursive: true });
    execArgv.push("--cpu-prof", "--cpu-prof-dir", profileDir, "--cpu-prof-name", `streams-${target}.cpuprofile`);
  }
  const child = startNode(join(benchDir, "streams/server.mjs"), [target], { cpu: 0, pin, execArgv });
  const { port } = await child.request();
  return { target, child, port, runs: {}, events: 0 };
}

async function stopServer(s) {
  await s.child.request({ cmd: "exit" }).catch(() => undefined);
  await new Promise((r) => (s.child.exitCode !== null ? r() : s.child.once("exit", r)));
}

const cpuMs = async (s) => {
  const { cpu } = await s.child.request({ cmd: "cpu" });
  return (cpu.user + cpu.system) / 1000;
};

function streamSpec(s, n, reps, budget) {
  const t = TARGETS[s.target];
  return { kind: t.kind, port: s.port, path: t.path, headers: t.headers, body: t.body(streamText(n)), envelope: t.envelope, n, reps, budgetMs: budget };
}

async function streams(client, s, n, reps, budget) {
  const r = await client.request({ stream: streamSpec(s, n, reps, budget) });
  if (r.error !== undefined) throw new Error(`${s.target}, ${n} chunks: ${r.error}`);
  s.events += r.streams.reduce((a, x) => a + x.events, 0);
  return r;
}


const measure = (client, s, n) =>
  measureStreamRun({ s, n, read: () => streams(client, s, n, 1_000_000, budgetMs), serverCpuMs: cpuMs, otherMax, retries, width: 15 });

// --- part 1: events/s ---

prepareOurs("a2a_grpc.ts");
console.log(
  `Streams on loopback. Part 1: events/s on one SendStreamingMessage of N chunks (N + 1 events), N = ${sizes.join(", ")}` +
    `${streamTargets.some(isFull) ? ` (a2a-js-full-*: N = ${fullSizes.join(", ")})` : ""}; ` +
    `${runs} runs per target and N, each repeating the stream for ${budgetMs} ms (at least once); targets alternate; ` +
    `client in its own process${pin ? ", servers pinned to CPU 0 and the client to CPU 1" : ""}; ${cpus().length} CPUs, Node ${process.versions.node}`,
);
const client = startNode(join(benchDir, "streams/client.mjs"), [], { cpu: 1, pin });
const servers = [];
try {
  for (const t of streamTargets) servers.push(await startServer(t, { prof: profile === t }));
  for (const s of servers) {
    await streams(client, s, 10, 1, 0);
    console.log(`  verified ${s.target}: ${TARGETS[s.target].what}: 11 events, the last chunk 9 with lastChunk`);
  }
  // Warm-up: a second of N = 1,000 and one stream of every size, per target.
  for (const s of servers) {
    await streams(client, s, 1000, 1_000_000, 1000);
    for (const n of sizesOf(s.target)) await streams(client, s, n, 1, 0);
  }
  const allSizes = [...new Set(servers.flatMap((s) => sizesOf(s.target)))].sort((x, y) => x - y);
  for (let i = 0; i < runs; i++) {
    console.log(`run ${i + 1}/${runs}`);
    for (const n of allSizes) {
      // Rotate the order every run so no target always follows the same one.
      const at = servers.filter((s) => sizesOf(s.target).includes(n));
      for (let j = 0; j < at.length; j++) await measure(client, at[(i + j) % at.length], n);
    }
  }
} finally {
  for (const s of servers) await stopServer(s);
}

const rows = [];
const flat = [];
/** target -> N -> medians */
const medians = {};
for (const s of servers) {
  const by = (medians[s.target] = {});
  const sz = sizesOf(s.target);
  for (const n of sz) {
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
  if (sz.length >= 2 && by[sz[0]] && by[sz.at(-1)]) flat.push({ target: s.target, na: sz[0], nb: sz.at(-1), a: by[sz[0]], b: by[sz.at(-1)] });
}
if (rows.length > 0) console.log(`\nMedian of ${runs} runs per target and N; events/s and µs/event over whole streams (request to last event, as the client saw them):\n`);
if (rows.length > 0) console.log(
  table([
    ["target", "N chunks", "events/s", "min..max events/s", "µs/event", "server CPU µs/event", "first event ms", "server CPU", "client CPU", "streams/run"],
    ...rows,
  ]),
);
// One flatness table per pair of N (the full-stack targets have their own).
for (const [a, b] of [...new Set(flat.map((f) => `${f.na},${f.nb}`))].map((k) => k.split(",").map(Number))) {
  const group = flat.filter((f) => f.na === a && f.nb === b);
  console.log(`\nFlatness: µs per event at N = ${fmt(b, 0)} over N = ${fmt(a, 0)} (1.00 = flat; targets: >= 100,000 events/s at both N, ratio <= 1.25):\n`);
  console.log(
    table([
      ["target", `µs/event N=${fmt(a, 0)}`, `µs/event N=${fmt(b, 0)}`, "ratio", "server CPU ratio", ">= 100k events/s", "flat"],
      ...group.map(({ target, a, b }) => [
        target,
        fmt(a.us, 2),
        fmt(b.us, 2),
        `${fmt(b.us / a.us, 2)}x`,
        `${fmt(b.server / a.server, 2)}x`,
        Math.min(a.eps, b.eps) >= 100_000 ? "met" : "MISSED",
        b.us / a.us <= 1.25 ? "met" : "MISSED",
      ]),
    ]),
  );
}
// Ratios of events/s at every N both targets ran (ours against the full stack: at the N they share).
const ratioPairs = [
  ["ours-jsonrpc", "a2a-js-jsonrpc"],
  ["ours-http-json", "a2a-js-rest"],
  ["ours-jsonrpc", "a2a-js-full-jsonrpc"],
  ["ours-http-json", "a2a-js-full-rest"],
  ["ours-grpc", "a2a-js-full-grpc"],
  ["a2a-js-jsonrpc", "a2a-js-full-jsonrpc"],
  ["a2a-js-rest", "a2a-js-full-rest"],
  ["ours-jsonrpc", "ceiling-sse"],
  ["ours-http-json", "ceiling-sse"],
];
const ratioLines = [];
for (const [o, x] of ratioPairs) {
  const common = Object.keys(medians[o] ?? {}).map(Number).filter((n) => medians[x]?.[n] !== undefined).sort((p, q) => p - q);
  if (common.length === 0) continue;
  const digits = (r) => (r >= 0.1 ? 1 : 3);
  const at = common.map((n) => [medians[o][n].eps / medians[x][n].eps, n]);
  ratioLines.push(`${o}/${x}: ${at.map(([r, n], k) => `${fmt(r, digits(r))}x${k === 0 ? " events/s" : ""} at N = ${fmt(n, 0)}`).join(", ")}`);
}
if (ratioLines.length > 0) console.log(`\n${ratioLines.join("\n")}`);
for (const s of servers) {
  const c = median((s.runs[sizesOf(s.target)[0]] ?? []).map((r) => r.clientCpu));
  if (c > 0.9) console.log(`note: the client used ${pct(c)} of a core against ${s.target}: it may be what limits that target.`);
}
if (profile !== "" && servers.some((s) => s.target === profile)) {
  const file = join(profileDir, `streams-${profile}.cpuprofile`);
  console.log(`\n${profile} ran under --cpu-prof (its numbers above carry the profiler's overhead); profile: ${relative(root, file)}; µs below are per event\n`);
  printTopCosts(file, { root, requests: servers.find((s) => s.target === profile).events });
}

// --- part 2: memory per idle stream ---

const KB = (b) => fmt(b / 1024, 1);
const memRows = [];
if (memTargets.length > 0 && idleCount > 0) {
  console.log(
    `\nPart 2: ${fmt(idleCount, 0)} idle streams (SendStreamingMessage "idle": the handler yields a working Task, then waits), ` +
      `opened at once from the client process; heap after global.gc() in a fresh server process per target`,
  );
  for (const t of memTargets) {
    const s = await startServer(t);
    try {
      const spec = TARGETS[t];
      const open = (count) => client.request({ open: { kind: spec.kind, port: s.port, path: spec.path, headers: spec.headers, body: spec.body(idleText), count } });
      const waitClosed = (closed, ms) => s.child.request({ cmd: "wait", closed, ms });
      const mem = () => s.child.request({ cmd: "mem" });
      // Warm-up: idle streams opened and closed, the last time as many as measured, so code is compiled,
      // lazy modules loaded and node's pools (e.g. its free list of up to 1,000 HTTP parsers) are full
      // before the baseline; what stays after close is then what the streams leave behind.
      for (const k of [10, idleCount]) {
        const o = await open(k);
        if (o.error !== undefined) throw new Error(`${t}: ${o.error}`);
        await client.request({ close: true });
        const { opened } = await s.child.request({ cmd: "counts" });
        let c = await waitClosed(opened, 2000);
        if (c.closed < opened) {
          await s.child.request({ cmd: "release" });
          c = await waitClosed(opened, 10_000);
        }
      }
      const base = await mem();
      if (snapshots) await s.child.request({ cmd: "snapshot", file: join(profileDir, `streams-${t}-base.heapsnapshot`) });
      const before = await s.child.request({ cmd: "counts" });
      const o = await open(idleCount);
      if (o.error !== undefined) throw new Error(`${t}: ${o.error}`);
      const atOpen = await mem();
      if (snapshots) await s.child.request({ cmd: "snapshot", file: join(profileDir, `streams-${t}-open.heapsnapshot`) });
      const opened = (await s.child.request({ cmd: "counts" })).opened - before.opened;
      await client.request({ close: true });
      // Every handler's finally block must run once its client left; a2a-js gives handlers (and executors) no signal, so give it 3 s.
      const t0 = performance.now();
      const c1 = await waitClosed(before.closed + idleCount, 3000);
      const closeMs = performance.now() - t0;
      const finalizedOnClose = c1.closed - before.closed;
      const afterClose = await mem();
      if (snapshots) await s.child.request({ cmd: "snapshot", file: join(profileDir, `streams-${t}-closed.heapsnapshot`) });
      let afterRelease;
      let finalizedAfterRelease;
      if (finalizedOnClose < idleCount) {
        await s.child.request({ cmd: "release" });
        const c2 = await waitClosed(before.closed + idleCount, 10_000);
        finalizedAfterRelease = c2.closed - before.closed;
        afterRelease = await mem();
      }
      const r = { t, base, atOpen, afterClose, afterRelease, opened, finalizedOnClose, finalizedAfterRelease, openMs: o.ms, closeMs };
      memRows.push(r);
      const heapPer = (atOpen.heap - base.heap) / idleCount;
      console.log(
        `  ${t.padEnd(15)} opened ${opened} in ${fmt(o.ms, 0)} ms; heap ${KB(base.heap)} -> ${KB(atOpen.heap)} KB open (${KB(heapPer)} KB/stream) -> ` +
          `${KB(afterClose.heap)} KB after close; ${finalizedOnClose}/${idleCount} handlers finished on close` +
          (afterRelease ? `; after release: ${finalizedAfterRelease}/${idleCount} finished, heap ${KB(afterRelease.heap)} KB` : ` (in ${fmt(closeMs, 0)} ms)`),
      );
      if (snapshots) {
        const { printHeapDiff } = await import("./streams/heap-diff.mjs");
        printHeapDiff(join(profileDir, `streams-${t}-base.heapsnapshot`), join(profileDir, `streams-${t}-open.heapsnapshot`), idleCount);
        console.log("  what stays after close (before any release):");
        printHeapDiff(join(profileDir, `streams-${t}-base.heapsnapshot`), join(profileDir, `streams-${t}-closed.heapsnapshot`), idleCount, 10);
      }
    } finally {
      await stopServer(s);
    }
  }
  console.log(
    `\nMemory per idle stream (${fmt(idleCount, 0)} streams; heap = heapUsed after gc; targets: < 10 KB heap per stream, heap back to baseline within 5% after close):\n`,
  );
  console.log(
    table([
      ["target", "heap KB/stream", "RSS KB/stream", "heap base KB", "heap open KB", "heap after close KB", "after close vs base", "handlers done on close", "< 10 KB", "back to base"],
      ...memRows.map((r) => {
        const end = r.afterRelease ?? r.afterClose;
        const heapPer = (r.atOpen.heap - r.base.heap) / idleCount;
        const back = (r.afterClose.heap - r.base.heap) / r.base.heap;
        return [
          r.t,
          KB(heapPer),
          KB((r.atOpen.rss - r.base.rss) / idleCount),
          KB(r.base.heap),
          KB(r.atOpen.heap),
          KB(r.afterClose.heap) + (r.afterRelease ? ` (${KB(end.heap)} after release)` : ""),
          `${back >= 0 ? "+" : ""}${fmt(back * 100, 1)}% (${back >= 0 ? "+" : ""}${KB(r.afterClose.heap - r.base.heap)} KB)`,
          `${r.finalizedOnClose}/${idleCount}` + (r.afterRelease ? ` (${r.finalizedAfterRelease} after release)` : ""),
          heapPer < 10 * 1024 ? "met" : "MISSED",
          Math.abs(back) <= 0.05 && r.finalizedOnClose === idleCount ? "met" : "MISSED",
        ];
      }),
    ]),
  );
}
client.disconnect();
