/**
 * What the SQL task store does beyond the TaskStore contract
 * (store-conformance.ts has that), on a Postgres server of this suite's own
 * (test/support/postgres.ts): the event log, two store instances on one
 * database (as two agent instances), expiry of finished tasks, and the
 * migrations. The statements are the same on PGlite (D70); the PGlite
 * engine runs the contract in store-pglite.test.ts.
 */
import { jest } from "@jest/globals";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import pg from "pg";
import type { A2ACallContext } from "protoc-gen-a2a/runtime";
import { createPostgresTaskStore, type SqlTaskStore, type StoredTask } from "protoc-gen-a2a/runtime/tasks";
import { importPeer } from "../../runtime/a2a/tasks/sql/driver.js";
import { ArtifactSchema, MessageSchema, Role, SendMessageRequestSchema, TaskPushNotificationConfigSchema, TaskSchema, TaskState, TaskStatusSchema, type Task } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { decodeBinary } from "../../runtime/core/codec/binary-codec.js";
import { startPostgres, type TestPostgres } from "../support/postgres.js";
import { deferred } from "../support/task-clients.js";
import { schemas } from "./store-conformance.js";

jest.setTimeout(30_000);

let server: TestPostgres;
const open: SqlTaskStore[] = [];

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(async () => {
  for (const store of open) await store.close();
  await server?.stop();
});

/** A store instance of its own pool, attached to the generated types: one agent instance. */
async function instance(options: { terminalTtlMs?: number } = {}): Promise<SqlTaskStore> {
  const store = await createPostgresTaskStore({ connectionString: server.url, ...options });
  store.attach?.(schemas);
  open.push(store);
  return store;
}

let counter = 0;
const unique = (what: string) => `${what}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

function callContext(tenant: string, subject = "alice"): A2ACallContext {
  return {
    binding: "JSONRPC",
    headers: new Headers(),
    signal: new AbortController().signal,
    principal: { subject },
    protocolVersion: "1.0",
    requestedExtensions: [],
    activatedExtensions: new Set(),
    tenant,
  };
}

const message = (text: string, taskId = "") =>
  create(MessageSchema, { messageId: unique("m"), role: Role.USER, taskId, parts: [{ content: { case: "text", value: text } }] });

async function sendTask(handler: ReturnType<typeof createA2AServiceTaskHandler>, text: string, tenant: string, taskId = ""): Promise<Task> {
  const answer = await handler.sendMessage(create(SendMessageRequestSchema, { message: message(text, taskId) }), callContext(tenant));
  if (answer.payload.case !== "task") throw new Error("expected a task");
  return answer.payload.value;
}

const said = (m: { parts: readonly { content: { case: string | undefined; value?: unknown } }[] }) =>
  m.parts.map((p) => (p.content.case === "text" ? String(p.content.value) : "")).join("");

/** Asks for input on "start", then answers with two chunks. */
const twoTurns: A2AServiceExecutor = async function* ({ message: m }) {
  if (said(m) === "start") {
    yield { state: TaskState.WORKING };
    yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
    return;
  }
  yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: "x" } }] } };
  yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: "y" } }] }, append: true };
};

test("each change of a task is one event, numbered 1, 2, ... in the order it happened, holding what it wrote", async () => {
  const store = await instance();
  const handler = createA2AServiceTaskHandler(twoTurns, { store });
  const tenant = unique("tenant");
  try {
    const task = await sendTask(handler, "start", tenant);
    await sendTask(handler, "go", tenant, task.id);
    const events = await store.events(task.id);
    expect(events.map((e) => [e.seq, e.kind, e.index])).toEqual([
      [1, "created", undefined],
      [2, "status", undefined], // WORKING
      [3, "status", undefined], // INPUT_REQUIRED, with its message
      [4, "history", undefined], // "go"
      [5, "artifact", 0],
      [6, "artifact", 0],
      [7, "status", undefined], // COMPLETED
    ]);
    const bodies = events.map((e) => {
      if (e.kind === "created") return said(decodeBinary(TaskSchema, e.body!).history[0]!);
      if (e.kind === "status") return TaskState[decodeBinary(TaskStatusSchema, e.body!).state];
      if (e.kind === "history") return said(decodeBinary(MessageSchema, e.body!));
      return said(decodeBinary(ArtifactSchema, e.body!));
    });
    expect(bodies).toEqual(["start", "WORKING", "INPUT_REQUIRED", "go", "x", "xy", "COMPLETED"]);
    expect((await store.events(task.id, 5)).map((e) => e.seq)).toEqual([6, 7]);
    // Times never go back.
    const at = events.map((e) => e.atMs);
    expect(at).toEqual([...at].sort((a, b) => a - b));
  } finally {
    await handler.close();
  }
});

test("writers on two instances: the task's changes are numbered without gaps or repeats, each change kept", async () => {
  const a = await instance();
  const b = await instance();
  const tenant = unique("tenant");
  const task = create(TaskSchema, {
    id: unique("task"),
    contextId: unique("ctx"),
    status: { state: TaskState.WORKING, timestamp: timestampFromMs(Date.now()) },
    history: [message("hello")],
  });
  await a.create({ tenant, owner: "alice", task: task as unknown as StoredTask["task"] });
  // Each instance appends its own messages, all at once: 2 x 20 writes racing on one row.
  const writer = async (store: SqlTaskStore, name: string) => {
    const record = (await store.get(task.id))!;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        record.task.history.push(message(`${name}${i}`) as never);
        // Each write carries the message just added (the last of the history when reported).
        return store.update(record, { kind: "history" });
      }),
    );
  };
  await Promise.all([writer(a, "a"), writer(b, "b")]);
  const events = await b.events(task.id);
  expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
  const history = (await a.get(task.id))!.task.history.map(said);
  expect(history).toHaveLength(41);
  expect(history[0]).toBe("hello");
  // Every message once, and each instance's in the order it reported them.
  for (const name of ["a", "b"]) expect(history.filter((t) => t.startsWith(name) && t !== "hello")).toEqual(Array.from({ length: 20 }, (_, i) => `${name}${i}`));
});

test("two agent instances on one database: a task run on A is read, continued, listed and canceled through B", async () => {
  const storeA = await instance();
  const storeB = await instance();
  const a = createA2AServiceTaskHandler(twoTurns, { store: storeA, push: { allow: ["127.0.0.0/8"] } });
  const b = createA2AServiceTaskHandler(twoTurns, { store: storeB, push: { allow: ["127.0.0.0/8"] } });
  const tenant = unique("tenant");
  const call = callContext(tenant);
  try {
    const waiting = await sendTask(a, "start", tenant);
    expect(waiting.status?.state).toBe(TaskState.INPUT_REQUIRED);
    const seen = await b.getTask({ id: waiting.id }, call);
    expect(seen).toEqual(waiting);
    await expect(b.getTask({ id: waiting.id }, callContext(tenant, "bob"))).rejects.toMatchObject({ name: "TaskNotFoundError" });

    // B continues it; A reads the outcome.
    const done = await sendTask(b, "go", tenant, waiting.id);
    expect(done.status?.state).toBe(TaskState.COMPLETED);
    const onA = await a.getTask({ id: waiting.id }, call);
    expect([onA.history.map(said), onA.artifacts.map(said)]).toEqual([["start", "more?", "go"], ["xy"]]);

    // A config made on B is A's to deliver to.
    await b.createTaskPushNotificationConfig(create(TaskPushNotificationConfigSchema, { taskId: waiting.id, id: "hook", url: "http://127.0.0.1:9/hook" }), call);
    expect((await storeA.configsOf(waiting.id)).map((c) => c.id)).toEqual(["hook"]);

    // A task left waiting on A is canceled through B, and listed so on A.
    const other = await sendTask(a, "start", tenant);
    expect((await b.cancelTask({ id: other.id }, call)).status?.state).toBe(TaskState.CANCELED);
    const listed = await a.listTasks({ contextId: "", status: TaskState.UNSPECIFIED, pageToken: "" }, call);
    expect(listed.tasks.map((t) => [t.id, TaskState[t.status!.state]])).toEqual([
      [other.id, "CANCELED"],
      [waiting.id, "COMPLETED"],
    ]);
  } finally {
    await a.close();
    await b.close();
  }
});

test("a task canceled through B stays CANCELED while its executor on A, not yet told, goes on to the end", async () => {
  const gate = deferred();
  const slow: A2AServiceExecutor = async function* () {
    yield { state: TaskState.WORKING };
    await gate.promise;
    yield { artifact: { artifactId: "late", parts: [{ content: { case: "text", value: "after the cancel" } }] } };
  };
  const storeA = await instance();
  const storeB = await instance();
  const a = createA2AServiceTaskHandler(slow, { store: storeA });
  const b = createA2AServiceTaskHandler(slow, { store: storeB });
  const tenant = unique("tenant");
  const call = callContext(tenant);
  try {
    const answer = await a.sendMessage(create(SendMessageRequestSchema, { message: message("work"), configuration: { returnImmediately: true } }), call);
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const id = answer.payload.value.id;
    expect(answer.payload.value.status?.state).toBe(TaskState.WORKING);
    // A follows its own task: the stream ends when A has written what it takes for the end.
    const onA = a.subscribeToTask({ id }, call);
    const seenOnA: string[] = [];
    const followed = (async () => {
      for await (const e of onA) seenOnA.push(e.payload.case === "statusUpdate" ? TaskState[e.payload.value.status!.state] : e.payload.case!);
    })();

    expect((await b.cancelTask({ id }, call)).status?.state).toBe(TaskState.CANCELED);
    gate.resolve();
    await followed;
    // A never heard of the cancel: its own view completed the task...
    expect(seenOnA).toEqual(["task", "artifactUpdate", "COMPLETED"]);
    // ...but what is stored, for A and B alike, is the cancel.
    for (const handler of [a, b]) {
      const stored = await handler.getTask({ id }, call);
      expect([TaskState[stored.status!.state], stored.artifacts.length]).toEqual(["CANCELED", 0]);
    }
    expect((await storeA.events(id)).map((e) => e.kind)).toEqual(["created", "status", "status"]);
  } finally {
    gate.resolve();
    await a.close();
    await b.close();
  }
});

test("finished tasks are deleted with what is theirs by deleteFinished, or once terminalTtlMs has passed; unfinished ones stay", async () => {
  const store = await instance();
  const handler = createA2AServiceTaskHandler(twoTurns, { store, push: { allow: ["127.0.0.0/8"] } });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(handler, "start", tenant);
    const finished = await sendTask(handler, "go", tenant);
    expect(finished.status?.state).toBe(TaskState.COMPLETED);
    await handler.createTaskPushNotificationConfig(create(TaskPushNotificationConfigSchema, { taskId: finished.id, id: "c", url: "http://127.0.0.1:9/c" }), callContext(tenant));

    // Nothing finished before an hour ago.
    await store.deleteFinished(Date.now() - 3_600_000);
    expect(await store.get(finished.id)).toBeDefined();
    expect(await store.deleteFinished(Date.now() + 1)).toBeGreaterThanOrEqual(1);
    expect(await store.get(finished.id)).toBeUndefined();
    expect(await store.configsOf(finished.id)).toEqual([]);
    expect(await store.events(finished.id)).toEqual([]);
    expect((await store.get(waiting.id))?.task.status?.state).toBe(TaskState.INPUT_REQUIRED);
  } finally {
    await handler.close();
  }

  // With terminalTtlMs the store deletes them itself: a timer, checked here by its effect.
  const expiring = await instance({ terminalTtlMs: 50 });
  const h2 = createA2AServiceTaskHandler(twoTurns, { store: expiring });
  try {
    const done = await sendTask(h2, "go", tenant);
    const deadline = Date.now() + 10_000;
    while ((await expiring.get(done.id)) !== undefined) {
      if (Date.now() > deadline) throw new Error("the finished task was not deleted within 10 s");
      await new Promise((r) => setTimeout(r, 25));
    }
  } finally {
    await h2.close();
  }
});

test("migrations run once per database, and a database at a newer schema version is refused", async () => {
  const first = await instance();
  expect(first.schemaVersion).toBe(1);
  await instance();
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT version, name FROM a2a_schema_migrations ORDER BY version");
    expect(rows).toEqual([{ version: 1, name: expect.stringContaining("event log") }]);
    await client.query("INSERT INTO a2a_schema_migrations (version, name) VALUES (99, 'from the future')");
    await expect(createPostgresTaskStore({ connectionString: server.url })).rejects.toThrow(/schema is at version 99, newer than this code's 1/);
  } finally {
    await client.query("DELETE FROM a2a_schema_migrations WHERE version = 99");
    await client.end();
  }
});

test("a driver that is not installed is named, with the command that installs it", async () => {
  const missing = "a2a-driver-that-is-not-installed";
  await expect(importPeer(missing, () => import(missing))).rejects.toThrow(`this task store needs the package "${missing}": npm install ${missing}`);
});
