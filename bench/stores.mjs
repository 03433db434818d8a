#!/usr/bin/env node
// The task stores' speed (issue 14): `npm run bench:stores`, not part of npm
// test (its smoke is: BENCH_SMOKE=1, test/bench/stores-smoke.test.ts).
//
// Run with the project's TypeScript loader (test/support/ts-loader.mjs, as
// the script in package.json does): the agent is createA2AServiceTaskHandler
// of generated/a2a_tasks.ts over runtime/, called in this process (no
// sockets: what is measured is the runtime and its store), the store chosen
// by URL (D73): memory:, pglite:<temp dir> (on disk), postgres:// on a
// server of the bench's own (test/support/postgres.ts, fsync on, as in
// production).
//
// send     blocking SendMessage, a trivial executor (one artifact, then
//          COMPLETED): µs per call one at a time, and calls/s with
//          BENCH_CONCURRENCY in flight; ratios to memory: in the same run.
// stream   one SendStreamingMessage of BENCH_CHUNKS artifact chunks, read to
//          the end: µs per chunk (median of BENCH_STREAMS streams), ratio.
// where    what a store call is made of: the statements one SendMessage
//          writes and a `SELECT 1` round trip on each engine.
// list     ListTasks latency on Postgres at BENCH_LIST_TASKS tasks (1M),
//          filled by SQL: half of them one owner's ("big"), the rest 100
//          per owner; 1 % WORKING, the rest COMPLETED; 10 tasks per context.
//          Median of BENCH_LIST_RUNS calls per query shape, with EXPLAIN
//          (ANALYZE) of the page and of the count behind totalSize.
//
// Environment: BENCH_SMOKE=1 (small sizes: seconds), BENCH_SENDS (2000),
// BENCH_CONCURRENCY (16), BENCH_CHUNKS (1000), BENCH_STREAMS (5),
// BENCH_LIST_TASKS (1000000), BENCH_LIST_RUNS (15), BENCH_STORES
// (memory,pglite,postgres), BENCH_PARTS (send,stream,where,list).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir, cpus } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import pg from "pg";
import { createA2AServiceTaskHandler } from "../generated/a2a_tasks.ts";
import { MessageSchema, Role, SendMessageRequestSchema, TaskSchema, TaskState } from "../generated/a2a_pb.ts";
import * as q from "../runtime/a2a/tasks/sql/queries.ts";
import { startPostgres } from "../test/support/postgres.ts";

const smoke = process.env.BENCH_SMOKE === "1";
const num = (name, full, small) => Number(process.env[name] ?? (smoke ? small : full));
const SENDS = num("BENCH_SENDS", 2000, 30);
const CONCURRENCY = num("BENCH_CONCURRENCY", 16, 4);
const CHUNKS = num("BENCH_CHUNKS", 1000, 100);
const STREAMS = num("BENCH_STREAMS", 5, 1);
const LIST_TASKS = num("BENCH_LIST_TASKS", 1_000_000, 5_000);
const LIST_RUNS = num("BENCH_LIST_RUNS", 15, 3);
const STORES = (process.env.BENCH_STORES ?? "memory,pglite,postgres").split(",");
const PARTS = new Set((process.env.BENCH_PARTS ?? "send,stream,where,list").split(","));

const call = (owner = "bench") => ({
  binding: "JSONRPC",
  headers: new Headers(),
  signal: new AbortController().signal,
  principal: owner,
  protocolVersion: "1.0",
  requestedExtensions: [],
  activatedExtensions: new Set(),
  tenant: "",
});

const executor = async function* ({ message }) {
  const text = message.parts[0]?.content.value ?? "";
  if (text.startsWith("stream ")) {
    const n = Number(text.slice(7));
    for (let i = 0; i < n; i++) {
      yield { artifact: { artifactId: "s", parts: [{ content: { case: "text", value: `chunk ${i}` } }] }, append: i > 0, lastChunk: i === n - 1 };
    }
    return;
  }
  yield { artifact: { parts: [{ content: { case: "text", value: `echo ${text}` } }] } };
};

let counter = 0;
const request = (text) =>
  create(SendMessageRequestSchema, { message: create(MessageSchema, { messageId: `m${++counter}`, role: Role.USER, parts: [{ content: { case: "text", value: text } }] }) });

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const fmt = (x, digits = 0) => x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function sendOne(handler) {
  const answer = await handler.sendMessage(request("hi"), call());
  if (answer.payload.case !== "task" || answer.payload.value.status?.state !== TaskState.COMPLETED) throw new Error("the echo did not complete");
}

async function measureSend(handler) {
  for (let i = 0; i < Math.min(50, SENDS); i++) await sendOne(handler);
  let t0 = process.hrtime.bigint();
  for (let i = 0; i < SENDS; i++) await sendOne(handler);
  const perCallUs = (ms(t0) * 1000) / SENDS;
  let left = SENDS;
  t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) await sendOne(handler);
    }),
  );
  const perSecond = SENDS / (ms(t0) / 1000);
  return { perCallUs, perSecond };
}

async function measureStream(handler) {
  const times = [];
  for (let r = 0; r < STREAMS + 1; r++) {
    const t0 = process.hrtime.bigint();
    let chunks = 0;
    for await (const event of handler.sendStreamingMessage(request(`stream ${CHUNKS}`), call())) if (event.payload.case === "artifactUpdate") chunks++;
    if (chunks !== CHUNKS) throw new Error(`the stream had ${chunks} chunks, not ${CHUNKS}`);
    // The first is a warm-up.
    if (r > 0) times.push((ms(t0) * 1000) / CHUNKS);
  }
  return median(times);
}

/** A store by URL and what it needs around it: a temp dir, a server. */
async function openStore(kind, postgres) {
  if (kind === "memory") return { url: "memory:", done: async () => undefined };
  if (kind === "pglite") {
    const dir = await mkdtemp(join(tmpdir(), "a2a-bench-pglite-"));
    return { url: `pglite:${dir}`, done: () => rm(dir, { recursive: true, force: true }) };
  }
  return { url: postgres.url, done: async () => undefined };
}

async function roundTrip(url) {
  if (url.startsWith("pglite:")) {
    const { PGlite } = await import("@electric-sql/pglite");
    const db = await PGlite.create();
    const t = [];
    for (let i = 0; i < 200; i++) {
      const t0 = process.hrtime.bigint();
      await db.query("SELECT 1");
      t.push(ms(t0) * 1000);
    }
    await db.close();
    return median(t);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const t = [];
  for (let i = 0; i < 200; i++) {
    const t0 = process.hrtime.bigint();
    await client.query("SELECT $1::int", [1]);
    t.push(ms(t0) * 1000);
  }
  await client.end();
  return median(t);
}

async function fillTasks(url, n) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const bytes = Buffer.from(toBinary(TaskSchema, create(TaskSchema, { id: "filled", contextId: "filled", status: { state: TaskState.COMPLETED } })));
  const start = Date.now() - n;
  const t0 = process.hrtime.bigint();
  // In batches of 100k: one statement per batch, the indexes kept up as a live database keeps them.
  for (let from = 1; from <= n; from += 100_000) {
    const to = Math.min(n, from + 99_999);
    await client.query(
      `INSERT INTO a2a_tasks (id, tenant, owner, context_id, state, status_ms, finished_ms, version, history_len, task)
       SELECT 'fill-' || lpad(g::text, 8, '0'), '', CASE WHEN g % 2 = 0 THEN 'big' ELSE 'user-' || (g % ($2::int / 200 + 1)) END,
         'ctx-' || (g / 10), CASE WHEN g % 100 = 2 THEN $3::int ELSE $4::int END, $1::bigint + g,
         CASE WHEN g % 100 = 2 THEN NULL ELSE $1::bigint + g END, 1, 0, $5::bytea
       FROM generate_series($6::int, $7::int) g`,
      [start, n, TaskState.WORKING, TaskState.COMPLETED, bytes, from, to],
    );
  }
  await client.query("VACUUM ANALYZE a2a_tasks");
  const fillMs = ms(t0);
  return { client, fillMs, start };
}

async function explain(client, text, params) {
  const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS OFF) ${text}`, params);
  return rows.map((r) => r["QUERY PLAN"]);
}

async function measureList(postgres, handler) {
  const { client, fillMs, start } = await fillTasks(postgres.url, LIST_TASKS);
  console.log(`\nlist: ${fmt(LIST_TASKS)} tasks filled in ${fmt(fillMs / 1000, 1)} s (half of them owner "big")`);
  const lists = async (owner, params, deep = 0) => {
    let token = "";
    for (let i = 0; i < deep; i++) token = (await handler.listTasks({ ...params, pageToken: token }, call(owner))).nextPageToken;
    const times = [];
    let last;
    for (let r = 0; r < LIST_RUNS; r++) {
      const t0 = process.hrtime.bigint();
      last = await handler.listTasks({ ...params, pageToken: token }, call(owner));
      times.push(ms(t0));
    }
    return { ms: median(times), total: last.totalSize, got: last.tasks.length };
  };
  const base = { contextId: "", status: 0, pageSize: 50, pageToken: "" };
  const shapes = [
    ["owner with 50% of the tasks, first page", "big", base, 0],
    ["same, 20 pages deep (cursor)", "big", base, 20],
    ["same, status WORKING (1 %)", "big", { ...base, status: TaskState.WORKING }, 0],
    ["same, statusTimestampAfter: the last 10,000 ms", "big", { ...base, statusTimestampAfter: { seconds: BigInt(Math.floor((start + LIST_TASKS - 10_000) / 1000)), nanos: 0 } }, 0],
    ["same, one context", "big", { ...base, contextId: "ctx-10" }, 0],
    ["an owner with 100 tasks", "user-7", base, 0],
  ];
  const rows = [];
  for (const [what, owner, params, deep] of shapes) {
    const r = await lists(owner, params, deep);
    rows.push([what, fmt(r.ms, 2), fmt(r.total), r.got]);
  }
  table(["ListTasks (pageSize 50)", "ms (median)", "totalSize", "tasks"], rows);

  // The plans: a page of the big owner 20 deep, its count, and the state filter.
  const page = ["", "big", "", 0, null];
  const cursor = await client.query(`SELECT status_ms, id FROM a2a_tasks WHERE owner = 'big' ORDER BY status_ms DESC, id DESC OFFSET 1000 LIMIT 1`);
  const { status_ms: cursorMs, id: cursorId } = cursor.rows[0];
  const plans = [
    ["page 20 deep", q.listTasks, [...page, cursorMs, cursorId, 51]],
    ["count (totalSize) of the owner's tasks", q.countTasks, page],
    ["page of state WORKING", q.listTasks, ["", "big", "", TaskState.WORKING, null, null, null, 51]],
    ["count of state WORKING", q.countTasks, ["", "big", "", TaskState.WORKING, null]],
  ];
  for (const [what, text, params] of plans) {
    console.log(`\nEXPLAIN ANALYZE: ${what}`);
    for (const line of await explain(client, text, params)) console.log(`  ${line}`);
  }
  await client.end();
  return rows;
}

function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join(" | ")} |`;
  console.log(line(head));
  console.log(`|${widths.map((w, i) => (i === 0 ? `${"-".repeat(w + 1)}-` : `${"-".repeat(w + 1)}:`)).join("|")}|`);
  for (const r of rows) console.log(line(r));
}

const needsPostgres = STORES.includes("postgres") || PARTS.has("list");
const postgres = needsPostgres ? await startPostgres({ fsync: true }) : undefined;
// Interrupted: the server goes with the bench.
for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => void Promise.resolve(postgres?.stop()).finally(() => process.exit(130)));
console.log(`bench:stores ${smoke ? "(smoke) " : ""}${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} CPUs`);
try {
  const results = new Map();
  if (PARTS.has("send") || PARTS.has("stream") || PARTS.has("where")) {
    for (const kind of STORES) {
      const store = await openStore(kind, postgres);
      const handler = createA2AServiceTaskHandler(executor, { store: store.url });
      await handler.ready();
      try {
        const r = {};
        if (PARTS.has("send")) Object.assign(r, await measureSend(handler));
        if (PARTS.has("stream")) r.chunkUs = await measureStream(handler);
        if (PARTS.has("where") && kind !== "memory") r.roundTripUs = await roundTrip(kind === "pglite" ? "pglite:" : store.url);
        results.set(kind, r);
      } finally {
        await handler.close();
        await store.done();
      }
    }
    const memory = results.get("memory");
    const ratio = (x, y) => (x === undefined || y === undefined ? "" : `${fmt(x / y, 2)}x`);
    console.log(`\nsend: ${SENDS} blocking SendMessage one at a time and ${CONCURRENCY} in flight; stream: ${CHUNKS} chunks (median of ${STREAMS})`);
    table(
      ["store", "µs/SendMessage", "ratio", "SendMessage/s", "ratio", "µs/chunk", "ratio", "SELECT 1 µs"],
      [...results].map(([kind, r]) => [
        kind,
        r.perCallUs === undefined ? "" : fmt(r.perCallUs),
        ratio(r.perCallUs, memory?.perCallUs),
        r.perSecond === undefined ? "" : fmt(r.perSecond),
        ratio(r.perSecond, memory?.perSecond),
        r.chunkUs === undefined ? "" : fmt(r.chunkUs, 1),
        ratio(r.chunkUs, memory?.chunkUs),
        r.roundTripUs === undefined ? "" : fmt(r.roundTripUs),
      ]),
    );
    console.log("(ratios: time over memory's for µs, rate over memory's for /s)");
  }
  if (PARTS.has("list") && postgres !== undefined) {
    const handler = createA2AServiceTaskHandler(executor, { store: postgres.url });
    await handler.ready();
    try {
      await measureList(postgres, handler);
    } finally {
      await handler.close();
    }
  }
} finally {
  await postgres?.stop();
}
