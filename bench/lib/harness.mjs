// What the loopback benchmarks (bench/jsonrpc.mjs, bench/http-json.mjs, bench/grpc.mjs)
// share: the settings from the environment, the transpiling of generated/*.ts
// for "ours", the server and load-driver child processes, verification of a
// target's exact response, measured runs (server CPU per request, driver CPU,
// other load on the machine, contended runs discarded and repeated), medians,
// the result table and the ratios.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const benchDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const root = resolve(benchDir, "..");

export const num = (name, fallback) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};

/** The BENCH_* knobs both loopback benchmarks read (see bench/README.md). */
export function loadSettings(defaultTargets) {
  return {
    seconds: num("BENCH_SECONDS", 4),
    runs: Math.round(num("BENCH_RUNS", 5)),
    warmup: Number(process.env.BENCH_WARMUP ?? 2),
    connections: Math.round(num("BENCH_CONNECTIONS", 32)),
    pipelining: Math.round(num("BENCH_PIPELINING", 1)),
    targets: (process.env.BENCH_TARGETS ?? defaultTargets).split(",").map((s) => s.trim()).filter(Boolean),
    pin: process.env.BENCH_PIN === "1",
    profile: process.env.BENCH_PROFILE ?? "",
    profileDir: join(benchDir, ".profiles"),
    otherMax: Number(process.env.BENCH_OTHER_MAX ?? 0.25),
    retries: Math.round(Number(process.env.BENCH_RETRIES ?? 2)),
  };
}

// --- "ours": the generated TypeScript, transpiled against the built runtime ---

function newestMtime(dir, ext) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(ext)) newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * Transpiles generated/**\/*.ts (ts.transpileModule, type-free; exact since
 * the project compiles with isolatedModules + verbatimModuleSyntax) into
 * bench/.build/generated/, whose imports of "protoc-gen-a2a/runtime" resolve
 * through the package's self reference to dist/runtime. `required` is the
 * generated file the caller needs.
 */
export function prepareOurs(required = "a2a_jsonrpc.ts") {
  const generated = join(root, "generated");
  if (!existsSync(join(generated, required))) {
    throw new Error(`generated/${required} is missing: run \`npm run generate\` first`);
  }
  const runtimeIndex = join(root, "dist/runtime/index.js");
  if (!existsSync(runtimeIndex)) throw new Error("dist/runtime is missing: run `npm run build` first");
  if (newestMtime(join(root, "runtime"), ".ts") > newestMtime(join(root, "dist/runtime"), ".js")) {
    console.warn("warning: runtime/*.ts is newer than dist/runtime: run `npm run build` (or `npm run bench`)");
  }
  transpileTree(generated, join(benchDir, ".build/generated"));
}

/** Transpiles every .ts below `from` into the same place below `to` (type-free, as prepareOurs says). */
export function transpileTree(from, to) {
  const compilerOptions = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true };
  for (const entry of readdirSync(from, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name);
    const { outputText } = ts.transpileModule(readFileSync(file, "utf8"), { compilerOptions, fileName: file });
    const dest = join(to, relative(from, file)).replace(/\.ts$/, ".js");
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, outputText);
  }
}

// --- child processes ---

/** Starts `node script args` with an IPC channel, optionally pinned (BENCH_PIN) to `cpu`. */
export function startNode(script, args, { cpu, execArgv = [], pin = false } = {}) {
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

/**
 * The node flags that run a child under --cpu-prof, writing
 * bench/.profiles/<name>.cpuprofile when it exits, if BENCH_PROFILE names
 * `target`; none otherwise.
 */
export function cpuProfileArgs(settings, target, name = target) {
  const { profile, profileDir } = settings;
  if (profile !== target) return [];
  mkdirSync(profileDir, { recursive: true });
  return ["--cpu-prof", "--cpu-prof-dir", profileDir, "--cpu-prof-name", `${name}.cpuprofile`];
}

/**
 * The load-driver child process, on CPU 1 under BENCH_PIN: autocannon
 * (bench/lib/load.mjs) unless `script` (relative to bench/) names another
 * driver speaking the same IPC protocol, e.g. lib/load-grpc.mjs, with `args`
 * and node flags `execArgv`. A driver that says when it is ready (as
 * bench/client/driver.mjs does) is waited for with `await driver.request()`.
 */
export function startDriver(settings, script = "lib/load.mjs", { args = [], execArgv = [] } = {}) {
  return startNode(join(benchDir, script), args, { cpu: 1, pin: settings.pin, execArgv });
}

/**
 * The gRPC unary load driver `name` names (BENCH_GRPC_DRIVER unless the
 * benchmark picks its own default: bench/tasks.mjs takes h2load): "node"
 * (lib/load-grpc.mjs on node:http2) or "h2load" (lib/load-h2load.mjs on
 * nghttp2's h2load, which does not share the cores with the server). Its
 * script for startDriver, and its name for the log.
 */
export function grpcDriver(name = process.env.BENCH_GRPC_DRIVER || "node") {
  if (name === "node") return { script: "lib/load-grpc.mjs", label: "node:http2" };
  if (name === "h2load") return { script: "lib/load-h2load.mjs", label: "h2load" };
  throw new Error(`BENCH_GRPC_DRIVER=${name}: node or h2load`);
}

/**
 * Starts target `target` from `module` (relative to bench/, exporting
 * createBenchServer) in its own process on CPU 0 under BENCH_PIN, with
 * --cpu-prof when BENCH_PROFILE names it. `ready` is the child's first
 * message: its port, and whatever else a startBenchServer() reported
 * (lib/serve.mjs).
 */
export async function startServer(target, module, settings) {
  const { profileDir, pin } = settings;
  const execArgv = cpuProfileArgs(settings, target);
  // BENCH_SERVER_FLAGS: extra node flags for every server (e.g. --trace-gc, --heap-prof), for diagnosis only.
  const extra = (process.env.BENCH_SERVER_FLAGS ?? "").split(/\s+/).filter((f) => f !== "");
  execArgv.push(...extra);
  if (execArgv.length > 0) mkdirSync(profileDir, { recursive: true });
  const child = startNode(join(benchDir, "lib/serve.mjs"), [module], { cpu: 0, execArgv, pin });
  const ready = await child.request();
  const origin = `http://127.0.0.1:${ready.port}`;
  return { target, child, origin, url: `${origin}/`, ready, runs: [], requests: 0 };
}

/** Asks every server to exit (so --cpu-prof writes its profile), waits, and lets the driver go. */
export async function stopAll(servers, driver) {
  for (const s of servers) {
    await s.child.request({ cmd: "exit" }).catch(() => undefined);
    await new Promise((r) => (s.child.exitCode !== null ? r() : s.child.once("exit", r)));
  }
  driver.disconnect();
}

async function cpuMs(server) {
  const { cpu } = await server.child.request({ cmd: "cpu" });
  return (cpu.user + cpu.system) / 1000;
}

// --- measuring ---

/**
 * Sends `request` ({ path = "/", method, headers, body }) once and checks the
 * answer is 200, of a content type matching `contentType`, with exactly the
 * JSON `expected`; throws otherwise (no error path is ever benchmarked).
 * Resolves with the response's size in bytes.
 */
export async function verifyResponse(server, request, expected, { what, contentType = /^application\/json/ }) {
  const res = await fetch(server.origin + (request.path ?? "/"), { method: request.method, headers: request.headers, body: request.body });
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  if (res.status !== 200 || !contentType.test(res.headers.get("content-type") ?? "") || !isDeepStrictEqual(body, expected)) {
    throw new Error(
      `${server.target} does not answer ${what} as expected (no benchmark of an error path):\n` +
        `  status ${res.status}, content-type ${res.headers.get("content-type")}\n  got      ${text}\n  expected ${JSON.stringify(expected)}`,
    );
  }
  return { bytes: Buffer.byteLength(text), contentType: res.headers.get("content-type") };
}

/**
 * One driver run of `request` against `server` for `duration` seconds;
 * `request.driverOptions` (if any) goes to the driver as is (e.g. the gRPC
 * driver's sessions and streams per session).
 */
export async function load(driver, server, request, duration, settings) {
  const { connections, pipelining } = settings;
  const { result } = await driver.request({
    run: {
      url: server.origin + (request.path ?? "/"),
      method: request.method,
      headers: request.headers,
      body: request.body,
      connections,
      pipelining,
      duration,
      ...request.driverOptions,
    },
  });
  server.requests += result.requests;
  return result;
}

/** Machine-wide CPU ticks from /proc/stat (Linux), to see what else ran. */
export function machineTicks() {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
    return { busy: user + nice + system + irq + softirq, idle: idle + iowait, steal: steal ?? 0 };
  } catch {
    return undefined;
  }
}

/**
 * One measured run of `request` against `server`, pushed onto `runs`
 * (default server.runs) and logged under `label` (default the target). A run
 * during which something outside the benchmark (another process, the host)
 * kept more than BENCH_OTHER_MAX cores busy is reported, discarded and
 * repeated, up to BENCH_RETRIES times per run. `unit` names what is counted
 * in the log line ("req" unless told), `driverUs` adds the driver's CPU per
 * unit to it (when the driver is what is measured, as in bench/client.mjs),
 * and `tally` (if given) counts `discarded` and `keptContended` runs.
 */
export async function measure(driver, server, request, settings, { runs = server.runs, label = server.target, unit = "req", driverUs = false, tally } = {}) {
  const { seconds, otherMax, retries } = settings;
  for (let attempt = 0; ; attempt++) {
    const cpu0 = await cpuMs(server);
    const m0 = machineTicks();
    const r = await load(driver, server, request, seconds, settings);
    const m1 = machineTicks();
    const cpu1 = await cpuMs(server);
    const failed = r.non2xx + r.errors + r.timeouts;
    if (failed > 0 || r.requests === 0) {
      console.warn(
        `warning: ${label}: ${r.non2xx} ${r.failedLabel ?? "non-2xx"}, ${r.errors} errors, ${r.timeouts} timeouts in ${r.requests} requests` +
          `${r.firstFailure ? ` (first: ${r.firstFailure})` : ""}; run discarded`,
      );
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
      driverUsPerReq: (r.cpuMs * 1000) / r.requests,
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
      `  ${label.padEnd(12)} ${fmt(run.rps, 0).padStart(7)} ${unit}/s  p99 ${fmt(run.p99, 1).padStart(5)} ms  ` +
        `server ${fmt(run.serverUsPerReq, 1).padStart(5)} µs CPU/${unit} (${pct(run.serverCpu)} of a core)  driver ` +
        (driverUs ? `${fmt(run.driverUsPerReq, 1).padStart(5)} µs CPU/${unit} (${pct(run.driverCpu)})` : pct(run.driverCpu)) +
        (Number.isNaN(run.otherCores) ? "" : `  other ${fmt(Math.max(0, run.otherCores), 2)} cores`) +
        (run.stealCores >= 0.05 ? `  stolen ${fmt(run.stealCores, 2)} cores` : "") +
        (contended ? (attempt < retries ? "  <- contended, discarded, repeating" : "  <- contended, kept (no retries left)") : ""),
    );
    if (contended && attempt < retries) {
      if (tally !== undefined) tally.discarded++;
      continue;
    }
    if (contended && tally !== undefined) tally.keptContended++;
    runs.push(run);
    return;
  }
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function fmt(x, digits) {
  return x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A markdown table; the first column left-aligned, the others right-aligned. */
export function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r, j) => {
      const line = `| ${r.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join(" | ")} |`;
      return j === 0 ? `${line}\n|${widths.map((w, i) => (i === 0 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|` : line;
    })
    .join("\n");
}

// --- reporting ---

/** Medians of a target's runs. */
export function summarize(target, runs) {
  return {
    target,
    n: runs.length,
    rps: median(runs.map((r) => r.rps)),
    min: Math.min(...runs.map((r) => r.rps)),
    max: Math.max(...runs.map((r) => r.rps)),
    p99: median(runs.map((r) => r.p99)),
    p50: median(runs.map((r) => r.p50)),
    us: median(runs.map((r) => r.serverUsPerReq)),
    serverCpu: median(runs.map((r) => r.serverCpu)),
    driverCpu: median(runs.map((r) => r.driverCpu)),
    driverUs: median(runs.map((r) => r.driverUsPerReq)),
    otherCores: Math.max(0, ...runs.map((r) => r.otherCores).filter((x) => !Number.isNaN(x))),
    bytes: median(runs.map((r) => r.bytesPerRequest)),
  };
}

/**
 * The result table of summarize() rows; `unit` names what is counted ("req",
 * or "call" for gRPC), `latencyDigits` the decimals of the latencies.
 */
export function resultTable(results, { unit = "req", latencyDigits = 1 } = {}) {
  return table([
    ["target", `${unit}/s`, `min..max ${unit}/s`, "p50 ms", "p99 ms", `server CPU µs/${unit}`, "server CPU", "driver CPU", "bytes/response"],
    ...results.map((r) => [
      r.target,
      fmt(r.rps, 0),
      `${fmt(r.min, 0)}..${fmt(r.max, 0)}`,
      fmt(r.p50, latencyDigits),
      fmt(r.p99, latencyDigits),
      fmt(r.us, 1),
      `${Math.round(r.serverCpu * 100)}%`,
      `${Math.round(r.driverCpu * 100)}%`,
      fmt(r.bytes, 0),
    ]),
  ]);
}

/** Prints a/b in req/s and server CPU per request (and whether `goal` is met), if both ran; `unit` as in resultTable. */
export function printRatio(by, a, b, goal, prefix = "", { unit = "req", unitName = "request" } = {}) {
  if (by[a] === undefined || by[b] === undefined) return;
  const x = by[a].rps / by[b].rps;
  const cpu = by[a].us / by[b].us;
  console.log(
    `${prefix}${a}/${b}: ${fmt(x, 2)}x ${unit}/s; server CPU per ${unitName} ${fmt(cpu, 2)}x` +
      (goal === undefined ? "" : `  target >= ${goal}x: ${x >= goal ? "met" : "MISSED"}`),
  );
}

/** Notes the targets against which the load driver may have been the limit. */
export function printDriverNotes(results, prefix = "") {
  for (const r of results) {
    if (r.driverCpu > 0.9) console.log(`note: the load driver used ${Math.round(r.driverCpu * 100)}% of a core against ${prefix}${r.target}: it may be what limits that target.`);
  }
}
