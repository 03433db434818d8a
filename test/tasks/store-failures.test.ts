/**
 * A store that refuses writes (a database that is down) while tasks run:
 * every call still gets its answer and every stream its end, each refusal
 * goes to onError, and nothing escapes as an unhandled rejection (which
 * ends a Node process by default). A read that fails leaves nothing behind
 * that would fail the next call. Real sockets, the official @a2a-js/sdk
 * clients, on the three bindings.
 */
import { jest } from "@jest/globals";
import { TaskState as S } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { TaskState } from "../../generated/a2a_pb.js";
import { createInMemoryTaskStore, type TaskStore } from "protoc-gen-a2a/runtime/tasks";
import type { PushDelivery } from "../../runtime/a2a/tasks/push-delivery.js";
import type { TaskChange } from "../../runtime/a2a/tasks/task-store.js";
import { BINDINGS, Scripts, asTask, chunk, collect, follow, label, send, startAgent, within, type BindingName, type TestAgent } from "../support/task-clients.js";

/** Which writes the store refuses now. */
let refuse: (change: TaskChange) => boolean = () => false;
/** How many more reads of a task's push configs fail. */
let failConfigReads = 0;
/** Whether the store refuses to create tasks now, or to keep their push configs. */
let refuseCreate = false;
let refuseConfigs = false;
/** Whether push delivery throws now (a delivery that cannot queue). */
let deliveryThrows = false;
const delivery: PushDelivery = {
  deliver: () => {
    if (deliveryThrows) throw new Error("the delivery queue is broken");
  },
  check: async () => undefined,
  idle: async () => undefined,
  close: async () => undefined,
};
const down = () => new Error("the database is down");

const inner = createInMemoryTaskStore();
const store: TaskStore = {
  attach: (schemas) => inner.attach?.(schemas),
  create: (record, configs) => (refuseCreate ? Promise.reject(down()) : inner.create(record, configs)),
  get: (id) => inner.get(id),
  update: (record, change) => (refuse(change) ? Promise.reject(down()) : inner.update(record, change)),
  list: (owner, query) => inner.list(owner, query),
  putConfig: (config) => (refuseConfigs ? Promise.reject(down()) : inner.putConfig(config)),
  getConfig: (taskId, id) => inner.getConfig(taskId, id),
  configsOf: (taskId) => (failConfigReads-- > 0 ? Promise.reject(down()) : inner.configsOf(taskId)),
  listConfigs: (taskId, pageSize, pageToken) => inner.listConfigs(taskId, pageSize, pageToken),
  deleteConfig: (taskId, id) => inner.deleteConfig(taskId, id),
  close: () => inner.close(),
};

const scripts = new Scripts();
let agent: TestAgent;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  process.on("unhandledRejection", onUnhandled);
  agent = await startAgent(scripts.executor, { store, push: delivery });
});

afterAll(async () => {
  await agent.close();
  process.off("unhandledRejection", onUnhandled);
});

afterEach(async () => {
  refuse = () => false;
  failConfigReads = 0;
  refuseCreate = false;
  refuseConfigs = false;
  deliveryThrows = false;
  // A rejection nobody handled is reported after the turn it happened in.
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(unhandled).toEqual([]);
});

const refusals = (taskId: string) => agent.errors.filter((e) => e.taskId === taskId && e.error instanceof Error && e.error.message === "the database is down").length;

describe.each(BINDINGS)("%s", (binding: BindingName) => {
  let client: Client;
  beforeAll(async () => {
    client = await agent.client(binding);
  });

  test("every write after the task is made refused: the answer is FAILED, the stream ends FAILED, each refusal reported", async () => {
    const key = scripts.add("refused", async function* () {
      yield chunk("never stored", "out");
    });
    refuse = () => true;
    const failed = asTask(await within("the blocking answer", client.sendMessage(send(key))));
    expect(failed.status?.state).toBe(S.TASK_STATE_FAILED);
    // The artifact's write, then the FAILED status's.
    expect(refusals(failed.id)).toBe(2);

    const events = await within("the stream", collect(client.sendMessageStream(send(key))));
    expect(events.map(label)).toEqual(["task:SUBMITTED", "status:FAILED"]);
  });

  test("a task the store refuses to create: the caller and the stream are told FAILED, the store asked once, the task not found after", async () => {
    const key = scripts.add("create-refused", async function* () {
      yield chunk("never stored", "out");
    });
    refuseCreate = true;
    const failed = asTask(await within("the blocking answer", client.sendMessage(send(key))));
    expect(failed.status?.state).toBe(S.TASK_STATE_FAILED);
    expect(refusals(failed.id)).toBe(1);
    const events = await within("the stream", collect(client.sendMessageStream(send(key))));
    expect(events.map(label)).toEqual(["task:FAILED"]);
    refuseCreate = false;
    await expect(client.getTask({ tenant: "", id: failed.id })).rejects.toThrow();
  });

  test("a push config the store refuses once the task is made: the task is FAILED, as stored, and the refusal reported", async () => {
    const key = scripts.add("config-refused", async function* () {
      yield chunk("never sent", "out");
    });
    refuseConfigs = true;
    const failed = asTask(await within("the blocking answer", client.sendMessage(send(key, { push: { url: "https://receiver.example/hook" } }))));
    expect(failed.status?.state).toBe(S.TASK_STATE_FAILED);
    expect(refusals(failed.id)).toBe(1);
    expect((await client.getTask({ tenant: "", id: failed.id })).status?.state).toBe(S.TASK_STATE_FAILED);
  });

  test("push delivery that throws after the streams were told: each event once, the caller answered COMPLETED, the throw reported", async () => {
    const key = scripts.add("delivery-throws", async function* () {
      yield chunk("kept", "out");
    });
    deliveryThrows = true;
    const push = { url: "https://receiver.example/hook" };
    const done = asTask(await within("the blocking answer", client.sendMessage(send(key, { push }))));
    expect(done.status?.state).toBe(S.TASK_STATE_COMPLETED);
    expect(agent.errors.filter((e) => e.taskId === done.id).map((e) => String(e.error))).toContain("Error: the delivery queue is broken");
    const events = await within("the stream", collect(client.sendMessageStream(send(key, { push }))));
    expect(events.map(label)).toEqual(["task:SUBMITTED", "artifact:out:kept", "status:COMPLETED"]);
  });

  test("only the terminal write refused: the caller and the stream still learn COMPLETED, and the refusal is reported", async () => {
    const key = scripts.add("terminal-refused", async function* () {
      yield chunk("kept", "out");
    });
    refuse = (change) => change.kind === "status" && change.terminal;
    const done = asTask(await within("the blocking answer", client.sendMessage(send(key))));
    expect(done.status?.state).toBe(S.TASK_STATE_COMPLETED);
    expect(refusals(done.id)).toBe(1);

    const events = await within("the stream", collect(client.sendMessageStream(send(key))));
    expect(events.map(label)).toEqual(["task:SUBMITTED", "artifact:out:kept", "status:COMPLETED"]);
  });

  test("a message to an interrupted task the store cannot record: the executor is not run, the task is FAILED, blocking and streamed", async () => {
    let runs = 0;
    const key = scripts.add("continued", async function* () {
      runs++;
      yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
    });
    for (const streamed of [false, true]) {
      const waiting = asTask(await client.sendMessage(send(key)));
      expect(waiting.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
      const before = runs;
      refuse = (change) => change.kind === "history";
      if (streamed) {
        const events = await within("the stream", collect(client.sendMessageStream(send(key, { taskId: waiting.id, contextId: waiting.contextId }))));
        expect(events.map(label)).toEqual(["task:INPUT_REQUIRED", "status:FAILED"]);
      } else {
        const answer = asTask(await within("the blocking answer", client.sendMessage(send(key, { taskId: waiting.id, contextId: waiting.contextId }))));
        expect(answer.status?.state).toBe(S.TASK_STATE_FAILED);
      }
      refuse = () => false;
      expect(runs).toBe(before);
      expect(refusals(waiting.id)).toBe(1);
    }
  });

  test("a cancel the store refuses: the caller gets an error, the executor is stopped and a subscriber's stream ends CANCELED", async () => {
    let stopped = false;
    const key = scripts.add("cancel-refused", async function* ({ signal }) {
      yield { state: TaskState.WORKING };
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      stopped = true;
    });
    const working = asTask(await client.sendMessage(send(key, { returnImmediately: true })));
    const subscriber = follow(binding, client.resubscribeTask({ tenant: "", id: working.id }));
    // Its snapshot arrived: the server has the stream among the task's followers.
    await within("the subscription", subscriber.atLeast(1));
    refuse = (change) => change.kind === "status";
    await expect(within("the refused cancel", client.cancelTask({ tenant: "", id: working.id, metadata: undefined }))).rejects.toThrow();
    expect(await within("the subscriber's stream", subscriber.done)).toBe("ended");
    expect(subscriber.events.map(label)).toEqual(["task:WORKING", "status:CANCELED"]);
    expect(stopped).toBe(true);
    expect(refusals(working.id)).toBe(0);
  });

  test("a read the store fails while an interrupted task is taken up again: that call fails, the next one goes through", async () => {
    const key = scripts.add("read-failed", async function* () {
      yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
    });
    const waiting = asTask(await client.sendMessage(send(key)));
    failConfigReads = 1;
    await expect(within("the failing call", client.sendMessage(send(key, { taskId: waiting.id, contextId: waiting.contextId })))).rejects.toThrow();
    const again = asTask(await within("the next call", client.sendMessage(send(key, { taskId: waiting.id, contextId: waiting.contextId }))));
    expect(again.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);
    expect(again.history.length).toBeGreaterThan(waiting.history.length);
  });
});

describe("an onError that throws", () => {
  test("is logged, not thrown into the runtime: the caller is answered FAILED and no rejection goes unhandled", async () => {
    const thrower = await startAgent(
      async function* () {
        throw new Error("the executor's failure");
      },
      { onError: () => { throw new Error("the agent's onError is broken"); } },
    );
    const logged = jest.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const client = await thrower.client("JSONRPC");
      const failed = asTask(await within("the answer", client.sendMessage(send("anything"))));
      expect(failed.status?.state).toBe(S.TASK_STATE_FAILED);
      const lines = logged.mock.calls.map((c) => JSON.parse(String(c[0])) as { msg: string; taskId: string; reported: string; err: { message: string } });
      expect(lines.filter((l) => l.taskId === failed.id).map((l) => [l.msg, l.reported, l.err.message])).toEqual([
        ["the task handler's onError threw", "Error: the executor's failure", "the agent's onError is broken"],
      ]);
    } finally {
      logged.mockRestore();
      await thrower.close();
    }
  });
});
