// Load-driver child process: runs autocannon (keep-alive connections,
// optional HTTP pipelining) against one URL per IPC request and reports its
// result with this process's own CPU time, so the driver can tell when it,
// and not the server, is the bottleneck.
//   <- { run: { url, method, headers, body, connections, pipelining, duration } }
//   -> { result: { requests, duration, p50, p99, mean, non2xx, errors, timeouts, cpuMs, wallMs } }
import autocannon from "autocannon";

process.on("message", async (msg) => {
  if (msg?.run === undefined) return;
  const { url, method, headers, body, connections, pipelining, duration } = msg.run;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await autocannon({ url, method, headers, body, connections, pipelining, duration });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  process.send({
    result: {
      requests: r.requests.total,
      ok: r["2xx"],
      duration: r.duration,
      mean: r.latency.mean,
      p50: r.latency.p50,
      p99: r.latency.p99,
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      bytesPerRequest: r.requests.total > 0 ? r.throughput.total / r.requests.total : 0,
      cpuMs: (cpu.user + cpu.system) / 1000,
      wallMs,
    },
  });
});
process.on("disconnect", () => process.exit(0));
