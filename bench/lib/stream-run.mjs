// One measured run of a stream benchmark (bench/streams.mjs part 1,
// bench/tasks.mjs's streams part): the client child reads streams for its
// budget while the server's CPU and the machine's ticks are read around it;
// a run during which other processes kept more than `otherMax` cores busy is
// reported, discarded and repeated, up to `retries` times.
import { cpus } from "node:os";
import { fmt, machineTicks, median } from "./harness.mjs";

export const pct = (x) => `${Math.round(x * 100)}%`;

/**
 * Measures target `s` at N = `n` and pushes the run onto `s.runs[n]`.
 * `read()` runs the streams (the client child's answer: `{ streams: [{ events,
 * wallMs, firstMs }], cpuMs, wallMs }`); `serverCpuMs(s)` is the server's CPU
 * time so far; `width` pads the target's name in the log line.
 */
export async function measureStreamRun({ s, n, read, serverCpuMs, otherMax, retries, width }) {
  for (let attempt = 0; ; attempt++) {
    const c0 = await serverCpuMs(s);
    const m0 = machineTicks();
    const r = await read();
    const m1 = machineTicks();
    const c1 = await serverCpuMs(s);
    const events = r.streams.reduce((a, x) => a + x.events, 0);
    const wall = r.streams.reduce((a, x) => a + x.wallMs, 0);
    const ticks = m0 && m1 ? m1.busy + m1.idle + m1.steal - m0.busy - m0.idle - m0.steal : 0;
    const run = {
      streams: r.streams.length,
      eps: (events * 1000) / wall,
      usPerEvent: (wall * 1000) / events,
      firstMs: median(r.streams.map((x) => x.firstMs)),
      serverUsPerEvent: ((c1 - c0) * 1000) / events,
      serverCpu: (c1 - c0) / r.wallMs,
      clientCpu: r.cpuMs / r.wallMs,
      machineCores: ticks > 0 ? ((m1.busy - m0.busy) / ticks) * cpus().length : NaN,
      stealCores: ticks > 0 ? ((m1.steal - m0.steal) / ticks) * cpus().length : 0,
    };
    run.otherCores = run.machineCores - run.serverCpu - run.clientCpu;
    const contended = run.otherCores > otherMax || run.stealCores > otherMax;
    console.log(
      `  ${s.target.padEnd(width)} N=${String(n).padEnd(6)} ${fmt(run.eps, 0).padStart(9)} events/s  ${fmt(run.usPerEvent, 2).padStart(8)} µs/event  ` +
        `server ${fmt(run.serverUsPerEvent, 2).padStart(7)} µs CPU/event (${pct(run.serverCpu)})  client ${pct(run.clientCpu)}  ${run.streams} stream(s)` +
        (Number.isNaN(run.otherCores) ? "" : `  other ${fmt(Math.max(0, run.otherCores), 2)} cores`) +
        (contended ? (attempt < retries ? "  <- contended, discarded, repeating" : "  <- contended, kept (no retries left)") : ""),
    );
    if (contended && attempt < retries) continue;
    (s.runs[n] ??= []).push(run);
    return;
  }
}
