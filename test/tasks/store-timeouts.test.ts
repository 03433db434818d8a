/**
 * A database that stops answering does not hold calls or close() for ever
 * (D117): the Postgres store's own pool cancels a statement after
 * `queryTimeoutMs` (a lock never released: the server's statement_timeout)
 * and gives up waiting one second later (a server that no longer answers at
 * all: node-postgres's query_timeout). Real Postgres (test/support/
 * postgres.ts); the stuck server is its backends stopped with SIGSTOP.
 */
import { create } from "@bufbuild/protobuf";
import pg from "pg";
import { createPostgresTaskStore, type SqlTaskStore } from "protoc-gen-a2a/runtime/tasks";
import { MessageSchema, Role, SendMessageRequestSchema, TaskState, type Task } from "../../generated/a2a_pb.js";
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

/** A store with a short timeout, its handler, and what both reported. */
async function agent(queryTimeoutMs: number) {
  const reported: unknown[] = [];
  const store: SqlTaskStore = await createPostgresTaskStore({ connectionString: server.url, queryTimeoutMs, onError: (e) => reported.push(e) });
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
  const stopped = rows.map((r) => r.pid);
  for (const pid of stopped) process.kill(pid, "SIGSTOP");
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
    for (const pid of stopped) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // Gone already.
      }
    }
    await admin.end();
  }
}, 40_000);

test("the timeouts are checked, and refused on a pool of one's own, naming what to set instead", async () => {
  await expect(createPostgresTaskStore({ connectionString: server.url, queryTimeoutMs: 0 })).rejects.toThrow(/queryTimeoutMs must be a whole number of milliseconds above 0 \(got 0\)/);
  await expect(createPostgresTaskStore({ connectionString: server.url, connectTimeoutMs: 1.5 })).rejects.toThrow(/connectTimeoutMs must be/);
  const pool = new pg.Pool({ connectionString: server.url });
  try {
    await expect(createPostgresTaskStore({ pool, queryTimeoutMs: 1000 })).rejects.toThrow(/on a pool of your own set statement_timeout, query_timeout and connectionTimeoutMillis/);
  } finally {
    await pool.end();
  }
});
