#!/usr/bin/env node
// Times protoc-gen-a2a on a2a.proto: the plugin's own work (CodeGeneratorRequest
// in, CodeGeneratorResponse out) measured in-process, plus the whole process
// as buf runs it (Node start-up, module loading, stdin/stdout) next to
// protoc-gen-es on the same request. Run through `npm run bench`, which pulls
// the proto and builds the plugin first.
//
// The processes are timed in rounds, each round running every command once in
// a rotating order, so that a machine shared with other work slows them alike;
// the ratio to protoc-gen-es is the median of the rounds' own ratios. `--version`
// runs load each plugin's modules and answer without reading a request: what
// loading alone costs.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const runs = Number(process.env.BENCH_RUNS ?? 15);
const goal = 1.0;

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function buildRequest() {
  const dir = mkdtempSync(join(tmpdir(), "a2a-bench-"));
  try {
    cpSync(join(root, "vendor/googleapis/google"), join(dir, "google"), { recursive: true });
    cpSync(join(root, "vendor/a2a/current/a2a.proto"), join(dir, "a2a.proto"));
    writeFileSync(join(dir, "buf.yaml"), "version: v2\n");
    execFileSync(join(root, "node_modules/.bin/buf"), ["build", "-o", "image.binpb"], { cwd: dir });
    const set = fromBinary(FileDescriptorSetSchema, readFileSync(join(dir, "image.binpb")));
    return create(CodeGeneratorRequestSchema, {
      fileToGenerate: ["a2a.proto"],
      parameter: "target=ts,import_extension=js",
      protoFile: set.file,
      sourceFileDescriptors: set.file.filter((f) => f.name === "a2a.proto"),
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const request = buildRequest();
const { protocGenA2a } = await import(join(root, "dist/plugin/plugin.js"));

const t0 = performance.now();
protocGenA2a.run(request);
const first = performance.now() - t0;
const warm = [];
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  protocGenA2a.run(request);
  warm.push(performance.now() - t);
}

const stdin = toBinary(CodeGeneratorRequestSchema, request);
const oursBin = join(root, "bin/protoc-gen-a2a.js");
const esBin = join(root, "node_modules/@bufbuild/protoc-gen-es/bin/protoc-gen-es");
const commands = {
  ours: { args: [oursBin], input: stdin },
  es: { args: [esBin], input: stdin },
  oursLoad: { args: [oursBin, "--version"] },
  esLoad: { args: [esBin, "--version"] },
  empty: { args: ["-e", ""] },
};
const keys = Object.keys(commands);
const times = Object.fromEntries(keys.map((k) => [k, []]));
for (let round = 0; round < runs; round++) {
  for (let j = 0; j < keys.length; j++) {
    const key = keys[(j + round) % keys.length];
    const { args, input } = commands[key];
    const t = performance.now();
    const r = spawnSync(process.execPath, args, { input });
    times[key].push(performance.now() - t);
    if (r.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${r.stderr}`);
  }
}
const ratios = times.ours.map((t, i) => t / times.es[i]);
const ratio = median(ratios);

const fmt = (ms) => `${ms.toFixed(1)} ms`;
const spread = (xs) => `(${fmt(Math.min(...xs))} .. ${fmt(Math.max(...xs))})`;
console.log(`protoc-gen-a2a on a2a.proto (${runs} runs, median; processes in ${runs} interleaved rounds, min .. max in parentheses)`);
console.log(`  plugin work, first run in a process: ${fmt(first)}`);
console.log(`  plugin work, warm:                   ${fmt(median(warm))}`);
console.log(`  whole process as buf runs it:        ${fmt(median(times.ours))} ${spread(times.ours)}`);
console.log(`  protoc-gen-es, same request:         ${fmt(median(times.es))} ${spread(times.es)}`);
console.log(`  protoc-gen-a2a --version (loading):  ${fmt(median(times.oursLoad))} ${spread(times.oursLoad)}`);
console.log(`  protoc-gen-es --version (loading):   ${fmt(median(times.esLoad))} ${spread(times.esLoad)}`);
console.log(`  an empty node start-up:              ${fmt(median(times.empty))} ${spread(times.empty)}`);
console.log(
  `whole process, protoc-gen-a2a / protoc-gen-es: ${ratio.toFixed(2)}x (median of ${runs} rounds, ` +
    `${Math.min(...ratios).toFixed(2)}x .. ${Math.max(...ratios).toFixed(2)}x)  target <= ${goal.toFixed(1)}x: ${ratio <= goal ? "met" : "MISSED"}`,
);
