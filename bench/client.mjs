#!/usr/bin/env node
// Client overhead (issue 15): this project's generated clients against
// @a2a-js/sdk's client, on each binding, in one run, against the same server.
//
// One server process (bench/client/server.mjs through bench/lib/serve.mjs):
// this project's serveA2AService on JSON-RPC, HTTP+JSON and gRPC at once, over
// a directly implemented handler (SendMessage: the echo task of the other
// benchmarks; SendStreamingMessage "stream <N>": a working Task and N small
// artifact chunks, bench/streams's handler). One client process per target
// (bench/client/driver.mjs, targets in bench/client/targets.mjs):
//   ours-jsonrpc, ours-http-json, ours-grpc
//                     the generated createA2AServiceJsonRpcClient,
//                     createA2AServiceHttpJsonClient, createA2AServiceGrpcClient
//   a2a-js-jsonrpc, a2a-js-http-json, a2a-js-grpc
//                     @a2a-js/sdk 1.x's ClientFactory (JsonRpcTransportFactory,
//                     RestTransportFactory, GrpcTransportFactory; the binding
//                     preferred) from the server's card URL
// Two measures per target:
//   unary   calls/s: BENCH_CLIENT_CONCURRENCY (32) loops each calling
//           SendMessage as soon as its answer came, every answer's task id
//           checked
//   stream  events/s: BENCH_CLIENT_STREAMS (1) loops of SendStreamingMessage
//           of BENCH_CLIENT_STREAM_N (1,000) chunks, each read to its end
//           (N + 1 events, the last one chunk N-1 with lastChunk)
// and the client process's CPU per call or event (process.cpuUsage() over
// IPC, as for the servers of the other benchmarks), the server's too.
//
// Everything else is bench/lib/harness.mjs: before measuring (after the
// warm-up, and at the end) every target's answers must be exactly the
// expected ones as ProtoJSON (SendMessage's echo task; a stream of 3 chunks,
// event by event), runs alternate target by target (ours and a2a-js of a
// binding one after the other), medians, and runs during which other
// processes kept more than BENCH_OTHER_MAX cores busy discarded and repeated.
// Ratios ours/a2a-js per binding, calls/s and events/s, against the issue's
// target (>= 1.5x).
//
// Environment: BENCH_SECONDS (4), BENCH_RUNS (5), BENCH_WARMUP (2),
// BENCH_TARGETS (all six), BENCH_PIN (server on CPU 0, clients on CPU 1),
// BENCH_OTHER_MAX, BENCH_RETRIES as in the other benchmarks, and
//   BENCH_CLIENT_KINDS=unary,stream   what to measure
//   BENCH_CLIENT_CONCURRENCY=32       unary calls in flight per client
//   BENCH_CLIENT_STREAMS=1            streams in flight per client
//   BENCH_CLIENT_STREAM_N=1000        chunks per stream
//   BENCH_PROFILE=<target>            that client process under --cpu-prof
//                                     (bench/.profiles/client-<target>.cpuprofile),
//                                     its top costs printed per call or event
//                                     (measure one kind at a time for that);
//                                     BENCH_PROFILE=server profiles the server
//   BENCH_SMOKE=1                     a short check (1 s runs, one run, N = 100)
//                                     of every target; its figures mean nothing
import { cpus } from "node:os";
import { join, relative } from "node:path";
import { isDeepStrictEqual } from "node:util";

const smoke = process.env.BENCH_SMOKE === "1";
if (smoke) {
  const defaults = { BENCH_SECONDS: "1", BENCH_RUNS: "1", BENCH_WARMUP: "0.5", BENCH_RETRIES: "0", BENCH_OTHER_MAX: "2", BENCH_CLIENT_STREAM_N: "100" };
  for (const [k, v] of Object.entries(defaults)) process.env[k] ??= v;
}

const { cpuProfileArgs, fmt, load, loadSettings, measure, num, prepareOurs, root, startDriver, startServer, summarize, table } = await import("./lib/harness.mjs");
const { printTopCosts } = await import("./lib/profile-top.mjs");
const { TARGETS, bindings, expectedStreamJson, expectedUnaryJson, messageJson } = await import("./client/targets.mjs");

const settings = loadSettings(TARGETS.join(","));
const { seconds, runs, warmup, targets, pin, profile, profileDir } = settings;
const kinds = (process.env.BENCH_CLIENT_KINDS ?? "unary,stream").split(",").map((s) => s.trim()).filter(Boolean);
const concurrency = Math.round(num("BENCH_CLIENT_CONCURRENCY", 32));
const streams = Math.round(num("BENCH_CLIENT_STREAMS", 1));
const n = Math.round(num("BENCH_CLIENT_STREAM_N", 1000));
const goal = 1.5;
for (const t of targets) if (!TARGETS.includes(t)) throw new Error(`unknown target ${t} (${TARGETS.join(", ")})`);
for (const k of kinds) if (k !== "unary" && k !== "stream") throw new Error(`unknown kind ${k} (unary, stream)`);
// Ours and a2a-js of one binding run one after the other.
const ordered = bindings.flatMap((b) => [`ours-${b}`, `a2a-js-${b}`]).filter((t) => targets.includes(t));

const requestOf = (kind) => ({ driverOptions: kind === "unary" ? { kind, concurrency } : { kind, concurrency: streams, n } });
const unitOf = (kind) => (kind === "unary" ? "call" : "event");

prepareOurs("a2a_client.ts");

console.log(
  `Client overhead on loopback (bench/client.mjs${smoke ? ", BENCH_SMOKE=1: a short check run, figures not meaningful" : ""}): ` +
    `${ordered.join(", ")}; ${kinds.join(" and ")}; ${runs} x ${seconds} s per target and kind (after ${warmup} s warm-up); ` +
    `unary ${concurrency} calls in flight, streams ${streams} at a time of ${fmt(n, 0)} chunks; one server for all, each client in its own process` +
    `${pin ? ", the server pinned to CPU 0 and the clients to CPU 1" : ""}; ${cpus().length} CPUs, Node ${process.versions.node}`,
);

/** Throws unless the target's answers are exactly the fixture's, as ProtoJSON. */
async function verify(c) {
  const answer = await c.driver.request({ verify: { n: 3 } });
  if (answer.error !== undefined) throw new Error(`${c.target} failed to answer: ${answer.error}`);
  const expectedUnary = expectedUnaryJson(messageJson);
  const expectedStream = expectedStreamJson(3);
  if (!isDeepStrictEqual(answer.unary, expectedUnary)) {
    throw new Error(`${c.target}: SendMessage answered\n  ${JSON.stringify(answer.unary)}\nexpected\n  ${JSON.stringify(expectedUnary)}`);
  }
  if (!isDeepStrictEqual(answer.stream, expectedStream)) {
    throw new Error(`${c.target}: a stream of 3 chunks was\n  ${JSON.stringify(answer.stream)}\nexpected\n  ${JSON.stringify(expectedStream)}`);
  }
}

async function stop(child) {
  if (child.exitCode !== null) return;
  await child.request({ cmd: "exit" }).catch(() => undefined);
  await new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
}

const tally = { discarded: 0, keptContended: 0 };
const server = await startServer("server", "client/server.mjs", settings);
const clients = [];
try {
  const { cardUrl, jsonRpcUrl, httpJsonUrl, grpcAddress } = server.ready;
  console.log(`  server: card ${cardUrl}, JSON-RPC ${jsonRpcUrl}, HTTP+JSON ${httpJsonUrl}, gRPC ${grpcAddress}`);
  for (const target of ordered) {
    const driver = startDriver(settings, "client/driver.mjs", {
      args: [target, JSON.stringify(server.ready)],
      execArgv: cpuProfileArgs(settings, target, `client-${target}`),
    });
    const ready = await driver.request();
    // A view of the one server per target, so the harness counts each target's calls apart.
    const c = { target, driver, child: server.child, origin: server.origin, requests: 0, runs: Object.fromEntries(kinds.map((k) => [k, []])) };
    clients.push(c);
    await verify(c);
    console.log(`  verified ${target} (${ready.what}): SendMessage's echo task, a 3-chunk stream event by event, as ProtoJSON`);
  }
  if (warmup > 0) {
    for (const kind of kinds) for (const c of clients) await load(c.driver, c, requestOf(kind), warmup, settings);
    for (const c of clients) await verify(c);
  }
  for (let i = 0; i < runs; i++) {
    console.log(`run ${i + 1}/${runs}`);
    for (const kind of kinds) {
      for (const c of clients) {
        await measure(c.driver, c, requestOf(kind), settings, { runs: c.runs[kind], label: `${c.target} ${kind}`.padEnd(23), unit: unitOf(kind), driverUs: true, tally });
      }
    }
  }
  for (const c of clients) await verify(c);
} finally {
  for (const c of clients) await stop(c.driver);
  await stop(server.child);
}

// --- report ---

const pct = (x) => `${Math.round(x * 100)}%`;
const results = {};
for (const kind of kinds) {
  const unit = unitOf(kind);
  results[kind] = Object.fromEntries(clients.filter((c) => c.runs[kind].length > 0).map((c) => [c.target, summarize(c.target, c.runs[kind])]));
  const rows = Object.values(results[kind]);
  if (rows.length === 0) continue;
  console.log(
    `\n${kind === "unary" ? `SendMessage, ${concurrency} calls in flight` : `SendStreamingMessage of ${fmt(n, 0)} chunks, ${streams} stream(s) at a time`}: ` +
      `median of ${runs} runs x ${seconds} s; CPU in % of one core; latency per ${kind === "unary" ? "call" : "whole stream"}:\n`,
  );
  console.log(
    table([
      ["target", `${unit}s/s`, `min..max ${unit}s/s`, "p50 ms", "p99 ms", `client CPU µs/${unit}`, "client CPU", `server CPU µs/${unit}`, "server CPU", "runs"],
      ...rows.map((r) => [
        r.target,
        fmt(r.rps, 0),
        `${fmt(r.min, 0)}..${fmt(r.max, 0)}`,
        fmt(r.p50, 2),
        fmt(r.p99, 2),
        fmt(r.driverUs, 2),
        pct(r.driverCpu),
        fmt(r.us, 2),
        pct(r.serverCpu),
        r.n,
      ]),
    ]),
  );
}

console.log(`\nours/a2a-js per binding (target >= ${goal}x ${kinds.map((k) => `${unitOf(k)}s/s`).join(" and ")}; client CPU per ${kinds.map(unitOf).join(" or ")}: a2a-js's over ours'):\n`);
const verdicts = [];
for (const b of bindings) {
  for (const kind of kinds) {
    const ours = results[kind]?.[`ours-${b}`];
    const theirs = results[kind]?.[`a2a-js-${b}`];
    if (ours === undefined || theirs === undefined) continue;
    const x = ours.rps / theirs.rps;
    const cpu = theirs.driverUs / ours.driverUs;
    const line = `${b.padEnd(9)} ${kind.padEnd(6)} ${fmt(ours.rps, 0).padStart(8)} / ${fmt(theirs.rps, 0).padStart(8)} ${unitOf(kind)}s/s = ${fmt(x, 2)}x; client CPU ${fmt(cpu, 2)}x less  target >= ${goal}x: ${x >= goal ? "met" : "MISSED"}`;
    verdicts.push(line);
    console.log(line);
  }
}
for (const kind of kinds) {
  for (const r of Object.values(results[kind] ?? {})) {
    if (r.serverCpu > 0.9) console.log(`note: the server used ${pct(r.serverCpu)} of a core against ${r.target} (${kind}): it may be what limits that target's ${unitOf(kind)}s/s.`);
  }
}
const maxOther = Math.max(0, ...Object.values(results).flatMap((by) => Object.values(by).map((r) => r.otherCores)));
console.log(
  `\nContention: ${tally.discarded} run(s) discarded and repeated, ${tally.keptContended} kept contended (no retries left); ` +
    `other processes kept at most ${fmt(maxOther, 2)} cores busy during a kept run (limit ${settings.otherMax}).`,
);
if (clients.some((c) => kinds.some((k) => c.runs[k].length < runs))) {
  console.log(`note: some targets kept fewer than ${runs} runs (failed runs are dropped): ${clients.map((c) => `${c.target} ${kinds.map((k) => c.runs[k].length).join("/")}`).join(", ")}`);
}
if (profile !== "") {
  const c = clients.find((x) => x.target === profile);
  const file = join(profileDir, `${c === undefined ? profile : `client-${profile}`}.cpuprofile`);
  console.log(`\n${profile} ran under --cpu-prof (its numbers above carry the profiler's overhead); profile: ${relative(root, file)}\n`);
  printTopCosts(file, { root, requests: c === undefined ? clients.reduce((s, x) => s + x.requests, 0) : c.requests });
}
