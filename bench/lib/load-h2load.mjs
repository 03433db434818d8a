// Load-driver child process for gRPC unary calls through nghttp2's h2load
// (Debian: nghttp2-client): bench/tasks.mjs's default, bench/grpc.mjs's with
// BENCH_GRPC_DRIVER=h2load. It speaks
// the IPC protocol of bench/lib/load-grpc.mjs, so the harness drives it the
// same way:
//   <- { run: { url, headers, body, sessions, streams, duration, answerBytes } }
//        answerBytes  the size of the verified answer message (without the
//                     5-byte gRPC prefix), which every OK call carries
//   -> { result: { requests, duration, p50, p99, mean, non2xx, errors,
//        timeouts, bytesPerRequest, cpuMs, wallMs, failedLabel, firstFailure } }
//
// Why a second driver: the node:http2 one spends ~50 µs of CPU per call, so
// on a 2-core machine it and a fast server share the cores and wait on each
// other (the server busy only 84-91% of a core), which measures the pair more
// than the server. h2load is C and a fraction of that per call, so the
// server is the one kept busy.
//
// What h2load cannot check: it sees HTTP status codes, not the grpc-status
// trailer. A failing gRPC call is answered trailers-only, with no DATA, so
// the DATA bytes received are checked instead: at least (answerBytes + 5 - 3)
// per call that completed (3 bytes of slack: a timestamp's varint varies in
// width). A run below that counts as failed, which the harness discards; a
// failure rate inside the slack (about one call in 50 for a ~186-byte answer,
// one in 20 for a 61-byte one) goes unseen, which the node:http2 driver (the
// default) does see. Nor does h2load count a lost connection as a failure:
// see `lost` below for what is seen of one.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { answerRuns } from "./driver-ipc.mjs";
import { grpcFrame } from "./grpc-frame.mjs";
import { childCpuMs, parseH2loadOutput, readLog } from "./h2load-output.mjs";

/** The h2load run under way and its folder, let go of if the harness goes away mid-run. */
let current;

/** This process's reaped children's CPU so far (ms): h2load's, as it is the only child and node reaps it before "close". */
const childrenCpuMs = () => childCpuMs(readFileSync("/proc/self/stat", "utf8"));

/** Runs h2load itself (no shell around it, so a kill reaches it), with the CPU it used. */
function runH2load(args) {
  return new Promise((resolve, reject) => {
    const before = childrenCpuMs();
    const child = spawn("h2load", args, { stdio: ["ignore", "pipe", "pipe"] });
    current.child = child;
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) => {
      current.child = undefined;
      reject(e.code === "ENOENT" ? new Error("BENCH_GRPC_DRIVER=h2load needs nghttp2's h2load (Debian: apt-get install nghttp2-client)") : e);
    });
    child.on("close", (code) => {
      current.child = undefined;
      resolve({ code, out, err, cpuMs: childrenCpuMs() - before });
    });
  });
}

async function run({ url, headers = {}, body, sessions = 4, streams = 16, duration, answerBytes = 0 }) {
  const dir = mkdtempSync(join(tmpdir(), "bench-h2load-"));
  current = { dir, child: undefined };
  try {
    const dataFile = join(dir, "request.bin");
    const logFile = join(dir, "requests.log");
    writeFileSync(dataFile, grpcFrame(Buffer.from(body, "base64")));
    // -D takes whole units: a fractional BENCH_SECONDS goes as milliseconds.
    const durationMs = Math.max(1, Math.round(duration * 1000));
    const args = [
      "-D", `${durationMs}ms`, "-c", String(sessions), "-m", String(streams), "-t", "1",
      "-d", dataFile, `--log-file=${logFile}`,
      "-H", "content-type: application/grpc", "-H", "te: trailers",
      ...Object.entries(headers).flatMap(([name, value]) => ["-H", `${name}: ${value}`]),
      url,
    ];
    const t0 = performance.now();
    const { code, out, err, cpuMs } = await runH2load(args);
    const wallMs = performance.now() - t0;
    const p = parseH2loadOutput(out);
    if (code !== 0 || p.seconds === undefined || p.done === undefined) {
      throw new Error(`h2load failed (exit ${code}): ${(err || out).trim().split("\n").slice(-3).join(" | ")}`);
    }
    if (p.done === 0) throw new Error(`h2load completed no call in ${durationMs} ms (could it connect to ${url}?)`);
    const requests = Math.max(0, (p.succeeded ?? 0) - p.status3xx);
    const { p50, p99, mean, spanMs } = readLog(readFileSync(logFile, "utf8"));
    // A call answered without its message (a trailers-only gRPC error) brings no DATA.
    const least = Math.max(0, answerBytes + 5 - 3);
    const dataPerCall = requests > 0 ? (p.dataBytes ?? 0) / requests : 0;
    const short = answerBytes > 0 && dataPerCall < least;
    // Under -D h2load neither reconnects nor counts a lost connection, or the calls that were in
    // flight on it, as failed. What shows one: calls that stopped completing early (every connection
    // gone), or, sometimes, a connection at under half another's rate (h2load rates each over its
    // own life, so one lost early but after a fast start looks as fast as the others). One
    // connection of several lost while the others go on can pass unseen.
    const stopped = spanMs < 0.9 * durationMs;
    const uneven = sessions > 1 && p.clientRate !== undefined && p.clientRate.min < p.clientRate.max / 2;
    const lost = stopped
      ? `calls stopped completing ${Math.round(spanMs)} ms into the ${durationMs} ms run (a connection closed?)`
      : uneven
        ? `a connection ran at ${p.clientRate.min} calls/s against another's ${p.clientRate.max} (closed early?)`
        : undefined;
    return {
      requests,
      // h2load's own rate divides by the duration asked for; "finished in" adds its teardown.
      duration: durationMs / 1000,
      mean,
      p50,
      p99,
      non2xx: p.non2xx + (short ? requests : 0),
      errors: (p.errored ?? 0) + (lost === undefined ? 0 : 1),
      timeouts: p.timeout ?? 0,
      bytesPerRequest: dataPerCall,
      cpuMs,
      wallMs,
      failedLabel: short ? "calls without their answer (DATA below the verified answer's size)" : "non-2xx",
      firstFailure: lost ?? (short ? `${dataPerCall.toFixed(1)} bytes of DATA per call, at least ${least} expected` : undefined),
    };
  } finally {
    current = undefined;
    rmSync(dir, { recursive: true, force: true });
  }
}

answerRuns(run, {
  // The harness went away mid-run: h2load would run out its duration, and the folder stay.
  onDisconnect() {
    if (current === undefined) return;
    current.child?.kill("SIGKILL");
    rmSync(current.dir, { recursive: true, force: true });
  },
});
