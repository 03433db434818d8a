/**
 * A database that stops answering does not hold calls or close() for ever
 * (D117): the Postgres store's own pool cancels a statement after
 * `queryTimeoutMs` (a lock never released: the server's statement_timeout)
 * and gives up waiting one second later (a server that no longer answers at
 * all: node-postgres's query_timeout). Real Postgres (test/support/
 * postgres.ts); the stuck server is its backends stopped with SIGSTOP.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { MessageNotStoredError, createPGliteTaskStore, createPostgresTaskStore, type SqlTaskStore } from "protoc-gen-a2a/runtime/tasks";
import type { PGliteLike, PgPoolLike } from "../../runtime/a2a/tasks/sql/driver.js";
import { MessageSchema, Role, SendMessageRequestSchema, TaskSchema, TaskState, TaskStatusSchema, type Task } from "../../generated/a2a_pb.js";
import { schemas } from "./store-conformance.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { startPostgres, type TestPostgres } from "../support/postgres.js";
import { callContext, within } from "../support/task-clients.js";

let server: TestPostgres;

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

const echo: A2AServiceExecutor = async function* ({ message }) {
  yield { artifact: { parts: message.parts } };
};

async function send(handler: ReturnType<typeof createA2AServiceTaskHandler>, text: string): Promise<Task> {
  const request = create(SendMessageRequestSchema, {
    message: create(MessageSchema, { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text", value: text } }] }),
  });
  const answer = await handler.sendMessage(request, callContext(""));
  if (answer.payload.case !== "task") throw new Error("expected a task");
  return answer.payload.value;
}

/** Stops (SIGSTOP) the given processes; the returned function lets them go on. */
function stopProcesses(pids: readonly number[]): () => void {
  const stopped: number[] = [];
  const resume = () => {
    for (const pid of stopped) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // Gone already.
      }
    }
  };
  try {
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGSTOP");
        stopped.push(pid);
      } catch {
        // A backend that ended meanwhile (another test's pool closing) needs no stopping.
      }
    }
  } catch (err) {
    resume();
    throw err;
  }
  return resume;
}

/** A store with a short timeout, its handler, and what both reported. */
async function agent(queryTimeoutMs: number, more: { leaseMs?: number; connectTimeoutMs?: number } = {}) {
  const reported: unknown[] = [];
  const store: SqlTaskStore = await createPostgresTaskStore({ connectionString: server.url, queryTimeoutMs, ...more, onError: (e) => reported.push(e) });
  const handler = createA2AServiceTaskHandler(echo, { store, onError: (e) => reported.push(e) });
  // The pool's connections are open and the schema is there before anything is held up.
  expect((await send(handler, "warm")).status?.state).toBe(TaskState.COMPLETED);
  return { store, handler, reported };
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

test("a write stuck behind a lock is cancelled by the server: the call is answered FAILED, the cancel reported, close() returns", async () => {
  const { store, handler, reported } = await agent(500);
  const holder = new pg.Client({ connectionString: server.url });
  await holder.connect();
  try {
    await holder.query("BEGIN");
    await holder.query("LOCK TABLE a2a_tasks IN ACCESS EXCLUSIVE MODE");
    const started = Date.now();
    const task = await within("the answer while the lock is held", send(handler, "blocked"), 10_000);
    expect(task.status?.state).toBe(TaskState.FAILED);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(reported.map(message).join("\n")).toMatch(/statement timeout/);
    // Nothing of the refused task reached the table once the lock is gone: the server rolled it back.
    await within("close() while the lock is still held", (async () => {
      await handler.close();
      await store.close();
    })(), 10_000);
    await holder.query("ROLLBACK");
    const { rows } = await holder.query("SELECT count(*)::int AS n FROM a2a_tasks WHERE id = $1", [task.id]);
    expect(rows[0].n).toBe(0);
  } finally {
    await holder.end();
  }
}, 30_000);

test("a server that stops answering: the call is answered FAILED once the store gave up waiting, and close() returns", async () => {
  const { store, handler, reported } = await agent(500);
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  // The backends serving the store's pool (every other connection but this one), stopped as a hung host would be.
  const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
  expect(rows.length).toBeGreaterThan(0);
  const resume = stopProcesses(rows.map((r) => r.pid));
  try {
    const started = Date.now();
    const task = await within("the answer from a stopped server", send(handler, "unanswered"), 15_000);
    expect(task.status?.state).toBe(TaskState.FAILED);
    // Not the server's statement_timeout (the server is stopped): the client's own bound, a second later.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(reported.map(message).join("\n")).toMatch(/timeout/i);
    await within("close() while the server is stopped", (async () => {
      await handler.close();
      await store.close();
    })(), 15_000);
  } finally {
    resume();
    await admin.end();
  }
}, 40_000);

test("close() with the whole server stopped waits for the lease round under way, not for each of its steps in turn", async () => {
  // A lease round every 200 ms (renewal every 133 ms), each statement bounded at 0.5 s, a connection at 1 s.
  const { store, handler } = await agent(500, { leaseMs: 400, connectTimeoutMs: 1000 });
  await handler.close();
  const postmaster = Number(readFileSync(join(server.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()");
  await admin.end();
  // The server and every process of it: nothing answers, no connection is made.
  const resume = stopProcesses([postmaster, ...rows.map((r) => r.pid)]);
  try {
    // Rounds start against the stopped server (their steps: claims, leases, unrenewed, outbox).
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    await within("close() with the server stopped", store.close(), 10_000);
    // One step's bound (a statement's 1.5 s, or a connection's 1 s), not four of them in turn.
    expect(Date.now() - started).toBeLessThan(2500);
  } finally {
    resume();
  }
}, 30_000);

test("a migration that waits longer than queryTimeoutMs fails to open with a message saying so", async () => {
  // Another instance migrating: it holds the migration lock.
  const holder = new pg.Client({ connectionString: server.url });
  await holder.connect();
  try {
    await holder.query("SELECT pg_advisory_lock($1)", [0x0a2a_5747]);
    await expect(createPostgresTaskStore({ connectionString: server.url, queryTimeoutMs: 300 })).rejects.toThrow(
      /migrating the postgres task store timed out \(another instance migrating it, or a migration on a large table, ran longer than queryTimeoutMs\): open it with a larger queryTimeoutMs/,
    );
  } finally {
    await holder.end();
  }
});

test("deleteFinished deletes a backlog in batches, each a statement well within the timeout, and counts them all", async () => {
  // A pool of one's own, to count the statements the store sends.
  const pool = new pg.Pool({ connectionString: server.url });
  let deletes = 0;
  const counted: PgPoolLike = {
    query: (text, params) => {
      if (text.includes("DELETE FROM a2a_tasks")) deletes++;
      return pool.query(text, params);
    },
    connect: () => pool.connect(),
    end: () => pool.end(),
  };
  const store = await createPostgresTaskStore({ pool: counted });
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    const before = Date.now() - 60_000;
    // 1,234 finished tasks (more than two batches) and one that is not finished.
    await admin.query(
      `INSERT INTO a2a_tasks (id, tenant, owner, context_id, state, status_ms, finished_ms, version, history_len, task)
       SELECT 'backlog-' || n, '', '', 'c', 3, $1::bigint, $1::bigint, 1, 0, '\\x'::bytea FROM generate_series(1, 1234) AS n`,
      [before],
    );
    await admin.query(
      `INSERT INTO a2a_tasks (id, tenant, owner, context_id, state, status_ms, finished_ms, version, history_len, task) VALUES ('backlog-running', '', '', 'c', 2, $1::bigint, NULL, 1, 0, '\\x'::bytea)`,
      [before],
    );
    // Tasks the other tests finished just now are not old enough to go.
    expect(await store.deleteFinished(before + 1)).toBe(1234);
    // 500, 500, 234.
    expect(deletes).toBe(3);
    const { rows } = await admin.query("SELECT id FROM a2a_tasks WHERE id LIKE 'backlog-%'");
    expect(rows).toEqual([{ id: "backlog-running" }]);
    await admin.query("DELETE FROM a2a_tasks WHERE id = 'backlog-running'");
  } finally {
    await admin.end();
    await store.close();
    await pool.end();
  }
});

test("a message refused because the task ended elsewhere, while its store closes, still catches the task up from the log", async () => {
  // Two instances on one database; A's copy of the task is older than what B wrote.
  const db = await PGlite.create();
  const a = await createPGliteTaskStore({ db: db as unknown as PGliteLike });
  const b = await createPGliteTaskStore({ db: db as unknown as PGliteLike });
  try {
    a.attach?.(schemas);
    b.attach?.(schemas);
    const said = (text: string) => create(MessageSchema, { messageId: text, role: Role.USER, parts: [{ content: { case: "text", value: text } }] });
    const status = (state: TaskState) => create(TaskStatusSchema, { state, timestamp: timestampFromMs(Date.now()) });
    await a.create({ tenant: "", owner: "o", task: create(TaskSchema, { id: "t1", contextId: "c1", status: status(TaskState.INPUT_REQUIRED), history: [said("start")] }) as never });
    const mine = (await a.get("t1"))!;
    const theirs = (await b.get("t1"))!;
    theirs.task.status = status(TaskState.COMPLETED) as never;
    await b.update(theirs, { kind: "status", terminal: true });
    // A follows from its old version without catching up: only the refusal's read of the log tells it.
    const heard: string[] = [];
    a.follow("t1", mine.version, (change) => heard.push(change.kind), false);
    mine.task.history.push(said("late") as never);
    const refused = Promise.resolve(a.update(mine, { kind: "history" })).then(
      () => undefined,
      (e: unknown) => e,
    );
    const closing = a.close();
    expect(await refused).toMatchObject({ why: "ended" });
    expect(await refused).toBeInstanceOf(MessageNotStoredError);
    await closing;
    expect(heard).toContain("status");
  } finally {
    await a.close();
    await b.close();
    await db.close();
  }
});

test("the timeouts are checked, and refused on a pool of one's own, naming what to set instead", async () => {
  await expect(createPostgresTaskStore({ connectionString: server.url, queryTimeoutMs: 0 })).rejects.toThrow(/queryTimeoutMs must be a whole number of milliseconds from 1 to 2000000000 \(got 0\)/);
  // A bound past what a timer can wait would make every query time out at once.
  await expect(createPostgresTaskStore({ connectionString: server.url, queryTimeoutMs: 2 ** 31 })).rejects.toThrow(/queryTimeoutMs must be/);
  await expect(createPostgresTaskStore({ connectionString: server.url, connectTimeoutMs: 1.5 })).rejects.toThrow(/connectTimeoutMs must be/);
  const pool = new pg.Pool({ connectionString: server.url });
  try {
    await expect(createPostgresTaskStore({ pool, queryTimeoutMs: 1000 })).rejects.toThrow(/on a pool of your own set statement_timeout, query_timeout and connectionTimeoutMillis/);
  } finally {
    await pool.end();
  }
});
