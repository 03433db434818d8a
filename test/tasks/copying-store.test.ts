/**
 * The task runtime over a store that hands out copies, asynchronously, as
 * a store writing rows to a database does (the TaskStore contract: "every
 * method may be asynchronous"; the runtime keeps a running task's own
 * object and tells the store what changed). On JSON-RPC, HTTP+JSON and
 * gRPC through the official @a2a-js/sdk clients.
 */
import { jest } from "@jest/globals";
import { clone } from "@bufbuild/protobuf";
import { TaskState as S } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { createInMemoryTaskStore, type StoredTask, type TaskStore } from "protoc-gen-a2a/runtime/tasks";
import { TaskSchema, TaskState, type Task } from "../../generated/a2a_pb.js";
import {
  BINDINGS,
  Scripts,
  asTask,
  chunk,
  deferred,
  errorKind,
  failure,
  follow,
  label,
  listParams,
  send,
  startAgent,
  stateName,
  textOfParts,
  until,
  within,
  type BindingName,
  type TestAgent,
} from "../support/task-clients.js";

// Real sockets on a busy two-core machine: more than jest's 5 s default, never a wait of its own.
jest.setTimeout(30_000);

const scripts = new Scripts();
let agent: TestAgent;

/** Rows: the in-memory store underneath, holding its own copies; what the runtime gets and gives are copies too. */
const rows = createInMemoryTaskStore();
const copyOf = (record: StoredTask): StoredTask => ({ ...record, task: clone(TaskSchema, record.task as unknown as Task) as unknown as StoredTask["task"] });
/** A lookup the test holds: the next get(id) of that task waits for `until` once it has read its copy. */
let held: { id: string; until: Promise<void>; reached: () => void } | undefined;
const copying: TaskStore = {
  create: (record) => rows.create(copyOf(record)),
  async get(id) {
    const row = (await rows.get(id)) as StoredTask | undefined;
    const copy = row === undefined ? undefined : copyOf(row);
    if (held?.id === id) {
      const hold = held;
      held = undefined;
      hold.reached();
      await hold.until;
    }
    return copy;
  },
  async update(record, change) {
    // Writes the row: the runtime's task as it is now.
    const row = (await rows.get(record.task.id)) as StoredTask | undefined;
    if (row === undefined) return;
    Object.assign(row.task, copyOf(record).task);
    await rows.update(row, change);
  },
  list: async (owner, query) => {
    const page = await rows.list(owner, query);
    return { ...page, tasks: page.tasks.map((task) => copyOf({ tenant: "", owner: "", task }).task) };
  },
  putConfig: (config) => rows.putConfig(config),
  getConfig: (taskId, id) => rows.getConfig(taskId, id),
  configsOf: (taskId) => rows.configsOf(taskId),
  listConfigs: (taskId, pageSize, pageToken) => rows.listConfigs(taskId, pageSize, pageToken),
  deleteConfig: (taskId, id) => rows.deleteConfig(taskId, id),
};

beforeAll(async () => {
  agent = await startAgent(scripts.executor, { store: copying });
});

afterAll(async () => {
  await agent?.close();
  rows.close();
});

describe.each(BINDINGS)("%s", (binding: BindingName) => {
  let client: Client;

  beforeAll(async () => {
    client = await agent.client(binding);
  });

  const get = (id: string) => client.getTask({ tenant: "", id });

  test("the lifecycle holds: multi-turn, a subscriber of the interrupted task, cancel, listing", async () => {
    const ask = scripts.add("ask", async function* () {
      yield { state: TaskState.WORKING };
      yield { state: TaskState.INPUT_REQUIRED, message: "which?" };
    });
    const contextId = `ctx-copying-${binding}`;
    const first = asTask(await client.sendMessage(send(ask, { contextId })));
    expect(first.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);

    const follower = follow(binding, client.resubscribeTask({ tenant: "", id: first.id }));
    await within("the follower's snapshot", follower.atLeast(1));
    const answer = scripts.add("answer", async function* (ctx) {
      yield { state: TaskState.WORKING, message: `seen ${ctx.task?.history.length ?? 0}` };
      yield chunk("done", "out");
    });
    const second = asTask(await client.sendMessage(send(answer, { taskId: first.id })));
    expect(second.status?.state).toBe(S.TASK_STATE_COMPLETED);
    expect(second.history.map((m) => textOfParts(m.parts))).toEqual([ask, "which?", answer, "seen 3"]);
    expect(await within("the follower to end", follower.done)).toBe("ended");
    expect(follower.events.map(label)).toEqual(["task:INPUT_REQUIRED", "status:WORKING", "artifact:out:done", "status:COMPLETED"]);
    const stored = await get(first.id);
    expect([stored.status?.state, stored.artifacts.length, stored.history.length]).toEqual([S.TASK_STATE_COMPLETED, 1, 4]);

    const waiting = asTask(await client.sendMessage(send(ask, { contextId })));
    expect((await client.cancelTask({ tenant: "", id: waiting.id, metadata: undefined })).status?.state).toBe(S.TASK_STATE_CANCELED);
    expect((await get(waiting.id)).status?.state).toBe(S.TASK_STATE_CANCELED);
    expect(await failure(binding, () => client.sendMessage(send(answer, { taskId: waiting.id })))).toBe("UnsupportedOperation");
    expect((await client.listTasks(listParams({ contextId }))).tasks.map((t) => [t.id, t.status?.state])).toEqual([
      [waiting.id, S.TASK_STATE_CANCELED],
      [first.id, S.TASK_STATE_COMPLETED],
    ]);
  });

  test("SubscribeToTask whose lookup overlaps the task's completion: the stream does not stay open on a task that is over", async () => {
    const gate = deferred();
    const key = scripts.add("finishing", async function* () {
      yield { state: TaskState.WORKING };
      await gate.promise;
    });
    const task = asTask(await client.sendMessage(send(key, { returnImmediately: true })));
    expect(task.status?.state).toBe(S.TASK_STATE_WORKING);

    // The subscribe's lookup has read the task (WORKING) when the task completes.
    const release = deferred();
    const reached = deferred();
    held = { id: task.id, until: release.promise, reached: () => reached.resolve() };
    const subscriber = follow(binding, client.resubscribeTask({ tenant: "", id: task.id }));
    await within("the subscribe to look the task up", reached.promise);
    gate.resolve();
    await until("the task to complete", async () => (await get(task.id)).status?.state === S.TASK_STATE_COMPLETED);
    release.resolve();

    // UnsupportedOperation (it is terminal now), or a stream that tells the end and closes; not one left open.
    const outcome = await within("the subscription to settle", subscriber.done, 1000).catch(() => `still open, after ${subscriber.events.map(label).join(", ")}`);
    if (outcome === "ended") expect(label(subscriber.events.at(-1)!)).toMatch(/COMPLETED$/);
    else expect(outcome).toBe("UnsupportedOperation");
  });

  test("a message whose lookup overlaps a cancel: the canceled task stays CANCELED and its executor does not run", async () => {
    const ask = scripts.add("ask-once", async function* () {
      yield { state: TaskState.INPUT_REQUIRED, message: "anything?" };
    });
    const waiting = asTask(await client.sendMessage(send(ask)));
    expect(waiting.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);

    const late = scripts.add("late-answer", async function* () {
      yield { state: TaskState.WORKING };
      yield chunk("ran after the cancel", "out");
    });
    // The message's lookup has read the task (INPUT_REQUIRED) when the task is canceled.
    const release = deferred();
    const reached = deferred();
    held = { id: waiting.id, until: release.promise, reached: () => reached.resolve() };
    const outcome = client.sendMessage(send(late, { taskId: waiting.id })).then(
      (r) => `answered ${stateName(asTask(r).status?.state)}`,
      (err: unknown) => `failed ${errorKind(binding, err)}`,
    );
    await within("the message to look the task up", reached.promise);
    expect((await client.cancelTask({ tenant: "", id: waiting.id, metadata: undefined })).status?.state).toBe(S.TASK_STATE_CANCELED);
    release.resolve();

    const answer = await within("the message's answer", outcome);
    const after = await get(waiting.id);
    expect({ answer, state: after.status?.state, artifacts: after.artifacts.length, ran: scripts.contexts(late).length }).toEqual({
      answer: "failed UnsupportedOperation",
      state: S.TASK_STATE_CANCELED,
      artifacts: 0,
      ran: 0,
    });
  });
});
