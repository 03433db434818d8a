// Load-driver child process for gRPC unary calls through nghttp2's h2load
// (Debian: nghttp2-client), opt-in with BENCH_GRPC_DRIVER=h2load. It speaks
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
// other (the server idles at 85-90% of a core), which measures the pair more
// than the server. h2load is C and a fraction of that per call, so the
// server is the one kept busy.
//
// What h2load cannot check: it sees HTTP status codes, not the grpc-status
// trailer. A failing gRPC call is answered trailers-only, with no DATA, so
// the DATA bytes received are checked instead: at least (answerBytes + 5 - 3)
// per call that completed (3 bytes of slack: a timestamp's varint varies in
// width). A run below that counts as failed, which the harness discards; a
// failure rate inside the slack (one call in ~60 for a 186-byte answer, one
// in ~20 for a 61-byte one) goes unseen, which the node:http2 driver (the
// default) does see.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The gRPC length-prefixed message (as load-grpc.mjs frames it; that module answers IPC on import, so not imported here). */
function grpcFrame(message) {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** Clock ticks per second of /proc/<pid>/stat's times (Linux's USER_HZ). */
const ticksPerSecond = 100;

/** What h2load printed, as numbers; undefined for what it did not print. */
export function parseH2loadOutput(text) {
  const num = (re) => {
    const m = re.exec(text);
    return m === null ? undefined : Number(m[1].replace(/,/g, ""));
  };
  return {
    seconds: num(/finished in ([\d.]+)s/),
    done: num(/requests: \d+ total, \d+ started, (\d+) done/),
    succeeded: num(/(\d+) succeeded/),
    failed: num(/(\d+) failed/),
    errored: num(/(\d+) errored/),
    timeout: num(/(\d+) timeout/),
    non2xx: ["3xx", "4xx", "5xx"].reduce((n, c) => n + (num(new RegExp(`(\\d+) ${c}`)) ?? 0), 0),
    dataBytes: num(/\((\d+)\) data/),
  };
}

/** p50 and p99 (ms) of the per-request log's third column (µs), OK (2xx) rows only. */
export function latencies(log) {
  const us = [];
  for (const line of log.split("\n")) {
    const [, status, elapsed] = line.split("\t");
    if (status !== undefined && status.startsWith("2")) us.push(Number(elapsed));
  }
  if (us.length === 0) return { p50: 0, p99: 0, mean: 0 };
  us.sort((a, b) => a - b);
  const at = (q) => us[Math.min(us.length - 1, Math.floor(q * us.length))] / 1000;
  return { p50: at(0.5), p99: at(0.99), mean: us.reduce((a, b) => a + b, 0) / us.length / 1000 };
}

/**
 * Runs h2load under a shell that prints its own /proc stat after h2load was
 * reaped: fields 16 and 17 (cutime, cstime) are then h2load's CPU.
 */
function runH2load(args) {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", 'h2load "$@"; status=$?; echo "@@stat $(cat /proc/$$/stat)"; exit $status', "sh", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (/h2load: (not found|command not found)|h2load: No such file/.test(err + out) || code === 127) {
        reject(new Error("BENCH_GRPC_DRIVER=h2load needs nghttp2's h2load (Debian: apt-get install nghttp2-client)"));
        return;
      }
      const stat = /@@stat (.*)/.exec(out)?.[1];
      // The comm field may hold spaces: the fields counted after its closing parenthesis.
      const fields = stat === undefined ? [] : stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cpuMs = ((Number(fields[13]) + Number(fields[14])) * 1000) / ticksPerSecond;
      resolve({ code, out, err, cpuMs: Number.isFinite(cpuMs) ? cpuMs : 0 });
    });
  });
}

async function run({ url, headers = {}, body, sessions = 4, streams = 16, duration, answerBytes = 0 }) {
  const dir = mkdtempSync(join(tmpdir(), "bench-h2load-"));
  try {
    const dataFile = join(dir, "request.bin");
    const logFile = join(dir, "requests.log");
    writeFileSync(dataFile, grpcFrame(Buffer.from(body, "base64")));
    const args = [
      "-D", String(duration), "-c", String(sessions), "-m", String(streams), "-t", "1",
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
    const failedStreams = (p.failed ?? 0) + (p.errored ?? 0);
    const requests = Math.max(0, (p.succeeded ?? 0) - p.non2xx);
    // A call answered without its message (a trailers-only gRPC error) brings no DATA.
    const least = Math.max(0, answerBytes + 5 - 3);
    const dataPerCall = requests > 0 ? (p.dataBytes ?? 0) / requests : 0;
    const short = answerBytes > 0 && dataPerCall < least;
    const { p50, p99, mean } = latencies(readFileSync(logFile, "utf8"));
    return {
      requests,
      duration: p.seconds,
      mean,
      p50,
      p99,
      non2xx: p.non2xx + (short ? requests : 0),
      errors: failedStreams,
      timeouts: p.timeout ?? 0,
      bytesPerRequest: dataPerCall,
      cpuMs,
      wallMs,
      failedLabel: short ? "calls without their answer (DATA below the verified answer's size)" : "non-2xx",
      firstFailure: short ? `${dataPerCall.toFixed(1)} bytes of DATA per call, at least ${least} expected` : undefined,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.on("message", async (msg) => {
  if (msg?.run === undefined) return;
  try {
    process.send({ result: await run(msg.run) });
  } catch (err) {
    process.send({
      result: { requests: 0, duration: 0, mean: 0, p50: 0, p99: 0, non2xx: 0, errors: 1, timeouts: 0, bytesPerRequest: 0, cpuMs: 0, wallMs: 1, firstFailure: String(err instanceof Error ? err.message : err) },
    });
  }
});
process.on("disconnect", () => process.exit(0));
