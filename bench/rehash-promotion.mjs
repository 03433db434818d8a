#!/usr/bin/env node
// Why a gRPC server on node turns slow after a full collection (bench/README,
// "Results (2026-12-05, 02:50 UTC ...)"): a long-lived Map with a few live
// entries and constant churn, which is how node's HTTP/2 session keeps its
// streams. When V8 rehashes a Map's table it copies the live entries into a
// new table of the same generation and leaves them in the old one too (it
// does not clear them; the old table also links to the new one, for live
// iterators). While the table is young that costs nothing. Once it is old
// (a full collection promoted it, or it outlived two scavenges without a
// rehash), it stays old for the Map's life, and every rehash leaves a dead
// old table whose slots the next scavenge takes as roots: the entries in
// flight at that moment (a stream, with everything it reaches) are kept and
// promoted, and freed only by a full collection, which comes sooner for it.
// Each entry here holds a young graph of about 8 KB (a call in flight); with
// 16 live entries nearly every graph is promoted. Entries that never leave
// make rehashes rarer (a larger table for the same churn), and with them the
// promotion.
//
// Usage: node bench/rehash-promotion.mjs
// Runs each variant in a child process for 6 s: 1 s of churn, then a forced
// full collection (as a busy server's old generation gets one), then a full
// collection forced every second. Prints KB promoted per scavenge before the
// first full collection and after it, the full collections and the pause
// time (incremental marking left out, which the back-to-back full
// collections do much of). Observed on 2026-12-05 (Node 20.20.2, 2 CPUs), two
// runs: no Map, 1 KB promoted per scavenge before and 0 after, 5 full
// collections (the forced ones), 0.32-0.35 s of pauses; the Map with 16 live
// entries, 1 KB before and about 6.8 MB after, 107-177 full collections and
// 0.45-3.2 s of pauses; with 100 entries that never leave, 270-280 KB before
// (its larger table outlived two scavenges), 1.27 MB after, 66 and 1.4-1.5 s;
// with 1,000, 66 KB, 207 KB, 18 and 0.64-0.66 s.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const seconds = 6;

function churn(variant) {
  const pad = variant.startsWith("map+") ? Number(variant.slice(4)) : 0;
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
    // [before the first full collection, after it]
    const scavenges = [0, 0];
    const promoted = [0, 0];
    let full = 0;
    let pauseMs = 0;
    for (const line of run.stdout.split("\n")) {
      const pause = / pause=([\d.]+)/.exec(line);
      if (pause !== null) pauseMs += Number(pause[1]);
      if (line.includes("gc=s ")) {
        const after = full > 0 ? 1 : 0;
        scavenges[after]++;
        promoted[after] += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
      } else if (line.includes("gc=mc ")) full++;
    }
    const perScavenge = (i) => (promoted[i] / Math.max(scavenges[i], 1) / 1024).toFixed(0).padStart(5);
    const label = v === "none" ? "no Map" : v === "map" ? "Map, 16 live entries" : `Map, 16 live + ${v.slice(4)} permanent`;
    console.log(
      `${label.padEnd(34)} KB promoted per scavenge: ${perScavenge(0)} before the first full collection, ${perScavenge(1)} after; ` +
        `${String(full).padStart(4)} full collections, ${pauseMs.toFixed(0).padStart(5)} ms of pauses in ${seconds} s`,
    );
  }
}
