#!/usr/bin/env node
// `npm run fuzz`: the fuzz campaign of issue 17 (fuzz/campaign.mjs says what
// it checks). Knobs (environment):
//   FUZZ_COUNT=1000000        requests per binding (after the warm-up)
//   FUZZ_SECONDS=             stop a binding after this long, whichever comes first
//   FUZZ_BINDINGS=jsonrpc,http-json,grpc
//   FUZZ_CONCURRENCY=32       requests in flight
//   FUZZ_SEED=1               fast-check's seed (each chunk of 500 has its own, derived)
//   FUZZ_WARMUP=              requests before the heap baseline (a tenth of FUZZ_COUNT, at least 20,000)
//   FUZZ_TIMEOUT_MS=15000     an answer later than this is a hang
//   FUZZ_HEAP_SNAPSHOTS=<dir>  heap snapshots of the server child at the baseline and at the end
//   FUZZ_REPORT=<file>        write the JSON report there instead of fuzz/.reports/ (the smoke in npm test)
//   FUZZ_COMPAT=1             the server also takes A2A 0.3 callers (compat: { v0_3: true }), and two
//                             requests in three on the JSON bindings are 0.3's (fuzz/v03.mjs), without A2A-Version
// Prints the report and writes it to fuzz/.reports/ (JSON and text); exits 1 on any finding.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fuzzDir, prepare } from "./build.mjs";
import { runBinding } from "./campaign.mjs";
import { formatReport } from "./report.mjs";

const env = process.env;
const bindings = (env.FUZZ_BINDINGS ?? "jsonrpc,http-json,grpc").split(",").filter(Boolean);
const options = {
  count: Number(env.FUZZ_COUNT ?? 1_000_000),
  seconds: env.FUZZ_SECONDS === undefined ? Infinity : Number(env.FUZZ_SECONDS),
  concurrency: Number(env.FUZZ_CONCURRENCY ?? 32),
  seed: Number(env.FUZZ_SEED ?? 1),
  // Long enough for V8 to have compiled most paths the campaign takes before the heap baseline.
  warmup: Number(env.FUZZ_WARMUP ?? Math.max(20_000, Math.round(Number(env.FUZZ_COUNT ?? 1_000_000) / 10))),
  timeoutMs: Number(env.FUZZ_TIMEOUT_MS ?? 15_000),
  log: (line) => console.log(line),
};

prepare();
const started = new Date();
const reports = [];
for (const name of bindings) {
  const binding = await import(`./${name}.mjs`);
  console.log(`${name}: ${options.count} requests (warm-up ${options.warmup}), ${options.concurrency} in flight, seed ${options.seed}`);
  reports.push(await runBinding(binding, options));
}
const summary = { date: started.toISOString(), seconds: (Date.now() - started.getTime()) / 1000, node: process.version, options: { ...options, log: undefined }, reports };
const text = formatReport(summary);
console.log(text);
if (env.FUZZ_REPORT !== undefined) {
  writeFileSync(env.FUZZ_REPORT, JSON.stringify(summary, null, 2));
  process.exit(reports.every((r) => r.ok) ? 0 : 1);
}
const dir = join(fuzzDir, ".reports");
mkdirSync(dir, { recursive: true });
const stamp = started.toISOString().replace(/[:.]/g, "-");
writeFileSync(join(dir, `fuzz-${stamp}.json`), JSON.stringify(summary, null, 2));
writeFileSync(join(dir, `fuzz-${stamp}.txt`), text);
writeFileSync(join(dir, "fuzz-latest.txt"), text);
console.log(`report: fuzz/.reports/fuzz-${stamp}.txt`);
process.exit(reports.every((r) => r.ok) ? 0 : 1);
