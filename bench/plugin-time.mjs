#!/usr/bin/env node
// Times protoc-gen-a2a on a2a.proto: the plugin's own work (CodeGeneratorRequest
// in, CodeGeneratorResponse out) measured in-process, plus the whole process
// as buf runs it (Node start-up, module loading, stdin/stdout). Run through
// `npm run bench`, which pulls the proto and builds the plugin first.
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

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
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
function timeProcess(args) {
  const times = [];
  for (let i = 0; i < Math.min(runs, 7); i++) {
    const t = performance.now();
    const r = spawnSync("node", args, { input: stdin });
    times.push(performance.now() - t);
    if (r.status !== 0) throw new Error(`${args.join(" ")} failed: ${r.stderr}`);
  }
  return median(times);
}
const ours = timeProcess([join(root, "bin/protoc-gen-a2a.js")]);
// protoc-gen-es on the same request: both load protoplugin, which imports
// TypeScript eagerly (for target=js/dts), and that load dominates start-up.
const es = timeProcess([join(root, "node_modules/@bufbuild/protoc-gen-es/bin/protoc-gen-es")]);
const empty = timeProcess(["-e", ""]);

const fmt = (ms) => `${ms.toFixed(1)} ms`;
console.log(`protoc-gen-a2a on a2a.proto (${runs} runs, median)`);
console.log(`  plugin work, first run in a process: ${fmt(first)}`);
console.log(`  plugin work, warm:                   ${fmt(median(warm))}`);
console.log(`  whole process as buf runs it:        ${fmt(ours)}`);
console.log(`  protoc-gen-es, same request:         ${fmt(es)}`);
console.log(`  an empty node start-up:              ${fmt(empty)}`);
