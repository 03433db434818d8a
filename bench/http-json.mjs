#!/usr/bin/env node
// The HTTP+JSON binding on loopback, req/s and p99 latency, for GET
// /tasks/{id} (GetTask) and POST /message:send (SendMessage), for four
// servers doing the same trivial work (GetTask returns a stored task,
// SendMessage a completed Task echoing the message text), measured in one
// run:
//
//   ours         the generated createA2AServiceHttpJsonListener (node:http)
//   a2a-js       @a2a-js/sdk 1.x, its express restHandler over a directly
//                implemented A2ARequestHandler ("binding only")
//   a2a-js-full  @a2a-js/sdk 1.x as its users run an agent ("full stack"): the
//                same express restHandler over its DefaultRequestHandler, an
//                InMemoryTaskStore (holding the stored task from start-up)
//                and an AgentExecutor publishing the echo task on the event
//                bus (SendMessage answers with the user's message in the
//                task's history, which the SDK adds)
//   ceiling      bare node:http: a fixed string check for the route,
//                JSON.parse the body, JSON.stringify the reply
//
// (The SDK does not export its RestTransportHandler, so unlike the JSON-RPC
// bench there is no a2a-js-core target without express.)
//
// Same method as bench/jsonrpc.mjs, whose machinery it shares
// (bench/lib/harness.mjs): each server in its own child process on
// 127.0.0.1, autocannon in another; every target must answer each request
// with exactly the expected JSON (http-json/fixture.mjs) before anything is
// measured (and after the warm-up, and at the end); after a warm-up the runs
// alternate, for each run and each route A,B,C, and the median is reported
// per route.
//
// Environment: the same as bench/jsonrpc.mjs (BENCH_SECONDS, BENCH_RUNS,
// BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_PIPELINING, BENCH_TARGETS,
// BENCH_OTHER_MAX, BENCH_RETRIES, BENCH_PIN, BENCH_PROFILE), and
//   BENCH_ROUTES=get-task,send-message   the routes measured (e.g. only one
//                                        of them, to profile it alone)
import { existsSync } from "node:fs";
import { cpus } from "node:os";
import { join, relative } from "node:path";
import {
  benchDir,
  fmt,
  load,
  loadSettings,
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
import { expectedOf, routes } from "./http-json/fixture.mjs";

const settings = loadSettings("ours,a2a-js,a2a-js-full,ceiling");
const { seconds, runs, warmup, connections, pipelining, targets, pin, profile, profileDir } = settings;
const routeKeys = (process.env.BENCH_ROUTES ?? Object.keys(routes).join(",")).split(",").map((s) => s.trim()).filter(Boolean);

for (const t of targets) {
  if (!existsSync(join(benchDir, "http-json", `server-${t}.mjs`))) throw new Error(`unknown target ${t}`);
}
for (const k of routeKeys) {
  if (routes[k] === undefined) throw new Error(`unknown route ${k} (known: ${Object.keys(routes).join(", ")})`);
}
const contentType = /^application\/(a2a\+)?json(;|$)/;

async function verify(server, key) {
  const { request, what } = routes[key];
  return verifyResponse(server, request, expectedOf(key, server.target), { what: `${routes[key].name} (${what})`, contentType });
}

// --- main ---

if (targets.includes("ours")) prepareOurs("a2a_http.ts");

console.log(
  `HTTP+JSON on loopback: ${routeKeys.map((k) => routes[k].name).join(" and ")}; ${targets.join(", ")}; ` +
    `${runs} x ${seconds} s per route and target (after ${warmup} s warm-up), ` +
    `${connections} connections, pipelining ${pipelining}, autocannon in its own process` +
    `${pin ? ", servers pinned to CPU 0 and the driver to CPU 1" : ""}; ${cpus().length} CPUs, Node ${process.versions.node}`,
);

const driver = startDriver(settings);
const servers = [];
/** route key -> target -> runs */
const runsOf = Object.fromEntries(routeKeys.map((k) => [k, Object.fromEntries(targets.map((t) => [t, []]))]));
try {
  for (const t of targets) servers.push(await startServer(t, `http-json/server-${t}.mjs`, settings));
  for (const k of routeKeys) {
    for (const s of servers) {
      const { bytes, contentType } = await verify(s, k);
      const history = s.target === "a2a-js-full" && routes[k].expectedFull !== routes[k].expected ? ", with the user's message in its history as the SDK adds it" : "";
      console.log(`  verified ${s.target} ${routes[k].name}: 200 ${contentType}, the expected ${routes[k].what} result${history} (${bytes} bytes)`);
    }
  }
  if (warmup > 0) {
    for (const k of routeKeys) for (const s of servers) await load(driver, s, routes[k].request, warmup, settings);
    for (const k of routeKeys) for (const s of servers) await verify(s, k);
  }
  for (let i = 0; i < runs; i++) {
    for (const k of routeKeys) {
      console.log(`run ${i + 1}/${runs} ${routes[k].name}`);
      for (const s of servers) await measure(driver, s, routes[k].request, settings, { runs: runsOf[k][s.target] });
    }
  }
  for (const k of routeKeys) for (const s of servers) await verify(s, k);
} finally {
  // The children exit on request, so that --cpu-prof writes its profile.
  await stopAll(servers, driver);
}

console.log(
  `\nMedian of ${runs} runs x ${seconds} s per route and target (${connections} connections, pipelining ${pipelining}); ` +
    "server/driver CPU in % of one core; autocannon latency has 1 ms resolution.",
);
const summary = [];
for (const k of routeKeys) {
  const results = targets.filter((t) => runsOf[k][t].length > 0).map((t) => summarize(t, runsOf[k][t]));
  const by = Object.fromEntries(results.map((r) => [r.target, r]));
  console.log(`\n${routes[k].name} (${routes[k].what}):\n`);
  console.log(resultTable(results));
  console.log("");
  printRatio(by, "ours", "a2a-js", 2);
  printRatio(by, "ours", "a2a-js-full");
  printRatio(by, "ours", "ceiling", 0.7);
  printRatio(by, "a2a-js", "a2a-js-full");
  printDriverNotes(results, `${routes[k].name} `);
  summary.push([routes[k].name, by]);
}
if (summary.length > 1) {
  console.log("\nSummary (req/s ratios):");
  for (const [name, by] of summary) {
    const r = (a, b) => (by[a] && by[b] ? `${a}/${b} ${fmt(by[a].rps / by[b].rps, 2)}x` : undefined);
    console.log(`  ${name.padEnd(20)} ${[r("ours", "a2a-js"), r("ours", "a2a-js-full"), r("ours", "ceiling")].filter(Boolean).join("  ")}`);
  }
}
if (profile !== "") {
  const file = join(profileDir, `${profile}.cpuprofile`);
  console.log(
    `\n${profile} ran under --cpu-prof (its numbers above carry the profiler's overhead); profile: ${relative(root, file)}; ` +
      `µs/req below are over all requests of ${routeKeys.map((k) => routes[k].name).join(" and ")} (BENCH_ROUTES selects one)\n`,
  );
  printTopCosts(file, { root, requests: servers.find((s) => s.target === profile)?.requests });
}
