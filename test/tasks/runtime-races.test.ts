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
import { MessageSchema, Role, TaskState } from "../../generated/a2a_pb.js";
import { A2AServiceRequiredFields } from "../../generated/a2a_methods.js";
import { taskStatesOf, type MessageLike, type TaskLike } from "../../runtime/a2a/tasks/model.js";
import { createPushDelivery } from "../../runtime/a2a/tasks/push-delivery.js";
import { randomId } from "../../runtime/a2a/tasks/random-id.js";
import type { Subscriber } from "../../runtime/a2a/tasks/subscriber.js";
import { Execution, TaskRuntime } from "../../runtime/a2a/tasks/task-runtime.js";
import type { TaskEvent, TaskExecutor } from "../../runtime/a2a/tasks/executor.js";
import { callContext, deferred, within } from "../support/task-clients.js";
import { schemas } from "./store-conformance.js";

const store = createInMemoryTaskStore();
store.attach?.(schemas);
const push = createPushDelivery();
const errors: unknown[] = [];
let gate = deferred();

/** "start J": INPUT_REQUIRED, then J more microtasks before the run ends; "wait": WORKING until the gate; else COMPLETED. */
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
  await within("the run to start", new Promise<void>((resolve) => {
    const poll = () => (store.get(taskId)!.task.status?.state === TaskState.WORKING ? resolve() : setTimeout(poll, 1));
    poll();
  }));
  expect(await runtime.subscribe(store.get(taskId)!, subscriber)).toBe(true);
  gate.resolve();
  expect(await within("the subscriber's end", statesOf(subscriber), 1000)).toEqual(["task:WORKING", "statusUpdate:COMPLETED"]);
  expect(errors).toEqual([]);
});

test("two push config changes at once whose reads of the configs are answered out of order: the later read holds", async () => {
  // A store whose configsOf answers when the test says, with the configs as they were when asked.
  const inner = createInMemoryTaskStore();
  inner.attach?.(schemas);
  const reads: { answer: () => void }[] = [];
  const slowConfigs = new Proxy(inner, {
    get(target, key) {
      if (key === "configsOf") {
        return (taskId: string) => {
          const then = target.configsOf(taskId);
          return new Promise((resolve) => reads.push({ answer: () => resolve(then) }));
        };
      }
      const value = Reflect.get(target, key) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const delivered: string[] = [];
  const recording = { deliver: (_taskId: string, targets: readonly { url: string }[]) => void delivered.push(...targets.map((t) => t.url)), check: async () => undefined, forget: () => undefined, idle: async () => undefined, close: async () => undefined };
  const own = new TaskRuntime({ ...settingsOf(), store: slowConfigs, push: recording });
  try {
    gate = deferred();
    const taskId = randomId();
    const run = execution("wait", taskId);
    await own.start(run, undefined);
    await within("the run to start", new Promise<void>((resolve) => {
      const poll = () => (inner.get(taskId)?.task.status?.state === TaskState.WORKING ? resolve() : setTimeout(poll, 1));
      poll();
    }));
    const config = { tenant: "", id: "c1", taskId, url: "https://receiver.example/hook", token: "" };
    inner.putConfig(config);
    const created = own.configsChanged(taskId);
    inner.deleteConfig(taskId, "c1");
    const deleted = own.configsChanged(taskId);
    expect(reads).toHaveLength(2);
    // The delete's read (made after both writes) answers first, the create's last.
    reads[1]!.answer();
    await deleted;
    reads[0]!.answer();
    await created;
    gate.resolve();
    await within("the run to end", run.released.promise);
    expect(delivered).toEqual([]);
  } finally {
    own.close();
    inner.close();
  }
});
