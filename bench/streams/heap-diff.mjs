#!/usr/bin/env node
// What a set of open streams holds: the difference between two V8 heap
// snapshots (v8.writeHeapSnapshot) in objects and self size, by node type and
// constructor name, per stream.
// Usage: node bench/streams/heap-diff.mjs <base.heapsnapshot> <open.heapsnapshot> [streams=1000] [top=25]
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

function byConstructor(file) {
  const snap = JSON.parse(readFileSync(file, "utf8"));
  const f = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [iType, iName, iSize] = ["type", "name", "self_size"].map((k) => f.indexOf(k));
  const nodes = snap.nodes;
  const out = new Map();
  for (let i = 0; i < nodes.length; i += f.length) {
    const type = types[nodes[i + iType]];
    let name = snap.strings[nodes[i + iName]];
    if (type === "string" || type === "concatenated string" || type === "sliced string") name = "(string)";
    else if (type === "code") name = "(code)";
    else if (name.length > 60) name = name.slice(0, 57) + "...";
    const k = `${type}\t${name}`;
    const e = out.get(k) ?? { count: 0, size: 0 };
    e.count++;
    e.size += nodes[i + iSize];
    out.set(k, e);
  }
  return out;
}

export function printHeapDiff(baseFile, openFile, streams = 1000, top = 25) {
  const a = byConstructor(baseFile);
  const b = byConstructor(openFile);
  const rows = [];
  let total = 0;
  for (const [k, e] of b) {
    const d = { count: e.count - (a.get(k)?.count ?? 0), size: e.size - (a.get(k)?.size ?? 0) };
    total += d.size;
    if (d.size > 0) rows.push([k, d]);
  }
  rows.sort((x, y) => y[1].size - x[1].size);
  console.log(`  heap snapshot difference, per stream (${streams} streams): ${(total / streams).toFixed(0)} bytes of self size in all; top ${top}:`);
  for (const [k, d] of rows.slice(0, top)) {
    const [type, name] = k.split("\t");
    console.log(`    ${(d.size / streams).toFixed(0).padStart(6)} B  ${(d.count / streams).toFixed(1).padStart(5)} objects  ${type.padEnd(8)} ${name}`);
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  printHeapDiff(process.argv[2], process.argv[3], Number(process.argv[4] ?? 1000), Number(process.argv[5] ?? 25));
}
