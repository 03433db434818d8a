#!/usr/bin/env node
// How the plugin and its output scale with the size of a proto: a synthetic service of N RPCs
// with google.api.http rules (written by scaleProto() below into a work folder, never
// committed), at a few sizes. For each size, after `buf build`:
//   - the plugin's own work in-process (warm, median), and the whole process as buf runs it,
//     in interleaved rounds with protoc-gen-es on the same request (which takes the square of
//     the proto's size: above 300 RPCs it runs in the first round only);
//   - `tsc --strict` over protoc-gen-es's output and ours (the runtime's types are
//     dist/runtime's .d.ts, as a user's project sees them): wall time, the tsc process's own
//     CPU time (bench/lib/report-cpu.cjs; less disturbed by other work on the machine) and
//     tsc's Check time, median;
// and, on the generated code of each size transpiled to JavaScript, against a2a.proto's 11 RPCs:
//   - the HTTP+JSON router's match (createRouter over the generated HttpRules, timed as
//     bench/router.mjs times it);
//   - the JSON-RPC dispatch table's lookup (a Map of the generated table, as
//     createJsonRpcEndpoint builds it), and one whole JSON-RPC call through the endpoint
//     (in-process, no HTTP) on the same method at every size.
//
// The RPCs come in groups of six in a2a.proto's shapes (bench/lib/router-timing.mjs's routes:
// GetItem with a {tenant} binding, Action (a custom verb, body "*", with a {tenant} binding),
// WatchItem (server streaming), CreateItem (body "item"), GetConfig, DeleteConfig (Empty)),
// each with its own request and response messages, all reaching a shared Item.
//
// The work folder is under bench/.build/ (inside the package, so the generated code resolves
// protoc-gen-a2a/runtime and @bufbuild/protobuf as a user's would), removed at the end.
// `npm run bench:plugin-scale` builds first; about 10 minutes with the default sizes.
//
// Environment:
//   BENCH_SCALE_SIZES=10,100,1000   RPC counts
//   BENCH_RUNS=5                    in-process runs and process rounds per size
//   BENCH_SCALE_TSC_RUNS=3          tsc runs per size
//   BENCH_ROUTER_ITERATIONS=10000, BENCH_ROUTER_BATCHES=31   as in bench/router.mjs
//   BENCH_SCALE_KEEP=1              keep the work folder
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, CodeGeneratorResponseSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { benchDir, fmt, median, num, prepareOurs, root, table, transpileTree } from "./lib/harness.mjs";
import { interleavedMedians, keepSink, matchBatch, syntheticTemplates } from "./lib/router-timing.mjs";

const sizes = (process.env.BENCH_SCALE_SIZES ?? "10,100,1000").split(",").map((s) => {
  const n = Number(s.trim());
  if (!Number.isInteger(n) || n < 6) throw new Error("BENCH_SCALE_SIZES must be integers of 6 or more (one group of shapes)");
  return n;
});
const runs = Math.round(num("BENCH_RUNS", 5));
const tscRuns = Math.round(num("BENCH_SCALE_TSC_RUNS", 3));
const iterations = Math.round(num("BENCH_ROUTER_ITERATIONS", 10000));
const batches = Math.round(num("BENCH_ROUTER_BATCHES", 31));
const buf = join(root, "node_modules/.bin/buf");
const tscJs = join(root, "node_modules/typescript/lib/tsc.js");
const oursBin = join(root, "bin/protoc-gen-a2a.js");
const esBin = join(root, "node_modules/@bufbuild/protoc-gen-es/bin/protoc-gen-es");
const parameter = "target=ts,import_extension=js";
const googleApis = ["google/api/annotations.proto", "google/api/http.proto", "google/api/field_behavior.proto"];

// --- the synthetic proto ---

const names = ["GetItem", "Action", "WatchItem", "CreateItem", "GetConfig", "DeleteConfig"];

/** RPC `i`: its name, HTTP rule and whether it streams. */
function rpcOf(i) {
  const group = Math.floor(i / 6);
  const shape = i % 6;
  const t = syntheticTemplates(group);
  const rule = ([verb, path], body) => `${verb.toLowerCase()}: "${path}"${body === undefined ? "" : ` body: "${body}"`}`;
  const http = [
    `${rule(t[0])} additional_bindings { ${rule(t[6])} }`,
    `${rule(t[1], "*")} additional_bindings { ${rule(t[7], "*")} }`,
    rule(t[2]),
    rule(t[3], "item"),
    rule(t[4]),
    rule(t[5]),
  ][shape];
  return { name: `${names[shape]}${group}`, http, streaming: shape === 2, empty: shape === 5 };
}

function scaleProto(n) {
  const lines = [
    'syntax = "proto3";',
    "package scale.v1;",
    'import "google/api/annotations.proto";',
    'import "google/api/field_behavior.proto";',
    'import "google/protobuf/empty.proto";',
    'import "google/protobuf/timestamp.proto";',
    "",
    "enum ItemState { ITEM_STATE_UNSPECIFIED = 0; ITEM_STATE_ACTIVE = 1; ITEM_STATE_ARCHIVED = 2; }",
    "",
    "message Item {",
    "  string name = 1 [(google.api.field_behavior) = REQUIRED];",
    "  string display_name = 2;",
    "  int64 size = 3;",
    "  ItemState state = 4;",
    "  google.protobuf.Timestamp update_time = 5;",
    "  map<string, string> labels = 6;",
    "  repeated string tags = 7;",
    "}",
    "",
    `// ${n} RPCs in a2a.proto's shapes (bench/plugin-scale.mjs).`,
    "service ScaleService {",
  ];
  const messages = [];
  for (let i = 0; i < n; i++) {
    const rpc = rpcOf(i);
    const output = rpc.empty ? "google.protobuf.Empty" : `${rpc.name}Response`;
    lines.push(`  // ${rpc.name}: RPC ${i} of the synthetic service.`);
    lines.push(`  rpc ${rpc.name}(${rpc.name}Request) returns (${rpc.streaming ? "stream " : ""}${output}) {`);
    lines.push(`    option (google.api.http) = { ${rpc.http} };`);
    lines.push("  }");
    messages.push(
      `message ${rpc.name}Request {`,
      "  string tenant = 1;",
      "  string id = 2 [(google.api.field_behavior) = REQUIRED];",
      "  string item_id = 3;",
      "  int32 page_size = 4;",
      "  Item item = 5;",
      "}",
    );
    if (!rpc.empty) messages.push(`message ${rpc.name}Response {`, "  Item item = 1;", "  repeated Item items = 2;", "  string next_page_token = 3;", "}");
  }
  return [...lines, "}", "", ...messages, ""].join("\n");
}

// --- per size: request, plugin in-process and as a process, tsc ---

const work = mkdtempSync(join(benchDir, ".build", "plugin-scale-"));
const { protocGenA2a } = await import(pathToFileURL(join(root, "dist/plugin/plugin.js")).href);

function requestOf(set, fileToGenerate) {
  return create(CodeGeneratorRequestSchema, {
    fileToGenerate,
    parameter,
    protoFile: set.file,
    sourceFileDescriptors: set.file.filter((f) => fileToGenerate.includes(f.name)),
  });
}

function writeFiles(dir, response) {
  if (response.error) throw new Error(response.error);
  for (const f of response.file) {
    mkdirSync(dirname(join(dir, f.name)), { recursive: true });
    writeFileSync(join(dir, f.name), f.content);
  }
}

function runProcess(bin, stdin) {
  const t = performance.now();
  const r = spawnSync(process.execPath, [bin], { input: stdin, maxBuffer: 1 << 30 });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${bin} failed: ${r.stderr}`);
  return { ms, response: fromBinary(CodeGeneratorResponseSchema, r.stdout) };
}

function prepare(n) {
  const dir = join(work, String(n));
  mkdirSync(dir, { recursive: true });
  cpSync(join(root, "vendor/googleapis/google"), join(dir, "google"), { recursive: true });
  writeFileSync(join(dir, "buf.yaml"), "version: v2\n");
  writeFileSync(join(dir, "scale.proto"), scaleProto(n));
  execFileSync(buf, ["build", "-o", "image.binpb"], { cwd: dir });
  const set = fromBinary(FileDescriptorSetSchema, readFileSync(join(dir, "image.binpb")));
  const request = requestOf(set, ["scale.proto"]);
  // What scale_pb.ts imports, for tsc: protoc-gen-es's code of the googleapis files (not timed).
  writeFiles(join(dir, "gen"), runProcess(esBin, toBinary(CodeGeneratorRequestSchema, requestOf(set, googleApis))).response);
  writeFileSync(join(dir, "tsconfig.json"), tsconfig());
  return { n, dir, request, stdin: toBinary(CodeGeneratorRequestSchema, request) };
}

function tsconfig() {
  return JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      strict: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
      noEmit: true,
      types: ["node"],
    },
    include: ["gen/**/*.ts"],
  });
}

function pluginInProcess(s) {
  let response = protocGenA2a.run(s.request);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    response = protocGenA2a.run(s.request);
    times.push(performance.now() - t);
  }
  writeFiles(join(s.dir, "gen"), response);
  s.lines = response.file.reduce((sum, f) => sum + f.content.split("\n").length, 0);
  return median(times);
}

// protoc-gen-es takes the square of the proto's size (protoplugin names every type of the file
// again for each name it is asked for): above esEveryRound RPCs it runs in the first round only.
const esEveryRound = 300;

function pluginProcesses(s) {
  const times = { ours: [], es: [] };
  for (let round = 0; round < runs; round++) {
    const es = round === 0 || s.n <= esEveryRound;
    for (const key of round % 2 === 0 ? ["ours", "es"] : ["es", "ours"]) {
      if (key === "es" && !es) continue;
      const { ms, response } = runProcess(key === "ours" ? oursBin : esBin, s.stdin);
      times[key].push(ms);
      if (key === "es" && round === 0) writeFiles(join(s.dir, "gen"), response);
    }
  }
  const ratios = times.es.map((t, i) => times.ours[i] / t);
  return { ours: median(times.ours), es: median(times.es), esRuns: times.es.length, ratio: median(ratios) };
}

function typeCheck(s) {
  const wall = [];
  const cpu = [];
  const check = [];
  for (let i = 0; i < tscRuns; i++) {
    const t = performance.now();
    const r = spawnSync(process.execPath, ["--require", join(benchDir, "lib/report-cpu.cjs"), tscJs, "-p", join(s.dir, "tsconfig.json"), "--extendedDiagnostics"], { encoding: "utf8" });
    wall.push(performance.now() - t);
    const checkTime = /^Check time:\s+([\d.]+)s$/m.exec(r.stdout);
    const cpuMs = /^cpu-ms ([\d.]+)$/m.exec(r.stderr);
    if (r.status !== 0 || checkTime === null || cpuMs === null) throw new Error(`tsc --strict fails on ${s.n} RPCs:\n${r.stdout}${r.stderr}`);
    check.push(Number(checkTime[1]) * 1000);
    cpu.push(Number(cpuMs[1]));
  }
  return { wall: median(wall), cpu: median(cpu), check: median(check) };
}

// --- the router and the JSON-RPC dispatch, on the generated code ---

const imp = (p) => import(pathToFileURL(p).href);

async function runtimeOf(s) {
  transpileTree(join(s.dir, "gen"), join(s.dir, "js"));
  const methods = await imp(join(s.dir, "js/scale_methods.js"));
  const jsonRpc = await imp(join(s.dir, "js/scale_jsonrpc.js"));
  return { rules: methods.ScaleServiceHttpRules, table: jsonRpc.ScaleServiceJsonRpcMethods, createEndpoint: jsonRpc.createScaleServiceJsonRpcEndpoint };
}

function routerOf(createRouter, parsePathTemplate, rules) {
  return createRouter(rules.map((r) => ({ httpMethod: r.httpMethod, template: parsePathTemplate(r.path), target: r.method })));
}

let lookupSink = 0;
function lookupBatch(map, name, n) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) lookupSink += map.get(name) === undefined ? 0 : 1;
  return Number(process.hrtime.bigint() - t0) / n;
}

function coreRequest(body) {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const headers = new Headers({ "content-type": "application/json" });
  const signal = new AbortController().signal;
  return { method: "POST", url: "/", headers, header: (name) => headers.get(name), signal, body: async () => bytes };
}

async function callBatch(endpoint, request, n) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await endpoint.handle(request);
  return Number(process.hrtime.bigint() - t0) / n;
}

// --- run ---

const fmtMs = (ms) => fmt(ms, ms < 10 ? 2 : ms < 100 ? 1 : 0);
try {
  console.log(
    `plugin-scale: ${sizes.join(", ")} RPCs; Node ${process.versions.node}; median of ${runs} runs in-process and ${runs} process rounds ` +
      `(protoc-gen-es in the first round only above ${esEveryRound} RPCs), ${tscRuns} tsc runs per size\n`,
  );
  const results = [];
  for (const n of sizes) {
    const s = prepare(n);
    s.inProcess = pluginInProcess(s);
    s.process = pluginProcesses(s);
    s.tsc = typeCheck(s);
    results.push(s);
    console.log(
      `${fmt(n, 0)} RPCs: request ${fmt(s.stdin.length / 1024, 0)} KB, ${fmt(s.lines, 0)} lines generated; plugin ${fmtMs(s.inProcess)} ms in-process, ` +
        `process ${fmtMs(s.process.ours)} ms, protoc-gen-es ${fmtMs(s.process.es)} ms; tsc --strict ${fmtMs(s.tsc.wall)} ms (CPU ${fmtMs(s.tsc.cpu)} ms)`,
    );
  }

  // Each size against the one before it: what each RPC added costs.
  const added = (pick) => results.map((s, i) => (i === 0 ? "" : fmt((pick(s) - pick(results[i - 1])) / (s.n - results[i - 1].n), 2)));
  const perRpc = (pick) => results.map((s) => fmt(pick(s) / s.n, 2));
  const columns = (pick) => [results.map((s) => fmtMs(pick(s))), perRpc(pick), added(pick)];
  const [plugin, pluginPer, pluginAdded] = columns((s) => s.inProcess);
  const [proc, procPer, procAdded] = columns((s) => s.process.ours);
  const [es, , esAdded] = columns((s) => s.process.es);
  console.log("\nGeneration, median ms (per RPC: the figure / RPCs; added: ms per RPC added since the size above):\n");
  console.log(
    table([
      ["RPCs", "lines (ours)", "in-process", "per RPC", "added", "process", "per RPC", "added", "protoc-gen-es process", "added", "ours / es"],
      ...results.map((s, i) => [
        fmt(s.n, 0),
        fmt(s.lines, 0),
        plugin[i],
        pluginPer[i],
        pluginAdded[i],
        proc[i],
        procPer[i],
        procAdded[i],
        `${es[i]}${s.process.esRuns === 1 ? " (1 run)" : ""}`,
        esAdded[i],
        `${fmt(s.process.ratio, 2)}x`,
      ]),
    ]),
  );
  const [cpu, cpuPer, cpuAdded] = columns((s) => s.tsc.cpu);
  const [check, , checkAdded] = columns((s) => s.tsc.check);
  console.log("\ntsc --strict over protoc-gen-es's and our output, median ms (CPU: the tsc process's own; check: tsc's Check time):\n");
  console.log(
    table([
      ["RPCs", "wall", "CPU", "per RPC", "added", "check", "added"],
      ...results.map((s, i) => [fmt(s.n, 0), fmtMs(s.tsc.wall), cpu[i], cpuPer[i], cpuAdded[i], check[i], checkAdded[i]]),
    ]),
  );

  // Router and dispatch: a2a.proto's generated tables against each size's.
  prepareOurs("a2a_jsonrpc.ts");
  const { createRouter } = await imp(join(root, "dist/runtime/core/http/router.js"));
  const { parsePathTemplate } = await imp(join(root, "dist/runtime/core/http/path-template.js"));
  const a2aMethods = await imp(join(benchDir, ".build/generated/a2a_methods.js"));
  const a2aJsonRpc = await imp(join(benchDir, ".build/generated/a2a_jsonrpc.js"));
  const a2a = {
    label: `a2a.proto (${Object.keys(a2aJsonRpc.A2AServiceJsonRpcMethods).length} RPCs, ${a2aMethods.A2AServiceHttpRules.length} routes)`,
    router: routerOf(createRouter, parsePathTemplate, a2aMethods.A2AServiceHttpRules),
    table: new Map(Object.entries(a2aJsonRpc.A2AServiceJsonRpcMethods)),
  };
  const scales = [];
  for (const s of results) {
    const rt = await runtimeOf(s);
    scales.push({
      label: `${fmt(s.n, 0)} RPCs (${fmt(rt.rules.length, 0)} routes)`,
      router: routerOf(createRouter, parsePathTemplate, rt.rules),
      table: new Map(Object.entries(rt.table)),
      endpoint: rt.createEndpoint({ getItem0: async (request) => ({ item: { name: request.id } }) }),
    });
  }

  // The same shapes on both sides: a2a.proto's paths on its router, group 0's on the synthetic ones.
  const shapes = [
    ["item GET", ["GET", "/tasks/task-1"], ["GET", "/svc0/items/item-1"]],
    ["custom verb", ["POST", "/tasks/task-1:cancel"], ["POST", "/svc0/items/item-1:action0"]],
    ["tenant form", ["GET", "/tenant-a/tasks/task-1"], ["GET", "/tenant-a/svc0/items/item-1"]],
    ["nested config", ["GET", "/tasks/task-1/pushNotificationConfigs/cfg-1"], ["GET", "/svc0/items/item-1/configs/cfg-1"]],
    ["404", ["GET", "/no/such/route"], ["GET", "/no/such/route"]],
  ];
  const routers = [a2a, ...scales];
  for (const [what, a, z] of shapes) {
    const kinds = routers.map((r, i) => r.router.match(...(i === 0 ? a : z)).kind);
    if (new Set(kinds).size !== 1 || (what !== "404" && kinds[0] !== "found")) throw new Error(`${what}: matched as ${kinds.join(" / ")}`);
  }
  const lookups = [
    ["a method", "GetTask", "GetItem0"],
    ["no such method", "NoSuchMethod", "NoSuchMethod"],
  ];
  for (const [what, a, z] of lookups) {
    const found = routers.map((r, i) => r.table.has(i === 0 ? a : z));
    if (new Set(found).size !== 1) throw new Error(`${what}: found on some tables only`);
  }

  for (let round = 0; round < 3; round++) {
    for (const [, a, z] of shapes) routers.forEach((r, i) => matchBatch(r.router, ...(i === 0 ? a : z), iterations));
    for (const [, a, z] of lookups) routers.forEach((r, i) => lookupBatch(r.table, i === 0 ? a : z, iterations));
  }
  const routeNs = shapes.map(([, a, z]) => interleavedMedians(routers.map((r, i) => () => matchBatch(r.router, ...(i === 0 ? a : z), iterations)), batches));
  const lookupNs = lookups.map(([, a, z]) => interleavedMedians(routers.map((r, i) => () => lookupBatch(r.table, i === 0 ? a : z, iterations)), batches));
  keepSink();
  if (lookupSink === 0) console.log("");

  // One whole JSON-RPC call, on the same method and messages at every size.
  const call = coreRequest({ jsonrpc: "2.0", id: 1, method: "GetItem0", params: { id: "item-1" } });
  for (const s of scales) {
    const r = await s.endpoint.handle(call);
    if (r.kind !== "body" || r.status !== 200 || JSON.parse(r.body).result?.item?.name !== "item-1") throw new Error(`GetItem0 on ${s.label}: ${JSON.stringify(r)}`);
  }
  const callIterations = Math.max(1, Math.round(iterations / 10));
  for (let round = 0; round < 3; round++) for (const s of scales) await callBatch(s.endpoint, call, callIterations);
  const callSamples = scales.map(() => []);
  for (let b = 0; b < batches; b++) {
    for (let j = 0; j < scales.length; j++) {
      const k = (j + b) % scales.length;
      callSamples[k].push(await callBatch(scales[k].endpoint, call, callIterations));
    }
  }
  const callNs = callSamples.map(median);

  const last = routers.length - 1;
  console.log(
    `\nRouter match and JSON-RPC lookup, in-process (ns; median of ${batches} interleaved batches of ${fmt(iterations, 0)}; ` +
      `a2a.proto's paths on its router, the same shapes in the synthetic group 0 on the others):\n`,
  );
  console.log(
    table([
      ["operation", ...routers.map((r) => r.label), `${scales[last - 1].label.split(" (")[0]} / a2a.proto`],
      ...shapes.map(([what], i) => [`router match, ${what}`, ...routeNs[i].map((x) => fmt(x, 0)), `${fmt(routeNs[i][last] / routeNs[i][0], 2)}x`]),
      ...lookups.map(([what], i) => [`JSON-RPC table lookup, ${what}`, ...lookupNs[i].map((x) => fmt(x, 1)), `${fmt(lookupNs[i][last] / lookupNs[i][0], 2)}x`]),
    ]),
  );
  console.log(
    `\nOne JSON-RPC GetItem0 call through the endpoint, in-process (ns/call; median of ${batches} interleaved batches of ${fmt(callIterations, 0)}):\n`,
  );
  console.log(
    table([
      ["", ...scales.map((s) => s.label), `${scales[scales.length - 1].label.split(" (")[0]} / ${scales[0].label.split(" (")[0]}`],
      ["GetItem0", ...callNs.map((x) => fmt(x, 0)), `${fmt(callNs[callNs.length - 1] / callNs[0], 2)}x`],
    ]),
  );
} finally {
  if (process.env.BENCH_SCALE_KEEP === "1") console.log(`\nwork folder kept: ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
