#!/usr/bin/env node
// Summarises a V8 .cpuprofile (node --cpu-prof): self time by area (Node
// internals, protobuf-es, our runtime, ...), the top functions by self time
// and the top functions of this package by inclusive time, each with
// file:line (1-based, of the JavaScript that ran: dist/runtime/*.js maps
// function by function to runtime/*.ts).
// Usage: node bench/lib/profile-top.mjs <file.cpuprofile> [top=25] [requests served]
import { readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

function where(frame, root) {
  const { url, lineNumber } = frame;
  if (url === "") return "";
  let path = url.startsWith("file://") ? fileURLToPath(url) : url;
  if (path.startsWith("/")) path = relative(root, path);
  return `${path}:${lineNumber + 1}`;
}

function area(url) {
  if (url === "") return "(V8/native)";
  if (url.startsWith("node:internal/deps/undici")) return "undici inside node (global fetch)";
  if (url.startsWith("node:")) return "node internals (http, streams, events)";
  if (url.includes("/dist/runtime/")) return "protoc-gen-a2a runtime (dist/runtime)";
  if (url.includes("/bench/.build/generated/")) return "generated code";
  if (url.includes("/@bufbuild/protobuf/")) return "@bufbuild/protobuf";
  if (url.includes("/@grpc/grpc-js/")) return "@grpc/grpc-js";
  if (url.includes("/node_modules/undici/")) return "undici (npm)";
  if (url.includes("/@a2a-js/sdk/")) return "@a2a-js/sdk";
  if (url.includes("/node_modules/")) return "other node_modules";
  return "bench harness";
}

export function printTopCosts(file, { root = process.cwd(), top = 25, requests } = {}) {
  const profile = JSON.parse(readFileSync(file, "utf8"));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map();
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
    total += dt;
  }
  const idle = [...self].filter(([id]) => nodes.get(id).callFrame.functionName === "(idle)").reduce((s, [, t]) => s + t, 0);
  const busy = total - idle;
  const key = (f) => `${f.functionName || "(anonymous)"}\t${where(f, root)}`;

  const selfBy = new Map();
  const areaBy = new Map();
  const inclusiveBy = new Map();
  for (const [id, t] of self) {
    const frame = nodes.get(id).callFrame;
    if (frame.functionName === "(idle)") continue;
    selfBy.set(key(frame), (selfBy.get(key(frame)) ?? 0) + t);
    const a = ["(garbage collector)", "(program)"].includes(frame.functionName) ? frame.functionName : area(frame.url);
    areaBy.set(a, (areaBy.get(a) ?? 0) + t);
    // Inclusive: every distinct function on the sample's stack.
    const seen = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const k = key(nodes.get(n).callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusiveBy.set(k, (inclusiveBy.get(k) ?? 0) + t);
    }
  }
  // Percent of busy time and, when the number of requests served is known, µs per request.
  const pct = (t) =>
    `${((100 * t) / busy).toFixed(1).padStart(5)}%` + (requests > 0 ? `  ${(t / requests).toFixed(2).padStart(6)} µs/req` : "");
  const list = (map, filter, n) =>
    [...map]
      .filter(([k]) => filter(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, t]) => {
        const [fn, at = ""] = k.split("\t");
        return `  ${pct(t)}  ${fn}  ${at}`.trimEnd();
      })
      .join("\n");

  console.log(
    `CPU profile ${relative(root, file)}: ${(busy / 1000).toFixed(0)} ms busy (idle excluded)` +
      (requests > 0 ? ` over ${requests} requests (${(busy / requests).toFixed(1)} µs/req)` : "") +
      "; percentages of busy time.\n",
  );
  console.log("Self time by area:");
  console.log(list(areaBy, () => true, 20));
  console.log(`\nTop ${top} functions by self time:`);
  console.log(list(selfBy, () => true, top));
  // Line-level ticks (positionTicks: the line of the function that was running, native callees such as JSON.parse included).
  const lineBy = new Map();
  const interval = profile.samples.length > 0 ? total / profile.samples.length : 0;
  for (const n of profile.nodes) {
    for (const { line, ticks } of n.positionTicks ?? []) {
      const k = `${n.callFrame.functionName || "(anonymous)"}\t${where({ ...n.callFrame, lineNumber: line - 1 }, root)}`;
      lineBy.set(k, (lineBy.get(k) ?? 0) + ticks * interval);
    }
  }
  console.log(`\nTop ${top} lines of this package by self time (native callees, e.g. JSON.parse, included):`);
  console.log(list(lineBy, (k) => /dist\/runtime\/|bench\/\.build\/generated\//.test(k), top));
  console.log(`\nTop ${top} functions of this package (runtime, generated code) by inclusive time:`);
  console.log(list(inclusiveBy, (k) => /dist\/runtime\/|bench\/\.build\/generated\//.test(k), top));
  console.log(`\nTop ${top} @bufbuild/protobuf functions by inclusive time:`);
  console.log(list(inclusiveBy, (k) => k.includes("@bufbuild/protobuf"), top));
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (file === undefined) {
    console.error("usage: node bench/lib/profile-top.mjs <file.cpuprofile> [top] [requests]");
    process.exit(2);
  }
  printTopCosts(file, {
    root: resolve(fileURLToPath(import.meta.url), "../../.."),
    top: Number(process.argv[3] ?? 25),
    requests: Number(process.argv[4] ?? 0),
  });
}
