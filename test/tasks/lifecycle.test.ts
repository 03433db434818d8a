/**
 * The task lifecycle of the generated task handler (runtime/a2a/tasks),
 * end to end: real sockets, the agent served by serveA2AService, every
 * scenario on JSON-RPC, HTTP+JSON and gRPC through the official @a2a-js/sdk
 * clients. The executors are the tests' own and wait on promises the test
 * resolves, so every state a test looks at is one it put the task in.
 *
 * 1. SendMessage: blocking, returnImmediately, historyLength.
 * 2. SendStreamingMessage: order of events, closing at COMPLETED and
 *    INPUT_REQUIRED or AUTH_REQUIRED, historyLength, a direct Message reply,
 *    returnImmediately (no effect there), an unknown taskId.
 * 3. SubscribeToTask: from a second client and another binding's.
 * 4. Multi-turn: continuing an interrupted task (blocking and streamed,
 *    followed by a subscriber, while the run before is still finishing or
 *    waits on, by a run that sets no state), and the errors of it.
 * 5. CancelTask: signal, subscribers, twice, an executor that hangs (and a
 *    message queued behind it), a blocking send, an interrupted task.
 * 6. Failures: an executor that throws; events after a terminal one.
 */
import { jest } from "@jest/globals";
import { Role, TaskState as S, type Message as SdkMessage, type StreamResponse as SdkStreamResponse } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { create } from "@bufbuild/protobuf";
import { ArtifactSchema, MessageSchema, PartSchema, TaskState, Role as PbRole } from "../../generated/a2a_pb.js";
import { createInMemoryTaskStore, type TaskStore } from "protoc-gen-a2a/runtime/tasks";
import { ContentTypeNotSupportedError } from "protoc-gen-a2a/runtime";
import {
  BINDINGS,
  Scripts,
  asTask,
  chunk,
  collect,
  deferred,
  errorKind,
  failure,
  follow,
  label,
  listParams,
  otherBinding,
  send,
  startAgent,
  stateName,
  textOfParts,
  timeMs,
  until,
  within,
  type BindingName,
  type TestAgent,
} from "../support/task-clients.js";

// Real sockets on a busy two-core machine: more than jest's 5 s default, never a wait of its own.
jest.setTimeout(30_000);

const scripts = new Scripts();
let agent: TestAgent;

/**
 * The in-memory store, watched: the handler looks a task up in it when a
 * request about the task arrives, so a test can know a request got there
 * when nothing else shows it (a message that waits in line for its turn).
 */
const store = createInMemoryTaskStore();
const lookups = new Map<string, () => void>();
const watchedStore: TaskStore = new Proxy(store, {
  get(target, key) {
    if (key === "get") {
      return (id: string) => {
        lookups.get(id)?.();
        return target.get(id);
      };
    }
    const value = Reflect.get(target, key) as unknown;
    return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
  },
});
/** Resolves at the next lookup of task `id`. */
const nextLookup = (id: string) =>
  new Promise<void>((resolve) =>
    lookups.set(id, () => {
      lookups.delete(id);
      resolve();
    }),
  );

beforeAll(async () => {
  agent = await startAgent(scripts.executor, { store: watchedStore });
});

afterAll(async () => {
  await agent?.close();
  store.close();
});

const texts = (history: readonly SdkMessage[] | undefined) => (history ?? []).map((m) => textOfParts(m.parts));

/** An event without its transport's spelling: what two streams of one task must agree on. */
function comparable(e: SdkStreamResponse) {
  const p = e.payload;
  const ids = p?.$case === "task" ? { taskId: p.value.id, contextId: p.value.contextId } : p?.$case === "message" ? {} : { taskId: p?.value.taskId, contextId: p?.value.contextId };
  const status = p?.$case === "statusUpdate" ? p.value.status : p?.$case === "task" ? p.value.status : undefined;
  return {
    label: label(e),
    ...ids,
    at: status?.timestamp === undefined ? undefined : timeMs(status.timestamp),
    statusText: textOfParts(status?.message?.parts),
  };
}

/** The task id of a stream whose first event is a Task. */
function taskIdOf(events: readonly SdkStreamResponse[]): string {
  const first = events[0]?.payload;
  if (first?.$case !== "task") throw new Error(`the first event is not a task: ${JSON.stringify(events[0])}`);
  return first.value.id;
}

describe.each(BINDINGS)("%s", (binding: BindingName) => {
  let client: Client;
  let other: Client;

  beforeAll(async () => {
    client = await agent.client(binding);
    other = await agent.client(otherBinding(binding));
  });

  const get = (id: string, historyLength?: number) => client.getTask({ tenant: "", id, historyLength });
  const cancel = (id: string) => client.cancelTask({ tenant: "", id, metadata: undefined });

  describe("1. SendMessage", () => {
    test("blocking: answers once the task is COMPLETED, with its artifact and history", async () => {
      const started = deferred();
      const gate = deferred();
      const key = scripts.add("blocking", async function* () {
        yield { state: TaskState.WORKING, message: "working on it" };
        started.resolve();
        await gate.promise;
        yield chunk("the result", "out");
      });
      const request = send(key);
      let answered = false;
      const pending = client.sendMessage(request).finally(() => (answered = true));
      await within("the executor to start", started.promise);
      const taskId = scripts.contexts(key)[0]!.taskId;
      // The task exists and is WORKING while the blocking call still waits.
      expect((await get(taskId)).status?.state).toBe(S.TASK_STATE_WORKING);
      expect(answered).toBe(false);

      gate.resolve();
      const task = asTask(await within("the blocking answer", pending));
      expect(task.id).toBe(taskId);
      expect(task.contextId).not.toBe("");
      expect(task.status?.state).toBe(S.TASK_STATE_COMPLETED);
      expect(task.artifacts.map((a) => [a.artifactId, textOfParts(a.parts)])).toEqual([["out", "the result"]]);
      expect(texts(task.history)).toEqual([key, "working on it"]);
      expect(task.history.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT]);
      expect(task.history[0]!.messageId).toBe(request.message!.messageId);
      for (const m of task.history) expect([m.taskId, m.contextId]).toEqual([task.id, task.contextId]);
    });

    test("returnImmediately: a non-terminal task at once; GetTask later shows it COMPLETED", async () => {
      const gate = deferred();
      const key = scripts.add("immediate", async function* () {
        yield { state: TaskState.WORKING };
        await gate.promise;
        yield chunk("later", "out");
      });
      const task = asTask(await within("the immediate answer", client.sendMessage(send(key, { returnImmediately: true }))));
      expect(task.status?.state).toBe(S.TASK_STATE_WORKING);
      expect(task.artifacts).toEqual([]);
      expect(gate.settled).toBe(false);

      gate.resolve();
      const done = await until("the task to complete", async () => {
        const t = await get(task.id);
        return t.status?.state === S.TASK_STATE_COMPLETED && t;
      });
      expect(done.artifacts.map((a) => textOfParts(a.parts))).toEqual(["later"]);
      expect(texts(done.history)).toEqual([key]);
    });

    test("historyLength on SendMessage, GetTask and ListTasks: 0 is none, 1 the latest message, unset all of them", async () => {
      const contextId = `ctx-history-${binding}`;
      const key = scripts.add("history", async function* () {
        yield { state: TaskState.WORKING, message: "first reply" };
        yield { state: TaskState.WORKING, message: "second reply" };
      });
      const all = [key, "first reply", "second reply"];
      const none = asTask(await client.sendMessage(send(key, { contextId, historyLength: 0 })));
      const one = asTask(await client.sendMessage(send(key, { contextId, historyLength: 1 })));
      const unset = asTask(await client.sendMessage(send(key, { contextId })));
      expect([none, one, unset].map((t) => t.status?.state)).toEqual([S.TASK_STATE_COMPLETED, S.TASK_STATE_COMPLETED, S.TASK_STATE_COMPLETED]);
      expect(texts(none.history)).toEqual([]);
      expect(texts(one.history)).toEqual(["second reply"]);
      expect(texts(unset.history)).toEqual(all);

      expect(texts((await get(none.id, 0)).history)).toEqual([]);
      expect(texts((await get(none.id, 1)).history)).toEqual(["second reply"]);
      expect(texts((await get(none.id, 2)).history)).toEqual(["first reply", "second reply"]);
      expect(texts((await get(none.id)).history)).toEqual(all);

      for (const [historyLength, expected] of [
        [0, []],
        [1, ["second reply"]],
        [undefined, all],
      ] as const) {
        const page = await client.listTasks(listParams({ contextId, historyLength }));
        expect(page.tasks.map((t) => t.id).sort()).toEqual([none.id, one.id, unset.id].sort());
        for (const t of page.tasks) expect(texts(t.history)).toEqual(expected);
      }
    });
  });

  describe("2. SendStreamingMessage", () => {
    test("the Task first, then status and artifact events in the order they happened; the stream closes at COMPLETED", async () => {
      const key = scripts.add("stream", async function* () {
        yield { state: TaskState.WORKING };
        yield chunk("a", "doc");
        yield chunk("b", "doc", { append: true });
        yield { state: TaskState.WORKING, message: "almost there" };
        yield chunk("c", "doc", { append: true, last: true });
      });
      const events = await within("the stream to end", collect(client.sendMessageStream(send(key))));
      expect(events.map(label)).toEqual(["task:SUBMITTED", "status:WORKING", "artifact:doc:a", "artifact:doc:b+", "status:WORKING", "artifact:doc:c+!", "status:COMPLETED"]);
      const taskId = taskIdOf(events);
      const first = events[0]!.payload as { $case: "task"; value: { contextId: string; history: SdkMessage[] } };
      expect(texts(first.value.history)).toEqual([key]);
      for (const e of events) expect(comparable(e)).toMatchObject({ taskId, contextId: first.value.contextId });
      expect(comparable(events[4]!).statusText).toBe("almost there");
      // The chunks were appended to one artifact.
      const stored = await get(taskId);
      expect(stored.status?.state).toBe(S.TASK_STATE_COMPLETED);
      expect(stored.artifacts.map((a) => [a.artifactId, a.parts.map((p) => textOfParts([p]))])).toEqual([["doc", ["a", "b", "c"]]]);
    });

    test("returnImmediately changes nothing on a stream (spec 3.2.2): every event up to COMPLETED; a message to an unknown taskId is TaskNotFound before any event, and runs nothing", async () => {
      const key = scripts.add("stream-immediately", async function* () {
        yield { state: TaskState.WORKING };
        yield chunk("a", "doc");
      });
      const events = await within("the stream to end", collect(client.sendMessageStream(send(key, { returnImmediately: true }))));
      expect(events.map(label)).toEqual(["task:SUBMITTED", "status:WORKING", "artifact:doc:a", "status:COMPLETED"]);
      // Spec 3.4.2: a taskId MUST name a task; streamed, the error is the call's answer, not an event.
      const never = scripts.add("stream-never-run", async function* () {
        throw new Error("a message to an unknown task must not reach the executor");
      });
      expect(await failure(binding, () => collect(client.sendMessageStream(send(never, { taskId: `unknown-stream-${binding}` }))))).toBe("TaskNotFound");
      expect(scripts.contexts(never)).toEqual([]);
    });

    test("an append to an artifact never sent is sent as a new artifact (append false), as it is stored", async () => {
      const key = scripts.add("append-unknown", async function* () {
        yield { state: TaskState.WORKING };
        yield chunk("hello", "never-started", { append: true, last: true });
      });
      const events = await within("the stream to end", collect(client.sendMessageStream(send(key))));
      expect(events.map(label)).toEqual(["task:SUBMITTED", "status:WORKING", "artifact:never-started:hello!", "status:COMPLETED"]);
      const stored = await get(taskIdOf(events));
      expect(stored.artifacts.map((a) => [a.artifactId, textOfParts(a.parts)])).toEqual([["never-started", "hello"]]);
    });

    test("the stream closes at INPUT_REQUIRED, while the executor has not returned yet", async () => {
      const after = deferred();
      const finished = deferred();
      const key = scripts.add("ask", async function* () {
        try {
          yield { state: TaskState.WORKING };
          yield { state: TaskState.INPUT_REQUIRED, message: "which one?" };
          await after.promise;
        } finally {
          finished.resolve();
        }
      });
      const events = await within("the stream to end at INPUT_REQUIRED", collect(client.sendMessageStream(send(key))));
      expect(events.map(label)).toEqual(["task:SUBMITTED", "status:WORKING", "status:INPUT_REQUIRED"]);
      expect(comparable(events[2]!).statusText).toBe("which one?");
      expect(finished.settled).toBe(false);
      after.resolve();
      await within("the executor to return", finished.promise);
      // Returning from an interrupted state leaves it interrupted.
      expect((await get(taskIdOf(events))).status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
    });

    test("AUTH_REQUIRED interrupts as INPUT_REQUIRED does: the stream closes there, a blocking SendMessage answers there", async () => {
      const key = scripts.add("needs-auth", async function* () {
        yield { state: TaskState.WORKING };
        yield { state: TaskState.AUTH_REQUIRED, message: "sign in first" };
      });
      const events = await within("the stream to end at AUTH_REQUIRED", collect(client.sendMessageStream(send(key))));
      expect(events.map(label)).toEqual(["task:SUBMITTED", "status:WORKING", "status:AUTH_REQUIRED"]);
      const blocking = asTask(await within("the blocking answer", client.sendMessage(send(key))));
      expect(stateName(blocking.status?.state)).toBe("AUTH_REQUIRED");
      expect(texts(blocking.history)).toEqual([key, "sign in first"]);
    });

    test("historyLength cuts the stream's first Task (a new task's and a continued one's); later events are as ever", async () => {
      const ask = scripts.add("stream-history-ask", async function* () {
        yield { state: TaskState.INPUT_REQUIRED, message: "your name?" };
      });
      const fresh = await within("the new task's stream", collect(client.sendMessageStream(send(ask, { historyLength: 0 }))));
      expect(fresh.map(label)).toEqual(["task:SUBMITTED", "status:INPUT_REQUIRED"]);
      expect(texts((fresh[0]!.payload as { value: { history: SdkMessage[] } }).value.history)).toEqual([]);

      const answer = scripts.add("stream-history-answer", async function* () {
        yield chunk("thanks", "out");
      });
      const taskId = taskIdOf(fresh);
      const continued = await within("the continuation's stream", collect(client.sendMessageStream(send(answer, { taskId, historyLength: 1 }))));
      expect(continued.map(label)).toEqual(["task:INPUT_REQUIRED", "artifact:out:thanks", "status:COMPLETED"]);
      expect(texts((continued[0]!.payload as { value: { history: SdkMessage[] } }).value.history)).toEqual([answer]);
      expect(texts((await get(taskId)).history)).toEqual([ask, "your name?", answer]);
    });

    test("a direct Message reply: the stream is exactly one message event; SendMessage answers the Message", async () => {
      const key = scripts.add("reply", async function* () {
        yield { reply: { role: PbRole.AGENT, parts: [{ content: { case: "text", value: "pong" } }] } };
      });
      const events = await within("the reply stream", collect(client.sendMessageStream(send(key, { contextId: `ctx-reply-${binding}` }))));
      expect(events.map(label)).toEqual(["message:pong"]);
      const message = (events[0]!.payload as { $case: "message"; value: SdkMessage }).value;
      expect(message.role).toBe(Role.ROLE_AGENT);
      expect(message.messageId).not.toBe("");
      expect(message.taskId).toBe("");
      expect(message.contextId).toBe(`ctx-reply-${binding}`);

      const answer = (await client.sendMessage(send(key))) as SdkMessage;
      expect("messageId" in answer && textOfParts(answer.parts)).toBe("pong");
      expect("status" in answer).toBe(false);
    });
  });

  describe("3. SubscribeToTask", () => {
    test("a second client, and a client of another binding: the Task snapshot first, then the originating stream's live events in the same order; all close at COMPLETED", async () => {
      const gate = deferred();
      const key = scripts.add("followed", async function* () {
        yield { state: TaskState.WORKING, message: "started" };
        await gate.promise;
        yield chunk("one", "out");
        yield { state: TaskState.WORKING, message: "halfway" };
        yield chunk("two", "out", { append: true, last: true });
      });
      const origin = follow(binding, client.sendMessageStream(send(key)));
      await within("the first two events", origin.atLeast(2));
      const taskId = taskIdOf(origin.events);
      const second = await agent.newClient(binding);
      const subscribers = [follow(binding, second.resubscribeTask({ tenant: "", id: taskId })), follow(otherBinding(binding), other.resubscribeTask({ tenant: "", id: taskId }))];
      await within("both snapshots", Promise.all(subscribers.map((s) => s.atLeast(1))));
      for (const s of subscribers) {
        expect(label(s.events[0]!)).toBe("task:WORKING");
        const snapshot = s.events[0]!.payload as { $case: "task"; value: { id: string; history: SdkMessage[] } };
        expect(snapshot.value.id).toBe(taskId);
        expect(texts(snapshot.value.history)).toEqual([key, "started"]);
      }

      gate.resolve();
      expect(await within("the streams to end", Promise.all([origin.done, ...subscribers.map((s) => s.done)]))).toEqual(["ended", "ended", "ended"]);
      const live = origin.events.slice(2).map(comparable);
      expect(live.map((e) => e.label)).toEqual(["artifact:out:one", "status:WORKING", "artifact:out:two+!", "status:COMPLETED"]);
      for (const s of subscribers) expect(s.events.slice(1).map(comparable)).toEqual(live);
    });

    test("on a terminal task: UnsupportedOperation; on an unknown one: TaskNotFound", async () => {
      const key = scripts.add("quick", async function* () {
        yield { state: TaskState.WORKING };
      });
      const done = asTask(await client.sendMessage(send(key)));
      expect(done.status?.state).toBe(S.TASK_STATE_COMPLETED);
      expect(await failure(binding, () => collect(client.resubscribeTask({ tenant: "", id: done.id })))).toBe("UnsupportedOperation");
      expect(await failure(binding, () => collect(client.resubscribeTask({ tenant: "", id: `no-such-task-${binding}` })))).toBe("TaskNotFound");
    });
  });

  describe("4. multi-turn", () => {
    const askKey = () =>
      scripts.add("ask-name", async function* () {
        yield { state: TaskState.WORKING };
        yield { state: TaskState.INPUT_REQUIRED, message: "what is your name?" };
      });

    test("INPUT_REQUIRED, then a message with the taskId continues the task; the executor sees the task and its history", async () => {
      const ask = askKey();
      const first = asTask(await client.sendMessage(send(ask)));
      expect(first.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
      expect(texts(first.history)).toEqual([ask, "what is your name?"]);

      const answer = scripts.add("answer", async function* () {
        yield { state: TaskState.WORKING };
        yield chunk("hello", "greeting");
      });
      // Only the taskId: the contextId is the task's.
      const second = asTask(await client.sendMessage(send(answer, { taskId: first.id })));
      expect(second.id).toBe(first.id);
      expect(second.contextId).toBe(first.contextId);
      expect(second.status?.state).toBe(S.TASK_STATE_COMPLETED);
      expect(texts(second.history)).toEqual([ask, "what is your name?", answer]);
      expect(second.artifacts.map((a) => textOfParts(a.parts))).toEqual(["hello"]);

      const [ctx] = scripts.contexts(answer);
      expect(ctx).toBeDefined();
      expect([ctx!.taskId, ctx!.contextId, ctx!.message.taskId, ctx!.message.contextId]).toEqual([first.id, first.contextId, first.id, first.contextId]);
      expect(ctx!.task?.id).toBe(first.id);
      expect(ctx!.task?.status?.state).toBe(TaskState.INPUT_REQUIRED);
      const seen = (ctx!.task?.history ?? []).map((m) => m.parts.map((p) => (p.content.case === "text" ? p.content.value : "")).join(""));
      expect(seen.slice(0, 2)).toEqual([ask, "what is your name?"]);
    });

    test("a continuation sent while the run before it is still finishing: the task follows the new run", async () => {
      // The first run asks, then (as an agent tidying up would) does not
      // return at once. The answer comes in meanwhile. However the runtime
      // orders the two runs, the first one returning must not complete the
      // task the second is working on.
      const secondStarted = deferred();
      const firstReturned = deferred();
      const ask = scripts.add("ask-slowly", async function* () {
        try {
          yield { state: TaskState.WORKING };
          yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
          // Until the second run has started, or (runs one after the other) half a second.
          await Promise.race([secondStarted.promise, new Promise((r) => setTimeout(r, 500))]);
        } finally {
          firstReturned.resolve();
        }
      });
      const first = asTask(await client.sendMessage(send(ask)));
      expect(first.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);

      const gate = deferred();
      const more = scripts.add("more", async function* () {
        secondStarted.resolve();
        yield { state: TaskState.WORKING };
        await gate.promise;
        yield chunk("from the second run", "out");
      });
      const continued = asTask(await within("the continuation's answer", client.sendMessage(send(more, { taskId: first.id, returnImmediately: true }))));
      await within("the first run to return", firstReturned.promise);
      await within("the second run to start", secondStarted.promise);
      const meanwhile = await get(first.id);
      gate.resolve();
      const done = await until("the task to finish", async () => {
        const t = await get(first.id);
        return [S.TASK_STATE_COMPLETED, S.TASK_STATE_FAILED, S.TASK_STATE_CANCELED].includes(t.status!.state) && t;
      });
      // All at once, so a failure shows the whole story.
      expect({
        continuationAnswer: stateName(continued.status?.state),
        whileTheSecondRunWorks: stateName(meanwhile.status?.state),
        final: stateName(done.status?.state),
        artifacts: done.artifacts.map((a) => textOfParts(a.parts)),
      }).toEqual({ continuationAnswer: "WORKING", whileTheSecondRunWorks: "WORKING", final: "COMPLETED", artifacts: ["from the second run"] });
    });

    test("returnImmediately to a task whose run still works: answered at once with the task as it is (spec 3.2.2), the message in its history once its own run starts after", async () => {
      const gate = deferred();
      const running = deferred();
      const work = scripts.add("long-work", async function* () {
        yield { state: TaskState.WORKING };
        running.resolve();
        await gate.promise;
        yield chunk("from the first run", "first");
        // Interrupted, not ended: the message waiting in line continues the task.
        yield { state: TaskState.INPUT_REQUIRED, message: "anything else?" };
      });
      const started = asTask(await client.sendMessage(send(work, { returnImmediately: true })));
      await within("the first run to work", running.promise);
      const later = scripts.add("later-note", async function* () {
        yield chunk("from the second run", "second");
      });
      try {
        // A deadline, not a wait: nothing lets the first run go before this answer.
        const answer = asTask(await within("the answer of a message that waits in line", client.sendMessage(send(later, { taskId: started.id, returnImmediately: true })), 2000));
        expect({ id: answer.id, state: stateName(answer.status?.state), history: texts(answer.history) }).toEqual({ id: started.id, state: "WORKING", history: [work] });
        expect(scripts.contexts(later)).toEqual([]);
      } finally {
        gate.resolve();
      }
      const done = await until("the task to finish", async () => {
        const t = await get(started.id);
        return stateName(t.status?.state) === "COMPLETED" && t;
      });
      expect(texts(done.history)).toEqual([work, "anything else?", later]);
      expect(done.artifacts.map((a) => textOfParts(a.parts))).toEqual(["from the first run", "from the second run"]);
    });

    test("two answers to one question at once: the first completes the task, the second is refused UnsupportedOperation (blocking and streamed), never stored or run", async () => {
      for (const streamed of [false, true]) {
        const ask = askKey();
        const asked = asTask(await client.sendMessage(send(ask)));
        expect(asked.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
        const running = deferred();
        const gate = deferred();
        const first = scripts.add(`first-answer-${streamed}`, async function* () {
          yield { state: TaskState.WORKING };
          running.resolve();
          await gate.promise;
          yield chunk("from the first answer", "out");
        });
        const second = scripts.add(`second-answer-${streamed}`, async function* () {
          yield chunk("must not run", "out");
        });
        const firstAnswer = client.sendMessage(send(first, { taskId: asked.id }));
        await within("the first answer's run to work", running.promise);
        // The second waits in line behind the first run (D23).
        const arrived = nextLookup(asked.id);
        const outcome = (streamed ? collect(client.sendMessageStream(send(second, { taskId: asked.id }))) : client.sendMessage(send(second, { taskId: asked.id }))).then(
          () => "answered",
          (err: unknown) => `failed ${errorKind(binding, err)}`,
        );
        await within("the second answer to reach the agent", arrived);
        gate.resolve();
        expect(stateName(asTask(await within("the first answer", firstAnswer)).status?.state)).toBe("COMPLETED");
        expect(await within("the second answer", outcome)).toBe("failed UnsupportedOperation");
        expect(scripts.contexts(second)).toEqual([]);
        const done = await get(asked.id);
        expect(texts(done.history)).toEqual([ask, "what is your name?", first]);
        expect(done.artifacts.map((a) => textOfParts(a.parts))).toEqual(["from the first answer"]);
      }
    });

    test("a message to a task whose run asked for input and waits on: it takes the task over, the run's signal aborts and its later events are dropped", async () => {
      for (const returnImmediately of [false, true]) {
        const aborted = deferred<unknown>();
        const ask = scripts.add("ask-and-wait", async function* (ctx) {
          yield { state: TaskState.INPUT_REQUIRED, message: "name?" };
          // As an in-process agent waiting for the answer would: until its signal says otherwise.
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
          aborted.resolve(ctx.signal.reason);
          yield chunk("too late", "late");
        });
        const first = asTask(await client.sendMessage(send(ask)));
        expect(first.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);

        const gate = deferred();
        const answer = scripts.add("answer-to-waiting", async function* () {
          yield { state: TaskState.WORKING };
          await gate.promise;
          yield chunk("hello", "out");
        });
        const pending = client.sendMessage(send(answer, { taskId: first.id, returnImmediately }));
        const reason = await within("the first run's signal to abort", aborted.promise);
        expect(reason instanceof Error && reason.message).toMatch(/continued/);
        if (returnImmediately) expect(stateName(asTask(await within("the early answer", pending)).status?.state)).toBe("WORKING");
        gate.resolve();
        const done = returnImmediately
          ? await until("the task to complete", async () => {
              const t = await get(first.id);
              return t.status?.state === S.TASK_STATE_COMPLETED && t;
            })
          : asTask(await within("the blocking answer", pending));
        expect(stateName(done.status?.state)).toBe("COMPLETED");
        expect(done.artifacts.map((a) => a.artifactId)).toEqual(["out"]);
        expect(texts(done.history)).toEqual([ask, "name?", answer]);
      }
    });

    test("a run that asks for input, then moves the task on itself and returns: COMPLETED", async () => {
      const key = scripts.add("asks-then-goes-on", async function* () {
        yield { state: TaskState.AUTH_REQUIRED, message: "sign in" };
        yield { state: TaskState.WORKING, message: "signed in elsewhere, going on" };
        yield chunk("done", "out");
      });
      const events = await within("the stream", collect(client.sendMessageStream(send(key))));
      // The stream closed at the interruption; the task went on without it.
      expect(events.map(label)).toEqual(["task:SUBMITTED", "status:AUTH_REQUIRED"]);
      const done = await until("the task to complete", async () => {
        const t = await get(taskIdOf(events));
        return t.status?.state === S.TASK_STATE_COMPLETED && t;
      });
      expect(done.artifacts.map((a) => textOfParts(a.parts))).toEqual(["done"]);
    });

    test("a continuation whose executor just returns, with no state of its own: COMPLETED, not the INPUT_REQUIRED of the turn before", async () => {
      const first = asTask(await client.sendMessage(send(askKey())));
      expect(first.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
      const answer = scripts.add("quiet-answer", async function* () {
        yield chunk("thanks", "out");
      });
      const second = asTask(await client.sendMessage(send(answer, { taskId: first.id })));
      expect(second.artifacts.map((a) => textOfParts(a.parts))).toEqual(["thanks"]);
      expect(stateName(second.status?.state)).toBe("COMPLETED");
      expect(stateName((await get(first.id)).status?.state)).toBe("COMPLETED");
    });

    test("continued on a stream, with a subscriber already following the interrupted task: both get the new run's events and close at COMPLETED", async () => {
      const first = asTask(await client.sendMessage(send(askKey())));
      expect(first.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
      const follower = follow(otherBinding(binding), other.resubscribeTask({ tenant: "", id: first.id }));
      await within("the follower's snapshot", follower.atLeast(1));
      expect(label(follower.events[0]!)).toBe("task:INPUT_REQUIRED");

      const answer = scripts.add("streamed-answer", async function* () {
        yield { state: TaskState.WORKING };
        yield chunk("streamed", "out");
      });
      const events = await within("the continuation's stream", collect(client.sendMessageStream(send(answer, { taskId: first.id, contextId: first.contextId }))));
      expect(events.map(label)).toEqual(["task:INPUT_REQUIRED", "status:WORKING", "artifact:out:streamed", "status:COMPLETED"]);
      const snapshot = events[0]!.payload as { $case: "task"; value: { id: string; history: SdkMessage[] } };
      expect(snapshot.value.id).toBe(first.id);
      expect(texts(snapshot.value.history).slice(0, 2)).toEqual(texts(first.history));
      expect(await within("the follower to end", follower.done)).toBe("ended");
      expect(follower.events.slice(1).map(comparable)).toEqual(events.slice(1).map(comparable));
    });

    test("text with NUL, which a SQL store cannot hold, is refused alike on every store: a contextId is InvalidParams, a taskId names no task", async () => {
      const never = scripts.add("never-nul", async function* () {
        yield chunk("must not run", "out");
      });
      expect(await failure(binding, () => client.sendMessage(send(never, { contextId: "ctx\u0000x" })))).toBe("InvalidParams");
      expect(await failure(binding, () => client.listTasks(listParams({ contextId: "ctx\u0000x" })))).toBe("InvalidParams");
      expect(await failure(binding, () => client.getTask({ tenant: "", id: "t\u0000x", historyLength: undefined }))).toBe("TaskNotFound");
      expect(await failure(binding, () => client.sendMessage(send(never, { taskId: "t\u0000x" })))).toBe("TaskNotFound");
      expect(scripts.contexts(never)).toEqual([]);
    });

    test("a contextId that is not the task's: InvalidParams; a message to a terminal task: UnsupportedOperation; an unknown taskId: TaskNotFound", async () => {
      const waiting = asTask(await client.sendMessage(send(askKey())));
      const never = scripts.add("never-run", async function* () {
        throw new Error("a rejected message must not reach the executor");
      });
      expect(await failure(binding, () => client.sendMessage(send(never, { taskId: waiting.id, contextId: `not-${waiting.contextId}` })))).toBe("InvalidParams");
      const unchanged = await get(waiting.id);
      expect(unchanged.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
      expect(unchanged.history.length).toBe(waiting.history.length);

      const done = asTask(await client.sendMessage(send(scripts.add("done", async function* () {}))));
      expect(done.status?.state).toBe(S.TASK_STATE_COMPLETED);
      expect(await failure(binding, () => client.sendMessage(send(never, { taskId: done.id })))).toBe("UnsupportedOperation");
      expect(await failure(binding, () => collect(client.sendMessageStream(send(never, { taskId: done.id }))))).toBe("UnsupportedOperation");
      expect(await failure(binding, () => client.sendMessage(send(never, { taskId: `unknown-${binding}` })))).toBe("TaskNotFound");
      expect(scripts.contexts(never)).toEqual([]);
    });
  });

  describe("5. CancelTask", () => {
    test("a running task: CANCELED answered, the executor's signal aborted, every stream gets CANCELED and ends; again: TaskNotCancelable", async () => {
      const aborted = deferred<unknown>();
      const key = scripts.add("cancelable", async function* (ctx) {
        yield { state: TaskState.WORKING };
        await new Promise<void>((resolve) => (ctx.signal.aborted ? resolve() : ctx.signal.addEventListener("abort", () => resolve(), { once: true })));
        aborted.resolve(ctx.signal.reason);
      });
      const origin = follow(binding, client.sendMessageStream(send(key)));
      await within("the first two events", origin.atLeast(2));
      const taskId = taskIdOf(origin.events);
      const subscribers = [follow(binding, (await agent.newClient(binding)).resubscribeTask({ tenant: "", id: taskId })), follow(otherBinding(binding), other.resubscribeTask({ tenant: "", id: taskId }))];
      await within("both snapshots", Promise.all(subscribers.map((s) => s.atLeast(1))));

      const canceled = await within("the cancel answer", cancel(taskId));
      expect(canceled.id).toBe(taskId);
      expect(canceled.status?.state).toBe(S.TASK_STATE_CANCELED);
      await within("the executor's signal to abort", aborted.promise);
      expect(scripts.contexts(key)[0]!.signal.aborted).toBe(true);

      for (const s of [origin, ...subscribers]) {
        expect(await within("a stream to end", s.done)).toBe("ended");
        expect(label(s.events.at(-1)!)).toBe("status:CANCELED");
      }
      expect(await failure(binding, () => cancel(taskId))).toBe("TaskNotCancelable");
      expect((await get(taskId)).status?.state).toBe(S.TASK_STATE_CANCELED);
      // Being canceled is no executor error.
      expect(agent.errors.filter((e) => e.taskId === taskId)).toEqual([]);
    });

    test("an executor that ignores its signal and hangs: the cancel answer does not wait for it, and its later events are dropped", async () => {
      const release = deferred();
      const finished = deferred();
      const key = scripts.add("stubborn", async function* () {
        try {
          yield { state: TaskState.WORKING };
          await release.promise;
          yield chunk("too late", "late");
          yield { state: TaskState.COMPLETED, message: "done anyway" };
        } finally {
          finished.resolve();
        }
      });
      const origin = follow(binding, client.sendMessageStream(send(key)));
      await within("the first two events", origin.atLeast(2));
      const taskId = taskIdOf(origin.events);
      const subscriber = follow(otherBinding(binding), other.resubscribeTask({ tenant: "", id: taskId }));
      await within("the snapshot", subscriber.atLeast(1));

      const canceled = await within("the cancel answer", cancel(taskId), 3000);
      expect(canceled.status?.state).toBe(S.TASK_STATE_CANCELED);
      expect(release.settled).toBe(false);
      for (const s of [origin, subscriber]) {
        expect(await within("a stream to end", s.done)).toBe("ended");
        expect(label(s.events.at(-1)!)).toBe("status:CANCELED");
      }

      release.resolve();
      await within("the executor to be stopped", finished.promise);
      const after = await get(taskId);
      expect(after.status?.state).toBe(S.TASK_STATE_CANCELED);
      expect(after.artifacts).toEqual([]);
      expect(texts(after.history)).toEqual([key]);
    });
    test("a message queued behind a run that ignores its signal is answered once the task is canceled, not when that run ends", async () => {
      const release = deferred();
      // WORKING: a run that left the task interrupted would be taken over by the message (D77).
      const ask = scripts.add("work-and-hang", async function* () {
        yield { state: TaskState.WORKING };
        // Not returning, and deaf to cancel, until the test lets it go.
        await release.promise;
      });
      try {
        const first = asTask(await client.sendMessage(send(ask, { returnImmediately: true })));
        expect(first.status?.state).toBe(S.TASK_STATE_WORKING);
        const more = scripts.add("more-after-hang", async function* () {
          yield chunk("must not run", "out");
        });
        // Runs one after another (D23): this one waits in line for the first run to end.
        const arrived = nextLookup(first.id);
        const outcome = client.sendMessage(send(more, { taskId: first.id })).then(
          (r) => `answered ${stateName(asTask(r).status?.state)}`,
          (err: unknown) => `failed ${errorKind(binding, err)}`,
        );
        await within("the message to reach the agent", arrived);
        expect((await cancel(first.id)).status?.state).toBe(S.TASK_STATE_CANCELED);
        // A deadline, not a wait: the answer is due right after the cancel.
        const answer = await within("the queued message's answer", outcome, 2000).catch(() => "no answer within 2 s after the cancel");
        // Its task ended before its turn: refused, as a message to a finished task is.
        expect(answer).toBe("failed UnsupportedOperation");
        expect(scripts.contexts(more)).toEqual([]);
      } finally {
        release.resolve();
      }
    });

    test("the blocking SendMessage of a canceled task answers CANCELED; an interrupted task (no executor running) can be canceled, and then takes no message", async () => {
      const working = deferred<string>();
      const key = scripts.add("blocked", async function* (ctx) {
        yield { state: TaskState.WORKING };
        // Resumed once the runtime applied WORKING and asked for more.
        working.resolve(ctx.taskId);
        await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
      });
      const pending = client.sendMessage(send(key));
      const taskId = await within("the task to be WORKING", working.promise);
      expect((await cancel(taskId)).status?.state).toBe(S.TASK_STATE_CANCELED);
      const answered = asTask(await within("the blocking answer", pending));
      expect([answered.id, answered.status?.state]).toEqual([taskId, S.TASK_STATE_CANCELED]);

      const waiting = asTask(await client.sendMessage(send(scripts.add("waits", async function* () {
        yield { state: TaskState.INPUT_REQUIRED, message: "anything else?" };
      }))));
      expect(waiting.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
      const canceled = await cancel(waiting.id);
      expect(canceled.status?.state).toBe(S.TASK_STATE_CANCELED);
      expect(texts(canceled.history)).toEqual(texts(waiting.history));
      expect(await failure(binding, () => client.sendMessage(send(key, { taskId: waiting.id })))).toBe("UnsupportedOperation");
      expect(await failure(binding, () => cancel(waiting.id))).toBe("TaskNotCancelable");
      expect(await failure(binding, () => cancel(`unknown-${binding}`))).toBe("TaskNotFound");
    });
  });

  describe("6. failures", () => {
    test("an executor that throws: the task is FAILED, onError gets the error, the client sees none of its text", async () => {
      const secret = `db password is hunter2 (${binding})`;
      const thrown = new Error(secret);
      const key = scripts.add("throws", async function* () {
        yield { state: TaskState.WORKING };
        throw thrown;
      });
      const failed = asTask(await client.sendMessage(send(key)));
      expect(failed.status?.state).toBe(S.TASK_STATE_FAILED);
      expect(JSON.stringify(failed)).not.toContain("hunter2");
      expect(agent.errors.filter((e) => e.taskId === failed.id).map((e) => e.error)).toEqual([thrown]);
      expect(JSON.stringify(await get(failed.id))).not.toContain("hunter2");

      // Before any event, on a stream: the task is made and FAILED, the stream ends normally.
      const early = new Error(`early ${secret}`);
      const earlyKey = scripts.add("throws-early", async function* () {
        throw early;
      });
      const events = await within("the failing stream", collect(client.sendMessageStream(send(earlyKey))));
      expect(events.map(label)).toEqual(["task:SUBMITTED", "status:FAILED"]);
      expect(JSON.stringify(events)).not.toContain("hunter2");
      expect(agent.errors.filter((e) => e.taskId === taskIdOf(events)).map((e) => e.error)).toEqual([early]);
    });

    test("an executor that yields built messages and changes them afterwards: the task keeps what was yielded, and the executor's objects are left alone", async () => {
      const reply = create(MessageSchema, { role: PbRole.AGENT, parts: [{ content: { case: "text", value: "done" } }] });
      const key = scripts.add("built-messages", async function* () {
        const doc = create(ArtifactSchema, { artifactId: "built", parts: [{ content: { case: "text", value: "a" } }] });
        yield { artifact: doc };
        // The same object again, for the next chunk: appended, not appended to itself.
        doc.parts = [create(PartSchema, { content: { case: "text", value: "b" } })];
        yield { artifact: doc, append: true };
        doc.parts.push(create(PartSchema, { content: { case: "text", value: "never yielded" } }));
        yield { state: TaskState.COMPLETED, message: reply };
      });
      const done = asTask(await within("the answer", client.sendMessage(send(key))));
      expect(done.artifacts.map((a) => [a.artifactId, a.parts.map((p) => textOfParts([p]))])).toEqual([["built", ["a", "b"]]]);
      expect(texts(done.history)).toEqual([key, "done"]);
      expect((await get(done.id)).artifacts.map((a) => textOfParts(a.parts))).toEqual(["ab"]);
      expect([reply.taskId, reply.contextId, reply.messageId]).toEqual(["", "", ""]);
    });

    test("an A2A error the executor throws before its first event (a part type it does not take) is the caller's answer, blocking or streamed, and makes no task", async () => {
      const contextId = `ctx-refused-${binding}`;
      const key = scripts.add("refuses", async function* () {
        throw new ContentTypeNotSupportedError("this agent takes text/plain only");
      });
      const before = agent.errors.length;
      expect(await failure(binding, () => client.sendMessage(send(key, { contextId })))).toBe("ContentTypeNotSupported");
      expect(await failure(binding, () => collect(client.sendMessageStream(send(key, { contextId }))))).toBe("ContentTypeNotSupported");
      // Neither made a task, and nothing failed on the server's side.
      expect((await client.listTasks(listParams({ contextId }))).tasks).toEqual([]);
      expect(agent.errors.length).toBe(before);
    });

    test("an event of no known shape (an untyped executor's `{ status }`) fails the task and is reported, not stored as an empty artifact", async () => {
      const key = scripts.add("shapeless", async function* () {
        yield { status: { state: TaskState.COMPLETED } } as unknown as { state: TaskState };
      });
      const failed = asTask(await client.sendMessage(send(key)));
      expect(failed.status?.state).toBe(S.TASK_STATE_FAILED);
      expect(failed.artifacts).toEqual([]);
      expect(agent.errors.filter((e) => e.taskId === failed.id).map((e) => String(e.error))).toEqual([
        'Error: the executor sent an event that is none of { state }, { artifact } or { reply }: it has ["status"]',
      ]);
    });

    test("an event after the terminal one is not applied", async () => {
      const key = scripts.add("after-terminal", async function* () {
        yield { state: TaskState.WORKING };
        yield chunk("kept", "out");
        yield { state: TaskState.COMPLETED, message: "done" };
        yield chunk("after", "extra");
        yield { state: TaskState.FAILED, message: "not this" };
        yield { state: TaskState.WORKING };
      });
      const events = await within("the stream", collect(client.sendMessageStream(send(key))));
      expect(events.map(label)).toEqual(["task:SUBMITTED", "status:WORKING", "artifact:out:kept", "status:COMPLETED"]);
      const task = await get(taskIdOf(events));
      expect(task.status?.state).toBe(S.TASK_STATE_COMPLETED);
      expect(textOfParts(task.status?.message?.parts)).toBe("done");
      expect(task.artifacts.map((a) => a.artifactId)).toEqual(["out"]);
      expect(texts(task.history)).toEqual([key, "done"]);

      const blocking = asTask(await client.sendMessage(send(key)));
      expect(blocking.status?.state).toBe(S.TASK_STATE_COMPLETED);
      expect(blocking.artifacts.map((a) => a.artifactId)).toEqual(["out"]);
    });
  });
});
