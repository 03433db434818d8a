/**
 * The task handler's edges that a binding cannot bring on at will, on the
 * generated handler called directly: close() while executors have not
 * yielded yet or wait their turn (every caller answered, every stream
 * ended, every executor's signal aborted, even one that does not listen);
 * and a stream held at its high-water mark that a cancel ends while the
 * executor waits for it to catch up (it still gets its events and its end,
 * and the executor goes on at once, not after the grace time).
 */
import { create } from "@bufbuild/protobuf";
import type { A2ACallContext } from "protoc-gen-a2a/runtime";
import { createInMemoryTaskStore, type StoredTask, type TaskChange, type TaskStore } from "protoc-gen-a2a/runtime/tasks";
import { MessageSchema, Role, TaskState, type StreamResponse } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { Receiver, deferred, within } from "../support/task-clients.js";

function callContext(): A2ACallContext {
  return {
    binding: "JSONRPC",
    headers: new Headers(),
    signal: new AbortController().signal,
    principal: undefined,
    protocolVersion: "1.0",
    requestedExtensions: [],
    activatedExtensions: new Set(),
    tenant: undefined,
  };
}

const message = (text: string, taskId = "") => create(MessageSchema, { messageId: crypto.randomUUID(), role: Role.USER, taskId, parts: [{ content: { case: "text", value: text } }] });
const label = (e: StreamResponse) =>
  e.payload.case === "task" || e.payload.case === "statusUpdate"
    ? `${e.payload.case}:${TaskState[e.payload.value.status?.state ?? 0]}`
    : e.payload.case === "artifactUpdate"
      ? `artifact:${e.payload.value.artifact?.parts.map((p) => String(p.content.value)).join("")}`
      : String(e.payload.case);

async function collect(stream: AsyncIterable<StreamResponse>): Promise<string[]> {
  const seen: string[] = [];
  try {
    for await (const e of stream) seen.push(label(e));
  } catch (err) {
    seen.push(`error: ${(err as Error).message}`);
  }
  return seen;
}

test("close(): a stream whose executor has not yielded yet ends, a blocking call and a message waiting its turn are answered, every executor is told", async () => {
  const aborted: string[] = [];
  const asked = deferred();
  // Deaf executors: they note the abort and go on waiting forever.
  const executor: A2AServiceExecutor = async function* (ctx) {
    const text = ctx.message.parts[0]?.content.case === "text" ? ctx.message.parts[0].content.value : "";
    ctx.signal.addEventListener("abort", () => aborted.push(text), { once: true });
    if (text === "ask") {
      yield { state: TaskState.WORKING };
      asked.resolve();
    }
    await new Promise(() => undefined);
  };
  const handler = createA2AServiceTaskHandler(executor);
  const thinking = collect(handler.sendStreamingMessage({ message: message("think") }, callContext()));
  const blocking = handler.sendMessage({ message: message("block") }, callContext());
  const working = await handler.sendMessage({ message: message("ask"), configuration: { returnImmediately: true } }, callContext());
  if (working.payload.case !== "task") throw new Error("expected a task");
  await within("the task to work", asked.promise);
  // Waits its turn behind the run that works (and never returns).
  const queued = collect(handler.sendStreamingMessage({ message: message("queued", working.payload.value.id) }, callContext()));
  await new Promise((resolve) => setImmediate(resolve));

  await handler.close();
  expect(await within("the thinking stream to end", thinking)).toEqual([]);
  const answer = await within("the blocking call's answer", blocking);
  expect(answer.payload.case === "task" && TaskState[answer.payload.value.status?.state ?? 0]).toBe("CANCELED");
  expect(await within("the queued stream to end", queued)).toEqual([]);
  expect(aborted.sort()).toEqual(["ask", "block", "think"]);
});

test("a stream at its high-water mark that a cancel ends: it still reads its events and CANCELED, and the executor is not held for the grace time", async () => {
  const filled = deferred();
  const returned = deferred();
  const executor: A2AServiceExecutor = async function* () {
    try {
      for (let i = 0; i < 6; i++) yield { artifact: { artifactId: "a", parts: [{ content: { case: "text", value: `c${i}` } }] }, append: i > 0 };
      filled.resolve();
      await new Promise(() => undefined);
    } finally {
      returned.resolve();
    }
  };
  // Four events behind holds the executor; an hour's grace, so only the cancel can let it go.
  const handler = createA2AServiceTaskHandler(executor, { subscriberHighWater: 4, slowSubscriberMs: 3_600_000 });
  try {
    const stream = handler.sendStreamingMessage({ message: message("go") }, callContext())[Symbol.asyncIterator]();
    const first = await stream.next();
    const taskId = first.done === true || first.value.payload.case !== "task" ? "" : first.value.payload.value.id;
    // The executor is held at the mark: it never gets to the end of its loop while no one reads.
    await new Promise((resolve) => setImmediate(resolve));
    expect(filled.settled).toBe(false);
    const canceled = await handler.cancelTask({ id: taskId }, callContext());
    expect(TaskState[canceled.status?.state ?? 0]).toBe("CANCELED");
    // The executor is let go at once (its loop stops at the cancel: it never sees the rest of its chunks).
    await within("the executor to be let go", returned.promise, 2000);
    const rest: string[] = [];
    for (let r = await stream.next(); r.done !== true; r = await stream.next()) rest.push(label(r.value));
    expect(rest).toEqual(["artifact:c0", "artifact:c1", "artifact:c2", "artifact:c3", "statusUpdate:CANCELED"]);
  } finally {
    await handler.close();
  }
});

test("a push delivery of one's own without forget(): deleting a config still answers", async () => {
  const delivered: string[] = [];
  const push = {
    deliver: (_taskId: string, targets: readonly { url: string }[]) => void delivered.push(...targets.map((t) => t.url)),
    check: async () => undefined,
    idle: async () => undefined,
    close: async () => undefined,
  };
  const asking: A2AServiceExecutor = async function* () {
    yield { state: TaskState.INPUT_REQUIRED };
  };
  const handler = createA2AServiceTaskHandler(asking, { push });
  try {
    const answer = await handler.sendMessage({ message: message("ask") }, callContext());
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const taskId = answer.payload.value.id;
    const config = await handler.createTaskPushNotificationConfig({ taskId, id: "", url: "https://receiver.example/hook", token: "", tenant: "" }, callContext());
    expect(await handler.deleteTaskPushNotificationConfig({ taskId, id: config.id }, callContext())).toEqual({});
    expect(delivered).toEqual([]);
  } finally {
    await handler.close();
  }
});

test("close() with a stream at its high-water mark that nobody reads: the executor is let go at once, not waited for grace time after grace time", async () => {
  const returned = deferred();
  const executor: A2AServiceExecutor = async function* () {
    try {
      for (let i = 0; ; i++) yield { artifact: { artifactId: "a", parts: [{ content: { case: "text", value: `c${i}` } }] }, append: i > 0 };
    } finally {
      returned.resolve();
    }
  };
  const handler = createA2AServiceTaskHandler(executor, { subscriberHighWater: 4, slowSubscriberMs: 3_600_000 });
  const stream = handler.sendStreamingMessage({ message: message("go") }, callContext())[Symbol.asyncIterator]();
  await stream.next();
  await new Promise((resolve) => setImmediate(resolve));
  expect(returned.settled).toBe(false);
  await handler.close();
  await within("the executor to be let go", returned.promise, 2000);
});

/**
 * The in-memory store, with a create that waits for `held` (`asked` resolves when it is called)
 * and `update` in place of its own: a store still making a task when close() comes.
 */
function creatingStore(update: (inner: TaskStore, record: StoredTask, change: TaskChange) => void | Promise<void>) {
  const inner = createInMemoryTaskStore();
  const held = deferred();
  const asked = deferred();
  const store: TaskStore = Object.assign(Object.create(inner) as TaskStore, {
    async create(record: StoredTask) {
      asked.resolve();
      await held.promise;
      return inner.create(record);
    },
    update: (record: StoredTask, change: TaskChange) => update(inner, record, change),
  });
  return { store, held, asked };
}

/** An executor that reports WORKING and never returns. */
const working: A2AServiceExecutor = async function* () {
  yield { state: TaskState.WORKING };
  await new Promise(() => undefined);
};

const stateOf = (record: StoredTask) => String(TaskState[record.task.status?.state ?? 0]);

test("close() while the store creates a task: it resolves only once that task's CANCELED is written, so an owner closing the store after it loses no write", async () => {
  const writeHeld = deferred();
  const writes: string[] = [];
  // Status writes are noted when they land, after the test lets them.
  const { store, held, asked } = creatingStore(async (inner, record, change) => {
    await writeHeld.promise;
    await inner.update(record, change);
    if (change.kind === "status") writes.push(stateOf(record));
  });
  const handler = createA2AServiceTaskHandler(working, { store });
  const answer = handler.sendMessage({ message: message("go") }, callContext());
  await within("the store to be asked to create the task", asked.promise);
  let closed = false;
  const closing = handler.close().then(() => (closed = true));
  const canceled = await within("the caller's answer", answer);
  expect(canceled.payload.case === "task" && TaskState[canceled.payload.value.status?.state ?? 0]).toBe("CANCELED");
  await new Promise((resolve) => setImmediate(resolve));
  // The create is still under way: close() has not resolved.
  expect(closed).toBe(false);
  held.resolve();
  await new Promise((resolve) => setImmediate(resolve));
  // Created, and its CANCELED asked for but not written yet: close() still waits.
  expect(closed).toBe(false);
  expect(writes).toEqual([]);
  writeHeld.resolve();
  await within("close() to resolve", closing);
  expect(writes).toEqual(["CANCELED"]);
});

test("close() while the store creates a task whose CANCELED the store refuses at once (a throw, not a rejection): the refusal is reported", async () => {
  const errors: string[] = [];
  const { store, held, asked } = creatingStore(() => {
    throw new Error("refused at once");
  });
  const handler = createA2AServiceTaskHandler(working, { store, onError: (err) => void errors.push(String(err)) });
  const answer = handler.sendMessage({ message: message("go") }, callContext());
  await within("the store to be asked to create the task", asked.promise);
  const closing = handler.close();
  await within("the caller's answer", answer);
  held.resolve();
  await within("close() to resolve", closing);
  expect(errors).toEqual(["Error: refused at once"]);
});

test("close() while the store creates the task of an executor that threw: the task is CANCELED, as its caller was told, and only the executor's error is reported", async () => {
  const errors: string[] = [];
  const writes: string[] = [];
  const { store, held, asked } = creatingStore((inner, record, change) => {
    if (change.kind === "status") writes.push(stateOf(record));
    return inner.update(record, change);
  });
  const executor: A2AServiceExecutor = async function* () {
    throw new Error("the executor failed");
  };
  const handler = createA2AServiceTaskHandler(executor, { store, onError: (err) => void errors.push(String(err)) });
  const answer = handler.sendMessage({ message: message("go") }, callContext());
  // The run failed before its first event: the FAILED task is being made.
  await within("the store to be asked to create the task", asked.promise);
  const closing = handler.close();
  const told = await within("the caller's answer", answer);
  held.resolve();
  await within("close() to resolve", closing);
  expect(told.payload.case === "task" && TaskState[told.payload.value.status?.state ?? 0]).toBe("CANCELED");
  expect(writes).toEqual(["CANCELED"]);
  expect(errors).toEqual(["Error: the executor failed"]);
});

test("close() lets push notifications already queued go out (up to pushDrainMs) before delivery stops", async () => {
  const receiver = await new Receiver().start();
  const release = deferred<number>();
  // The first notification is held: the ones after it wait in its lane when close() comes.
  receiver.answer = (_req, attempt) => (receiver.received.length === 1 && attempt === 1 ? release.promise : 200);
  const worked = deferred();
  const executor: A2AServiceExecutor = async function* () {
    yield { state: TaskState.WORKING };
    yield { artifact: { artifactId: "a", parts: [{ content: { case: "text", value: "done so far" } }] } };
    worked.resolve();
    await new Promise(() => undefined);
  };
  const handler = createA2AServiceTaskHandler(executor, { push: { allow: ["127.0.0.0/8"] } });
  try {
    const url = receiver.url("/closing");
    await handler.sendMessage({ message: message("work"), configuration: { returnImmediately: true, acceptedOutputModes: [], taskPushNotificationConfig: { url, id: "", taskId: "", tenant: "", token: "" } } } as never, callContext());
    await within("the executor's events", worked.promise);
    await receiver.when("the first notification, held", () => receiver.received.length === 1);
    const closing = handler.close();
    release.resolve(200);
    await within("close() to resolve", closing);
    const kinds = receiver.on("/closing").map((r) => Object.keys(JSON.parse(r.body) as object)[0]);
    expect(kinds).toEqual(["task", "statusUpdate", "artifactUpdate"]);
  } finally {
    release.resolve(200);
    await handler.close();
    await receiver.stop();
  }
});

test("close() waits no longer than pushDrainMs for a receiver that does not answer", async () => {
  const receiver = await new Receiver().start();
  const never = deferred<number>();
  receiver.answer = () => never.promise;
  const executor: A2AServiceExecutor = async function* () {
    yield { state: TaskState.WORKING };
    await new Promise(() => undefined);
  };
  const handler = createA2AServiceTaskHandler(executor, { push: { allow: ["127.0.0.0/8"] }, pushDrainMs: 200 });
  try {
    const url = receiver.url("/silent");
    await handler.sendMessage({ message: message("work"), configuration: { returnImmediately: true, acceptedOutputModes: [], taskPushNotificationConfig: { url, id: "", taskId: "", tenant: "", token: "" } } } as never, callContext());
    await receiver.when("the first notification, unanswered", () => receiver.received.length === 1);
    const started = performance.now();
    await within("close() to resolve", handler.close(), 5000);
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(150);
    expect(took).toBeLessThan(2000);
  } finally {
    never.resolve(200);
    await handler.close();
    await receiver.stop();
  }
});
