/**
 * The SQL store's push outbox (D74), on a Postgres server of the suite's
 * own: notifications are rows written with the change, so a push config
 * made through one instance gets the events of a task another instance
 * runs, and notifications an instance could not deliver before it stopped
 * are delivered by another once their claim lapses. The kill -9 of a whole
 * agent process is in multi-process.test.ts. A live instance whose
 * connection to the database is reset as it reads its rows back or deletes
 * one (a cutting proxy before the server) sends them itself, while it runs.
 */
import { jest } from "@jest/globals";
import { create } from "@bufbuild/protobuf";
import pg from "pg";
import type { A2ACallContext } from "protoc-gen-a2a/runtime";
import { createPostgresTaskStore, createPushDelivery, type SqlTaskStore } from "protoc-gen-a2a/runtime/tasks";
import { MessageSchema, Role, SendMessageRequestSchema, TaskState } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { startPostgres, type TestPostgres } from "../support/postgres.js";
import { Receiver, Scripts, asTask, callContext, chunk, deferred, pushConfig, send, startAgent, until, type Received } from "../support/task-clients.js";
import { startCuttingProxy, type CuttingProxy } from "../support/cutting-proxy.js";

jest.setTimeout(30_000);

let server: TestPostgres;
let receiver: Receiver;
const stores: SqlTaskStore[] = [];

beforeAll(async () => {
  [server, receiver] = await Promise.all([startPostgres(), new Receiver().start()]);
});

afterAll(async () => {
  for (const store of stores) await store.close();
  await receiver?.stop();
  await server?.stop();
});

// A test that made the receiver refuse does not leave it refusing.
afterEach(() => {
  receiver.answer = () => 200;
});

async function instance(leaseMs = 30_000, onError?: (error: unknown) => void): Promise<SqlTaskStore> {
  const store = await createPostgresTaskStore({ connectionString: server.url, leaseMs, ...(onError === undefined ? {} : { onError }) });
  stores.push(store);
  return store;
}

/** Two notifications of a task that completes at once: an artifact and a chunk appended to it. */
const quick: A2AServiceExecutor = async function* () {
  yield { artifact: { parts: [{ content: { case: "text", value: "one" } }] } };
  yield { artifact: { parts: [{ content: { case: "text", value: "two" } }] }, append: true };
};

/** The receiver refuses every notification until `open()`; `delivered` is what it took from then on. */
function refusingReceiver(): { delivered: Received[]; open: () => void } {
  const delivered: Received[] = [];
  let up = false;
  receiver.answer = (got) => {
    if (!up) return 503;
    delivered.push(got);
    return 200;
  };
  return { delivered, open: () => void (up = true) };
}

/**
 * Runs `check` while instance B, on a store of its own, takes over what A
 * left; B's store is closed with it, since a store left open claims the
 * next test's lapsed rows.
 */
async function withInstanceB(check: () => Promise<void>, onError?: (error: unknown) => void): Promise<void> {
  const storeB = await instance(400, onError);
  const b = createA2AServiceTaskHandler(quick, { store: storeB, push: allow });
  try {
    await check();
  } finally {
    await b.close();
    await storeB.close();
  }
}

const call = callContext("");
const allow = { allow: ["127.0.0.0/8"] };
const message = (text: string) => create(MessageSchema, { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text", value: text } }] });

/** What a notification body says: its payload's kind, with the state or the artifact's text. */
function kindOf(body: string): string {
  const json = JSON.parse(body) as Record<string, { status?: { state: string }; artifact?: { parts: { text: string }[] } }>;
  if (json.task !== undefined) return "task";
  if (json.statusUpdate !== undefined) return `status:${json.statusUpdate.status?.state}`;
  if (json.artifactUpdate !== undefined) return `artifact:${json.artifactUpdate.artifact?.parts.map((p) => p.text).join("")}`;
  return Object.keys(json).join(",");
}

async function outboxRows(): Promise<number> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    return (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM a2a_push_outbox")).rows[0]!.n;
  } finally {
    await client.end();
  }
}

test("a push config made through B gets the events of a task A runs, each once, in order, with the executor's metadata (and so do B's streams)", async () => {
  const gate = deferred();
  const gated: A2AServiceExecutor = async function* () {
    yield { state: TaskState.WORKING };
    await gate.promise;
    yield { artifact: { parts: [{ content: { case: "text", value: "made on A" } }] }, metadata: { step: 2 } };
  };
  const [storeA, storeB] = [await instance(), await instance()];
  const a = createA2AServiceTaskHandler(gated, { store: storeA, push: allow });
  const b = createA2AServiceTaskHandler(gated, { store: storeB, push: allow });
  try {
    const started = await a.sendMessage(create(SendMessageRequestSchema, { message: message("go"), configuration: { returnImmediately: true } }), call);
    if (started.payload.case !== "task") throw new Error("expected a task");
    const id = started.payload.value.id;
    await b.createTaskPushNotificationConfig({ tenant: "", taskId: id, id: "on-b", url: receiver.url(`/b/${id}`), token: "t" }, call);
    // B's own stream of the task gets the event metadata too: it is in the log.
    const onB = b.subscribeToTask({ id }, call)[Symbol.asyncIterator]();
    expect((await onB.next()).value?.payload.case).toBe("task");
    gate.resolve();
    const artifactOnB = (await onB.next()).value?.payload;
    expect(artifactOnB?.case === "artifactUpdate" ? artifactOnB.value.metadata : artifactOnB?.case).toEqual({ step: 2 });
    await onB.return?.();
    const path = `/b/${id}`;
    await receiver.when("the task's last notification", () => receiver.on(path).some((r) => kindOf(r.body) === "status:TASK_STATE_COMPLETED"));
    expect(receiver.on(path).map((r) => kindOf(r.body))).toEqual(["artifact:made on A", "status:TASK_STATE_COMPLETED"]);
    expect(JSON.parse(receiver.on(path)[0]!.body).artifactUpdate.metadata).toEqual({ step: 2 });
    expect(receiver.on(path)[0]!.headers["x-a2a-notification-token"]).toBe("t");
    // A row goes once its receiver answered: after the POST is seen here.
      await until("the outbox to empty", async () => (await outboxRows()) === 0);
  } finally {
    gate.resolve();
    await a.close();
    await b.close();
    // Closed with the test: a store left open claims the next test's lapsed rows.
    await storeA.close();
    await storeB.close();
  }
});

/**
 * Instance A runs `quick` with a push config whose receiver refuses every
 * notification, then stops (its delivery and its store closed) with the
 * task's 4 notifications written and none delivered: the receiver refused
 * the first, the rest waited behind it. `open()` lets the receiver take
 * notifications from then on; `delivered` is what it took.
 */
async function stoppedWithUndelivered(configId: string, context: A2ACallContext) {
  const { delivered, open } = refusingReceiver();
  const pushA = createPushDelivery({ ...allow, backoffMs: 60_000, onError: () => undefined });
  const storeA = await instance(400);
  const a = createA2AServiceTaskHandler(quick, { store: storeA, push: pushA });
  const url = receiver.url(`/crash/${crypto.randomUUID()}`);
  const done = await a.sendMessage(
    create(SendMessageRequestSchema, { message: message("go"), configuration: { taskPushNotificationConfig: { id: configId, url, token: "tok" } } }),
    context,
  );
  if (done.payload.case !== "task") throw new Error("expected a task");
  expect(done.payload.value.status?.state).toBe(TaskState.COMPLETED);
  await receiver.when("A's first attempt", () => receiver.received.some((r) => url.endsWith(r.path)));
  await pushA.close();
  await storeA.close();
  await a.close();
  expect(await outboxRows()).toBe(4);
  return { id: done.payload.value.id, delivered, open };
}

test("notifications A wrote and never delivered (it stopped) are delivered by B once A's claim lapses, in order", async () => {
  const { delivered, open } = await stoppedWithUndelivered("c", call);
  open();
  await withInstanceB(async () => {
    await receiver.when("B to deliver A's notifications", () => delivered.length >= 4, 10_000);
    expect(delivered.map((r) => kindOf(r.body))).toEqual(["task", "artifact:one", "artifact:two", "status:TASK_STATE_COMPLETED"]);
    // A row goes once its receiver answered: after the POST is seen here.
    await until("the outbox to empty", async () => (await outboxRows()) === 0);
  });
});

test("a 0.3 caller's config is in the outbox too (D112): written with the change, delivered after a crash, as the whole task in 0.3's form", async () => {
  const { id, delivered, open } = await stoppedWithUndelivered("c03", { ...call, protocolVersion: "0.3" });
  open();
  await withInstanceB(async () => {
    await receiver.when("B to deliver A's notification", () => delivered.length >= 1, 10_000);
    // The outbox empties: the three older rows of the config went with the newest, which carries the task as it is.
    await until("the outbox to empty", async () => (await outboxRows()) === 0);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.headers["content-type"]).toBe("application/json");
    // 0.3's webhook carries the config's token as 1.0's does (checklist part 16).
    expect(delivered[0]!.headers["x-a2a-notification-token"]).toBe("tok");
    const task = JSON.parse(delivered[0]!.body) as { kind?: string; id?: string; status?: { state?: string }; artifacts?: { parts: { text?: string }[] }[] };
    expect(task).toMatchObject({ kind: "task", id, status: { state: "completed" } });
    expect(task.artifacts?.[0]?.parts.map((p) => p.text).join("")).toBe("onetwo");
  });
});

test("a task that cannot be read fails its 0.3 notifications, reported, and holds back none of its 1.0 ones", async () => {
  const gate = deferred();
  const gated: A2AServiceExecutor = async function* () {
    yield { state: TaskState.WORKING };
    await gate.promise;
    yield { artifact: { parts: [{ content: { case: "text", value: "late" } }] } };
  };
  const { delivered, open } = refusingReceiver();
  const pushA = createPushDelivery({ ...allow, backoffMs: 60_000, onError: () => undefined });
  const storeA = await instance(400);
  const a = createA2AServiceTaskHandler(gated, { store: storeA, push: pushA });
  const base = `/mixed/${crypto.randomUUID()}`;
  try {
    const started = await a.sendMessage(
      create(SendMessageRequestSchema, {
        message: message("go"),
        configuration: { returnImmediately: true, taskPushNotificationConfig: { id: "c10", url: receiver.url(`${base}/10`), token: "" } },
      }),
      call,
    );
    if (started.payload.case !== "task") throw new Error("expected a task");
    const id = started.payload.value.id;
    await a.createTaskPushNotificationConfig({ tenant: "", taskId: id, id: "c03", url: receiver.url(`${base}/03`), token: "" }, { ...call, protocolVersion: "0.3" });
    gate.resolve();
    await until("the task to complete", async () => (await storeA.get(id))?.task.status?.state === TaskState.COMPLETED);
    await receiver.when("A's first attempt", () => receiver.received.some((r) => r.path.startsWith(base)));
    await pushA.close();
    await storeA.close();
    await a.close();
    // The task row no longer decodes: what an instance taking the rows over reads for 0.3 fails.
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query("UPDATE a2a_tasks SET task = '\\x00'::bytea WHERE id = $1", [id]);
    await client.end();
    open();
    const errors: unknown[] = [];
    await withInstanceB(
      async () => {
        await until("the outbox to empty", async () => (await outboxRows()) === 0, 10_000);
        expect(delivered.filter((r) => r.path === `${base}/10`).map((r) => kindOf(r.body))).toEqual(["task", "status:TASK_STATE_WORKING", "artifact:late", "status:TASK_STATE_COMPLETED"]);
        expect(delivered.filter((r) => r.path === `${base}/03`)).toEqual([]);
        expect(errors.length).toBeGreaterThan(0);
      },
      (err) => void errors.push(err),
    );
  } finally {
    gate.resolve();
    await a.close();
  }
});

test("the rows of an instance that died holding the task's lease (it took the task up after its last renewal) are the reaper's: sent with the FAILED, in order, not taken before its lease lapses (D74)", async () => {
  const asks: A2AServiceExecutor = async function* () {
    yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
  };
  const { delivered, open } = refusingReceiver();
  const pushA = createPushDelivery({ ...allow, backoffMs: 60_000, onError: () => undefined });
  const storeA = await instance(400);
  const a = createA2AServiceTaskHandler(asks, { store: storeA, push: pushA });
  const url = receiver.url(`/held/${crypto.randomUUID()}`);
  const waiting = await a.sendMessage(create(SendMessageRequestSchema, { message: message("go"), configuration: { taskPushNotificationConfig: { id: "c", url, token: "" } } }), call);
  if (waiting.payload.case !== "task") throw new Error("expected a task");
  const id = waiting.payload.value.id;
  await receiver.when("A's first attempt", () => receiver.received.some((r) => url.endsWith(r.path)));
  await pushA.close();
  await storeA.close();
  await a.close();
  // A's last act, as its statements write it: a message answering the INPUT_REQUIRED claimed the task and
  // was written after A's last renewal, so A's lease of a run outlives the claims on its rows (leaseMs later).
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  const leaseUntil = Date.now() + 2500;
  try {
    const held = await admin.query(
      `UPDATE a2a_tasks SET lease_owner = (SELECT claimed_by FROM a2a_push_outbox WHERE task_id = $1 LIMIT 1), lease_until = $2::bigint, lease_claim = false WHERE id = $1 RETURNING lease_owner`,
      [id, leaseUntil],
    );
    expect(held.rows[0]?.lease_owner).toEqual(expect.any(String));
  } finally {
    await admin.end();
  }
  open();
  await withInstanceB(async () => {
    // B's rounds (every 200 ms) find the claims lapsed well before the lease: they leave the rows be.
    await new Promise((resolve) => setTimeout(resolve, leaseUntil - 300 - Date.now()));
    expect(delivered.filter((r) => url.endsWith(r.path)).map((r) => kindOf(r.body))).toEqual([]);
    await receiver.when("the FAILED", () => delivered.some((r) => url.endsWith(r.path) && kindOf(r.body) === "status:TASK_STATE_FAILED"), 10_000);
    expect(delivered.filter((r) => url.endsWith(r.path)).map((r) => kindOf(r.body))).toEqual(["task", "status:TASK_STATE_INPUT_REQUIRED", "status:TASK_STATE_FAILED"]);
  });
});

/** Statements of the outbox (queries.ts): the read-back of a writer's rows, and the delete of a delivered one. */
const readBack = "JOIN a2a_push_outbox o ON o.task_id = k.task_id";
const deleteRow = "DELETE FROM a2a_push_outbox WHERE task_id";

describe("a database blip on a live instance (D74): it sends its own rows itself, once each, in order, while it runs", () => {
  let proxy: CuttingProxy;
  const scripts = new Scripts();

  beforeAll(async () => {
    proxy = await startCuttingProxy({ host: "127.0.0.1", port: server.port });
  });
  afterAll(async () => {
    await proxy?.close();
  });

  /** An agent served on loopback whose store reaches the database through the proxy; what the store reported is `errors`. */
  async function blipAgent(leaseMs = 1500) {
    const errors: unknown[] = [];
    const store = await createPostgresTaskStore({ connectionString: `postgres://a2a@127.0.0.1:${proxy.port}/postgres`, leaseMs, onError: (err) => void errors.push(err) });
    const agent = await startAgent(scripts.executor, { store, push: { ...allow, backoffMs: 20 } });
    return {
      agent,
      errors,
      async close() {
        await agent.close();
        await store.close();
      },
    };
  }

  /** A task made through the official SDK client, with a push config made by it too; the executor works, waits on `go`, yields "one", waits on `end`, then `last`. */
  async function gatedTask(agent: Awaited<ReturnType<typeof blipAgent>>["agent"], name: string, last: () => AsyncGenerator<Record<string, unknown>>) {
    const go = deferred();
    const end = deferred();
    const key = scripts.add(name, async function* () {
      // WORKING before the config is made: SendMessage answers with the task once it runs.
      yield { state: TaskState.WORKING };
      await go.promise;
      yield chunk("one", "out");
      await end.promise;
      yield* last();
    } as never);
    const client = await agent.client("JSONRPC");
    const task = asTask(await client.sendMessage(send(key, { returnImmediately: true })));
    const path = `/${name}/${task.id}`;
    await client.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url(path), token: "t" }));
    return { path, go, end };
  }

  const kinds = (path: string) => receiver.on(path).map((r) => kindOf(r.body));

  test("a read-back reset: the task's next write reads the rows again, the older first", async () => {
    const blip = await blipAgent();
    try {
      const { path, go, end } = await gatedTask(blip.agent, "next-write", async function* () {
        yield chunk("two", "out", { append: true, last: true });
      });
      const cut = proxy.cutWhenSent(readBack);
      go.resolve();
      await cut;
      end.resolve();
      await receiver.when("the COMPLETED", () => kinds(path).includes("status:TASK_STATE_COMPLETED"));
      await until("the outbox to empty", async () => (await outboxRows()) === 0);
      expect(kinds(path)).toEqual(["artifact:one", "artifact:two", "status:TASK_STATE_COMPLETED"]);
      expect(blip.errors.length).toBeGreaterThan(0);
    } finally {
      await blip.close();
    }
  });

  test("a read-back reset of the task's last write: the instance reads it again itself after a backoff, not after a restart", async () => {
    const blip = await blipAgent();
    try {
      const { path, go, end } = await gatedTask(blip.agent, "last-write", async function* () {
        yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
      });
      go.resolve();
      await receiver.when("the artifact", () => kinds(path).includes("artifact:one"));
      const cut = proxy.cutWhenSent(readBack);
      end.resolve();
      await cut;
      // No write of the task follows: only the instance's own retry sends it (within a lease, 1.5 s).
      await receiver.when("the INPUT_REQUIRED", () => kinds(path).includes("status:TASK_STATE_INPUT_REQUIRED"), 5000);
      await until("the outbox to empty", async () => (await outboxRows()) === 0);
      expect(kinds(path)).toEqual(["artifact:one", "status:TASK_STATE_INPUT_REQUIRED"]);
    } finally {
      await blip.close();
    }
  });

  test("a delete reset after the receiver took the notification: the row is deleted again while the instance runs, and not sent twice", async () => {
    const blip = await blipAgent();
    try {
      const { path, go, end } = await gatedTask(blip.agent, "delete", async function* () {
        yield chunk("two", "out", { append: true, last: true });
      });
      const cut = proxy.cutWhenSent(deleteRow);
      go.resolve();
      await cut;
      end.resolve();
      await receiver.when("the COMPLETED", () => kinds(path).includes("status:TASK_STATE_COMPLETED"));
      await until("the outbox to empty", async () => (await outboxRows()) === 0, 8000);
      // Two more leases: a row left behind would be renewed, not sent again; nothing more comes.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(kinds(path)).toEqual(["artifact:one", "artifact:two", "status:TASK_STATE_COMPLETED"]);
    } finally {
      await blip.close();
    }
  });

  test("rows taken over from an instance that stopped, whose read-back is reset: the instance that took them sends them itself", async () => {
    const { delivered, open } = await stoppedWithUndelivered("c", call);
    open();
    const cut = proxy.cutWhenSent(readBack);
    const storeB = await createPostgresTaskStore({ connectionString: `postgres://a2a@127.0.0.1:${proxy.port}/postgres`, leaseMs: 400, onError: () => undefined });
    const b = createA2AServiceTaskHandler(quick, { store: storeB, push: allow });
    try {
      await cut;
      await receiver.when("B to deliver A's notifications", () => delivered.length >= 4, 10_000);
      expect(delivered.map((r) => kindOf(r.body))).toEqual(["task", "artifact:one", "artifact:two", "status:TASK_STATE_COMPLETED"]);
      await until("the outbox to empty", async () => (await outboxRows()) === 0);
    } finally {
      await b.close();
      await storeB.close();
    }
  });
});
