/**
 * Orderings of the task runtime (runtime/a2a/tasks/task-runtime.ts) that
 * the bindings cannot produce on demand, set up here one microtask at a
 * time on the runtime itself.
 */
import { create } from "@bufbuild/protobuf";
import { createInMemoryTaskStore } from "protoc-gen-a2a/runtime/tasks";
import { MessageSchema, Role, TaskState } from "../../generated/a2a_pb.js";
import { A2AServiceRequiredFields } from "../../generated/a2a_methods.js";
import { taskStatesOf, type MessageLike, type TaskLike } from "../../runtime/a2a/tasks/model.js";
import { createPushDelivery } from "../../runtime/a2a/tasks/push-delivery.js";
import { randomId } from "../../runtime/a2a/tasks/random-id.js";
import { Execution, TaskRuntime } from "../../runtime/a2a/tasks/task-runtime.js";
import type { TaskEvent, TaskExecutor } from "../../runtime/a2a/tasks/executor.js";
import { callContext } from "../support/task-clients.js";
import { schemas } from "./store-conformance.js";

test("a subscriber that arrives as a run ends follows the task's later runs, not the entry that run let go", async () => {
  const store = createInMemoryTaskStore();
  store.attach?.(schemas);
  const executor: TaskExecutor<MessageLike, TaskLike, TaskEvent> = async function* ({ message }) {
    const text = message.parts[0]?.content.case === "text" ? message.parts[0].content.value : "";
    yield { state: text === "start" ? TaskState.INPUT_REQUIRED : TaskState.COMPLETED };
  };
  const push = createPushDelivery();
  const errors: unknown[] = [];
  const runtime = new TaskRuntime({
    schemas,
    states: taskStatesOf(schemas.taskState),
    required: A2AServiceRequiredFields,
    executor,
    store,
    push,
    onError: (error) => errors.push(error),
    highWater: 64,
    slowSubscriberMs: 10_000,
    newId: randomId,
  });
  const owner = { tenant: "", owner: "" };
  const call = callContext("");
  const execution = (text: string, taskId: string) =>
    new Execution(
      owner,
      taskId,
      "ctx",
      create(MessageSchema, { messageId: randomId(), role: Role.USER, taskId, contextId: "ctx", parts: [{ content: { case: "text", value: text } }] }) as unknown as MessageLike,
      call,
      undefined,
      undefined,
      [],
    );
  try {
    const taskId = randomId();
    const first = execution("start", taskId);
    await runtime.start(first, undefined);
    // INPUT_REQUIRED: the caller's answer is ready; the run's own ending (which lets the task's live
    // entry go) is still a few microtasks away, and the subscription starts now, between the two.
    await first.settled.promise;
    const subscriber = runtime.newSubscriber(new AbortController().signal);
    expect(await runtime.subscribe(store.get(taskId)!, subscriber)).toBe(true);
    await first.released.promise;
    // The next message's run: the subscriber gets its events and its end.
    const next = execution("next", taskId);
    await runtime.start(next, store.get(taskId)!);
    const events: string[] = [];
    const read = (async () => {
      for await (const event of subscriber) {
        const payload = (event as { payload: { case: string; value: { status?: { state: number } } } }).payload;
        events.push(`${payload.case}:${payload.value.status?.state}`);
      }
    })();
    await Promise.race([read, new Promise((_, reject) => setTimeout(() => reject(new Error(`the subscriber got ${JSON.stringify(events)} and no end`)), 2000))]);
    expect(events).toEqual([`task:${TaskState.INPUT_REQUIRED}`, `statusUpdate:${TaskState.COMPLETED}`]);
    expect(errors).toEqual([]);
  } finally {
    runtime.close();
    await push.close();
    store.close();
  }
});

