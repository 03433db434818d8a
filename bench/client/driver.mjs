// Client child process of bench/client.mjs: one client target
// (bench/client/targets.mjs) against the benchmark's one server, driving
// calls as fast as it can and reporting over IPC in the protocol of
// bench/lib/load.mjs, so bench/lib/harness.mjs's measure() drives it like a
// load driver (its own CPU is what this benchmark measures).
// Usage: node bench/client/driver.mjs <target> <server info as JSON>
//   -> { ready: true, what }                 once the client is made
//   <- { verify: { n } }                     one SendMessage, one stream of n chunks
//   -> { unary, stream }                     their answers as ProtoJSON (or { error })
//   <- { run: { duration, kind, concurrency, n } }
//        kind "unary": `concurrency` loops, each calling SendMessage again as
//        soon as its answer came, until `duration` s have passed; every
//        answer's task id is checked
//        kind "stream": `concurrency` loops of SendStreamingMessage of `n`
//        chunks, each read to its end; every stream must have n + 1 events,
//        the last one chunk n-1 with lastChunk
//   -> { result: { requests, calls, duration, p50, p99, mean, non2xx, errors,
//        timeouts, bytesPerRequest, cpuMs, wallMs, firstFailure } }
//        requests: calls (unary) or events (stream); latency in ms per call
//        or per whole stream; cpuMs: this process's CPU over the run
//   <- { cmd: "exit" }                       closes the client and exits (this
//                                            writes the CPU profile under --cpu-prof)
import { createHistogram } from "node:perf_hooks";
import { createTarget } from "./targets.mjs";

const [target, infoJson] = process.argv.slice(2);
const client = await createTarget(target, JSON.parse(infoJson));

async function verify({ n }) {
  const unary = client.unaryJson(await client.unary());
  const stream = [];
  for await (const e of client.stream(n)) stream.push(client.eventJson(e));
  return { unary, stream };
}

async function run({ duration, kind, concurrency, n }) {
  const histogram = createHistogram();
  let calls = 0;
  let events = 0;
  let errors = 0;
  let firstFailure;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + duration * 1000;
  const fail = (what) => {
    errors++;
    firstFailure ??= what;
  };
  const unaryLoop = async () => {
    while (performance.now() < end) {
      const start = process.hrtime.bigint();
      const answer = await client.unary();
      if (!client.unaryOk(answer)) return fail(`unexpected answer ${JSON.stringify(client.unaryJson(answer)).slice(0, 300)}`);
      histogram.record(Number(process.hrtime.bigint() - start) || 1);
      calls++;
    }
  };
  const streamLoop = async () => {
    while (performance.now() < end) {
      const start = process.hrtime.bigint();
      let count = 0;
      let last;
      for await (const e of client.stream(n)) {
        count++;
        last = e;
      }
      if (count !== n + 1) return fail(`${count} events, expected ${n + 1}`);
      if (!client.lastOk(last, n)) return fail(`last event is not chunk ${n - 1} with lastChunk: ${JSON.stringify(client.eventJson(last)).slice(0, 300)}`);
      histogram.record(Number(process.hrtime.bigint() - start) || 1);
      calls++;
      events += count;
    }
  };
  const loop = kind === "unary" ? unaryLoop : streamLoop;
  await Promise.all(Array.from({ length: concurrency }, () => loop().catch((err) => fail(String(err?.message ?? err)))));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const ms = (ns) => ns / 1e6;
  return {
    requests: kind === "unary" ? calls : events,
    calls,
    duration: wallMs / 1000,
    mean: calls > 0 ? ms(histogram.mean) : 0,
    p50: calls > 0 ? ms(histogram.percentile(50)) : 0,
    p99: calls > 0 ? ms(histogram.percentile(99)) : 0,
    non2xx: 0,
    errors,
    timeouts: 0,
    bytesPerRequest: 0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs,
    failedLabel: "failed",
    firstFailure,
  };
}

process.on("message", async (msg) => {
  try {
    if (msg?.verify !== undefined) process.send(await verify(msg.verify));
    else if (msg?.run !== undefined) process.send({ result: await run(msg.run) });
    else if (msg?.cmd === "exit") {
      client.close();
      process.send({ exit: true }, () => process.exit(0));
    }
  } catch (err) {
    process.send({ error: String(err?.stack ?? err) });
  }
});
process.on("disconnect", () => process.exit(0));
process.send({ ready: true, what: client.what });
