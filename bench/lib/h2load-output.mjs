// Reading what h2load (nghttp2) reports, for bench/lib/load-h2load.mjs: its
// summary, its per-request log, and the CPU of a reaped child from a
// /proc stat line. Apart from the driver, which answers IPC once imported.
/** Clock ticks per second of /proc/<pid>/stat's times (Linux's USER_HZ). */
const ticksPerSecond = 100;

/** What h2load printed, as numbers; undefined for what it did not print. */
export function parseH2loadOutput(text) {
  const num = (re) => {
    const m = re.exec(text);
    return m === null ? undefined : Number(m[1].replace(/,/g, ""));
  };
  // Under a second h2load says "finished in 500.93ms", from one on "finished in 2.01s".
  const finished = /finished in ([\d.]+)(ms|s)\b/.exec(text);
  // Per connection ("client"): min, max, mean, sd of its calls/s.
  const perClient = /^req\/s\s*:\s*([\d.]+)\s+([\d.]+)/m.exec(text);
  return {
    seconds: finished === null ? undefined : Number(finished[1]) / (finished[2] === "ms" ? 1000 : 1),
    done: num(/requests: \d+ total, \d+ started, (\d+) done/),
    // h2load counts 3xx as succeeded, 4xx and 5xx as failed, and every errored stream as failed too.
    succeeded: num(/(\d+) succeeded/),
    errored: num(/(\d+) errored/),
    timeout: num(/(\d+) timeout/),
    status3xx: num(/(\d+) 3xx/) ?? 0,
    non2xx: ["3xx", "4xx", "5xx"].reduce((n, c) => n + (num(new RegExp(`(\\d+) ${c}`)) ?? 0), 0),
    dataBytes: num(/\((\d+)\) data/),
    clientRate: perClient === null ? undefined : { min: Number(perClient[1]), max: Number(perClient[2]) },
  };
}

/** CPU ms of a process's reaped children (cutime + cstime) from its /proc/<pid>/stat line. */
export function childCpuMs(statLine) {
  // The comm field (2nd) is in parentheses and may hold spaces or ")": count from the last ")".
  const fields = statLine.slice(statLine.lastIndexOf(")") + 2).split(" ");
  // After comm: state is field 3, so cutime (16) and cstime (17) are at 13 and 14 here.
  const ticks = Number(fields[13]) + Number(fields[14]);
  return Number.isFinite(ticks) ? (ticks * 1000) / ticksPerSecond : 0;
}

/**
 * From h2load's per-request log (start µs since epoch, HTTP status, µs to the
 * response's end): p50, p99 and mean (ms) of the 2xx calls, and how long
 * after the first call started the last one ended (ms).
 */
export function readLog(log) {
  const us = [];
  let first = Infinity;
  let last = -Infinity;
  for (const line of log.split("\n")) {
    const [start, status, elapsed] = line.split("\t");
    if (elapsed === undefined) continue;
    const begin = Number(start);
    first = Math.min(first, begin);
    last = Math.max(last, begin + Number(elapsed));
    if (status.startsWith("2")) us.push(Number(elapsed));
  }
  const spanMs = us.length === 0 ? 0 : (last - first) / 1000;
  if (us.length === 0) return { p50: 0, p99: 0, mean: 0, spanMs };
  us.sort((a, b) => a - b);
  const at = (q) => us[Math.min(us.length - 1, Math.floor(q * us.length))] / 1000;
  return { p50: at(0.5), p99: at(0.99), mean: us.reduce((a, b) => a + b, 0) / us.length / 1000, spanMs };
}

