/**
 * The rules of stream recovery (D30), one at a time, against a scripted
 * client (no sockets): which failures are retried, what a snapshot adds and
 * what it must not repeat, when a follow ends, and how retries are counted.
 * test/client/recovery.test.ts runs the same follower over real cut sockets.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { RpcError, TaskNotFoundError, UnsupportedOperationError, followTask, type FollowTaskOptions, type FollowedEvent } from "protoc-gen-a2a/runtime";
import { Role, StreamResponseSchema, TaskSchema, TaskState, type SendMessageRequestSchema, type StreamResponse, type Task } from "../../generated/a2a_pb.js";

type Step = StreamResponse | Error;

const part = (text: string) => ({ content: { case: "text" as const, value: text } });

function task(state: TaskState, ms: number, parts: readonly string[], messageId?: string): Task {
  return create(TaskSchema, {
    id: "t1",
    contextId: "c1",
    status: { state, timestamp: timestampFromMs(ms), message: messageId === undefined ? undefined : { messageId, role: Role.AGENT, parts: [part(messageId)] } },
    artifacts: parts.length === 0 ? [] : [{ artifactId: "doc", parts: parts.map(part) }],
  });
}

const ev = {
  task: (t: Task) => create(StreamResponseSchema, { payload: { case: "task", value: t } }),
  status: (state: TaskState, ms: number) =>
    create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId: "t1", contextId: "c1", status: { state, timestamp: timestampFromMs(ms) } } } }),
  chunk: (text: string, append = true) =>
    create(StreamResponseSchema, { payload: { case: "artifactUpdate", value: { taskId: "t1", contextId: "c1", artifact: { artifactId: "doc", parts: [part(text)] }, append } } }),
  message: (text: string) => create(StreamResponseSchema, { payload: { case: "message", value: { messageId: "m", role: Role.AGENT, parts: [part(text)] } } }),
};

const unavailable = () => new RpcError("UNAVAILABLE", "cut");

/** A client that plays scripts: each stream call takes the next list of steps (an Error is thrown where it stands), each GetTask the next answer. */
function scripted(script: { sends?: Step[][]; subscriptions?: Step[][]; gets?: (Task | Error)[] }) {
  const calls: string[] = [];
  const play = async function* (steps: Step[] | undefined) {
    if (steps === undefined) throw new Error("the script has no stream left");
    for (const step of steps) {
      if (step instanceof Error) throw step;
      yield step;
    }
  };
  const client = {
    sendStreamingMessage: (_request: MessageInitShape<typeof SendMessageRequestSchema>) => (calls.push("send"), play(script.sends?.shift())),
    subscribeToTask: (request: { id: string }) => (calls.push(`subscribe ${request.id}`), play(script.subscriptions?.shift())),
    getTask: async (request: { id: string }) => {
      calls.push(`get ${request.id}`);
      const answer = script.gets?.shift();
      if (answer === undefined) throw new Error("the script has no GetTask answer left");
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  return { client, calls };
}

const send = (taskId = ""): MessageInitShape<typeof SendMessageRequestSchema> => ({ message: { messageId: "u", role: Role.USER, taskId, parts: [part("go")] } });

async function run(
  client: ReturnType<typeof scripted>["client"],
  start: MessageInitShape<typeof SendMessageRequestSchema> | { taskId: string },
  options: FollowTaskOptions = {},
) {
  const follow = followTask(client, start, { backoffMs: 0, ...options, schema: StreamResponseSchema });
  const items: FollowedEvent<StreamResponse, Task>[] = [];
  let error: unknown;
  try {
    for await (const item of follow) items.push(item);
  } catch (err) {
    error = err;
  }
  return { follow, items, error };
}

/** An item as a short label: `task:WORKING`, `status:COMPLETED`, `chunk:ab+` (`+` appended, `!` last), `message:x`; `~` marks one made from a snapshot. */
function label(item: FollowedEvent<StreamResponse, Task>): string {
  const p = item.event.payload;
  const mark = item.synthetic ? "~" : "";
  switch (p.case) {
    case "task":
      return `${mark}task:${TaskState[p.value.status?.state ?? 0]}`;
    case "statusUpdate":
      return `${mark}status:${TaskState[p.value.status?.state ?? 0]}`;
    case "artifactUpdate":
      return `${mark}chunk:${(p.value.artifact?.parts ?? []).map((x) => x.content.value).join("")}${p.value.append ? "+" : ""}${p.value.lastChunk ? "!" : ""}`;
    case "message":
      return `${mark}message:${p.value.parts.map((x) => x.content.value).join("")}`;
    default:
      return "?";
  }
}

const textOf = (t: Task | undefined) => t?.artifacts.map((a) => a.parts.map((x) => x.content.value).join("")).join("|");

test("a stream that ends early is resumed with GetTask, then SubscribeToTask; what the snapshot adds comes once, as an appended chunk", async () => {
  const { client, calls } = scripted({
    sends: [[ev.task(task(TaskState.SUBMITTED, 1, [])), ev.chunk("a", false), ev.chunk("b")]],
    gets: [task(TaskState.WORKING, 2, ["a", "b", "c"])],
    subscriptions: [[ev.task(task(TaskState.WORKING, 2, ["a", "b", "c", "d"])), ev.chunk("e"), ev.status(TaskState.COMPLETED, 3)]],
  });
  const { follow, items, error } = await run(client, send());
  expect(error).toBeUndefined();
  expect(calls).toEqual(["send", "get t1", "subscribe t1"]);
  expect(items.map(label)).toEqual(["task:SUBMITTED", "chunk:a", "chunk:b+", "~chunk:cd+", "~status:WORKING", "chunk:e+", "status:COMPLETED"]);
  expect(textOf(follow.task)).toBe("abcde");
  expect(follow.task?.status?.state).toBe(TaskState.COMPLETED);
  // Each item carries the view as it is: the follower's own object, not the snapshot it was given.
  expect(items[0]?.task).toBe(follow.task);
});

test("CANCELLED from the agent's side is retried; the caller's own abort is not", async () => {
  const agentSide = scripted({
    sends: [[ev.task(task(TaskState.WORKING, 1, [])), new RpcError("CANCELLED", "RST_STREAM from a proxy")]],
    gets: [task(TaskState.COMPLETED, 2, [])],
  });
  const resumed = await run(agentSide.client, send());
  expect(resumed.error).toBeUndefined();
  expect(agentSide.calls).toEqual(["send", "get t1"]);
  expect(resumed.items.map(label)).toEqual(["task:WORKING", "~status:COMPLETED"]);

  const aborted = new AbortController();
  aborted.abort();
  const callerSide = scripted({ sends: [[ev.task(task(TaskState.WORKING, 1, [])), new RpcError("CANCELLED", "the caller aborted the call")]] });
  const retries: number[] = [];
  const stopped = await run(callerSide.client, send(), { signal: aborted.signal, onRetry: (r) => retries.push(r.attempt) });
  expect(stopped.error).toMatchObject({ name: "CancelledError" });
  expect(callerSide.calls).toEqual(["send"]);
  expect(retries).toEqual([]);
});

test("an answer that is not a transport failure is thrown as it is, never retried", async () => {
  for (const failure of [new TaskNotFoundError("gone"), new RpcError("INTERNAL", "broken"), new RpcError("DEADLINE_EXCEEDED", "late")]) {
    const { client, calls } = scripted({ sends: [[ev.task(task(TaskState.WORKING, 1, [])), failure]] });
    const { error } = await run(client, send());
    expect(error).toBe(failure);
    expect(calls).toEqual(["send"]);
  }
});

test("a failure before the first event is thrown: the message may never have arrived, and there is no task id to resume", async () => {
  const { client, calls } = scripted({ sends: [[unavailable()]] });
  const { error, items } = await run(client, send());
  expect(error).toMatchObject({ name: "UnavailableError" });
  expect(items).toEqual([]);
  expect(calls).toEqual(["send"]);
});

test("a stream that ends cleanly before its first event (it opened before it, D14, and a proxy cut it) is thrown as UNAVAILABLE, with no GetTask for a task it never named", async () => {
  const { client, calls } = scripted({ sends: [[]] });
  const { error, items } = await run(client, send());
  expect(error).toMatchObject({ name: "UnavailableError", message: expect.stringContaining("before its first event") });
  expect(items).toEqual([]);
  expect(calls).toEqual(["send"]);
});

test("a snapshot whose artifact no longer begins with the parts seen gives it whole; statuses the view already has are not repeated", async () => {
  const { client, calls } = scripted({
    sends: [[ev.task(task(TaskState.SUBMITTED, 1, [])), ev.status(TaskState.WORKING, 5), ev.chunk("a", false), ev.chunk("b"), unavailable()]],
    gets: [task(TaskState.WORKING, 5, ["x", "y", "z"])],
    // The same WORKING again, then one older than the view's: neither is news.
    subscriptions: [[ev.task(task(TaskState.WORKING, 5, ["x", "y", "z"])), ev.status(TaskState.WORKING, 5), ev.status(TaskState.WORKING, 4), ev.status(TaskState.COMPLETED, 6)]],
  });
  const { follow, items, error } = await run(client, send());
  expect(error).toBeUndefined();
  expect(calls).toEqual(["send", "get t1", "subscribe t1"]);
  expect(items.map(label)).toEqual(["task:SUBMITTED", "status:WORKING", "chunk:a", "chunk:b+", "~chunk:xyz", "status:COMPLETED"]);
  expect(textOf(follow.task)).toBe("xyz");
});

test("a task that turns terminal between GetTask and SubscribeToTask: asked again at once, its final state yielded", async () => {
  const delays: number[] = [];
  const { client, calls } = scripted({
    sends: [[ev.task(task(TaskState.WORKING, 1, ["a"])), unavailable()]],
    gets: [task(TaskState.WORKING, 1, ["a"]), task(TaskState.COMPLETED, 2, ["a", "b"])],
    subscriptions: [[new UnsupportedOperationError("the task is terminal")]],
  });
  const { items, error } = await run(client, send(), { backoffMs: 50, onRetry: (r) => delays.push(r.delayMs) });
  expect(error).toBeUndefined();
  expect(calls).toEqual(["send", "get t1", "subscribe t1", "get t1"]);
  expect(items.map(label)).toEqual(["task:WORKING", "~chunk:b+!", "~status:COMPLETED"]);
  expect(delays).toHaveLength(2);
  expect(delays[0]).toBeGreaterThanOrEqual(25);
  expect(delays[1]).toBe(0);
});

test("an answer to INPUT_REQUIRED: the state it answers does not end the follow, a later one would", async () => {
  const { client, calls } = scripted({
    // The stream of a message for a waiting task starts with the task still waiting (D24).
    sends: [[ev.task(task(TaskState.INPUT_REQUIRED, 1, [], "which one?")), unavailable()]],
    gets: [task(TaskState.INPUT_REQUIRED, 1, [], "which one?")],
    subscriptions: [[ev.task(task(TaskState.WORKING, 2, [])), ev.status(TaskState.INPUT_REQUIRED, 3)]],
  });
  const { items, error } = await run(client, send("t1"));
  expect(error).toBeUndefined();
  expect(calls).toEqual(["send", "get t1", "subscribe t1"]);
  expect(items.map(label)).toEqual(["task:INPUT_REQUIRED", "~status:WORKING", "status:INPUT_REQUIRED"]);

  // A new task found waiting for input by GetTask has reached the end of what can be followed.
  const waiting = scripted({
    sends: [[ev.task(task(TaskState.WORKING, 1, [])), unavailable()]],
    gets: [task(TaskState.INPUT_REQUIRED, 2, [], "which one?")],
  });
  const ended = await run(waiting.client, send());
  expect(waiting.calls).toEqual(["send", "get t1"]);
  expect(ended.items.map(label)).toEqual(["task:WORKING", "~status:INPUT_REQUIRED"]);
});

test("a stream that closes at INPUT_REQUIRED ends the follow; one the agent keeps open past it is followed on", async () => {
  const closing = scripted({ sends: [[ev.task(task(TaskState.SUBMITTED, 1, [])), ev.status(TaskState.INPUT_REQUIRED, 2)]] });
  const closed = await run(closing.client, send());
  expect(closed.error).toBeUndefined();
  expect(closing.calls).toEqual(["send"]);
  expect(closed.items.map(label)).toEqual(["task:SUBMITTED", "status:INPUT_REQUIRED"]);

  const open = scripted({ sends: [[ev.task(task(TaskState.SUBMITTED, 1, [])), ev.status(TaskState.AUTH_REQUIRED, 2), ev.status(TaskState.WORKING, 3), ev.status(TaskState.COMPLETED, 4)]] });
  const followed = await run(open.client, send());
  expect(followed.items.map(label)).toEqual(["task:SUBMITTED", "status:AUTH_REQUIRED", "status:WORKING", "status:COMPLETED"]);
  expect(open.calls).toEqual(["send"]);
});

test("following a task by id: GetTask first; a finished task is one task event, and no subscription", async () => {
  const done = scripted({ gets: [task(TaskState.COMPLETED, 2, ["a", "b"])] });
  const finished = await run(done.client, { taskId: "t1" });
  expect(done.calls).toEqual(["get t1"]);
  expect(finished.items.map(label)).toEqual(["~task:COMPLETED"]);
  expect(textOf(finished.follow.task)).toBe("ab");

  const running = scripted({
    gets: [task(TaskState.WORKING, 1, ["a"])],
    subscriptions: [[ev.task(task(TaskState.WORKING, 1, ["a"])), ev.chunk("b"), ev.status(TaskState.COMPLETED, 2)]],
  });
  const followed = await run(running.client, { taskId: "t1" });
  expect(running.calls).toEqual(["get t1", "subscribe t1"]);
  expect(followed.items.map(label)).toEqual(["task:WORKING", "chunk:b+", "status:COMPLETED"]);
});

test("a direct Message answer is the whole follow: there is no task", async () => {
  const { client } = scripted({ sends: [[ev.message("hi")]] });
  const { follow, items, error } = await run(client, send());
  expect(error).toBeUndefined();
  expect(items.map(label)).toEqual(["message:hi"]);
  expect(items[0]?.task).toBeUndefined();
  expect(follow.taskId).toBeUndefined();
});

test("maxRetries counts reconnections in a row that bring nothing; one that brings news starts the count again", async () => {
  const progressing = scripted({
    sends: [[ev.task(task(TaskState.WORKING, 1, [])), ev.chunk("a", false), unavailable()]],
    gets: [task(TaskState.WORKING, 1, ["a"]), task(TaskState.WORKING, 1, ["a", "b"])],
    subscriptions: [
      [ev.task(task(TaskState.WORKING, 1, ["a"])), ev.chunk("b"), unavailable()],
      [ev.task(task(TaskState.WORKING, 1, ["a", "b"])), ev.status(TaskState.COMPLETED, 2)],
    ],
  });
  const resumed = await run(progressing.client, send(), { maxRetries: 1 });
  expect(resumed.error).toBeUndefined();
  expect(resumed.items.map(label)).toEqual(["task:WORKING", "chunk:a", "chunk:b+", "status:COMPLETED"]);

  const stuck = scripted({
    sends: [[ev.task(task(TaskState.WORKING, 1, [])), unavailable()]],
    gets: [task(TaskState.WORKING, 1, [])],
    // A subscription that gives its snapshot and is cut again: no news, so it counts.
    subscriptions: [[ev.task(task(TaskState.WORKING, 1, [])), unavailable()]],
  });
  const retries: number[] = [];
  const gaveUp = await run(stuck.client, send(), { maxRetries: 1, onRetry: (r) => retries.push(r.attempt) });
  expect(gaveUp.error).toMatchObject({ name: "UnavailableError" });
  expect(retries).toEqual([1]);
  expect(stuck.calls).toEqual(["send", "get t1", "subscribe t1"]);

  // A subscription that repeats a status the caller has (same state and time) and is cut: still no
  // news, so it counts too (counted as news, a server doing this was followed for ever).
  const repeating = scripted({
    sends: [[ev.task(task(TaskState.WORKING, 1, [])), ev.status(TaskState.WORKING, 1), unavailable()]],
    gets: [task(TaskState.WORKING, 1, []), task(TaskState.WORKING, 1, [])],
    subscriptions: [
      [ev.task(task(TaskState.WORKING, 1, [])), ev.status(TaskState.WORKING, 1), unavailable()],
      [ev.task(task(TaskState.WORKING, 1, [])), ev.status(TaskState.WORKING, 1), unavailable()],
    ],
  });
  const repeated = await run(repeating.client, send(), { maxRetries: 1 });
  expect(repeated.error).toMatchObject({ name: "UnavailableError" });
  expect(repeated.items.map(label)).toEqual(["task:WORKING"]);
  expect(repeating.calls).toEqual(["send", "get t1", "subscribe t1"]);
});

test("the caller's abort during the wait before a reconnection ends the follow at once", async () => {
  const aborted = new AbortController();
  const { client, calls } = scripted({ sends: [[ev.task(task(TaskState.WORKING, 1, [])), unavailable()]] });
  const started = Date.now();
  const { error } = await run(client, send(), { backoffMs: 60_000, signal: aborted.signal, onRetry: () => queueMicrotask(() => aborted.abort()) });
  expect(error).toMatchObject({ name: "CancelledError" });
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(calls).toEqual(["send"]);
});
