#!/usr/bin/env node
// SendMessage over JSON-RPC on loopback, req/s and p99 latency, for three
// servers doing the same trivial work (a completed Task echoing the message
// text), measured in one run:
//
//   ours      the generated createA2AServiceJsonRpcListener (node:http)
//   a2a-js    @a2a-js/sdk 1.x, its express jsonRpcHandler over a directly
//             implemented A2ARequestHandler ("binding only")
//   ceiling   bare node:http: JSON.parse the body, JSON.stringify the reply
//
// (and, on request, a2a-js-core: the SDK's JsonRpcTransportHandler behind
// node:http without express.)
//
// Each server runs in its own child process on 127.0.0.1; the load comes from
// autocannon in another child process, so the driver's CPU is not the
// server's. Before anything is measured every target must answer the request
// with the expected JSON-RPC response. After a warm-up per target the targets
// are run in turn, A,B,C,A,B,C,..., so drift of the machine hits all of them
// alike, and the median of the runs is reported.
//
// "ours" runs generated/*.ts, transpiled here (ts.transpileModule, no type
// check: the project compiles with isolatedModules + verbatimModuleSyntax, so
// that is exact) into bench/.build/generated/; those files import
// "protoc-gen-a2a/runtime", which resolves through the package's self
// reference to dist/runtime, i.e. the runtime as it ships. So dist/ must be
// built and generated/ present: `npm run generate` does both, and `npm run
// bench` runs it first.
//
// Environment:
//   BENCH_SECONDS=5       seconds per measured run
//   BENCH_RUNS=5          measured runs per target (the median is reported)
//   BENCH_WARMUP=3        seconds of warm-up per target, not reported
//   BENCH_CONNECTIONS=32  keep-alive connections
//   BENCH_PIPELINING=1    requests in flight per connection
//   BENCH_TARGETS=ours,a2a-js,ceiling   (a2a-js-core is also available)
//   BENCH_OTHER_MAX=0.25 a run during which other processes (or the host's
//                         steal) took more cores than this is discarded...
//   BENCH_RETRIES=2       ...and repeated, at most this many times per run
//   BENCH_PIN=1           pin servers to CPU 0 and the load driver to CPU 1
//                         (taskset; off by default)
//   BENCH_PROFILE=ours    run that target's server with --cpu-prof, write the
//                         profile to bench/.profiles/ and print its top costs
//                         (the profiled target's numbers are then not
//                         comparable)
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expectedResponse, requestBody, requestHeaders } from "./jsonrpc/fixture.mjs";
import { printTopCosts } from "./jsonrpc/profile-top.mjs";

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = resolve(benchDir, "..");

const num = (name, fallback) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};
const seconds = num("BENCH_SECONDS", 5);
const runs = Math.round(num("BENCH_RUNS", 5));
const warmup = Number(process.env.BENCH_WARMUP ?? 3);
const connections = Math.round(num("BENCH_CONNECTIONS", 32));
const pipelining = Math.round(num("BENCH_PIPELINING", 1));
const targets = (process.env.BENCH_TARGETS ?? "ours,a2a-js,ceiling").split(",").map((s) => s.trim()).filter(Boolean);
const pin = process.env.BENCH_PIN === "1";
const profile = process.env.BENCH_PROFILE ?? "";
const profileDir = join(benchDir, ".profiles");
const otherMax = Number(process.env.BENCH_OTHER_MAX ?? 0.25);
const retries = Math.round(Number(process.env.BENCH_RETRIES ?? 2));

for (const t of targets) {
  if (!existsSync(join(benchDir, "jsonrpc", `server-${t}.mjs`))) throw new Error(`unknown target ${t}`);
}

// --- "ours": the generated TypeScript, transpiled against the built runtime ---

function newestMtime(dir, ext) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(ext)) newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return newest;
}

function prepareOurs() {
  const generated = join(root, "generated");
  if (!existsSync(join(generated, "a2a_jsonrpc.ts"))) {
    throw new Error("generated/a2a_jsonrpc.ts is missing: run `npm run generate` first");
  }
  const runtimeIndex = join(root, "dist/runtime/index.js");
  if (!existsSync(runtimeIndex)) throw new Error("dist/runtime is missing: run `npm run build` first");
  if (newestMtime(join(root, "runtime"), ".ts") > newestMtime(join(root, "dist/runtime"), ".js")) {
    console.warn("warning: runtime/*.ts is newer than dist/runtime: run `npm run build` (or `npm run bench`)");
  }
  const out = join(benchDir, ".build/generated");
  const compilerOptions = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true };
  for (const entry of readdirSync(generated, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name);
    const { outputText } = ts.transpileModule(readFileSync(file, "utf8"), { compilerOptions, fileName: file });
    const dest = join(out, relative(generated, file)).replace(/\.ts$/, ".js");
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, outputText);
  }
}

// --- child processes ---

/** Starts `node script args` with an IPC channel, optionally pinned to `cpu`. */
function startNode(script, args, { cpu, execArgv = [] } = {}) {
  const nodeArgs = [...execArgv, script, ...args];
  const stdio = ["ignore", "inherit", "inherit", "ipc"];
  const child =
    pin && cpu !== undefined
      ? spawn("taskset", ["-c", String(cpu), process.execPath, ...nodeArgs], { stdio })
      : spawn(process.execPath, nodeArgs, { stdio });
  const waiters = [];
  child.on("message", (msg) => waiters.shift()?.resolve(msg));
  child.on("exit", (code, signal) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`${script} ${args.join(" ")} exited (${code ?? signal})`));
  });
  /** Sends `msg` (if any) and resolves with the child's next message. */
  child.request = (msg) =>
    new Promise((resolve, reject) => {
      waiters.push({ resolve, reject });
      if (msg !== undefined) child.send(msg);
    });
  return child;
}

async function startServer(target) {
  const execArgv = profile === target ? ["--cpu-prof", "--cpu-prof-dir", profileDir, "--cpu-prof-name", `${target}.cpuprofile`] : [];
  if (execArgv.length > 0) mkdirSync(profileDir, { recursive: true });
  const child = startNode(join(benchDir, "jsonrpc/serve.mjs"), [target], { cpu: 0, execArgv });
  const ready = await child.request();
  return { target, child, url: `http://127.0.0.1:${ready.port}/`, runs: [], requests: 0 };
}

async function cpuMs(server) {
  const { cpu } = await server.child.request({ cmd: "cpu" });
  return (cpu.user + cpu.system) / 1000;
}

// --- measuring ---

async function verify(server) {
  const res = await fetch(server.url, { method: "POST", headers: requestHeaders, body: requestBody });
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  if (res.status !== 200 || !/^application\/json/.test(res.headers.get("content-type") ?? "") || !isDeepStrictEqual(body, expectedResponse)) {
    throw new Error(
      `${server.target} does not answer SendMessage as expected (no benchmark of an error path):\n` +
        `  status ${res.status}, content-type ${res.headers.get("content-type")}\n  got      ${text}\n  expected ${JSON.stringify(expectedResponse)}`,
    );
  }
  return Buffer.byteLength(text);
}

async function load(driver, server, duration) {
  const { result } = await driver.request({
    run: { url: server.url, method: "POST", headers: requestHeaders, body: requestBody, connections, pipelining, duration },
  });
  server.requests += result.requests;
  return result;
}

/** Machine-wide CPU ticks from /proc/stat (Linux), to see what else ran. */
function machineTicks() {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
    return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal: steal ?? 0 };
  } catch {
    return undefined;
  }
}

/**
 * One measured run of `server`. A run during which something outside the
 * benchmark (another process, the host) kept more than BENCH_OTHER_MAX cores
 * busy is reported, discarded and repeated, up to BENCH_RETRIES times per run.
 */
async function measure(driver, server) {
  for (let attempt = 0; ; attempt++) {
    const cpu0 = await cpuMs(server);
    const m0 = machineTicks();
    const r = await load(driver, server, seconds);
    const m1 = machineTicks();
    const cpu1 = await cpuMs(server);
    const failed = r.non2xx + r.errors + r.timeouts;
    if (failed > 0 || r.requests === 0) {
      console.warn(`warning: ${server.target}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts in ${r.requests} requests; run discarded`);
      return;
    }
    const ticks = m0 && m1 ? m1.busy + m1.idle + m1.steal - m0.busy - m0.idle - m0.steal : 0;
    const run = {
      rps: r.requests / r.duration,
      p50: r.p50,
      p99: r.p99,
      serverUsPerReq: ((cpu1 - cpu0) * 1000) / r.requests,
      serverCpu: (cpu1 - cpu0) / r.wallMs,
      driverCpu: r.cpuMs / r.wallMs,
      bytesPerRequest: r.bytesPerRequest,
      // Cores busy on the whole machine (every process and the kernel), and stolen by the host.
      machineCores: ticks > 0 ? ((m1.busy - m0.busy) / ticks) * cpus().length : NaN,
      stealCores: ticks > 0 ? ((m1.steal - m0.steal) / ticks) * cpus().length : 0,
    };
    // Busy cores that are neither the server nor the load driver (nor the host's steal).
    run.otherCores = run.machineCores - run.serverCpu - run.driverCpu;
    const contended = run.otherCores > otherMax || run.stealCores > otherMax;
    const pct = (x) => `${Math.round(x * 100)}%`;
    console.log(
      `  ${server.target.padEnd(12)} ${fmt(run.rps, 0).padStart(7)} req/s  p99 ${fmt(run.p99, 1).padStart(5)} ms  ` +
        `server ${fmt(run.serverUsPerReq, 1).padStart(5)} µs CPU/req (${pct(run.serverCpu)} of a core)  driver ${pct(run.driverCpu)}` +
        (Number.isNaN(run.otherCores) ? "" : `  other ${fmt(Math.max(0, run.otherCores), 2)} cores`) +
        (run.stealCores >= 0.05 ? `  stolen ${fmt(run.stealCores, 2)} cores` : "") +
        (contended ? (attempt < retries ? "  <- contended, discarded, repeating" : "  <- contended, kept (no retries left)") : ""),
    );
    if (contended && attempt < retries) continue;
    server.runs.push(run);
    return;
  }
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function fmt(x, digits) {
  return x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r, j) => {
      const line = `| ${r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join(" | ")} |`;
      return j === 0 ? `${line}\n|${widths.map((w, i) => (i === 0 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|` : line;
    })
    .join("\n");
}

// --- main ---

if (targets.includes("ours")) prepareOurs();

console.log(
  `JSON-RPC SendMessage on loopback: ${targets.join(", ")}; ${runs} x ${seconds} s per target (after ${warmup} s warm-up), ` +
    `${connections} connections, pipelining ${pipelining}, autocannon in its own process` +
    `${pin ? ", servers pinned to CPU 0 and the driver to CPU 1" : ""}; ${cpus().length} CPUs, Node ${process.versions.node}`,
);

const driver = startNode(join(benchDir, "jsonrpc/load.mjs"), [], { cpu: 1 });
const servers = [];
try {
  for (const t of targets) servers.push(await startServer(t));
  for (const s of servers) {
    const bytes = await verify(s);
    console.log(`  verified ${s.target}: 200 application/json, the expected SendMessage result (${bytes} bytes)`);
  }
  if (warmup > 0) {
    for (const s of servers) await load(driver, s, warmup);
    for (const s of servers) await verify(s);
  }
  for (let i = 0; i < runs; i++) {
    console.log(`run ${i + 1}/${runs}`);
    for (const s of servers) await measure(driver, s);
  }
  for (const s of servers) await verify(s);
} finally {
  for (const s of servers) {
    // The child exits on request, so that --cpu-prof writes its profile.
    await s.child.request({ cmd: "exit" }).catch(() => undefined);
    await new Promise((r) => (s.child.exitCode !== null ? r() : s.child.once("exit", r)));
  }
  driver.disconnect();
}

const results = servers.map((s) => ({
  target: s.target,
  n: s.runs.length,
  rps: median(s.runs.map((r) => r.rps)),
  min: Math.min(...s.runs.map((r) => r.rps)),
  max: Math.max(...s.runs.map((r) => r.rps)),
  p99: median(s.runs.map((r) => r.p99)),
  p50: median(s.runs.map((r) => r.p50)),
  us: median(s.runs.map((r) => r.serverUsPerReq)),
  serverCpu: median(s.runs.map((r) => r.serverCpu)),
  driverCpu: median(s.runs.map((r) => r.driverCpu)),
  bytes: median(s.runs.map((r) => r.bytesPerRequest)),
}));
const by = Object.fromEntries(results.map((r) => [r.target, r]));

console.log(
  `\nMedian of ${runs} runs x ${seconds} s per target (${connections} connections, pipelining ${pipelining}); ` +
    "server/driver CPU in % of one core; autocannon latency has 1 ms resolution:\n",
);
console.log(
  table([
    ["target", "req/s", "min..max req/s", "p50 ms", "p99 ms", "server CPU µs/req", "server CPU", "driver CPU", "bytes/response"],
    ...results.map((r) => [
      r.target,
      fmt(r.rps, 0),
      `${fmt(r.min, 0)}..${fmt(r.max, 0)}`,
      fmt(r.p50, 1),
      fmt(r.p99, 1),
      fmt(r.us, 1),
      `${Math.round(r.serverCpu * 100)}%`,
      `${Math.round(r.driverCpu * 100)}%`,
      fmt(r.bytes, 0),
    ]),
  ]),
);

console.log("");
const ratio = (a, b, goal) => {
  if (by[a] === undefined || by[b] === undefined) return;
  const x = by[a].rps / by[b].rps;
  const cpu = by[a].us / by[b].us;
  console.log(
    `${a}/${b}: ${fmt(x, 2)}x req/s; server CPU per request ${fmt(cpu, 2)}x` +
      (goal === undefined ? "" : `  target >= ${goal}x: ${x >= goal ? "met" : "MISSED"}`),
  );
};
ratio("ours", "a2a-js", 2);
ratio("ours", "ceiling", 0.7);
ratio("ours", "a2a-js-core");
ratio("a2a-js-core", "a2a-js");
for (const r of results) {
  if (r.driverCpu > 0.9) console.log(`note: the load driver used ${Math.round(r.driverCpu * 100)}% of a core against ${r.target}: it may be what limits that target.`);
}
if (profile !== "") {
  const file = join(profileDir, `${profile}.cpuprofile`);
  console.log(`\n${profile} ran under --cpu-prof (its numbers above carry the profiler's overhead); profile: ${relative(root, file)}\n`);
  printTopCosts(file, { root, requests: servers.find((s) => s.target === profile)?.requests });
}
