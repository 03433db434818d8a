/**
 * Orderings of the task runtime (runtime/a2a/tasks/task-runtime.ts) that
 * the bindings cannot produce on demand, set up on the runtime itself: a
 * call that takes a task up (SubscribeToTask, a follow-up message) just as
 * the task's run ends, at every offset in microtasks around that end, must
 * still follow the task, never the live entry the run lets go (after which
 * a stream gets none of the task's later events). And two push config
 * changes whose reads of the configs a store answers out of order.
 */
import { create } from "@bufbuild/protobuf";
import { createInMemoryTaskStore } from "protoc-gen-a2a/runtime/tasks";
import { MessageSchema, Role, TaskState, TaskStatusSchema } from "../../generated/a2a_pb.js";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { A2AServiceRequiredFields } from "../../generated/a2a_methods.js";
import { taskStatesOf, type MessageLike, type TaskLike } from "../../runtime/a2a/tasks/model.js";
import { createPushDelivery } from "../../runtime/a2a/tasks/push-delivery.js";
import { randomId } from "../../runtime/a2a/tasks/random-id.js";
import type { Subscriber } from "../../runtime/a2a/tasks/subscriber.js";
import { Execution, TaskRuntime } from "../../runtime/a2a/tasks/task-runtime.js";
import type { TaskEvent, TaskExecutor } from "../../runtime/a2a/tasks/executor.js";
import { callContext, deferred, until, within } from "../support/task-clients.js";
import { schemas } from "./store-conformance.js";

const store = createInMemoryTaskStore();
store.attach?.(schemas);
const push = createPushDelivery();
const errors: unknown[] = [];
let gate = deferred();

/** "start J": INPUT_REQUIRED, then J more microtasks before the run ends; "wait": WORKING until the gate; "ask and hang": INPUT_REQUIRED, never returning; else COMPLETED. */
const executor: TaskExecutor<MessageLike, TaskLike, TaskEvent> = async function* ({ message }) {
  const text = message.parts[0]?.content.case === "text" ? String(message.parts[0].content.value) : "";
  if (text.startsWith("start ")) {
    yield { state: TaskState.INPUT_REQUIRED };
    for (let i = Number(text.slice(6)); i > 0; i--) await null;
    return;
  }
  if (text === "wait") {
    yield { state: TaskState.WORKING };
    await gate.promise;
  }
  if (text === "ask and hang") {
    // Never returns, and costs nothing while it does not (a microtask loop would starve later tests' timers).
    yield { state: TaskState.INPUT_REQUIRED };
    await new Promise(() => undefined);
  }
  yield { state: TaskState.COMPLETED };
};

const settingsOf = () => ({
  schemas,
  states: taskStatesOf(schemas.taskState),
  required: A2AServiceRequiredFields,
  executor,
  store,
  push,
  onError: (error: unknown) => errors.push(error),
  highWater: 64,
  slowSubscriberMs: 10_000,
  newId: randomId,
});
const runtime = new TaskRuntime(settingsOf());

/** A store of the suite's a2a_pb of its own, for a runtime of its own. */
function freshStore() {
  const fresh = createInMemoryTaskStore();
  fresh.attach?.(schemas);
  return fresh;
}

/** `store` with its method `key` replaced by `replacement` (given the store's own), the rest as they are. */
function intercept<S extends object>(store: S, key: string, replacement: (own: S) => unknown): S {
  return new Proxy(store, {
    get(target, name) {
      if (name === key) return replacement(target);
      const value = Reflect.get(target, name) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

afterAll(async () => {
  runtime.close();
  await push.close();
  store.close();
});

const call = callContext("");
const execution = (text: string, taskId: string) =>
  new Execution(
    { tenant: "", owner: "" },
    taskId,
    "ctx",
    create(MessageSchema, { messageId: randomId(), role: Role.USER, taskId, contextId: "ctx", parts: [{ content: { case: "text", value: text } }] }) as unknown as MessageLike,
    call,
    undefined,
    undefined,
    [],
  );

/** A task left INPUT_REQUIRED by a run that ends `j` microtasks after that; resolves `k` microtasks after the caller's answer. */
async function interrupted(j: number, k: number): Promise<{ taskId: string; first: Execution }> {
  const taskId = randomId();
  const first = execution(`start ${j}`, taskId);
  await runtime.start(first, undefined);
  await first.settled.promise;
  for (let i = 0; i < k; i++) await null;
  return { taskId, first };
}

/** The states of what `subscriber` gets, up to its end. */
async function statesOf(subscriber: Subscriber<object>): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of subscriber) {
    const payload = (event as { payload: { case: string; value: { status?: { state: number } } } }).payload;
    seen.push(`${payload.case}:${TaskState[payload.value.status?.state ?? 0]}`);
  }
  return seen;
}

const offsets = Array.from({ length: 4 }, (_, j) => Array.from({ length: 8 }, (_, k) => [j, k] as const)).flat();

test.each(offsets)("a SubscribeToTask as the run ends (%i microtasks after INPUT_REQUIRED, taken up %i after the answer) gets the next run's events and its end", async (j, k) => {
  const { taskId, first } = await interrupted(j, k);
  const subscriber = runtime.newSubscriber(new AbortController().signal);
  expect(await runtime.subscribe(store.get(taskId)!, subscriber)).toBe(true);
  await first.released.promise;
  await runtime.start(execution("next", taskId), store.get(taskId)!);
  expect(await within("the subscriber's end", statesOf(subscriber), 1000)).toEqual(["task:INPUT_REQUIRED", "statusUpdate:COMPLETED"]);
  expect(errors).toEqual([]);
});

test.each(offsets)("a message as the run ends (%i microtasks after INPUT_REQUIRED, taken up %i after the answer) runs on the task a later subscriber follows", async (j, k) => {
  const { taskId } = await interrupted(j, k);
  gate = deferred();
  const waiting = execution("wait", taskId);
  await runtime.start(waiting, store.get(taskId)!);
  // Whoever follows the task now is told how the message's run ends.
  const subscriber = runtime.newSubscriber(new AbortController().signal);
  await until("the run to start", () => store.get(taskId)!.task.status?.state === TaskState.WORKING);
  expect(await runtime.subscribe(store.get(taskId)!, subscriber)).toBe(true);
  gate.resolve();
  expect(await within("the subscriber's end", statesOf(subscriber), 1000)).toEqual(["task:WORKING", "statusUpdate:COMPLETED"]);
  expect(errors).toEqual([]);
});

test("two push config changes at once whose reads of the configs are answered out of order: the later read holds", async () => {
  const { inner, state, own, delivered } = heldConfigsRuntime();
  try {
    const { taskId, run } = await waitingRun(own, inner);
    state.held = true;
    inner.putConfig(config(taskId, "c1"));
    const created = own.configsChanged(taskId);
    inner.deleteConfig(taskId, "c1");
    const deleted = own.configsChanged(taskId);
    expect(state.pending).toHaveLength(2);
    // The delete's read (made after both writes) answers first, the create's last.
    state.pending[1]!();
    await deleted;
    state.pending[0]!();
    await created;
    gate.resolve();
    await within("the run to end", run.released.promise);
    expect(delivered).toEqual([]);
  } finally {
    own.close();
    inner.close();
  }
});

/** A "wait" run of a new task on `own`, once the task is WORKING (the run waits for `gate`, renewed here). */
async function waitingRun(own: TaskRuntime, inner: ReturnType<typeof freshStore>) {
  gate = deferred();
  const taskId = randomId();
  const run = execution("wait", taskId);
  await own.start(run, undefined);
  await until("the run to start", () => inner.get(taskId)?.task.status?.state === TaskState.WORKING);
  return { taskId, run };
}

/**
 * A store of its own whose `key` (`update`: a store of rows, slowly; `configsOf`) answers, while
 * `state.held` is set, only when the test calls what it left in `state.pending`.
 */
function holding(key: "update" | "configsOf") {
  const inner = freshStore();
  const state = { held: false, pending: [] as (() => void)[] };
  const store = intercept(inner, key, (target) => (...args: unknown[]) => {
    const answer = (target[key] as (...a: unknown[]) => unknown).apply(target, args);
    if (!state.held) return answer;
    return new Promise((resolve) => state.pending.push(() => resolve(answer)));
  });
  return { inner, store, state };
}
const slowWrites = () => holding("update");
const heldConfigReads = () => holding("configsOf");

const textOfMessage = (message: MessageLike) => (message.parts[0]?.content.case === "text" ? String(message.parts[0].content.value) : "");
const labelOf = (event: object) => {
  const payload = (event as { payload: { case: string; value: { status?: { state: number }; artifact?: { parts: { content: { value?: unknown } }[] } } } }).payload;
  if (payload.case === "artifactUpdate") return `artifact:${payload.value.artifact?.parts.map((p) => String(p.content.value)).join("")}`;
  return `${payload.case}:${TaskState[payload.value.status?.state ?? 0]}`;
};

test("a message that came while the run worked takes the task over once the run asks for input and waits on (D77)", async () => {
  const working = deferred();
  const decide = deferred();
  const asked: TaskExecutor<MessageLike, TaskLike, TaskEvent> = async function* (ctx) {
    if (textOfMessage(ctx.message) !== "first") {
      yield { state: TaskState.COMPLETED };
      return;
    }
    yield { state: TaskState.WORKING };
    working.resolve();
    await decide.promise;
    yield { state: TaskState.INPUT_REQUIRED };
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
  };
  const own = new TaskRuntime({ ...settingsOf(), executor: asked });
  try {
    const taskId = randomId();
    const first = execution("first", taskId);
    await own.start(first, undefined);
    await within("the run to work", working.promise);
    const next = execution("answer", taskId);
    await own.start(next, store.get(taskId)!);
    decide.resolve();
    await within("the queued message's run", next.released.promise);
    expect([first.aborted, TaskState[store.get(taskId)!.task.status?.state ?? 0]]).toEqual([true, "COMPLETED"]);
  } finally {
    own.close();
  }
});

test("a run's status write still in flight when a message takes the task over reaches neither the new run's stream nor ends it", async () => {
  const { inner, store: slow, state } = slowWrites();
  const askedAgain = deferred();
  const twice: TaskExecutor<MessageLike, TaskLike, TaskEvent> = async function* (ctx) {
    if (textOfMessage(ctx.message) === "first") {
      yield { state: TaskState.INPUT_REQUIRED };
      state.held = true;
      askedAgain.resolve();
      yield { state: TaskState.AUTH_REQUIRED };
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
      return;
    }
    yield { state: TaskState.WORKING };
    yield { state: TaskState.COMPLETED };
  };
  const own = new TaskRuntime({ ...settingsOf(), executor: twice, store: slow });
  try {
    const taskId = randomId();
    await own.start(execution("first", taskId), undefined);
    await within("the second ask to be written", askedAgain.promise);
    await until("its write to be under way", () => state.pending.length > 0);
    const stream = own.newSubscriber(new AbortController().signal);
    const next = new Execution({ tenant: "", owner: "" }, taskId, "ctx", execution("answer", taskId).message, call, undefined, stream, []);
    await own.start(next, inner.get(taskId)!);
    // Whatever the message does at once is done (a turn of the event loop); then the old run's write lands.
    await new Promise((resolve) => setImmediate(resolve));
    state.held = false;
    for (const write of state.pending.splice(0)) write();
    expect(await within("the new run's stream", statesOf(stream), 1000)).toEqual(["task:AUTH_REQUIRED", "statusUpdate:WORKING", "statusUpdate:COMPLETED"]);
  } finally {
    own.close();
    inner.close();
  }
});

/**
 * A runtime over slowWrites() whose task is WORKING, then yields `chunks` (appended): the first
 * chunk's write is under way, unanswered, when this resolves.
 */
async function chunkWriteInFlight(chunks: readonly string[]) {
  const { inner, store: slow, state } = slowWrites();
  const chunkGate = deferred();
  const chunked: TaskExecutor<MessageLike, TaskLike, TaskEvent> = async function* () {
    yield { state: TaskState.WORKING };
    await chunkGate.promise;
    for (const [i, text] of chunks.entries()) yield { artifact: { artifactId: "a", parts: [{ content: { case: "text", value: text } }] }, append: i > 0 };
  };
  const own = new TaskRuntime({ ...settingsOf(), executor: chunked, store: slow });
  const taskId = randomId();
  await own.start(execution("go", taskId), undefined);
  await until("the task to work", () => inner.get(taskId)?.task.status?.state === TaskState.WORKING);
  state.held = true;
  chunkGate.resolve();
  await until("the first chunk's write to be under way", () => state.pending.length > 0);
  return { inner, own, state, taskId };
}

test("SubscribeToTask while a change's write is in flight: the snapshot waits for it, and the stream gets the change once", async () => {
  const { inner, own, state, taskId } = await chunkWriteInFlight(["one", "two"]);
  try {
    const subscriber = own.newSubscriber(new AbortController().signal);
    const subscribed = own.subscribe(inner.get(taskId)!, subscriber);
    // Whatever the subscribe does at once is done (a turn of the event loop); then the write lands.
    await new Promise((resolve) => setImmediate(resolve));
    state.held = false;
    for (const write of state.pending.splice(0)) write();
    expect(await subscribed).toBe(true);
    const seen: string[] = [];
    for await (const event of subscriber) {
      seen.push(labelOf(event));
      const payload = (event as { payload: { case: string; value: { artifacts?: { parts: { content: { value?: unknown } }[] }[] } } }).payload;
      if (payload.case === "task") seen.push(`snapshot:${(payload.value.artifacts ?? []).map((a) => a.parts.map((p) => String(p.content.value)).join("")).join("|")}`);
    }
    expect(seen).toEqual(["task:WORKING", "snapshot:one", "artifact:two", "statusUpdate:COMPLETED"]);
  } finally {
    own.close();
    inner.close();
  }
});


const recordingPush = (delivered: string[]) => ({
  deliver: (_taskId: string, targets: readonly { configId?: string | undefined }[]) => void delivered.push(...targets.map((t) => t.configId ?? "")),
  check: async () => undefined,
  forget: () => undefined,
  idle: async () => undefined,
  close: async () => undefined,
});
const config = (taskId: string, id: string) => ({ tenant: "", id, taskId, url: `https://receiver.example/${id}`, token: "" });

/** A runtime of its own over heldConfigReads(), its push delivery recording which configs were sent to. */
function heldConfigsRuntime() {
  const { inner, store, state } = heldConfigReads();
  const delivered: string[] = [];
  const own = new TaskRuntime({ ...settingsOf(), store, push: recordingPush(delivered) });
  return { inner, state, own, delivered };
}

test("a delete and a create of push configs at once: the delete is in effect only once the later read is, whichever answers first", async () => {
  const { inner, state, own, delivered } = heldConfigsRuntime();
  try {
    const { taskId, run } = await waitingRun(own, inner);
    inner.putConfig(config(taskId, "X"));
    await own.configsChanged(taskId);
    state.held = true;
    inner.deleteConfig(taskId, "X");
    let deleteInEffect = false;
    const deleted = own.configsChanged(taskId).then(() => (deleteInEffect = true));
    inner.putConfig(config(taskId, "Y"));
    const created = own.configsChanged(taskId);
    state.pending[0]!();
    await new Promise((resolve) => setImmediate(resolve));
    // Its own read is in, but the create's, started after it, is not: X may still be sent to.
    expect(deleteInEffect).toBe(false);
    state.pending[1]!();
    await Promise.all([deleted, created]);
    gate.resolve();
    await within("the run to end", run.released.promise);
    expect([...new Set(delivered)]).toEqual(["Y"]);
  } finally {
    own.close();
    inner.close();
  }
});

test("the configs read when a task is taken up, answered after a configsChanged's read: the later read holds", async () => {
  const { inner, state, own, delivered } = heldConfigsRuntime();
  try {
    const { taskId, first } = await (async () => {
      const id = randomId();
      const run = execution("start 0", id);
      await own.start(run, undefined);
      await run.released.promise;
      return { taskId: id, first: run };
    })();
    expect(first.over).toBe(true);
    inner.putConfig(config(taskId, "X"));
    state.held = true;
    // SubscribeToTask takes the task up: its live entry reads the configs (answered last).
    const subscriber = own.newSubscriber(new AbortController().signal);
    const subscribed = own.subscribe(inner.get(taskId)!, subscriber);
    await until("the entry's read", () => state.pending.length === 1);
    inner.deleteConfig(taskId, "X");
    const deleted = own.configsChanged(taskId);
    state.pending[1]!();
    state.pending[0]!();
    await Promise.all([deleted, subscribed]);
    state.held = false;
    const next = execution("next", taskId);
    await own.start(next, inner.get(taskId)!);
    await within("the next run", next.released.promise);
    expect(delivered).toEqual([]);
  } finally {
    own.close();
    inner.close();
  }
});

test("executions are counted until they end, by every way they end; a message whose task cannot be read is not counted at all", async () => {
  const { inner, store: held, state } = heldConfigReads();
  let failReads = 0;
  const failing = intercept(held, "configsOf", (target) => (taskId: string) => (failReads-- > 0 ? Promise.reject(new Error("the database is down")) : target.configsOf(taskId)));
  const own = new TaskRuntime({ ...settingsOf(), store: failing });
  try {
    expect(state.held).toBe(false);
    // Ended by returning, and by an interruption the run then returns from.
    const done = execution("done", randomId());
    await own.start(done, undefined);
    await done.released.promise;
    const asked = execution("start 2", randomId());
    await own.start(asked, undefined);
    await asked.released.promise;
    expect(own.executions).toBe(0);
    // Continued: its read of the task's configs fails, and the call with it.
    failReads = 1;
    await expect(own.start(execution("next", asked.taskId), inner.get(asked.taskId)!)).rejects.toThrow(/database is down/);
    expect(own.executions).toBe(0);
    // And the same message once the store answers.
    const next = execution("next", asked.taskId);
    await own.start(next, inner.get(asked.taskId)!);
    await next.released.promise;
    expect(own.executions).toBe(0);
    // Runs whose executors never return: one canceled, one taken over by a new message. They are
    // answered and let go; nothing holds them for the executor's sake.
    gate = deferred();
    const canceled = execution("wait", randomId());
    await own.start(canceled, undefined);
    await until("the run to work", () => inner.get(canceled.taskId)?.task.status?.state === TaskState.WORKING);
    expect(await own.cancel(inner.get(canceled.taskId)!)).toBe(true);
    expect(own.executions).toBe(0);
    const interrupted = execution("ask and hang", randomId());
    await own.start(interrupted, undefined);
    await interrupted.settled.promise;
    const takeover = execution("done", interrupted.taskId);
    await own.start(takeover, inner.get(interrupted.taskId)!);
    await takeover.released.promise;
    expect(own.executions).toBe(0);
    gate.resolve();
  } finally {
    own.close();
    inner.close();
  }
});

test("a SubscribeToTask waiting for a write when the runtime closes fails with it", async () => {
  const { inner, own, state, taskId } = await chunkWriteInFlight(["one"]);
  try {
    const subscriber = own.newSubscriber(new AbortController().signal);
    const subscribed = own.subscribe(inner.get(taskId)!, subscriber);
    // It found the task and waits for the write (a turn of the event loop).
    await new Promise((resolve) => setImmediate(resolve));
    own.close();
    for (const write of state.pending.splice(0)) write();
    await subscribed;
    // As a SubscribeToTask that comes after close() fails.
    await expect(within("the subscriber to end", statesOf(subscriber), 1000)).rejects.toThrow(/the task runtime is closed/);
  } finally {
    own.close();
    inner.close();
  }
});

test("closed while the store creates a task: the caller is told CANCELED, and so is the store", async () => {
  const inner = freshStore();
  const creates: (() => void)[] = [];
  const slowCreate = intercept(inner, "create", (target) => (...args: Parameters<typeof inner.create>) => new Promise<void>((resolve) => creates.push(() => resolve(target.create(...args) as void))));
  const own = new TaskRuntime({ ...settingsOf(), store: slowCreate });
  try {
    const run = execution("done", randomId());
    await own.start(run, undefined);
    await until("the create to be asked", () => creates.length > 0);
    own.close();
    const answer = await run.first.promise;
    expect("task" in answer && TaskState[answer.task.status?.state ?? 0]).toBe("CANCELED");
    creates[0]!();
    await until("the store to have it CANCELED", () => inner.get(run.taskId)?.task.status?.state === TaskState.CANCELED);
  } finally {
    own.close();
    inner.close();
  }
});

test("a run that asked for input, then returns after another instance moved the task on: it does not complete the task that instance runs", async () => {
  const inner = freshStore();
  const followers = new Map<string, (change: unknown) => void>();
  // A store that others write to too (D71): the test plays the other instance's change.
  const shared = intercept(inner, "follow", () => (taskId: string, _version: number, onChange: (change: unknown) => void) => {
    followers.set(taskId, onChange);
    return () => followers.delete(taskId);
  });
  const later = deferred();
  const asks: TaskExecutor<MessageLike, TaskLike, TaskEvent> = async function* () {
    yield { state: TaskState.INPUT_REQUIRED };
    await later.promise;
  };
  const own = new TaskRuntime({ ...settingsOf(), executor: asks, store: shared });
  try {
    const run = execution("go", randomId());
    await own.start(run, undefined);
    await run.settled.promise;
    const working = create(TaskStatusSchema, { state: TaskState.WORKING, timestamp: timestampFromMs(Date.now()) });
    followers.get(run.taskId)!({ kind: "status", status: working });
    later.resolve();
    await within("the run to end", run.released.promise);
    expect(TaskState[inner.get(run.taskId)!.task.status?.state ?? 0]).toBe("WORKING");
  } finally {
    own.close();
    inner.close();
  }
});

test("a continued run canceled before its first event, its executor deaf to the signal: its caller is answered CANCELED", async () => {
  const deaf: TaskExecutor<MessageLike, TaskLike, TaskEvent> = async function* (ctx) {
    if (textOfMessage(ctx.message) === "ask") {
      yield { state: TaskState.INPUT_REQUIRED };
      return;
    }
    await new Promise(() => undefined);
  };
  const own = new TaskRuntime({ ...settingsOf(), executor: deaf });
  try {
    const taskId = randomId();
    const first = execution("ask", taskId);
    await own.start(first, undefined);
    await first.released.promise;
    const next = execution("answer", taskId);
    await own.start(next, store.get(taskId)!);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await own.cancel(store.get(taskId)!)).toBe(true);
    const answer = await within("the continued call's answer", next.first.promise, 1000);
    expect("task" in answer && TaskState[answer.task.status?.state ?? 0]).toBe("CANCELED");
    expect(own.executions).toBe(0);
  } finally {
    own.close();
  }
});

test("closed while the store writes a new task's push configs: the store has it CANCELED, and nothing is pushed after the close", async () => {
  const { inner, state, own, delivered } = heldConfigsRuntime();
  try {
    const taskId = randomId();
    const run = new Execution({ tenant: "", owner: "" }, taskId, "ctx", execution("done", taskId).message, call, undefined, undefined, [config(taskId, "c1")]);
    state.held = true;
    await own.start(run, undefined);
    await until("the configs to be read", () => state.pending.length > 0);
    own.close();
    state.pending[0]!();
    const answer = await run.first.promise;
    expect("task" in answer && TaskState[answer.task.status?.state ?? 0]).toBe("CANCELED");
    await until("the store to have it CANCELED", () => inner.get(taskId)?.task.status?.state === TaskState.CANCELED);
    expect(delivered).toEqual([]);
  } finally {
    own.close();
    inner.close();
  }
});
