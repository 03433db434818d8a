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
import * as grpc from "@grpc/grpc-js";
import pg from "pg";
import { TaskState as S } from "@a2a-js/sdk";
import { createPostgresTaskStore, type SqlTaskStore, type StoredTask, type TaskStore } from "protoc-gen-a2a/runtime/tasks";
import { importPeer } from "../../runtime/a2a/tasks/sql/driver.js";
import { ArtifactSchema, MessageSchema, Role, SendMessageRequestSchema, TaskPushNotificationConfigSchema, TaskSchema, TaskState, TaskStatusSchema, type Task } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceEvent, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { decodeBinary } from "../../runtime/core/codec/binary-codec.js";
import * as queries from "../../runtime/a2a/tasks/sql/queries.js";
import { createOpeningStore } from "../../runtime/a2a/tasks/opening-store.js";
import { startPostgres, type TestPostgres } from "../support/postgres.js";
import { BINDINGS, Receiver, asTask, callContext, deferred, errorKind, follow, label as sdkLabel, listParams, send as sdkSend, startAgent, until, within, type Deferred, type TestAgent } from "../support/task-clients.js";
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

/**
 * The stores the running test made: closed after it, so that their timers do not reach a later
 * test's tasks (a short lease's reaper, every 100 ms, took the lapsed task of the reaper test
 * before that test's own reapLapsed, which then skipped the locked row and saw no refusal).
 */
let testStores: SqlTaskStore[] | undefined;
beforeEach(() => {
  testStores = [];
});
afterEach(async () => {
  const stores = testStores ?? [];
  testStores = undefined;
  for (const store of stores) await store.close();
});

/** A store instance of its own pool, attached to the generated types: one agent instance. */
async function instance(options: { terminalTtlMs?: number; interruptedTtlMs?: number; leaseMs?: number; onError?: (error: unknown) => void; name?: string } = {}): Promise<SqlTaskStore> {
  const { name, ...rest } = options;
  // A name is the connections' application_name, to find them in pg_stat_activity.
  const connectionString = name === undefined ? server.url : `${server.url}?application_name=${name}`;
  const store = await createPostgresTaskStore({ connectionString, ...rest });
  store.attach?.(schemas);
  open.push(store);
  testStores?.push(store);
  return store;
}

let counter = 0;
const unique = (what: string) => `${what}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;


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
    // The second chunk's event holds the chunk, as streams got it; the artifact's row holds both.
    expect(bodies).toEqual(["start", "WORKING", "INPUT_REQUIRED", "go", "x", "y", "COMPLETED"]);
    expect(events.filter((e) => e.kind === "artifact").map((e) => e.append)).toEqual([false, true]);
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
  // Each instance appends its own messages, all at once: 2 x 20 writes racing on one row. Status
  // messages: a user's message is written only by the instance holding the task (D79).
  const writer = async (store: SqlTaskStore, name: string) => {
    const record = (await store.get(task.id))!;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const note = message(`${name}${i}`) as never;
        record.task.history.push(note);
        record.task.status = create(TaskStatusSchema, { state: TaskState.WORKING, message: note, timestamp: timestampFromMs(Date.now()) }) as never;
        // Each write carries the message just added (the last of the history when reported).
        return store.update(record, { kind: "status", terminal: false });
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

/** The store without `follow`: an instance that has not heard yet of what others wrote (the window before a notification). */
function deaf(store: SqlTaskStore): TaskStore {
  return {
    attach: (schemas) => store.attach?.(schemas),
    create: (record) => store.create(record),
    get: (id) => store.get(id),
    update: (record, change) => store.update(record, change),
    list: (owner, query) => store.list(owner, query),
    putConfig: (config) => store.putConfig(config),
    getConfig: (taskId, id) => store.getConfig(taskId, id),
    configsOf: (taskId) => store.configsOf(taskId),
    listConfigs: (taskId, size, token) => store.listConfigs(taskId, size, token),
    deleteConfig: (taskId, id) => store.deleteConfig(taskId, id),
  };
}

test("a task canceled through B stays CANCELED while its executor on A, not told yet, goes on to the end", async () => {
  const gate = deferred();
  const slow: A2AServiceExecutor = async function* () {
    yield { state: TaskState.WORKING };
    await gate.promise;
    yield { artifact: { artifactId: "late", parts: [{ content: { case: "text", value: "after the cancel" } }] } };
  };
  const storeA = await instance();
  const storeB = await instance();
  const a = createA2AServiceTaskHandler(slow, { store: deaf(storeA) });
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

/** A stream's events as labels, artifacts with their chunk flags. */
function label(e: { payload: { case: string | undefined; value?: unknown } }): string {
  const p = e.payload;
  if (p.case === "statusUpdate") return `status:${TaskState[(p.value as { status: { state: TaskState } }).status.state]}`;
  if (p.case === "artifactUpdate") {
    const u = p.value as { artifact: { parts: { content: { case: string | undefined; value?: unknown } }[] }; append: boolean; lastChunk: boolean };
    return `artifact:${said(u.artifact)}${u.append ? "+" : ""}${u.lastChunk ? "!" : ""}`;
  }
  if (p.case === "task") return `task:${TaskState[(p.value as Task).status!.state]}`;
  return p.case ?? "";
}

/** Reads a stream: its first event at once, the rest in the background. */
async function reader(stream: AsyncIterable<{ payload: { case: string | undefined; value?: unknown } }>) {
  const iterator = stream[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done === true) throw new Error("the stream ended at once");
  const seen = [label(first.value)];
  const rest = (async () => {
    for (let step = await iterator.next(); step.done !== true; step = await iterator.next()) seen.push(label(step.value));
    return seen;
  })();
  return { seen, rest };
}

test("SubscribeToTask on B follows a task run on A: the events A's own stream gets, in order, ending with the task", async () => {
  const gate = deferred();
  const chunks: A2AServiceExecutor = async function* () {
    yield { state: TaskState.WORKING };
    await gate.promise;
    for (const [i, part] of ["a", "b", "c", "d", "e"].entries()) {
      yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: part } }] }, append: i > 0, lastChunk: i === 4 };
    }
    yield { state: TaskState.WORKING, message: "wrapping up" };
  };
  const a = createA2AServiceTaskHandler(chunks, { store: await instance() });
  const b = createA2AServiceTaskHandler(chunks, { store: await instance() });
  const tenant = unique("tenant");
  const call = callContext(tenant);
  try {
    const answer = await a.sendMessage(create(SendMessageRequestSchema, { message: message("go"), configuration: { returnImmediately: true } }), call);
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const id = answer.payload.value.id;
    const onA = await reader(a.subscribeToTask({ id }, call));
    const onB = await reader(b.subscribeToTask({ id }, call));
    expect([onA.seen, onB.seen]).toEqual([["task:WORKING"], ["task:WORKING"]]);
    gate.resolve();
    const [seenA, seenB] = await within("both streams to end", Promise.all([onA.rest, onB.rest]));
    expect(seenA).toEqual(["task:WORKING", "artifact:a", "artifact:b+", "artifact:c+", "artifact:d+", "artifact:e+!", "status:WORKING", "status:COMPLETED"]);
    expect(seenB).toEqual(seenA);
    // B's own copy of the task followed too: what B answers now is what A wrote.
    const fromB = await b.getTask({ id }, call);
    expect([fromB.artifacts.map(said), fromB.history.map(said)]).toEqual([["abcde"], ["go", "wrapping up"]]);
  } finally {
    gate.resolve();
    await a.close();
    await b.close();
  }
});

test("CancelTask through B stops the executor running on A, and A's streams end with CANCELED", async () => {
  const aborted = deferred<string>();
  const waits: A2AServiceExecutor = async function* ({ signal }) {
    yield { state: TaskState.WORKING };
    await new Promise<void>((resolve) =>
      signal.addEventListener("abort", () => {
        aborted.resolve(String((signal.reason as Error | undefined)?.message));
        resolve();
      }),
    );
    yield { artifact: { parts: [{ content: { case: "text", value: "too late" } }] } };
  };
  const a = createA2AServiceTaskHandler(waits, { store: await instance() });
  const b = createA2AServiceTaskHandler(waits, { store: await instance() });
  const tenant = unique("tenant");
  const call = callContext(tenant);
  try {
    const answer = await a.sendMessage(create(SendMessageRequestSchema, { message: message("go"), configuration: { returnImmediately: true } }), call);
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const id = answer.payload.value.id;
    const onA = await reader(a.subscribeToTask({ id }, call));
    expect((await b.cancelTask({ id }, call)).status?.state).toBe(TaskState.CANCELED);
    expect(await within("A's executor to be aborted", aborted.promise)).toBe("the task was made TASK_STATE_CANCELED by another instance");
    expect(await within("A's stream to end", onA.rest)).toEqual(["task:WORKING", "status:CANCELED"]);
    const stored = await a.getTask({ id }, call);
    expect([TaskState[stored.status!.state], stored.artifacts.length]).toEqual(["CANCELED", 0]);
  } finally {
    await a.close();
    await b.close();
  }
});

/** Starts a task on `handler` with `text` (returnImmediately): its id. */
async function startTask(handler: ReturnType<typeof createA2AServiceTaskHandler>, text: string, call: ReturnType<typeof callContext>): Promise<string> {
  return taskOf(await handler.sendMessage(create(SendMessageRequestSchema, { message: message(text), configuration: { returnImmediately: true } }), call)).id;
}

/** The task a SendMessage answered with. */
function taskOf(answer: { payload: { case: string | undefined; value?: unknown } }): Task {
  if (answer.payload.case !== "task") throw new Error(`expected a task, got ${answer.payload.case}`);
  return answer.payload.value as Task;
}

/** `store`'s claims are answered only once `closing` resolves; `claimed` resolves when the first was taken. */
function holdingClaims(store: SqlTaskStore) {
  const claimed = deferred();
  const closing = deferred();
  const claim = store.claim.bind(store);
  store.claim = async (record) => {
    const taken = await claim(record);
    claimed.resolve();
    await closing.promise;
    return taken;
  };
  return { claimed: claimed.promise, closing };
}

/** `store` with what the runtime writes through it and what its claims answered (D79): wrapped before a handler takes it. */
function watched(store: SqlTaskStore) {
  const writes: string[] = [];
  const claims: boolean[] = [];
  const update = store.update.bind(store);
  store.update = (record, change) => {
    writes.push(change.kind);
    return update(record, change);
  };
  const claim = store.claim.bind(store);
  store.claim = async (record) => {
    const taken = await claim(record);
    claims.push(taken);
    return taken;
  };
  return { writes, claims, refused: (n: number) => until(`${n} claims refused`, () => claims.filter((c) => !c).length >= n) };
}

/**
 * An agent (`asking`) whose "start" goes WORKING, waits for `gate`, asks for input and waits for the
 * answer on the spot until its signal aborts (`letGo`, with the reason), its end in `ended`; anything
 * else is answered with an artifact. `started`: the texts its runs started with.
 */
function askingRun() {
  const gate = deferred();
  const letGo = deferred<string>();
  const ended = deferred();
  const started: string[] = [];
  const asking: A2AServiceExecutor = async function* ({ message: m, signal }) {
    started.push(said(m));
    if (said(m) !== "start") {
      yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: `answer to ${said(m)}` } }] } };
      return;
    }
    // Told before it is resumed, too: a run let go as its INPUT_REQUIRED is written never resumes after it.
    signal.addEventListener("abort", () => letGo.resolve(String((signal.reason as Error | undefined)?.message)));
    try {
      yield { state: TaskState.WORKING };
      await gate.promise;
      yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
      // An agent in one process waits for the answer where it asked; with two, it may come to the other.
      await letGo.promise;
      yield { artifact: { artifactId: "late", parts: [{ content: { case: "text", value: "too late" } }] } };
    } finally {
      ended.resolve();
    }
  };
  return { gate, letGo, ended, started, asking };
}

test.each([
  ["given to the handlers", (store: SqlTaskStore): TaskStore => store],
  // What a handler wraps a store it opens from a URL in (D73): it passes the claim on.
  ["opened from a URL", (store: SqlTaskStore): TaskStore => createOpeningStore(Promise.resolve(store))],
])("stores %s: a message through B to a task A runs waits for A's run to interrupt the task (D79); A's run is then let go, and B runs the message", async (_, wrap) => {
  const { gate, letGo, ended, started, asking } = askingRun();
  const storeB = await instance();
  const onStoreB = watched(storeB);
  const a = createA2AServiceTaskHandler(asking, { store: wrap(await instance()) });
  const b = createA2AServiceTaskHandler(asking, { store: wrap(storeB) });
  const call = callContext(unique("tenant"));
  try {
    const id = await startTask(a, "start", call);
    const onB = b.sendMessage(create(SendMessageRequestSchema, { message: message("more", id) }), call);
    await onStoreB.refused(1);
    // A's run holds the task: B has neither stored the message nor called its executor.
    expect([started, onStoreB.writes]).toEqual([["start"], []]);

    gate.resolve();
    expect(await within("A's run to be let go", letGo.promise)).toBe("a new message continued the task");
    const task = taskOf(await within("B's answer", onB));
    // B's message after the status that asked for it, in B's answer as in the log.
    expect([TaskState[task.status!.state], task.artifacts.map(said), task.history.map(said)]).toEqual(["COMPLETED", ["answer to more"], ["start", "more?", "more"]]);
    expect(started).toEqual(["start", "more"]);
    // What A's run yielded once let go reached no one: the task is as B's run left it, read on either instance.
    await within("A's executor to end", ended.promise);
    for (const handler of [a, b]) {
      const stored = await handler.getTask({ id }, call);
      expect([TaskState[stored.status!.state], stored.artifacts.map(said), stored.history.map(said)]).toEqual(["COMPLETED", ["answer to more"], ["start", "more?", "more"]]);
    }
  } finally {
    gate.resolve();
    await a.close();
    await b.close();
  }
});

test("B's message reaches A while A's run is still writing the status that asked for it: A's run is let go once that is written (D79)", async () => {
  const { gate, letGo, asking } = askingRun();
  const storeA = await instance();
  // A's INPUT_REQUIRED is answered only once B's message reached A (an outbox hand-over, a busy pool).
  const seenOnA = deferred();
  const update = storeA.update.bind(storeA);
  storeA.update = async (record, change) => {
    await update(record, change);
    if (change.kind === "status" && record.task.status?.state === TaskState.INPUT_REQUIRED) await seenOnA.promise;
  };
  const follow = storeA.follow.bind(storeA);
  storeA.follow = (taskId, version, onChange, catchUp) =>
    follow(
      taskId,
      version,
      (change) => {
        onChange(change);
        if (change.kind === "history") seenOnA.resolve();
      },
      catchUp,
    );
  // B's run ends the task only once A's run was let go: A hears of B's message, not of the task's end.
  const answering = deferred();
  const answers: A2AServiceExecutor = async function* ({ message: m }) {
    await answering.promise;
    yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: `answer to ${said(m)}` } }] } };
  };
  const a = createA2AServiceTaskHandler(asking, { store: storeA });
  const b = createA2AServiceTaskHandler(answers, { store: await instance() });
  const call = callContext(unique("tenant"));
  try {
    const id = await startTask(a, "start", call);
    gate.resolve();
    const onB = b.sendMessage(create(SendMessageRequestSchema, { message: message("more", id) }), call);
    expect(await within("A's run to be let go", letGo.promise)).toBe("a new message continued the task");
    answering.resolve();
    const done = taskOf(await within("B's answer", onB));
    expect(TaskState[done.status!.state]).toBe("COMPLETED");
  } finally {
    gate.resolve();
    answering.resolve();
    seenOnA.resolve();
    await a.close();
    await b.close();
  }
});

test("a run that continued a task through B holds it until it sets a state: a message through A meanwhile waits for it (D79)", async () => {
  const gates = new Map([["via B", deferred()], ["via A", deferred()]]);
  const started: string[] = [];
  const turns: A2AServiceExecutor = async function* ({ message: m }) {
    started.push(said(m));
    if (said(m) === "start") {
      yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
      return;
    }
    await gates.get(said(m))!.promise;
    // An artifact first: the run works on the task without having set a state of its own.
    yield { artifact: { artifactId: said(m), parts: [{ content: { case: "text", value: `from ${said(m)}` } }] } };
    yield { state: TaskState.INPUT_REQUIRED, message: `after ${said(m)}` };
  };
  const storeA = await instance();
  const onStoreA = watched(storeA);
  const a = createA2AServiceTaskHandler(turns, { store: storeA });
  const b = createA2AServiceTaskHandler(turns, { store: await instance() });
  const tenant = unique("tenant");
  try {
    const id = (await sendTask(a, "start", tenant)).id;
    const viaB = sendTask(b, "via B", tenant, id);
    await until("B's run to start", () => started.includes("via B"));
    const viaA = sendTask(a, "via A", tenant, id);
    await onStoreA.refused(1);
    expect(started).toEqual(["start", "via B"]);
    gates.get("via A")!.resolve();
    gates.get("via B")!.resolve();
    const [afterB, afterA] = await within("both answers", Promise.all([viaB, viaA]));
    expect(started).toEqual(["start", "via B", "via A"]);
    expect(afterB.history.map(said)).toEqual(["start", "more?", "via B", "after via B"]);
    expect([afterA.artifacts.map(said), afterA.history.map(said)]).toEqual([
      ["from via B", "from via A"],
      ["start", "more?", "via B", "after via B", "via A", "after via A"],
    ]);
  } finally {
    for (const gate of gates.values()) gate.resolve();
    await a.close();
    await b.close();
  }
});

test("messages through B and C waiting for A's run are run one after the other once it interrupts the task, never together (D79)", async () => {
  const gate = deferred();
  const gates = new Map([["via B", deferred()], ["via C", deferred()]]);
  const started: string[] = [];
  const turns: A2AServiceExecutor = async function* ({ message: m }) {
    started.push(said(m));
    if (said(m) === "start") {
      yield { state: TaskState.WORKING };
      await gate.promise;
      yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
      return;
    }
    await gates.get(said(m))!.promise;
    yield { state: TaskState.INPUT_REQUIRED, message: `after ${said(m)}` };
  };
  const storeB = await instance();
  const storeC = await instance();
  const [onStoreB, onStoreC] = [watched(storeB), watched(storeC)];
  const a = createA2AServiceTaskHandler(turns, { store: await instance() });
  const b = createA2AServiceTaskHandler(turns, { store: storeB });
  const c = createA2AServiceTaskHandler(turns, { store: storeC });
  const tenant = unique("tenant");
  const call = callContext(tenant);
  try {
    const id = await startTask(a, "start", call);
    const viaB = sendTask(b, "via B", tenant, id);
    const viaC = sendTask(c, "via C", tenant, id);
    await Promise.all([onStoreB.refused(1), onStoreC.refused(1)]);
    gate.resolve();
    // Both ask again once A's run asked for input: one takes the task, the other is refused again.
    await until("one of B and C to start", () => started.length === 2);
    const first = started[1]!;
    const second = first === "via B" ? "via C" : "via B";
    await (second === "via B" ? onStoreB : onStoreC).refused(2);
    expect(started).toEqual(["start", first]);
    gates.get(first)!.resolve();
    gates.get(second)!.resolve();
    const [afterB, afterC] = await within("both answers", Promise.all([viaB, viaC]));
    expect(started).toEqual(["start", first, second]);
    const last = second === "via B" ? afterB : afterC;
    expect(last.history.map(said)).toEqual(["start", "more?", first, `after ${first}`, second, `after ${second}`]);
  } finally {
    gate.resolve();
    for (const g of gates.values()) g.resolve();
    await a.close();
    await b.close();
    await c.close();
  }
});

test("a claim answered after the handler closed is given back: the task waiting for input holds no lease, so no reaper fails it (D79)", async () => {
  const store = await instance();
  const { claimed, closing } = holdingClaims(store);
  const handler = createA2AServiceTaskHandler(twoTurns, { store });
  const tenant = unique("tenant");
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    const id = (await sendTask(handler, "start", tenant)).id;
    const answer = sendTask(handler, "go", tenant, id);
    await within("the claim to be taken", claimed);
    const closed = handler.close();
    closing.resolve();
    await within("the handler to close", closed);
    // Answered with the task as it is; the message never ran.
    expect([TaskState[(await answer).status!.state], (await answer).history.map(said)]).toEqual(["INPUT_REQUIRED", ["start", "more?"]]);
    const { rows } = await admin.query("SELECT state, lease_until FROM a2a_tasks WHERE id = $1", [id]);
    expect(rows).toEqual([{ state: TaskState.INPUT_REQUIRED, lease_until: null }]);
  } finally {
    closing.resolve();
    await admin.end();
    await handler.close();
  }
});

test("a give-back the database refuses once at close is tried again: the task waiting for input is left with no lease (D79, D72)", async () => {
  const errors: unknown[] = [];
  const store = await instance({ onError: (e) => errors.push(e) });
  const { claimed, closing } = holdingClaims(store);
  const handler = createA2AServiceTaskHandler(twoTurns, { store });
  const tenant = unique("tenant");
  // Refuses a write that lets go of a lease on a listed task (NEW.finished_ms NULL: not a terminal status).
  const admin = await refusingWrites("giveback", "NEW.lease_until IS NULL AND OLD.lease_until IS NOT NULL AND NEW.finished_ms IS NULL", "give-back refused for the test");
  try {
    const id = (await sendTask(handler, "start", tenant)).id;
    await admin.query("ALTER SEQUENCE test_giveback_refusals RESTART");
    await admin.query("INSERT INTO test_giveback_refused (id, budget) VALUES ($1, 1)", [id]);
    const answer = sendTask(handler, "go", tenant, id);
    await within("the claim to be taken", claimed);
    const closed = handler.close();
    closing.resolve();
    await within("the handler to close", closed);
    expect((await answer).status?.state).toBe(TaskState.INPUT_REQUIRED);
    expect(await leaseRow(admin, id)).toMatchObject({ state: TaskState.INPUT_REQUIRED, lease_until: null });
    expect(errors.map(String)).toEqual([expect.stringMatching(/the database refused to give back its claim \(give-back refused for the test\); trying again in 100 ms$/)]);
  } finally {
    closing.resolve();
    await admin.query("DROP TRIGGER IF EXISTS test_refuse_giveback ON a2a_tasks");
    await admin.end();
    await handler.close();
  }
});

/** The lease columns and state of a task's row, read by `admin`. */
async function leaseRow(admin: pg.Client, id: string) {
  const { rows } = await admin.query<{ state: number; version: number; lease_owner: string | null; lease_until: string | null }>(
    "SELECT state, version::float8 AS version, lease_owner, lease_until FROM a2a_tasks WHERE id = $1",
    [id],
  );
  return rows[0]!;
}

/** `store`, whose follower hands over another instance's messages (history changes) only once `deliver` resolves: it hears of them late. */
function hearingLate(store: SqlTaskStore, deliver: Deferred) {
  const follow = store.follow.bind(store);
  store.follow = (taskId, version, onChange, catchUp) =>
    follow(taskId, version, (change) => (change.kind === "history" ? void deliver.promise.then(() => onChange(change)) : onChange(change)), catchUp);
}

/**
 * A and B on one database, A hearing late of B's messages (hearingLate, until `deliver`): on A,
 * "start" asks for input and, once `trail` resolves, yields `afterAsking` (A has not heard yet of
 * B's message), then waits to be let go (`letGo`, the reason) and yields once more. "via B" is sent through B and its
 * run started (the task claimed by B: `held`, its row then); any other message runs `answer`.
 */
async function whileAHearsLate(afterAsking: A2AServiceEvent, answer: (text: string) => AsyncGenerator<A2AServiceEvent>) {
  const trail = deferred();
  const letGo = deferred<string>();
  const deliver = deferred();
  const started: string[] = [];
  const agent: A2AServiceExecutor = async function* ({ message: m, signal }) {
    started.push(said(m));
    if (said(m) !== "start") return yield* answer(said(m));
    signal.addEventListener("abort", () => letGo.resolve(String((signal.reason as Error | undefined)?.message)));
    yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
    await trail.promise;
    yield afterAsking;
    await letGo.promise;
    // Let go: what it yields now reaches no one.
    yield { artifact: { artifactId: "late", parts: [{ content: { case: "text", value: "too late" } }] } };
  };
  const storeA = await instance();
  hearingLate(storeA, deliver);
  const a = createA2AServiceTaskHandler(agent, { store: storeA });
  const b = createA2AServiceTaskHandler(agent, { store: await instance() });
  const tenant = unique("tenant");
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  const id = await startTask(a, "start", callContext(tenant));
  const viaB = sendTask(b, "via B", tenant, id);
  await until("B's run to start", () => started.includes("via B"));
  const held = await leaseRow(admin, id);
  return {
    agent, started, trail, letGo, deliver, tenant, admin, id, viaB, held,
    async close() {
      trail.resolve();
      deliver.resolve();
      await admin.end();
      await a.close();
      await b.close();
    },
  };
}

test("what an interrupted run on A still writes after B claimed the task leaves B's lease alone: a message through C waits for B's run (D79)", async () => {
  const gates = new Map([["via B", deferred()], ["via C", deferred()]]);
  const run = await whileAHearsLate({ artifact: { artifactId: "trailing", parts: [{ content: { case: "text", value: "trailing" } }] } }, async function* (text) {
    await gates.get(text)!.promise;
    yield { state: TaskState.INPUT_REQUIRED, message: `after ${text}` };
  });
  const storeC = await instance();
  const onStoreC = watched(storeC);
  const c = createA2AServiceTaskHandler(run.agent, { store: storeC });
  const { admin, id, held, started } = run;
  try {
    expect(held.lease_until).not.toBeNull();
    // A has not heard of B's message yet: its run writes once more.
    run.trail.resolve();
    await until("A's artifact to be written", async () => (await leaseRow(admin, id)).version > held.version);
    expect(await leaseRow(admin, id)).toMatchObject({ lease_owner: held.lease_owner, lease_until: held.lease_until });
    const viaC = sendTask(c, "via C", run.tenant, id);
    await onStoreC.refused(1);
    expect(started).toEqual(["start", "via B"]);
    run.deliver.resolve();
    expect(await within("A's run to be let go", run.letGo.promise)).toBe("a new message continued the task");
    for (const gate of gates.values()) gate.resolve();
    await within("both answers", Promise.all([run.viaB, viaC]));
    expect(started).toEqual(["start", "via B", "via C"]);
  } finally {
    for (const gate of gates.values()) gate.resolve();
    await run.close();
    await c.close();
  }
});

test("a run on A that moved on (WORKING) after asking for input, before it heard of B's message, takes no lease from B and is let go when it hears (D79)", async () => {
  const gate = deferred();
  const run = await whileAHearsLate({ state: TaskState.WORKING }, async function* (text) {
    await gate.promise;
    yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: `answer to ${text}` } }] } };
  });
  const { admin, id, held } = run;
  try {
    run.trail.resolve();
    await until("A's WORKING to be written", async () => (await leaseRow(admin, id)).state === TaskState.WORKING);
    expect(await leaseRow(admin, id)).toMatchObject({ lease_owner: held.lease_owner });
    run.deliver.resolve();
    expect(await within("A's run to be let go", run.letGo.promise)).toBe("a new message continued the task");
    gate.resolve();
    const done = await within("B's answer", run.viaB);
    expect([TaskState[done.status!.state], done.artifacts.map(said)]).toEqual(["COMPLETED", ["answer to via B"]]);
  } finally {
    gate.resolve();
    await run.close();
  }
});

test("a message refused while B held a claim that B then gave back (it closed) is not left waiting: it asks again, and runs (D79)", async () => {
  const storeB = await instance();
  const { claimed: claimedOnB, closing } = holdingClaims(storeB);
  // A short lease: A asks again every 100 ms.
  const storeA = await instance({ leaseMs: 300 });
  const onStoreA = watched(storeA);
  const a = createA2AServiceTaskHandler(twoTurns, { store: storeA });
  const b = createA2AServiceTaskHandler(twoTurns, { store: storeB });
  const tenant = unique("tenant");
  try {
    const id = (await sendTask(a, "start", tenant)).id;
    void sendTask(b, "via B", tenant, id).catch(() => undefined);
    await within("B's claim", claimedOnB);
    const viaA = sendTask(a, "via A", tenant, id);
    await onStoreA.refused(1);
    const closed = b.close();
    closing.resolve();
    await within("B to close", closed);
    const done = await within("A's answer", viaA);
    expect([TaskState[done.status!.state], done.history.map(said)]).toEqual(["COMPLETED", ["start", "more?", "via A"]]);
  } finally {
    closing.resolve();
    await a.close();
    await b.close();
  }
});

test("a claim the store fails to answer is asked again, not skipped: the message waits for A's run as a refused one does, the failure reported once (D79)", async () => {
  const { gate, letGo, started, asking } = askingRun();
  const storeB = await instance({ leaseMs: 300 });
  const failedOnce = deferred();
  const claim = storeB.claim.bind(storeB);
  let calls = 0;
  storeB.claim = async (record) => {
    if (++calls === 1) {
      failedOnce.resolve();
      throw new Error("connection reset, for the test");
    }
    return claim(record);
  };
  const onStoreB = watched(storeB);
  const reported: unknown[] = [];
  const a = createA2AServiceTaskHandler(asking, { store: await instance() });
  const b = createA2AServiceTaskHandler(asking, { store: storeB, onError: (err) => void reported.push(err) });
  const call = callContext(unique("tenant"));
  try {
    const id = await startTask(a, "start", call);
    const onB = b.sendMessage(create(SendMessageRequestSchema, { message: message("more", id) }), call);
    await within("B's failed claim", failedOnce.promise);
    // Asked again (every 100 ms with this lease) and refused while A's run works.
    await onStoreB.refused(1);
    expect([started, onStoreB.writes]).toEqual([["start"], []]);
    gate.resolve();
    expect(await within("A's run to be let go", letGo.promise)).toBe("a new message continued the task");
    const done = taskOf(await within("B's answer", onB));
    expect(TaskState[done.status!.state]).toBe("COMPLETED");
    expect(reported.map(String)).toEqual(["Error: connection reset, for the test"]);
  } finally {
    gate.resolve();
    await a.close();
    await b.close();
  }
});

test("a message through B to a task whose instance died waits for its lease to lapse, and is refused once the reaper FAILED the task (D79)", async () => {
  const started: string[] = [];
  const stuck: A2AServiceExecutor = async function* ({ message: m }) {
    started.push(said(m));
    yield { state: TaskState.WORKING };
    await new Promise(() => undefined);
  };
  const storeA = await instance({ leaseMs: 300 });
  const storeB = await instance({ leaseMs: 300 });
  const onStoreB = watched(storeB);
  const a = createA2AServiceTaskHandler(stuck, { store: storeA, onError: () => undefined });
  const b = createA2AServiceTaskHandler(stuck, { store: storeB });
  const call = callContext(unique("tenant"));
  try {
    const id = await startTask(a, "work", call);
    const onB = b.sendMessage(create(SendMessageRequestSchema, { message: message("more", id) }), call);
    await onStoreB.refused(1);
    // A dies: it renews nothing and writes nothing more.
    await within("A to stop", storeA.close());
    expect(await within("B's answer", endedFirst(onB))).toBe("FAILED");
    const done = await b.getTask({ id }, call);
    expect([TaskState[done.status!.state], done.history.map(said)]).toEqual([
      "FAILED",
      ["work", "the agent instance running this task stopped before the task ended"],
    ]);
    // The message came to a task that ended first: it was not stored, and no executor saw it.
    expect([started, onStoreB.writes]).toEqual([["work"], []]);
  } finally {
    await a.close();
    await b.close();
  }
});

/**
 * The state a message's task ended in before the message's turn came, from its refusal
 * (UnsupportedOperation, D23 and D79): the message was neither stored nor run.
 */
async function endedFirst(answer: Promise<unknown>): Promise<string> {
  const err = await answer.then(
    (value) => new Error(`answered, not refused: ${JSON.stringify(value)}`),
    (e: unknown) => e as Error,
  );
  return /^task \S+ became TASK_STATE_(\w+) before this message's turn and takes no more messages; the message was not stored$/.exec(err.message)?.[1] ?? `not refused as ended: ${err.message}`;
}

/** Holds `store`'s first message write until `resume` resolves (`atStall` runs as it is held); `atWrite` resolves when it is held. */
function stallFirstMessage(store: SqlTaskStore, atStall: () => void = () => {}) {
  const atWrite = deferred();
  const resume = deferred();
  const update = store.update.bind(store);
  let stalled = false;
  store.update = async (record, change) => {
    if (change.kind === "history" && !stalled) {
      stalled = true;
      atStall();
      atWrite.resolve();
      await resume.promise;
    }
    return update(record, change);
  };
  return { atWrite, resume };
}

type Query = (text: string, params?: readonly unknown[]) => Promise<unknown[]>;
/** The store's driver, whose `query` a test may wrap. */
const driverOf = (store: SqlTaskStore) => (store as unknown as { driver: { query: Query } }).driver;

/** Makes `store`'s driver refuse the statements `match` picks, `times` times, with `message`; `refused` counts them. */
function refuseQueries(store: SqlTaskStore, match: (text: string, params?: readonly unknown[]) => boolean, message: string, times = Infinity) {
  const driver = driverOf(store);
  const query = driver.query.bind(driver);
  const counted = { refused: 0 };
  driver.query = (text, params) => {
    if (counted.refused >= times || !match(text, params)) return query(text, params);
    counted.refused++;
    return Promise.reject(new Error(message));
  };
  return counted;
}

/** A claimed message's write: updateTask with its last parameter (D79's claim) set. */
const claimedWrite = (text: string, params?: readonly unknown[]) => text === queries.updateTask && params?.[21] === true;

/** Asks for input ("more?") on "start"; any other message goes WORKING and waits for `gate`. `started`: the texts its runs started with. */
function workingOnGate() {
  const gate = deferred();
  const started: string[] = [];
  const executor: A2AServiceExecutor = async function* ({ message: m }) {
    started.push(said(m));
    if (said(m) === "start") {
      yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
      return;
    }
    yield { state: TaskState.WORKING };
    await gate.promise;
  };
  return { executor, started, gate };
}

/**
 * B's task (workingOnGate) waits for input; A's message "late" to it stalls at its write (`atWrite`),
 * the reaper lets A's claim go, and B's message "go" runs and works (WORKING). `answer`: what A's
 * caller gets, an error or undefined, once the test lets A's write go on.
 */
async function letGoWhileBWorks(a: TaskHandlerOf, b: TaskHandlerOf, storeB: SqlTaskStore, atWrite: Promise<void>) {
  const tenant = unique("tenant");
  const waiting = await sendTask(b, "start", tenant);
  const answer = a.sendMessage(create(SendMessageRequestSchema, { message: message("late", waiting.id) }), callContext(tenant)).then(
    () => undefined,
    (err: unknown) => err,
  );
  await within("A at its write", atWrite);
  await storeB.reapLapsed(Date.now() + 3_000);
  await b.sendMessage(create(SendMessageRequestSchema, { message: message("go", waiting.id), configuration: { returnImmediately: true } }), callContext(tenant));
  await until("B's run to work", async () => (await storeB.get(waiting.id))!.task.status?.state === TaskState.WORKING);
  return { tenant, waiting, answer };
}
type TaskHandlerOf = ReturnType<typeof createA2AServiceTaskHandler>;

/** Asks for input at every message (`re: <text>`); `started`: the texts its runs started with. */
function askingAgain() {
  const started: string[] = [];
  const executor: A2AServiceExecutor = async function* ({ message: m }) {
    started.push(said(m));
    yield { state: TaskState.INPUT_REQUIRED, message: `re: ${said(m)}` };
  };
  return { started, executor };
}

/** A task's lease columns, as the reaper sees them. */
async function leaseOf(id: string): Promise<{ lease_until: string | null; lease_claim: boolean }> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    return (await client.query<{ lease_until: string | null; lease_claim: boolean }>("SELECT lease_until, lease_claim FROM a2a_tasks WHERE id = $1", [id])).rows[0]!;
  } finally {
    await client.end();
  }
}

/** Instances A and B (leases of 300 ms): B's task waits for input (askingAgain), and A has claimed it for a message. */
async function claimedByA() {
  const leaseMs = 300;
  const storeA = await instance({ leaseMs });
  const storeB = await instance({ leaseMs });
  const agent = askingAgain();
  const b = createA2AServiceTaskHandler(agent.executor, { store: storeB });
  const tenant = unique("tenant");
  const waiting = await sendTask(b, "start", tenant);
  expect(await storeA.claim((await storeA.get(waiting.id))!)).toBe(true);
  return { leaseMs, storeA, storeB, agent, b, tenant, waiting };
}

test("a claim whose instance died before it wrote its message is let go by the reaper, not failed: the task still waits for its input, and a message through another instance runs (D79)", async () => {
  const { leaseMs, storeA, storeB, agent, b, tenant, waiting } = await claimedByA();
  try {
    // A took the task for a message, then dies: it renews nothing, writes nothing, gives nothing back.
    expect(await leaseOf(waiting.id)).toMatchObject({ lease_claim: true });
    await storeA.close();
    // Reaped as of a time past A's lease (a waited lease, without the wait).
    await storeB.reapLapsed(Date.now() + 3 * leaseMs);
    expect(await leaseOf(waiting.id)).toEqual({ lease_until: null, lease_claim: false });
    const kept = await storeB.get(waiting.id);
    expect([TaskState[kept!.task.status!.state], kept!.task.history.map(said)]).toEqual(["INPUT_REQUIRED", ["start", "re: start"]]);
    const next = await within("the answer through B", sendTask(b, "go", tenant, waiting.id));
    expect([TaskState[next.status!.state], next.history.map(said), agent.started]).toEqual(["INPUT_REQUIRED", ["start", "re: start", "go", "re: go"], ["start", "go"]]);
  } finally {
    await b.close();
  }
});

test("a message claimed, written, and then its instance died: the claim became the run's lease, and the reaper fails the task as for any run that died (D79, D72)", async () => {
  const leaseMs = 300;
  const storeA = await instance({ leaseMs });
  const storeB = await instance({ leaseMs });
  const written = deferred();
  const hangs: A2AServiceExecutor = async function* ({ message: m }) {
    if (said(m) === "start") {
      yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
      return;
    }
    written.resolve();
    await new Promise(() => undefined);
  };
  const a = createA2AServiceTaskHandler(hangs, { store: storeA, onError: () => undefined });
  const b = createA2AServiceTaskHandler(hangs, { store: storeB });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(b, "start", tenant);
    void a.sendMessage(create(SendMessageRequestSchema, { message: message("go", waiting.id) }), callContext(tenant)).catch(() => undefined);
    // The executor runs once the message is stored: the claim is then a run's lease.
    await within("A's run", written.promise);
    expect(await leaseOf(waiting.id)).toMatchObject({ lease_claim: false });
    await storeA.close();
    await storeB.reapLapsed(Date.now() + 3 * leaseMs);
    const failed = await storeB.get(waiting.id);
    expect([TaskState[failed!.task.status!.state], failed!.task.history.map(said).slice(0, 3)]).toEqual(["FAILED", ["start", "more?", "go"]]);
  } finally {
    await a.close();
    await b.close();
  }
});

test.each(["sendMessage", "sendStreamingMessage"] as const)(
  "%s: a claimant stalled past its lease writes no message once the reaper let its claim go and B's message ran; its caller is told to send again (ABORTED), and nothing of it is in the task (D79)",
  async (method) => {
    const leaseMs = 300;
    const storeA = await instance({ leaseMs });
    const storeB = await instance({ leaseMs });
    // A stalls between its claim and its message's write (a stuck pool, a paused process).
    const { atWrite, resume } = stallFirstMessage(storeA);
    const onA = askingAgain();
    const onB = askingAgain();
    const a = createA2AServiceTaskHandler(onA.executor, { store: storeA });
    const b = createA2AServiceTaskHandler(onB.executor, { store: storeB });
    const tenant = unique("tenant");
    const call = callContext(tenant);
    try {
      const waiting = await sendTask(b, "start", tenant);
      const request = create(SendMessageRequestSchema, { message: message("late", waiting.id) });
      const answer: Promise<unknown> =
        method === "sendMessage"
          ? a.sendMessage(request, call)
          : (async () => {
              const seen: string[] = [];
              try {
                for await (const event of a.sendStreamingMessage(request, call)) seen.push(label(event));
              } catch (err) {
                throw Object.assign(err as Error, { seen });
              }
              return seen;
            })();
      await within("A at its write", atWrite.promise);
      await storeB.reapLapsed(Date.now() + 3 * leaseMs);
      expect(await leaseOf(waiting.id)).toEqual({ lease_until: null, lease_claim: false });
      const next = await within("B's answer", sendTask(b, "go", tenant, waiting.id));
      expect(next.history.map(said)).toEqual(["start", "re: start", "go", "re: go"]);
      resume.resolve();
      const refused = (await within("A's answer", answer.then(() => undefined, (err: unknown) => err))) as { name?: string; message?: string; seen?: string[] } | undefined;
      expect(refused).toMatchObject({ name: "AbortedError", message: expect.stringMatching(/send it again/) });
      // Its stream never started: it ends with the refusal before any event.
      if (method === "sendStreamingMessage") expect(refused!.seen).toEqual([]);
      // A's executor never ran, and the task has nothing of A's message.
      expect([onA.started, onB.started]).toEqual([[], ["start", "go"]]);
      const stored = await storeB.get(waiting.id);
      expect(stored!.task.history.map(said)).toEqual(["start", "re: start", "go", "re: go"]);
      expect((await storeB.events(waiting.id)).filter((e) => e.kind === "history").length).toBe(1);
      // A is not left holding anything: a message through it runs.
      const again = await within("a message through A", sendTask(a, "again", tenant, waiting.id));
      expect([again.history.map(said).slice(-2), onA.started]).toEqual([["again", "re: again"], ["again"]]);
    } finally {
      resume.resolve();
      await a.close();
      await b.close();
    }
  },
);

test("a claim on a task that another instance's run then moved on (WORKING), its claimant dead: the lapsed lease is a run's, and the reaper fails the task (D79, D72)", async () => {
  const { leaseMs, storeA, storeB, b, waiting } = await claimedByA();
  try {
    // B's run, which asked for input and moved on by itself (it heard of no message), writes WORKING; A's claim stays A's.
    const record = (await storeB.get(waiting.id))!;
    record.task.status = create(TaskStatusSchema, { state: TaskState.WORKING, timestamp: timestampFromMs(Date.now()) }) as never;
    await storeB.update(record, { kind: "status", terminal: false });
    expect(await leaseOf(waiting.id)).toMatchObject({ lease_claim: true });
    await storeA.close();
    await storeB.reapLapsed(Date.now() + 3 * leaseMs);
    const after = await storeB.get(waiting.id);
    expect(TaskState[after!.task.status!.state]).toBe("FAILED");
  } finally {
    await b.close();
  }
});

test("a claimant stalled at its write while the reaper let its claim go and B's message ran the task to COMPLETED: its caller is refused, the task without the message it did not store (D79)", async () => {
  const leaseMs = 300;
  const storeA = await instance({ leaseMs });
  const storeB = await instance({ leaseMs });
  const { atWrite, resume } = stallFirstMessage(storeA);
  const started: string[] = [];
  const completes: A2AServiceExecutor = async function* ({ message: m }) {
    started.push(said(m));
    if (said(m) === "start") yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
  };
  const a = createA2AServiceTaskHandler(completes, { store: storeA });
  const b = createA2AServiceTaskHandler(completes, { store: storeB });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(b, "start", tenant);
    const answer = a.sendMessage(create(SendMessageRequestSchema, { message: message("late", waiting.id) }), callContext(tenant));
    await within("A at its write", atWrite.promise);
    await storeB.reapLapsed(Date.now() + 3 * leaseMs);
    const next = await within("B's answer", sendTask(b, "go", tenant, waiting.id));
    expect(TaskState[next.status!.state]).toBe("COMPLETED");
    // A hears of B's COMPLETED while its own write is still out.
    await until("A to hear the task ended", async () => (await a.getTask({ id: waiting.id }, callContext(tenant))).status?.state === TaskState.COMPLETED);
    resume.resolve();
    expect(await within("A's answer", endedFirst(answer))).toBe("COMPLETED");
    const shown = await a.getTask({ id: waiting.id }, callContext(tenant));
    expect([TaskState[shown.status!.state], shown.history.map(said)]).toEqual(["COMPLETED", ["start", "more?", "go"]]);
    expect(started).toEqual(["start", "go"]);
  } finally {
    resume.resolve();
    await a.close();
    await b.close();
  }
});

test("a store given as a wrapper without claim: a message continuing a task is written and runs as before, on one instance (D79)", async () => {
  const agent = askingAgain();
  const a = createA2AServiceTaskHandler(agent.executor, { store: deaf(await instance()) });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(a, "start", tenant);
    const next = await within("the second turn", sendTask(a, "go", tenant, waiting.id));
    expect([TaskState[next.status!.state], next.history.map(said), agent.started]).toEqual(["INPUT_REQUIRED", ["start", "re: start", "go", "re: go"], ["start", "go"]]);
  } finally {
    await a.close();
  }
});

/**
 * A node-postgres pool whose listening connection hands on notifications only while `late` is
 * false, and the held ones once `hear()` is called: another instance's change heard late.
 */
function lateHearingPool() {
  const real = new pg.Pool({ connectionString: server.url, max: 4 });
  const held: (() => void)[] = [];
  const state = { late: false };
  const pool = {
    query: (text: string, params?: unknown[]) => real.query(text, params),
    end: () => real.end(),
    async connect() {
      const client = await real.connect();
      const on = client.on.bind(client) as (event: string, listener: (...args: unknown[]) => void) => unknown;
      (client as unknown as { on: unknown }).on = (event: string, listener: (...args: unknown[]) => void) =>
        on(event, event === "notification" ? (...args: unknown[]) => (state.late ? held.push(() => listener(...args)) : listener(...args)) : listener);
      return client;
    },
  };
  const hear = () => {
    state.late = false;
    for (const deliver of held.splice(0)) deliver();
  };
  return { pool, state, hear };
}

test("a claimant whose claim was let go, stalled at its write while B's message ran the task to COMPLETED, and that has not heard of it yet: its caller is refused, naming the state the task ended in (D79)", async () => {
  const leaseMs = 300;
  const { pool, state, hear } = lateHearingPool();
  const storeA = await createPostgresTaskStore({ pool, leaseMs });
  testStores?.push(storeA);
  const storeB = await instance({ leaseMs });
  // A hears of nothing from the moment it stalls at its write.
  const { atWrite, resume } = stallFirstMessage(storeA, () => (state.late = true));
  const completes: A2AServiceExecutor = async function* ({ message: m }) {
    if (said(m) === "start") yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
  };
  const a = createA2AServiceTaskHandler(completes, { store: storeA });
  const b = createA2AServiceTaskHandler(completes, { store: storeB });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(b, "start", tenant);
    const answer = a.sendMessage(create(SendMessageRequestSchema, { message: message("late", waiting.id) }), callContext(tenant));
    await within("A at its write", atWrite.promise);
    await storeB.reapLapsed(Date.now() + 3 * leaseMs);
    expect(TaskState[(await within("B's answer", sendTask(b, "go", tenant, waiting.id))).status!.state]).toBe("COMPLETED");
    resume.resolve();
    // The follower reads the log up to what the store saw first: the refusal names COMPLETED, not A's INPUT_REQUIRED.
    expect(await within("A's answer", endedFirst(answer))).toBe("COMPLETED");
    const shown = await b.getTask({ id: waiting.id }, callContext(tenant));
    expect([TaskState[shown.status!.state], shown.history.map(said)]).toEqual(["COMPLETED", ["start", "more?", "go"]]);
  } finally {
    resume.resolve();
    hear();
    await a.close();
    await b.close();
    // The store holds its listening connection of this pool until it closes.
    await storeA.close();
    await pool.end();
  }
});

test("a claimant whose claim was let go, stalled at its write, whose read of why the message was not written fails: its caller gets ABORTED, and the task B runs now is not failed (D79)", async () => {
  const leaseMs = 300;
  const errors: unknown[] = [];
  const storeA = await instance({ leaseMs, onError: (err) => void errors.push(err) });
  const storeB = await instance({ leaseMs });
  const { atWrite, resume } = stallFirstMessage(storeA);
  refuseQueries(storeA, (text) => text === queries.openAndVersion, "connection reset (for the test)");
  const { executor: works, started, gate } = workingOnGate();
  const a = createA2AServiceTaskHandler(works, { store: storeA, onError: (err) => void errors.push(err) });
  const b = createA2AServiceTaskHandler(works, { store: storeB });
  try {
    const { waiting, answer } = await letGoWhileBWorks(a, b, storeB, atWrite.promise);
    resume.resolve();
    expect(await within("A's answer", answer)).toMatchObject({ name: "AbortedError" });
    const stored = (await storeB.get(waiting.id))!.task;
    expect([TaskState[stored.status!.state], stored.history.map(said), started]).toEqual(["WORKING", ["start", "more?", "go"], ["start", "go"]]);
    expect(errors.map(String)).toEqual(["Error: connection reset (for the test)"]);
  } finally {
    resume.resolve();
    gate.resolve();
    await a.close();
    await b.close();
  }
});

test("a handler closed while a message's write is out answers that message once the store said whether it took it: ABORTED for a claim let go meanwhile, and close() waits for the write (D79)", async () => {
  const leaseMs = 300;
  const storeA = await instance({ leaseMs });
  const storeB = await instance({ leaseMs });
  const { atWrite, resume } = stallFirstMessage(storeA);
  const agent = askingAgain();
  const a = createA2AServiceTaskHandler(agent.executor, { store: storeA });
  const b = createA2AServiceTaskHandler(agent.executor, { store: storeB });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(b, "start", tenant);
    const answer = a.sendMessage(create(SendMessageRequestSchema, { message: message("late", waiting.id) }), callContext(tenant)).then(
      (got) => ({ got }),
      (err: unknown) => ({ err }),
    );
    await within("A at its write", atWrite.promise);
    await storeB.reapLapsed(Date.now() + 3 * leaseMs);
    let closed = false;
    const closing = a.close().then(() => (closed = true));
    // Nothing is answered, and close() does not resolve, while the write is out.
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    resume.resolve();
    expect(await within("A's answer", answer)).toMatchObject({ err: { name: "AbortedError" } });
    await within("close()", closing);
    expect(agent.started).toEqual(["start"]);
    expect((await storeB.get(waiting.id))!.task.history.map(said)).toEqual(["start", "re: start"]);
  } finally {
    resume.resolve();
    await a.close();
    await b.close();
  }
});

test.each([
  ["before it heard of B's message", true],
  ["after it heard of B's message", false],
])(
  "a claimant stalled at its write, whose claim was let go and whose write then fails with a database error %s: its caller gets ABORTED, the error is reported, and B's running task is not failed over it (D79)",
  async (_, hearsLate) => {
    const leaseMs = 300;
    const errors: unknown[] = [];
    const { pool, state, hear } = lateHearingPool();
    const storeA = await createPostgresTaskStore({ pool, leaseMs, onError: (err) => void errors.push(err) });
    testStores?.push(storeA);
    const storeB = await instance({ leaseMs });
    const { atWrite, resume } = stallFirstMessage(storeA, () => (state.late = hearsLate));
    // The claimed message's write fails once, as a pool that timed out.
    const write = refuseQueries(storeA, claimedWrite, "timeout exceeded when trying to connect (for the test)", 1);
    const { executor: works, started, gate } = workingOnGate();
    const a = createA2AServiceTaskHandler(works, { store: storeA, onError: (err) => void errors.push(err) });
    const b = createA2AServiceTaskHandler(works, { store: storeB });
    try {
      const { tenant, waiting, answer } = await letGoWhileBWorks(a, b, storeB, atWrite.promise);
      if (!hearsLate) await until("A to hear of B's message", async () => (await a.getTask({ id: waiting.id }, callContext(tenant))).history.some((m) => said(m) === "go"));
      resume.resolve();
      expect(await within("A's answer", answer)).toMatchObject({ name: "AbortedError" });
      expect(write.refused).toBe(1);
      const stored = (await storeB.get(waiting.id))!.task;
      expect([TaskState[stored.status!.state], stored.history.map(said), started]).toEqual(["WORKING", ["start", "more?", "go"], ["start", "go"]]);
      expect(errors.map(String)).toContain("Error: timeout exceeded when trying to connect (for the test)");
    } finally {
      resume.resolve();
      gate.resolve();
      hear();
      await a.close();
      await b.close();
      await storeA.close();
      await pool.end();
    }
  },
);

test("a give-back never clears a run's lease: once the claimed message is written, unclaim leaves the lease (D79)", async () => {
  const store = await instance();
  const agent = askingAgain();
  const b = createA2AServiceTaskHandler(agent.executor, { store: await instance() });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(b, "start", tenant);
    const record = (await store.get(waiting.id))!;
    expect(await store.claim(record)).toBe(true);
    record.task.history.push(message("go", waiting.id) as never);
    await store.update(record, { kind: "history", claimed: true });
    expect(await leaseOf(waiting.id)).toMatchObject({ lease_claim: false });
    await store.unclaim(record);
    expect((await leaseOf(waiting.id)).lease_until).not.toBeNull();
  } finally {
    await b.close();
  }
});

test("a database outage over a claimed message's write, the reads after it and every try of its give-back: the claim is no longer renewed, lapses, and the reaper lets it go, so a message through B runs (D79)", async () => {
  const leaseMs = 300;
  const errors: unknown[] = [];
  const storeA = await instance({ leaseMs, onError: (err) => void errors.push(err) });
  const storeB = await instance({ leaseMs });
  const driver = driverOf(storeA);
  const query = driver.query.bind(driver);
  let down = false;
  driver.query = (text, params) => {
    if (text === queries.updateTask && params?.[21] === true) down = true;
    const refused = [queries.updateTask, queries.holdsLease, queries.openAndVersion, queries.unclaimTask].includes(text);
    return down && refused ? Promise.reject(new Error("the database is down (for the test)")) : query(text, params);
  };
  const agent = askingAgain();
  const a = createA2AServiceTaskHandler(agent.executor, { store: storeA, onError: (err) => void errors.push(err) });
  const b = createA2AServiceTaskHandler(agent.executor, { store: storeB });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(b, "start", tenant);
    const answer = await within("A's answer", sendTask(a, "late", tenant, waiting.id), 10_000).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(answer).toMatchObject({ name: "AbortedError" });
    down = false;
    // A is alive and renews its leases; the claim is not among them any more, so it lapses.
    await until("A's claim to lapse", async () => Number((await leaseOf(waiting.id)).lease_until) < Date.now(), 5000);
    await storeB.reapLapsed();
    const next = await within("B's answer", sendTask(b, "go", tenant, waiting.id));
    expect([TaskState[next.status!.state], next.history.map(said), agent.started]).toEqual(["INPUT_REQUIRED", ["start", "re: start", "go", "re: go"], ["start", "go"]]);
  } finally {
    down = false;
    await a.close();
    await b.close();
  }
});

test("a task canceled through B while A's claimed message write is out, which then fails outright: A's caller is refused, the CANCELED task without its message (D79)", async () => {
  const storeA = await instance({ onError: () => undefined });
  const storeB = await instance();
  const { atWrite, resume } = stallFirstMessage(storeA);
  const write = refuseQueries(storeA, claimedWrite, "timeout exceeded when trying to connect (for the test)", 1);
  const agent = askingAgain();
  const a = createA2AServiceTaskHandler(agent.executor, { store: storeA, onError: () => undefined });
  const b = createA2AServiceTaskHandler(agent.executor, { store: storeB });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(b, "start", tenant);
    const answer = sendTask(a, "late", tenant, waiting.id);
    await within("A at its write", atWrite.promise);
    await b.cancelTask({ id: waiting.id }, callContext(tenant));
    resume.resolve();
    expect(await within("A's answer", endedFirst(answer))).toBe("CANCELED");
    const shown = await b.getTask({ id: waiting.id }, callContext(tenant));
    expect([write.refused, TaskState[shown.status!.state], shown.history.map(said), agent.started]).toEqual([1, "CANCELED", ["start", "re: start"], ["start"]]);
  } finally {
    resume.resolve();
    await a.close();
    await b.close();
  }
});

test("a cancel through A while A asks, after its claimed write failed outright, whether it still holds the task: its caller is refused as for a CANCELED task, not ABORTED (D79)", async () => {
  const storeA = await instance({ onError: () => undefined });
  const storeB = await instance();
  refuseQueries(storeA, claimedWrite, "timeout exceeded when trying to connect (for the test)", 1);
  // Every try of the read refused: the instance cannot tell, and counts the claim lost.
  const holds = refuseQueries(storeA, (text) => text === queries.holdsLease, "connection reset (for the test)", 4);
  const agent = askingAgain();
  const a = createA2AServiceTaskHandler(agent.executor, { store: storeA, onError: () => undefined });
  const b = createA2AServiceTaskHandler(agent.executor, { store: storeB });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(b, "start", tenant);
    const answer = sendTask(a, "late", tenant, waiting.id);
    await until("A asking whether it holds the task", () => holds.refused > 0);
    await within("the cancel through A", a.cancelTask({ id: waiting.id }, callContext(tenant)), 10_000);
    expect(await within("A's answer", endedFirst(answer), 10_000)).toBe("CANCELED");
    const shown = await b.getTask({ id: waiting.id }, callContext(tenant));
    expect([TaskState[shown.status!.state], shown.history.map(said), agent.started]).toEqual(["CANCELED", ["start", "re: start"], ["start"]]);
  } finally {
    await a.close();
    await b.close();
  }
});

test("a caller whose claim was lost is answered before the claim's give-back is tried again (D79)", async () => {
  const leaseMs = 300;
  const storeA = await instance({ leaseMs, onError: () => undefined });
  const storeB = await instance({ leaseMs });
  const { atWrite, resume } = stallFirstMessage(storeA);
  const giveBacks = refuseQueries(storeA, (text) => text === queries.unclaimTask, "the database refused the give-back (for the test)");
  const agent = askingAgain();
  const a = createA2AServiceTaskHandler(agent.executor, { store: storeA, onError: () => undefined });
  const b = createA2AServiceTaskHandler(agent.executor, { store: storeB });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(b, "start", tenant);
    const answer = sendTask(a, "late", tenant, waiting.id).then(
      () => undefined,
      (err: unknown) => ({ err, giveBacks: giveBacks.refused }),
    );
    await within("A at its write", atWrite.promise);
    await storeB.reapLapsed(Date.now() + 3 * leaseMs);
    resume.resolve();
    // Its tries take 2.1 s; the caller has its answer before the second.
    expect(await within("A's answer", answer)).toMatchObject({ err: { name: "AbortedError" }, giveBacks: expect.any(Number) });
    expect((await answer)!.giveBacks).toBeLessThan(2);
    await until("the give-back's tries to be spent", () => giveBacks.refused === 4, 5000);
  } finally {
    resume.resolve();
    await a.close();
    await b.close();
  }
});

test("B's listening connection killed mid-task: B listens again and its stream still gets every event, in order", async () => {
  const gate = deferred();
  const chunks: A2AServiceExecutor = async function* () {
    yield { state: TaskState.WORKING };
    await gate.promise;
    for (const [i, part] of ["a", "b", "c"].entries()) yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: part } }] }, append: i > 0 };
  };
  const lostOnB = deferred<string>();
  const a = createA2AServiceTaskHandler(chunks, { store: await instance({ onError: () => undefined }) });
  const name = unique("b").replaceAll("-", "_");
  const b = createA2AServiceTaskHandler(chunks, { store: await instance({ name, onError: (err) => lostOnB.resolve(String((err as Error).message)) }) });
  const tenant = unique("tenant");
  const call = callContext(tenant);
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    const answer = await a.sendMessage(create(SendMessageRequestSchema, { message: message("go"), configuration: { returnImmediately: true } }), call);
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const id = answer.payload.value.id;
    const onB = await reader(b.subscribeToTask({ id }, call));
    // B listens (it follows the task); its listening connection is cut, as a restarted proxy would.
    const listener = `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN %'`;
    const pid = await until("B to listen", async () => (await admin.query<{ pid: number }>(listener, [name])).rows[0]?.pid);
    const { rows: cut } = await admin.query<{ cut: boolean }>("SELECT pg_terminate_backend($1) AS cut", [pid]);
    expect(cut).toEqual([{ cut: true }]);
    expect(await within("B to notice", lostOnB.promise)).toMatch(/terminat/i);
    // The task goes on while B may not be listening yet: B reads what it missed once it is again.
    gate.resolve();
    expect(await within("B's stream to end", onB.rest)).toEqual(["task:WORKING", "artifact:a", "artifact:b+", "artifact:c+", "status:COMPLETED"]);
  } finally {
    gate.resolve();
    await admin.end();
    await a.close();
    await b.close();
  }
});

test("a waiting task B removes while A's listening connection is cut: A reads its followed tasks again once it listens, finds it gone, and ends its stream with TaskNotFound", async () => {
  const lostOnA = deferred<string>();
  const name = unique("a").replaceAll("-", "_");
  const storeA = await instance({ name, onError: (err) => lostOnA.resolve(String((err as Error).message)) });
  const storeB = await instance();
  const a = createA2AServiceTaskHandler(twoTurns, { store: storeA });
  const b = createA2AServiceTaskHandler(twoTurns, { store: storeB });
  const tenant = unique("tenant");
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    const waiting = await sendTask(b, "start", tenant);
    const onA = a.subscribeToTask({ id: waiting.id }, callContext(tenant))[Symbol.asyncIterator]();
    expect((await onA.next()).value?.payload.case).toBe("task");
    const listener = `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN %'`;
    const pid = await until("A to listen", async () => (await admin.query<{ pid: number }>(listener, [name])).rows[0]?.pid);
    await admin.query("SELECT pg_terminate_backend($1)", [pid]);
    // Removed while A may not be listening: its notice is lost to A, the read after listening again is not.
    expect(await storeB.deleteInterrupted(Date.now() + 1)).toBeGreaterThanOrEqual(1);
    expect(await within("A to notice", lostOnA.promise)).toMatch(/terminat/i);
    await expect(within("A's stream to end", onA.next(), 10_000)).rejects.toMatchObject({ name: "TaskNotFoundError" });
  } finally {
    await admin.end();
    await a.close();
    await b.close();
  }
});

test("a task whose instance died is FAILED once its lease lapses, by another instance, and that instance's streams end with it", async () => {
  const gate = deferred();
  const stuck: A2AServiceExecutor = async function* ({ message: m }) {
    if (said(m) === "start") {
      yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
      return;
    }
    yield { state: TaskState.WORKING };
    await gate.promise;
  };
  const storeA = await instance({ leaseMs: 300 });
  const a = createA2AServiceTaskHandler(stuck, { store: storeA, onError: () => undefined });
  const b = createA2AServiceTaskHandler(stuck, { store: await instance({ leaseMs: 300 }) });
  const tenant = unique("tenant");
  const call = callContext(tenant);
  try {
    const waiting = await sendTask(a, "start", tenant);
    expect(waiting.status?.state).toBe(TaskState.INPUT_REQUIRED);
    const answer = await a.sendMessage(create(SendMessageRequestSchema, { message: message("work"), configuration: { returnImmediately: true } }), call);
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const id = answer.payload.value.id;
    const onB = await reader(b.subscribeToTask({ id }, call));
    // A dies: it renews nothing and writes nothing more.
    await within("A to stop", storeA.close());
    expect(await within("B's stream to end", onB.rest)).toEqual(["task:WORKING", "status:FAILED"]);
    const failed = await b.getTask({ id }, call);
    expect([TaskState[failed.status!.state], said(failed.status!.message!), said(failed.history.at(-1)!)]).toEqual([
      "FAILED",
      "the agent instance running this task stopped before the task ended",
      "the agent instance running this task stopped before the task ended",
    ]);
    // A task waiting for its client runs nowhere: it has no lease, and stays.
    expect((await b.getTask({ id: waiting.id }, call)).status?.state).toBe(TaskState.INPUT_REQUIRED);
  } finally {
    gate.resolve();
    await a.close();
    await b.close();
  }
});

test("a live instance keeps its running tasks' leases: nothing of its is reaped", async () => {
  const gate = deferred();
  const slow: A2AServiceExecutor = async function* () {
    yield { state: TaskState.WORKING };
    await gate.promise;
  };
  const storeA = await instance({ leaseMs: 200 });
  const a = createA2AServiceTaskHandler(slow, { store: storeA });
  const tenant = unique("tenant");
  const call = callContext(tenant);
  try {
    const answer = await a.sendMessage(create(SendMessageRequestSchema, { message: message("work"), configuration: { returnImmediately: true } }), call);
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const id = answer.payload.value.id;
    // Wait for two renewals by A: its lease moves forward, past where it started.
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      const leaseOf = async () => Number((await admin.query("SELECT lease_until FROM a2a_tasks WHERE id = $1", [id])).rows[0].lease_until);
      const first = await leaseOf();
      await until("A to renew the lease twice", async () => (await leaseOf()) >= first + 2 * 66);
    } finally {
      await admin.end();
    }
    // Reaping now finds nothing of A's.
    expect(await storeA.reapLapsed()).toBe(0);
    expect((await a.getTask({ id }, call)).status?.state).toBe(TaskState.WORKING);
  } finally {
    gate.resolve();
    await a.close();
  }
});

/**
 * An admin connection to a database that refuses, for the tasks listed in test_refused, any write
 * that finishes them (a real refusal from the server, as for a row a constraint rejects), and
 * nothing else: every time, or (a row with a `budget`) that many times in all. Drop the trigger
 * and end the connection when done.
 */
function refusingFinish(): Promise<pg.Client> {
  return refusingWrites("finish", "NEW.finished_ms IS DISTINCT FROM OLD.finished_ms", "refused for the test", { table: "test_refused", sequence: "test_refusals" });
}

/**
 * An admin connection to a database that refuses, with `message`, the updates of a2a_tasks for
 * which `when` holds, on the tasks listed in table `test_<name>_refused` (trigger
 * `test_refuse_<name>`): every time, or (a row with a `budget`) that many times in all, counted by
 * sequence `test_<name>_refusals`, which a refusal's rollback does not undo.
 */
async function refusingWrites(name: string, when: string, message: string, names: { table?: string; sequence?: string } = {}): Promise<pg.Client> {
  const table = names.table ?? `test_${name}_refused`;
  const sequence = names.sequence ?? `test_${name}_refusals`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`
    CREATE TABLE IF NOT EXISTS ${table} (id text PRIMARY KEY);
    ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS budget int;
    CREATE SEQUENCE IF NOT EXISTS ${sequence};
    CREATE OR REPLACE FUNCTION test_refuse_${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      allowed int;
    BEGIN
      IF ${when} AND EXISTS (SELECT 1 FROM ${table} WHERE id = NEW.id) THEN
        SELECT budget INTO allowed FROM ${table} WHERE id = NEW.id;
        IF allowed IS NULL OR nextval('${sequence}') <= allowed THEN
          RAISE EXCEPTION '${message}';
        END IF;
      END IF;
      RETURN NEW;
    END $$;
    DROP TRIGGER IF EXISTS test_refuse_${name} ON a2a_tasks;
    CREATE TRIGGER test_refuse_${name} BEFORE UPDATE ON a2a_tasks FOR EACH ROW EXECUTE FUNCTION test_refuse_${name}();`);
  return admin;
}

/**
 * An agent instance whose runs each go WORKING and then wait for their own gate (`gates`, in the
 * order the runs start; push one before each message), on a store of `leaseMs`; every error of
 * the store and the handler goes to `errors`.
 */
async function gatedInstance(leaseMs: number) {
  const gates: Deferred<void>[] = [];
  let runs = 0;
  const slow: A2AServiceExecutor = async function* () {
    const mine = gates[runs++]!;
    yield { state: TaskState.WORKING };
    await mine.promise;
  };
  const errors: unknown[] = [];
  /** What the handler reported: a run's refused terminal status, not a reaper's (the store's own). */
  const handlerErrors: unknown[] = [];
  const store = await instance({ leaseMs, onError: (e) => errors.push(e) });
  const handler = createA2AServiceTaskHandler(slow, {
    store,
    onError: (e) => {
      errors.push(e);
      handlerErrors.push(e);
    },
  });
  return { gates, errors, handlerErrors, store, handler };
}

test("a lapsed task whose FAILED the database refuses does not hold the reaper back: the others are failed, the refusal reported", async () => {
  // A long lease: nothing lapses by itself; the test moves the leases into the past.
  const { gates, errors, store, handler } = await gatedInstance(60_000);
  gates.push(deferred(), deferred());
  const call = callContext(unique("tenant"));
  const admin = await refusingFinish();
  try {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const answer = await handler.sendMessage(create(SendMessageRequestSchema, { message: message("work"), configuration: { returnImmediately: true } }), call);
      if (answer.payload.case !== "task") throw new Error("expected a task");
      ids.push(answer.payload.value.id);
    }
    const [refused, other] = ids as [string, string];
    await admin.query("INSERT INTO test_refused (id) VALUES ($1)", [refused]);
    // The refused task's lease lapsed first, so the reaper meets it first.
    await admin.query("UPDATE a2a_tasks SET lease_until = $2 WHERE id = $1", [refused, 1]);
    await admin.query("UPDATE a2a_tasks SET lease_until = $2 WHERE id = $1", [other, 2]);
    const reported = errors.length;
    // Other tests' lapsed tasks in this database may be reaped too.
    expect(await store.reapLapsed(Date.now())).toBeGreaterThanOrEqual(1);
    expect(errors.slice(reported).map(String)).toEqual([expect.stringContaining("refused for the test")]);
    const stateOf = async (id: string) => Number((await admin.query("SELECT state FROM a2a_tasks WHERE id = $1", [id])).rows[0].state);
    expect([await stateOf(refused), await stateOf(other)]).toEqual([TaskState.WORKING, TaskState.FAILED]);
  } finally {
    for (const g of gates) g.resolve();
    await admin.query("DROP TRIGGER IF EXISTS test_refuse_finish ON a2a_tasks");
    await admin.end();
    await handler.close();
  }
});

/** The refusal the runtime reports once the store gave up trying (D72), not a notice that it tries again. */
const finalRefusal = (e: unknown) => String(e).includes("refused for the test") && !String(e).includes("trying again");

test("a terminal status the database refuses once is written when tried again: the task ends as its run ended it, not FAILED by the reaper, and the refusal is reported (D72)", async () => {
  // A lease far longer than the test: no other instance's reaper takes the task even when the machine is slow.
  const { gates, errors, store, handler } = await gatedInstance(10_000);
  const gate = deferred();
  gates.push(gate);
  const admin = await refusingFinish();
  try {
    const answer = await handler.sendMessage(create(SendMessageRequestSchema, { message: message("work"), configuration: { returnImmediately: true } }), callContext(unique("tenant")));
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const id = answer.payload.value.id;
    await admin.query("ALTER SEQUENCE test_refusals RESTART");
    await admin.query("INSERT INTO test_refused (id, budget) VALUES ($1, 1)", [id]);
    gate.resolve();
    const stateOf = async () => Number((await admin.query("SELECT state FROM a2a_tasks WHERE id = $1", [id])).rows[0].state);
    await until("the task to be COMPLETED in the database", async () => (await stateOf()) === TaskState.COMPLETED, 5000);
    expect(errors.map(String)).toEqual([expect.stringMatching(new RegExp(`^Error: task ${id}: the database refused its terminal status \\(refused for the test\\); trying again in 100 ms$`))]);
    expect((await store.get(id))?.task.status?.state).toBe(TaskState.COMPLETED);
  } finally {
    gate.resolve();
    await admin.query("DROP TRIGGER IF EXISTS test_refuse_finish ON a2a_tasks");
    await admin.end();
    await handler.close();
  }
});

test("a message to a task whose CANCELED the database is still being asked to take meets the task canceled (refused): no second run, nothing written after the cancel (D72)", async () => {
  let runs = 0;
  const exec: A2AServiceExecutor = async function* (context) {
    runs++;
    yield { state: TaskState.WORKING };
    // Stops when the cancel aborts it: its run is over while the CANCELED is still being written.
    await new Promise<void>((resolve) => context.signal.addEventListener("abort", () => resolve()));
  };
  const errors: unknown[] = [];
  const store = await instance({ leaseMs: 10_000, onError: (e) => errors.push(e) });
  const handler = createA2AServiceTaskHandler(exec, { store, onError: (e) => errors.push(e) });
  const call = callContext(unique("tenant"));
  const admin = await refusingFinish();
  try {
    const answer = await handler.sendMessage(create(SendMessageRequestSchema, { message: message("work"), configuration: { returnImmediately: true } }), call);
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const id = answer.payload.value.id;
    await admin.query("ALTER SEQUENCE test_refusals RESTART");
    // Refused three times: taken at the last try, two seconds later, long after the message below.
    await admin.query("INSERT INTO test_refused (id, budget) VALUES ($1, 3)", [id]);
    const canceled = handler.cancelTask({ id }, call);
    await until("the CANCELED to be refused once", () => errors.some((e) => String(e).includes("trying again in 100 ms")));
    const more = handler.sendMessage(create(SendMessageRequestSchema, { message: message("more", id), configuration: { returnImmediately: true } }), call);
    expect(await endedFirst(more)).toBe("CANCELED");
    expect((await canceled).status?.state).toBe(TaskState.CANCELED);
    expect(runs).toBe(1);
    const events = (await admin.query("SELECT kind FROM a2a_task_events WHERE task_id = $1 ORDER BY seq", [id])).rows.map((r: { kind: string }) => r.kind);
    expect(events.at(-1)).toBe("status");
    expect(events.filter((k) => k === "history")).toEqual([]);
    expect(Number((await admin.query("SELECT state FROM a2a_tasks WHERE id = $1", [id])).rows[0].state)).toBe(TaskState.CANCELED);
    expect(errors.map(String)).toEqual(["100", "400", "1600"].map((ms) => expect.stringContaining(`trying again in ${ms} ms`)));
  } finally {
    await admin.query("DROP TRIGGER IF EXISTS test_refuse_finish ON a2a_tasks");
    await admin.end();
    await handler.close();
  }
});

test("a terminal status whose answer was lost (written, then the connection failed) is written once, and its push notification goes out now, not after a restart (D72)", async () => {
  const real = new pg.Pool({ connectionString: server.url, max: 4 });
  // Idle connections are ended by the server when the file's Postgres stops: nothing to report.
  real.on("error", () => undefined);
  let lose = false;
  // node-postgres' pool, but the answer to the next terminal write is lost after the database took it.
  const pool = {
    query: async (text: string, params?: unknown[]) => {
      const result = await real.query(text, params);
      if (lose && text === queries.updateTask && params?.[5] === true) {
        lose = false;
        throw new Error("Connection terminated unexpectedly");
      }
      return result;
    },
    connect: () => real.connect(),
    end: () => real.end(),
  };
  const errors: unknown[] = [];
  const store = await createPostgresTaskStore({ pool, leaseMs: 10_000, onError: (e) => errors.push(e) });
  open.push(store);
  const gate = deferred();
  const exec: A2AServiceExecutor = async function* () {
    yield { state: TaskState.WORKING };
    await gate.promise;
  };
  const receiver = await new Receiver().start();
  const handler = createA2AServiceTaskHandler(exec, { store, push: { allow: ["127.0.0.0/8"] }, onError: (e) => errors.push(e) });
  try {
    const hook = receiver.url("/lost");
    const answer = await handler.sendMessage(
      create(SendMessageRequestSchema, { message: message("work"), configuration: { returnImmediately: true, taskPushNotificationConfig: { url: hook, id: "hook" } } }),
      callContext(unique("tenant")),
    );
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const id = answer.payload.value.id;
    const states = () => receiver.on("/lost").map((r) => (JSON.parse(r.body) as { statusUpdate?: { status?: { state?: string } } }).statusUpdate?.status?.state);
    await receiver.when("WORKING to be delivered", () => states().includes("TASK_STATE_WORKING"));
    lose = true;
    gate.resolve();
    await receiver.when("COMPLETED to be delivered", () => states().includes("TASK_STATE_COMPLETED"));
    expect(states().filter((s) => s === "TASK_STATE_COMPLETED")).toHaveLength(1);
    expect((await store.events(id)).filter((e) => e.kind === "status").length).toBe(2);
    expect((await store.get(id))?.task.status?.state).toBe(TaskState.COMPLETED);
    expect(errors.map(String)).toEqual([expect.stringMatching(/Connection terminated unexpectedly\); trying again in 100 ms$/)]);
  } finally {
    gate.resolve();
    await handler.close();
    await store.close();
    await real.end();
    await receiver.stop();
  }
});

test("a terminal status the database refuses: the instance stops renewing the task's lease, and the reaper fails it once writes go through; a task written again is leased again", async () => {
  const { gates, errors, handlerErrors, store: storeA, handler: a } = await gatedInstance(300);
  const gate = deferred();
  gates.push(gate);
  const tenant = unique("tenant");
  const call = callContext(tenant);
  const admin = await refusingFinish();
  try {
    const answer = await a.sendMessage(create(SendMessageRequestSchema, { message: message("work"), configuration: { returnImmediately: true } }), call);
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const id = answer.payload.value.id;
    await admin.query("INSERT INTO test_refused (id) VALUES ($1)", [id]);
    // The executor returns: COMPLETED is refused, tried again and refused each time (the caller and streams are told it; D23).
    gate.resolve();
    // Tried three more times, then the run is told. A reaper's FAILED refused meanwhile (the lease
    // lapses when renewals lag on a loaded machine) is the store's to report, not the run's: were
    // the writes let through on it, the COMPLETED's last try would be taken instead.
    await until("the three tries again to be refused", () => errors.filter((e) => String(e).includes("trying again")).length === 3, 5000);
    await until("the run to be told of the last refusal", () => handlerErrors.some(finalRefusal), 5000);
    const stateOf = async () => Number((await admin.query("SELECT state FROM a2a_tasks WHERE id = $1", [id])).rows[0].state);
    expect(await stateOf()).toBe(TaskState.WORKING);
    // Writes go through again; the lease, no longer renewed, lapses, and the reaper fails the task.
    await admin.query("DELETE FROM test_refused WHERE id = $1", [id]);
    await until("the reaper to fail the task", async () => (await stateOf()) === TaskState.FAILED, 10_000);

    // Another task's COMPLETED refused, then a new message takes it up: written again, it is leased again.
    const next = deferred();
    gates.push(next);
    const other = await a.sendMessage(create(SendMessageRequestSchema, { message: message("work"), configuration: { returnImmediately: true } }), call);
    if (other.payload.case !== "task") throw new Error("expected a task");
    const otherId = other.payload.value.id;
    await admin.query("INSERT INTO test_refused (id) VALUES ($1)", [otherId]);
    const refusals = handlerErrors.filter(finalRefusal).length;
    next.resolve();
    await until("the run of the second task to be told of its last refusal", () => handlerErrors.filter(finalRefusal).length > refusals, 5000);
    const again = deferred();
    gates.push(again);
    await a.sendMessage(create(SendMessageRequestSchema, { message: message("more", otherId), configuration: { returnImmediately: true } }), call);
    const leaseOf = async () => Number((await admin.query("SELECT lease_until FROM a2a_tasks WHERE id = $1", [otherId])).rows[0].lease_until);
    const first = await leaseOf();
    await until("the instance to renew the lease twice", async () => (await leaseOf()) >= first + 2 * 100);
    expect(await storeA.reapLapsed()).toBe(0);
    await admin.query("DELETE FROM test_refused WHERE id = $1", [otherId]);
    again.resolve();
    await until("the task to complete", async () => Number((await admin.query("SELECT state FROM a2a_tasks WHERE id = $1", [otherId])).rows[0].state) === TaskState.COMPLETED);
    // Nothing failed but the refusals: the renewals and the reaper's ticks (its bookkeeping of abandoned tasks included) went through.
    expect(errors.filter((e) => !String(e).includes("refused for the test"))).toEqual([]);
  } finally {
    for (const g of gates) g.resolve();
    await admin.query("DROP TRIGGER IF EXISTS test_refuse_finish ON a2a_tasks");
    await admin.end();
    await a.close();
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
    // Its timer would delete the other tests' finished tasks too: it shares their database.
    await expiring.close();
  }
});

// A client that never came back kept its waiting task in the database for good (stop 44's list; D76 does it in memory).
test("waiting tasks are deleted by deleteInterrupted, or once interruptedTtlMs has passed since their last status", async () => {
  const store = await instance();
  const handler = createA2AServiceTaskHandler(twoTurns, { store });
  const tenant = unique("tenant");
  try {
    const waiting = await sendTask(handler, "start", tenant);
    expect(waiting.status?.state).toBe(TaskState.INPUT_REQUIRED);
    const finished = await sendTask(handler, "go", tenant);
    await store.deleteInterrupted(Date.now() - 3_600_000);
    expect(await store.get(waiting.id)).toBeDefined();
    expect(await store.deleteInterrupted(Date.now() + 1)).toBeGreaterThanOrEqual(1);
    expect(await store.get(waiting.id)).toBeUndefined();
    expect(await store.events(waiting.id)).toEqual([]);
    // A finished task is terminalTtlMs's.
    expect((await store.get(finished.id))?.task.status?.state).toBe(TaskState.COMPLETED);
  } finally {
    await handler.close();
  }

  const expiring = await instance({ interruptedTtlMs: 200 });
  const h2 = createA2AServiceTaskHandler(twoTurns, { store: expiring });
  try {
    const waiting = await sendTask(h2, "start", tenant);
    // A stream following it ends with TaskNotFound once it is gone, as in memory (D76).
    const stream = h2.subscribeToTask({ id: waiting.id }, callContext(tenant))[Symbol.asyncIterator]();
    expect((await stream.next()).value?.payload.case).toBe("task");
    await expect(within("the stream to end", stream.next(), 10_000)).rejects.toMatchObject({ name: "TaskNotFoundError" });
    expect(await expiring.get(waiting.id)).toBeUndefined();
  } finally {
    await h2.close();
    // Its timer would delete the other tests' waiting tasks too: it shares their database.
    await expiring.close();
  }
});

describe("a waiting task one instance removes, through the SDK clients", () => {
  test.each(BINDINGS)("%s: the streams following it end with TaskNotFound on every instance, not only on the one that removed it (D70, D71)", async (binding) => {
    const storeA = await instance();
    const storeB = await instance();
    const agentA = await startAgent(twoTurns, { store: storeA });
    const agentB = await startAgent(twoTurns, { store: storeB });
    try {
      const clientA = await agentA.client(binding);
      const waiting = asTask(await clientA.sendMessage(sdkSend("start")));
      expect(waiting.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
      const onA = follow(binding, clientA.resubscribeTask({ tenant: "", id: waiting.id }));
      const onB = follow(binding, (await agentB.client(binding)).resubscribeTask({ tenant: "", id: waiting.id }));
      await within("both snapshots", Promise.all([onA.atLeast(1), onB.atLeast(1)]));
      // B removes it (as its interruptedTtlMs timer would): A hears of it through the database only.
      expect(await storeB.deleteInterrupted(Date.now() + 1)).toBeGreaterThanOrEqual(1);
      expect(await within("both streams to end", Promise.all([onA.done, onB.done]), 10_000)).toEqual(["TaskNotFound", "TaskNotFound"]);
      expect(onA.events.map(sdkLabel)).toEqual(["task:INPUT_REQUIRED"]);
    } finally {
      await agentA.close();
      await agentB.close();
    }
  });
});

test("migrations run once per database, and a database at a newer schema version is refused", async () => {
  const first = await instance();
  expect(first.schemaVersion).toBe(7);
  await instance();
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT version, name FROM a2a_schema_migrations ORDER BY version");
    expect(rows).toEqual([
      { version: 1, name: expect.stringContaining("event log") },
      { version: 2, name: expect.stringContaining("notification") },
      { version: 3, name: expect.stringContaining("leases") },
      { version: 4, name: expect.stringContaining("protocol version") },
      { version: 5, name: expect.stringContaining("push outbox") },
      { version: 6, name: expect.stringContaining("by state") },
      { version: 7, name: expect.stringContaining("claims") },
    ]);
    await client.query("INSERT INTO a2a_schema_migrations (version, name) VALUES (99, 'from the future')");
    await expect(createPostgresTaskStore({ connectionString: server.url })).rejects.toThrow(/schema is at version 99, newer than this code's 7/);
  } finally {
    await client.query("DELETE FROM a2a_schema_migrations WHERE version = 99");
    await client.end();
  }
});

test("a driver that is not installed is named, with the command that installs it", async () => {
  const missing = "a2a-driver-that-is-not-installed";
  await expect(importPeer(missing, () => import(missing))).rejects.toThrow(`this task store needs the package "${missing}": npm install ${missing}`);
});

describe("two agents on one database, through the SDK clients", () => {
  /** Per message text: released to send the chunks, and told when the executor is aborted. */
  const runs = new Map<string, { go: ReturnType<typeof deferred<void>>; aborted: ReturnType<typeof deferred<void>> }>();
  const chunky: A2AServiceExecutor = async function* ({ message: m, signal }) {
    const run = runs.get(said(m))!;
    signal.addEventListener("abort", () => run.aborted.resolve());
    yield { state: TaskState.WORKING };
    await run.go.promise;
    yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: "a" } }] } };
    yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: "b" } }] }, append: true };
    await run.aborted.promise;
  };
  let agentA: TestAgent;
  let agentB: TestAgent;
  beforeAll(async () => {
    agentA = await startAgent(chunky, { store: await instance() });
    agentB = await startAgent(chunky, { store: await instance() });
  });
  afterAll(async () => {
    await agentA?.close();
    await agentB?.close();
  });

  test.each(BINDINGS)("%s: a streaming task started on A is followed, canceled and listed through B", async (binding) => {
    const text = `chunks over ${binding}`;
    const run = { go: deferred(), aborted: deferred() };
    runs.set(text, run);
    const contextId = unique("ctx");
    const clientA = await agentA.client(binding);
    const clientB = await agentB.client(binding);
    const origin = follow(binding, clientA.sendMessageStream(sdkSend(text, { contextId })));
    await within("A's stream to start", origin.atLeast(2));
    const id = asTask(origin.events[0]!.payload!.value).id;

    const onB = follow(binding, clientB.resubscribeTask({ tenant: "", id }));
    await within("B's snapshot", onB.atLeast(1));
    run.go.resolve();
    await within("B to get the chunks", onB.atLeast(3));
    expect((await clientB.cancelTask({ tenant: "", id, metadata: undefined })).status?.state).toBe(S.TASK_STATE_CANCELED);
    await within("A's executor to be aborted", run.aborted.promise);
    expect(await within("both streams to end", Promise.all([origin.done, onB.done]))).toEqual(["ended", "ended"]);
    expect(origin.events.map(sdkLabel)).toEqual(["task:SUBMITTED", "status:WORKING", "artifact:out:a", "artifact:out:b+", "status:CANCELED"]);
    expect(onB.events.map(sdkLabel)).toEqual(["task:WORKING", "artifact:out:a", "artifact:out:b+", "status:CANCELED"]);
    const listed = await clientB.listTasks(listParams({ contextId }));
    expect(listed.tasks.map((t) => [t.id, t.status?.state, t.artifacts.length])).toEqual([[id, S.TASK_STATE_CANCELED, 0]]);
  });
});

describe("a message whose claim was lost, through the SDK clients", () => {
  // The checklist's generic mapping (ABORTED: HTTP 409) and D20/D4's codes for a core code outside A2A's table.
  const aborted = { JSONRPC: "jsonrpc -31409", "HTTP+JSON": "http 409", GRPC: `grpc ${grpc.status.ABORTED}` } as const;

  test.each(BINDINGS)("%s: its caller is answered ABORTED, and the task has nothing of it (D79)", async (binding) => {
    const leaseMs = 300;
    const storeA = await instance({ leaseMs });
    const storeB = await instance({ leaseMs });
    const { atWrite, resume } = stallFirstMessage(storeA);
    const agent = askingAgain();
    const agentA = await startAgent(agent.executor, { store: storeA });
    const agentB = await startAgent(agent.executor, { store: storeB });
    try {
      const waiting = asTask(await (await agentB.client(binding)).sendMessage(sdkSend("start")));
      const answer = (await agentA.client(binding)).sendMessage(sdkSend("late", { taskId: waiting.id, contextId: waiting.contextId })).then(
        () => undefined,
        (err: unknown) => err,
      );
      await within("A at its write", atWrite.promise);
      await storeB.reapLapsed(Date.now() + 3 * leaseMs);
      resume.resolve();
      expect(errorKind(binding, await within("A's answer", answer))).toBe(aborted[binding]);
      expect([agent.started, (await storeB.get(waiting.id))!.task.history.map(said)]).toEqual([["start"], ["start", "re: start"]]);
    } finally {
      resume.resolve();
      await agentA.close();
      await agentB.close();
    }
  });
});
