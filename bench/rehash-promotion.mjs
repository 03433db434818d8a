#!/usr/bin/env node
// Why gRPC servers on node swing between a fast and a slow regime (bench/README,
// "Results (2026-12-05, 02:50 UTC ...)"): a long-lived Map with a few live
// entries and constant churn, as node's HTTP/2 session keeps its streams.
// When V8 rehashes such a Map it leaves the old table pointing at the new one
// (for iterators). Once a table is in the old generation (after a full
// collection), the dead old table's slots are taken as roots by the next
// scavenge: the new table survives and is promoted, with every entry in it,
// and its own rehash repeats that, until a full collection breaks the chain,
// which promotes the current table and starts it again. Each entry here holds
// a young graph of about 5 KB (a call in flight); with 16 live entries every
// graph is promoted. Entries that never leave make rehashes rarer (the table
// is bigger for the same churn), and with them the promotion.
//
// Usage: node bench/rehash-promotion.mjs
// Runs each variant in a child process for 6 s, a full collection forced
// every second as a busy server's old generation gets one, and prints its
// scavenges, KB promoted per scavenge, full collections and total pause
// time. Observed on 2026-12-05 (Node 20.20.2, 2 CPUs), five runs: no Map,
// 0 KB promoted, 5 full collections (the forced ones), 0.29 s of pauses;
// the Map with 16 live entries, 113-217 full collections and 0.45-3.2 s of
// pauses, from run to run either about 4 MB promoted per scavenge or full
// collections back to back (two regimes, as the gRPC servers show); with
// 100 entries that never leave, 69-70 and 1.4 s; with 1,000, 19-21 and
// 0.65 s.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const seconds = 6;

function churn(variant) {
  const pad = variant === "map" ? 0 : Number(variant.replace("map+", ""));
  const live = variant === "none" ? undefined : new Map();
  for (let i = 0; i < pad; i++) live.set(-1 - i, {});
  const inflight = [];
  let id = 0;
  const graph = () => Array.from({ length: 40 }, (_, i) => ({ i, s: `x${i}`, values: new Array(8).fill(i) }));
  const start = Date.now();
  const tick = () => {
    for (let k = 0; k < 200; k++) {
      const call = { id: ++id, graph: graph() };
      live?.set(call.id, call);
      inflight.push(call);
      if (inflight.length > 16) {
        const done = inflight.shift();
        live?.delete(done.id);
      }
    }
    if (Date.now() - start < seconds * 1000) setImmediate(tick);
  };
  tick();
  setInterval(() => globalThis.gc(), 1000).unref();
}

const variant = process.argv[2];
if (variant !== undefined) {
  churn(variant);
} else {
  for (const v of ["none", "map", "map+100", "map+1000"]) {
    const run = spawnSync(process.execPath, ["--expose-gc", "--trace-gc-nvp", fileURLToPath(import.meta.url), v], { encoding: "utf8" });
    let scavenges = 0;
    let promoted = 0;
    let full = 0;
    let pauseMs = 0;
    for (const line of run.stdout.split("\n")) {
      const pause = / pause=([\d.]+)/.exec(line);
      if (pause !== null) pauseMs += Number(pause[1]);
      if (line.includes("gc=s ")) {
        scavenges++;
        promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
      } else if (line.includes("gc=mc ")) full++;
    }
    const label = v === "none" ? "no Map" : v === "map" ? "Map, 16 live entries" : `Map, 16 live + ${v.slice(4)} permanent`;
    console.log(
      `${label.padEnd(34)} ${String(scavenges).padStart(5)} scavenges, ${(promoted / Math.max(scavenges, 1) / 1024).toFixed(0).padStart(5)} KB promoted per scavenge, ` +
        `${String(full).padStart(4)} full collections, ${pauseMs.toFixed(0).padStart(5)} ms of pauses in ${seconds} s`,
    );
  }
}
