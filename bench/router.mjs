#!/usr/bin/env node
// The HTTP+JSON router's cost per match, in-process (no HTTP), for a2a.proto's
// 24 routes and for the same 24 routes plus programmatically generated
// synthetic ones (1,000 in all, and 10,000), to show that ns/match follows
// the request path and not the number of routes.
//
// The routers are built with createRouter from dist/runtime/core/http/router.js (the
// runtime as it ships) over templates parsed with parsePathTemplate from
// dist/runtime/core/http/path-template.js; a2a.proto's routes are the generated
// A2AServiceHttpRules (generated/a2a_methods.ts, transpiled into
// bench/.build/generated/ like the HTTP benchmarks do).
//
// The synthetic services repeat the shapes a2a.proto has, per service i:
//   GET    /svc{i}/items/{id}                   POST   /svc{i}/items
//   POST   /svc{i}/items/{id}:action{i}         GET    /svc{i}/items/{id}:watch
//   GET    /svc{i}/items/{item_id}/configs/{id} DELETE /svc{i}/items/{item_id}/configs/{id}
//   GET    /{tenant}/svc{i}/items/{id}          POST   /{tenant}/svc{i}/items/{id}:action{i}
// so the big routers also have many more literals under the root and under
// the {tenant} wildcard, and a custom verb per service.
//
// Every representative path is matched on every router (the a2a.proto paths
// must resolve to the same route everywhere); timing is done in batches of
// BENCH_ROUTER_ITERATIONS matches, the routers interleaved batch by batch so
// JIT state and machine drift hit them alike, and the median batch is
// reported as ns/match. "trie nodes" is the number of trie nodes one match
// enters (createRouter's stats hook, on separate routers, not timed).
//
// Environment:
//   BENCH_ROUTER_SIZES=1000,10000    route counts besides a2a.proto's 24
//   BENCH_ROUTER_ITERATIONS=10000    matches per timed batch
//   BENCH_ROUTER_BATCHES=31          timed batches per path and router
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { fmt, prepareOurs, root, table, benchDir } from "./lib/harness.mjs";
import { interleavedMedians, keepSink, matchBatch, syntheticTemplates } from "./lib/router-timing.mjs";

const intList = (name, fallback) =>
  (process.env[name] ?? fallback).split(",").map((s) => {
    const n = Number(s.trim());
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be positive integers`);
    return n;
  });
const sizes = intList("BENCH_ROUTER_SIZES", "1000,10000");
const [iterations] = intList("BENCH_ROUTER_ITERATIONS", "10000");
const [batches] = intList("BENCH_ROUTER_BATCHES", "31");

prepareOurs("a2a_methods.ts");
const imp = (p) => import(pathToFileURL(p).href);
const { createRouter } = await imp(join(root, "dist/runtime/core/http/router.js"));
const { parsePathTemplate } = await imp(join(root, "dist/runtime/core/http/path-template.js"));
const { A2AServiceHttpRules } = await imp(join(benchDir, ".build/generated/a2a_methods.js"));

const a2aRoutes = A2AServiceHttpRules.map((rule) => ({
  httpMethod: rule.httpMethod,
  template: parsePathTemplate(rule.path),
  target: `${rule.method} ${rule.httpMethod} ${rule.path}`,
}));

/** a2a.proto's routes plus synthetic ones, `count` in all. */
function routesOf(count) {
  const routes = [...a2aRoutes];
  for (let i = 0; routes.length < count; i++) {
    for (const [httpMethod, path] of syntheticTemplates(i)) {
      if (routes.length === count) break;
      routes.push({ httpMethod, template: parsePathTemplate(path), target: `synthetic ${httpMethod} ${path}` });
    }
  }
  return routes;
}

const sets = [{ label: `a2a.proto (${a2aRoutes.length})`, count: a2aRoutes.length, routes: a2aRoutes }];
for (const n of sizes) {
  if (n <= a2aRoutes.length) throw new Error(`BENCH_ROUTER_SIZES: ${n} is not more than a2a.proto's ${a2aRoutes.length} routes`);
  sets.push({ label: `${fmt(n, 0)} routes`, count: n, routes: routesOf(n) });
}
for (const s of sets) {
  s.router = createRouter(s.routes);
  s.stats = { nodesVisited: 0 };
  s.counting = createRouter(s.routes, s.stats);
}

// Representative requests. a2a: on every router, same result everywhere.
// synthetic: only where the route exists (services 0 and 99 exist from 1,000 routes on).
const paths = [
  { method: "GET", path: "/tasks/task-1", what: "GetTask" },
  { method: "POST", path: "/message:send", what: "SendMessage" },
  { method: "POST", path: "/tasks/task-1:cancel", what: "CancelTask (verb)" },
  { method: "GET", path: "/tasks/task-1/pushNotificationConfigs/cfg-1", what: "GetTaskPushNotificationConfig" },
  { method: "GET", path: "/tenant-a/tasks/task-1", what: "GetTask, tenant form" },
  { method: "POST", path: "/tenant-a/tasks/task-1:cancel", what: "CancelTask, tenant form" },
  { method: "GET", path: "/tasks", what: "ListTasks" },
  { method: "DELETE", path: "/tasks/task-1", what: "405" },
  { method: "GET", path: "/no/such/route", what: "404" },
  { method: "GET", path: "/svc0/items/item-1", what: "synthetic, first service", synthetic: true },
  { method: "POST", path: "/tenant-a/svc99/items/item-1:action99", what: "synthetic, tenant + verb", synthetic: true },
  { method: "GET", path: "/svc99/items/a/configs/b", what: "synthetic, 4 segments", synthetic: true },
];

const describe = (m) => (m.kind === "found" ? `${m.route.target.split(" ")[0]}(${m.values.join(",")})` : m.kind);
for (const p of paths) {
  p.on = sets.filter((s) => !p.synthetic || s.count >= 1000);
  const results = p.on.map((s) => describe(s.router.match(p.method, p.path)));
  if (new Set(results).size !== 1 || (p.synthetic && !results[0].startsWith("synthetic"))) {
    throw new Error(`${p.method} ${p.path} matches differently: ${results.join(" / ")}`);
  }
  p.result = p.synthetic ? p.on[0].router.match(p.method, p.path).route.target.split(" ").slice(1).join(" ") : results[0];
  p.nodes = p.on.map((s) => {
    s.stats.nodesVisited = 0;
    s.counting.match(p.method, p.path);
    return s.stats.nodesVisited;
  });
}

// --- timing ---

console.log(
  `Router match() in-process, Node ${process.versions.node}: ${sets.map((s) => s.label).join(", ")}; ` +
    `median of ${batches} batches x ${fmt(iterations, 0)} matches per path and router, routers interleaved`,
);
// Warm every router on every path first, so all of them run optimized code.
for (let round = 0; round < 3; round++) for (const p of paths) for (const s of p.on) matchBatch(s.router, p.method, p.path, iterations);
for (const p of paths) {
  p.ns = interleavedMedians(p.on.map((s) => () => matchBatch(s.router, p.method, p.path, iterations)), batches);
}
keepSink();

// --- report ---

const a2aPaths = paths.filter((p) => !p.synthetic);
const big = sets.slice(1);
const nsCol = (p, s) => {
  const i = p.on.indexOf(s);
  return i < 0 ? "n/a" : fmt(p.ns[i], 0);
};
console.log(`\na2a.proto paths, on every router (ns/match; ratio = this router / a2a.proto's ${a2aRoutes.length} routes):\n`);
console.log(
  table([
    ["request", "result", ...sets.flatMap((s, i) => (i === 0 ? [`${s.label} ns`] : [`${s.label} ns`, "ratio"])), "trie nodes"],
    ...a2aPaths.map((p) => [
      `${p.method} ${p.path}`,
      p.result,
      ...sets.flatMap((s, i) => (i === 0 ? [nsCol(p, s)] : [nsCol(p, s), `${fmt(p.ns[i] / p.ns[0], 2)}x`])),
      [...new Set(p.nodes)].join("/"),
    ]),
  ]),
);
const geo = (xs) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
for (const [i, s] of sets.entries()) {
  if (i === 0) continue;
  const ratios = a2aPaths.map((p) => p.ns[i] / p.ns[0]);
  console.log(
    `${s.label} vs ${sets[0].label}: geometric mean ${fmt(geo(ratios), 2)}x, ` +
      `range ${fmt(Math.min(...ratios), 2)}x..${fmt(Math.max(...ratios), 2)}x ns/match over ${ratios.length} paths`,
  );
}
const synth = paths.filter((p) => p.synthetic);
if (big.length > 0 && synth.length > 0) {
  console.log(`\nsynthetic paths, on the big routers (ns/match; ratio = this router / ${big[0].label}):\n`);
  console.log(
    table([
      ["request", "route", ...big.flatMap((s, i) => (i === 0 ? [`${s.label} ns`] : [`${s.label} ns`, "ratio"])), "trie nodes"],
      ...synth.map((p) => [
        `${p.method} ${p.path}`,
        p.result,
        ...big.flatMap((s, i) => (i === 0 ? [nsCol(p, s)] : [nsCol(p, s), `${fmt(p.ns[i] / p.ns[0], 2)}x`])),
        [...new Set(p.nodes)].join("/"),
      ]),
    ]),
  );
}
console.log(
  "\nA ratio near 1.00x means the route count does not show in the cost; the trie nodes entered per match are the same on every router.",
);
