#!/usr/bin/env node
// SendMessage over JSON-RPC on loopback, req/s and p99 latency, for four
// servers doing the same trivial work (a completed Task echoing the message
// text), measured in one run:
//
//   ours         the generated createA2AServiceJsonRpcListener (node:http)
//   a2a-js       @a2a-js/sdk 1.x, its express jsonRpcHandler over a directly
//                implemented A2ARequestHandler ("binding only")
//   a2a-js-full  @a2a-js/sdk 1.x as its users run an agent ("full stack"): the
//                same express jsonRpcHandler over its DefaultRequestHandler,
//                an InMemoryTaskStore and an AgentExecutor publishing the
//                echo task on the event bus (answers with the user's message
//                in the task's history, which the SDK adds)
//   ceiling      bare node:http: JSON.parse the body, JSON.stringify the reply
//
// (and, on request, a2a-js-core: the SDK's JsonRpcTransportHandler behind
// node:http without express.)
//
// Each server runs in its own child process on 127.0.0.1; the load comes from
// autocannon in another child process, so the driver's CPU is not the
// server's. Before anything is measured every target must answer the request
// with exactly the expected JSON-RPC response (jsonrpc/fixture.mjs). After a
// warm-up per target the targets are run in turn, A,B,C,A,B,C,..., so drift
// of the machine hits all of them alike, and the median of the runs is
// reported.
//
// "ours" runs generated/*.ts, transpiled by bench/lib/harness.mjs
// (ts.transpileModule, no type check: the project compiles with
// isolatedModules + verbatimModuleSyntax, so that is exact) into
// bench/.build/generated/; those files import
// "protoc-gen-a2a/runtime", which resolves through the package's self
// reference to dist/runtime, i.e. the runtime as it ships. So dist/ must be
// built and generated/ present: `npm run generate` does both, and `npm run
// bench` runs it first.
//
// Environment:
//   BENCH_SECONDS=4       seconds per measured run
//   BENCH_RUNS=5          measured runs per target (the median is reported)
//   BENCH_WARMUP=2        seconds of warm-up per target, not reported
//   BENCH_CONNECTIONS=32  keep-alive connections
//   BENCH_PIPELINING=1    requests in flight per connection
//   BENCH_TARGETS=ours,a2a-js,a2a-js-full,ceiling   (a2a-js-core is also available)
//   BENCH_OTHER_MAX=0.25 a run during which other processes (or the host's
//                         steal) took more cores than this is discarded...
//   BENCH_RETRIES=2       ...and repeated, at most this many times per run
//   BENCH_PIN=1           pin servers to CPU 0 and the load driver to CPU 1
//                         (taskset; off by default)
//   BENCH_PROFILE=ours    run that target's server with --cpu-prof, write the
//                         profile to bench/.profiles/ and print its top costs
//                         (the profiled target's numbers are then not
//                         comparable)
import { existsSync } from "node:fs";
import { cpus } from "node:os";
import { join, relative } from "node:path";
import {
  benchDir,
  loadSettings,
  load,
  measure,
  prepareOurs,
  printDriverNotes,
  printRatio,
  resultTable,
  root,
  startDriver,
  startServer,
  stopAll,
  summarize,
  verifyResponse,
} from "./lib/harness.mjs";
import { printTopCosts } from "./lib/profile-top.mjs";
import { expectedResponseOf, requestBody, requestHeaders } from "./jsonrpc/fixture.mjs";

const settings = loadSettings("ours,a2a-js,a2a-js-full,ceiling");
const { seconds, runs, warmup, connections, pipelining, targets, pin, profile, profileDir } = settings;

for (const t of targets) {
  if (!existsSync(join(benchDir, "jsonrpc", `server-${t}.mjs`))) throw new Error(`unknown target ${t}`);
}

const request = { path: "/", method: "POST", headers: requestHeaders, body: requestBody };

async function verify(server) {
  const { bytes } = await verifyResponse(server, request, expectedResponseOf(server.target), { what: "SendMessage" });
  return bytes;
}

// --- main ---

if (targets.includes("ours")) prepareOurs("a2a_jsonrpc.ts");

console.log(
  `JSON-RPC SendMessage on loopback: ${targets.join(", ")}; ${runs} x ${seconds} s per target (after ${warmup} s warm-up), ` +
    `${connections} connections, pipelining ${pipelining}, autocannon in its own process` +
    `${pin ? ", servers pinned to CPU 0 and the driver to CPU 1" : ""}; ${cpus().length} CPUs, Node ${process.versions.node}`,
);

const driver = startDriver(settings);
const servers = [];
try {
  for (const t of targets) servers.push(await startServer(t, `jsonrpc/server-${t}.mjs`, settings));
  for (const s of servers) {
    const bytes = await verify(s);
    const history = s.target === "a2a-js-full" ? ", with the user's message in its history as the SDK adds it" : "";
    console.log(`  verified ${s.target}: 200 application/json, the expected SendMessage result${history} (${bytes} bytes)`);
  }
  if (warmup > 0) {
    for (const s of servers) await load(driver, s, request, warmup, settings);
    for (const s of servers) await verify(s);
  }
  for (let i = 0; i < runs; i++) {
    console.log(`run ${i + 1}/${runs}`);
    for (const s of servers) await measure(driver, s, request, settings);
  }
  for (const s of servers) await verify(s);
} finally {
  // The children exit on request, so that --cpu-prof writes its profile.
  await stopAll(servers, driver);
}

const results = servers.map((s) => summarize(s.target, s.runs));
const by = Object.fromEntries(results.map((r) => [r.target, r]));

console.log(
  `\nMedian of ${runs} runs x ${seconds} s per target (${connections} connections, pipelining ${pipelining}); ` +
    "server/driver CPU in % of one core; autocannon latency has 1 ms resolution:\n",
);
console.log(resultTable(results));

console.log("");
printRatio(by, "ours", "a2a-js", 2);
printRatio(by, "ours", "a2a-js-full");
printRatio(by, "ours", "ceiling", 0.7);
printRatio(by, "a2a-js", "a2a-js-full");
printRatio(by, "ours", "a2a-js-core");
printRatio(by, "a2a-js-core", "a2a-js");
printDriverNotes(results);
if (profile !== "") {
  const file = join(profileDir, `${profile}.cpuprofile`);
  console.log(`\n${profile} ran under --cpu-prof (its numbers above carry the profiler's overhead); profile: ${relative(root, file)}\n`);
  printTopCosts(file, { root, requests: servers.find((s) => s.target === profile)?.requests });
}
