/**
 * ListTasks (paging, order, filters, artifacts) and push notifications
 * (configs from CreateTaskPushNotificationConfig and from
 * SendMessageConfiguration, what a loopback receiver gets, retries, config
 * CRUD, the SSRF guard) of the generated task handler, on JSON-RPC,
 * HTTP+JSON and gRPC through the official @a2a-js/sdk clients.
 *
 * 7. ListTasks.
 * 8. Push delivery.
 */
import { jest } from "@jest/globals";
import { TaskState as S, type Task as SdkTask } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { TaskState } from "../../generated/a2a_pb.js";
import {
  BINDINGS,
  Receiver,
  Scripts,
  asTask,
  chunk,
  deferred,
  errorKind,
  failure,
  listParams,
  pushConfig,
  rawRest,
  send,
  startAgent,
  textOfParts,
  timeMs,
  until,
  type BindingName,
  type TestAgent,
} from "../support/task-clients.js";

// Real sockets on a busy two-core machine: more than jest's 5 s default, never a wait of its own.
jest.setTimeout(30_000);

const scripts = new Scripts();
let agent: TestAgent;
/** The same agent without the loopback allowance: the SSRF guard as deployed. */
let strict: TestAgent;
let receiver: Receiver;

// Ids that sort in the order they were made, so tasks whose status
// timestamps tie (same millisecond) still have one expected order.
let nextId = 0;
const orderedId = (kind: string) => `${kind}-${String(++nextId).padStart(8, "0")}`;

beforeAll(async () => {
  receiver = await new Receiver().start();
  agent = await startAgent(scripts.executor, { newId: orderedId, push: { allow: ["127.0.0.0/8"], backoffMs: 20 } });
  strict = await startAgent(scripts.executor);
});

afterAll(async () => {
  await agent?.close();
  await strict?.close();
  await receiver?.stop();
});

const quick = scripts.add("quick", async function* () {
  yield { state: TaskState.WORKING };
  yield chunk("made", "out");
});
const asking = scripts.add("asking", async function* () {
  yield { state: TaskState.INPUT_REQUIRED, message: "and then?" };
});
const throwing = scripts.add("throwing", async function* () {
  yield { state: TaskState.WORKING };
  throw new Error("expected by the test");
});

/** A push body as a label like the stream events': `task:SUBMITTED`, `status:WORKING`, `artifact:<id>:<text>+!`. */
function pushLabel(body: string): string {
  const json = JSON.parse(body) as Record<string, { status?: { state?: string }; artifact?: { artifactId: string; parts: { text?: string }[] }; append?: boolean; lastChunk?: boolean }>;
  const [kind, ...more] = Object.keys(json);
  if (more.length > 0) return `several payloads: ${body}`;
  const v = json[kind!]!;
  const state = (v.status?.state ?? "none").replace(/^TASK_STATE_/, "");
  if (kind === "task") return `task:${state}`;
  if (kind === "statusUpdate") return `status:${state}`;
  if (kind === "artifactUpdate") return `artifact:${v.artifact?.artifactId}:${(v.artifact?.parts ?? []).map((p) => p.text ?? "").join("")}${v.append ? "+" : ""}${v.lastChunk ? "!" : ""}`;
  return `${kind}?`;
}

const completedOn = (path: string) => () => receiver.on(path).some((r) => pushLabel(r.body) === "status:COMPLETED");

describe.each(BINDINGS)("%s", (binding: BindingName) => {
  let client: Client;

  beforeAll(async () => {
    client = await agent.client(binding);
  });

  const list = (f: Parameters<typeof listParams>[0]) => client.listTasks(listParams(f));
  const make = async (key: string, contextId: string) => asTask(await client.sendMessage(send(key, { contextId })));
  const ids = (tasks: readonly SdkTask[]) => tasks.map((t) => t.id);
  /**
   * One page of a task's push configs. The SDK's REST transport sends
   * neither pageSize nor pageToken for ListTaskPushNotificationConfigs, so
   * on HTTP+JSON the page is asked for with fetch. Rejects with the error kind.
   */
  const listConfigs = async (taskId: string, pageSize: number, pageToken: string): Promise<{ ids: string[]; nextPageToken: string }> => {
    if (binding === "HTTP+JSON") {
      const query = new URLSearchParams({ pageSize: String(pageSize), ...(pageToken === "" ? {} : { pageToken }) });
      const got = await rawRest(agent.server, "GET", `/tasks/${encodeURIComponent(taskId)}/pushNotificationConfigs?${query}`);
      if (got.kind !== "ok") throw new Error(got.kind);
      // ProtoJSON leaves out an empty nextPageToken here (not a REQUIRED field of this response).
      const page = got.result as { configs?: { id: string }[]; nextPageToken?: string };
      return { ids: (page.configs ?? []).map((c) => c.id), nextPageToken: page.nextPageToken ?? "" };
    }
    try {
      const page = await client.listTaskPushNotificationConfig({ tenant: "", taskId, pageSize, pageToken });
      return { ids: page.configs.map((c) => c.id), nextPageToken: page.nextPageToken };
    } catch (err) {
      throw new Error(errorKind(binding, err));
    }
  };

  describe("7. ListTasks", () => {
    test("7 tasks by pages of 3: 3, 3, 1, nextPageToken empty at the end, newest status first, totalSize 7", async () => {
      const contextId = `ctx-paging-${binding}`;
      const made: string[] = [];
      for (let i = 0; i < 7; i++) made.push((await make(quick, contextId)).id);
      const newestFirst = [...made].reverse();

      const p1 = await list({ contextId, pageSize: 3 });
      const p2 = await list({ contextId, pageSize: 3, pageToken: p1.nextPageToken });
      const p3 = await list({ contextId, pageSize: 3, pageToken: p2.nextPageToken });
      expect([p1, p2, p3].map((p) => p.tasks.length)).toEqual([3, 3, 1]);
      expect([p1, p2, p3].map((p) => p.pageSize)).toEqual([3, 3, 3]);
      expect([p1, p2, p3].map((p) => p.totalSize)).toEqual([7, 7, 7]);
      expect(p1.nextPageToken).not.toBe("");
      expect(p2.nextPageToken).not.toBe("");
      expect(p3.nextPageToken).toBe("");
      const all = [...p1.tasks, ...p2.tasks, ...p3.tasks];
      expect(ids(all)).toEqual(newestFirst);
      const times = all.map((t) => timeMs(t.status?.timestamp));
      expect(times).toEqual([...times].sort((a, b) => b - a));

      // Unset pageSize is 50.
      const whole = await list({ contextId });
      expect([whole.pageSize, whole.totalSize, whole.nextPageToken, ids(whole.tasks)]).toEqual([50, 7, "", newestFirst]);
    });

    test("tasks added while paging cause neither duplicates nor skips among the ones listed before", async () => {
      const contextId = `ctx-paging-growing-${binding}`;
      const made: string[] = [];
      for (let i = 0; i < 7; i++) made.push((await make(quick, contextId)).id);
      const p1 = await list({ contextId, pageSize: 3 });
      const added = [(await make(quick, contextId)).id, (await make(quick, contextId)).id];
      const p2 = await list({ contextId, pageSize: 3, pageToken: p1.nextPageToken });
      const p3 = await list({ contextId, pageSize: 3, pageToken: p2.nextPageToken });
      const seen = [...p1.tasks, ...p2.tasks, ...p3.tasks].map((t) => t.id);
      expect(seen).toEqual([...made].reverse());
      expect(p3.nextPageToken).toBe("");
      expect(ids((await list({ contextId })).tasks)).toEqual([...made, ...added].reverse());
    });

    test("a task updated between pages moves ahead of the cursor: later pages go on without it, a new listing has it first (D78)", async () => {
      const contextId = `ctx-paging-updated-${binding}`;
      const made: string[] = [];
      for (let i = 0; i < 4; i++) made.push((await make(asking, contextId)).id);
      const p1 = await list({ contextId, pageSize: 2 });
      expect(ids(p1.tasks)).toEqual([made[3], made[2]]);
      // The oldest one, not listed yet, gets a newer status.
      const continued = asTask(await client.sendMessage(send(quick, { taskId: made[0]! })));
      expect(continued.status?.state).toBe(S.TASK_STATE_COMPLETED);
      const p2 = await list({ contextId, pageSize: 2, pageToken: p1.nextPageToken });
      expect([ids(p2.tasks), p2.nextPageToken]).toEqual([[made[1]], ""]);
      expect(ids((await list({ contextId })).tasks)).toEqual([made[0], made[3], made[2], made[1]]);
    });

    test("filters: contextId, status, statusTimestampAfter", async () => {
      const a = `ctx-filter-a-${binding}`;
      const b = `ctx-filter-b-${binding}`;
      const done1 = await make(quick, a);
      const waiting = await make(asking, a);
      const failed = await make(throwing, a);
      const done2 = await make(quick, a);
      const elsewhere = await make(quick, b);
      expect([done1, waiting, failed, done2].map((t) => t.status?.state)).toEqual([S.TASK_STATE_COMPLETED, S.TASK_STATE_INPUT_REQUIRED, S.TASK_STATE_FAILED, S.TASK_STATE_COMPLETED]);

      expect(ids((await list({ contextId: a })).tasks)).toEqual(ids([done2, failed, waiting, done1]));
      expect(ids((await list({ contextId: b })).tasks)).toEqual([elsewhere.id]);
      expect(ids((await list({ contextId: a, status: S.TASK_STATE_COMPLETED })).tasks)).toEqual(ids([done2, done1]));
      expect(ids((await list({ contextId: a, status: S.TASK_STATE_INPUT_REQUIRED })).tasks)).toEqual([waiting.id]);
      expect(ids((await list({ contextId: a, status: S.TASK_STATE_FAILED })).tasks)).toEqual([failed.id]);
      const none = await list({ contextId: a, status: S.TASK_STATE_CANCELED });
      expect([none.tasks, none.totalSize, none.nextPageToken]).toEqual([[], 0, ""]);
      // The status filter alone: every INPUT_REQUIRED task of the caller, this one among them.
      const interrupted = (await list({ status: S.TASK_STATE_INPUT_REQUIRED, pageSize: 100 })).tasks;
      expect(ids(interrupted)).toContain(waiting.id);
      for (const t of interrupted) expect(t.status?.state).toBe(S.TASK_STATE_INPUT_REQUIRED);

      // A task whose status changes is the newest again.
      const continued = asTask(await client.sendMessage(send(quick, { taskId: waiting.id })));
      expect(continued.status?.state).toBe(S.TASK_STATE_COMPLETED);
      expect(ids((await list({ contextId: a })).tasks)).toEqual(ids([waiting, done2, failed, done1]));

      // statusTimestampAfter: at or after. Two tasks, a millisecond boundary, two more.
      const c = `ctx-filter-time-${binding}`;
      const early = [await make(quick, c), await make(quick, c)];
      const lastEarly = timeMs(early[1]!.status?.timestamp);
      await until("the clock to pass the earlier tasks' timestamps", () => Date.now() > lastEarly);
      const late = [await make(quick, c), await make(quick, c)];
      const from = timeMs(late[0]!.status?.timestamp);
      expect(from).toBeGreaterThan(lastEarly);
      expect(ids((await list({ contextId: c, statusTimestampAfter: new Date(from).toISOString() })).tasks)).toEqual(ids([late[1]!, late[0]!]));
      expect(ids((await list({ contextId: c, statusTimestampAfter: new Date(timeMs(early[0]!.status?.timestamp)).toISOString() })).tasks)).toEqual(
        ids([late[1]!, late[0]!, early[1]!, early[0]!]),
      );
      // 0.4 ms after the first late task's status time: that task is before it, though not by a whole
      // millisecond. The SDK's gRPC client sends the filter through a Date, which drops the 0.4 ms.
      if (binding !== "GRPC") {
        const justAfter = new Date(from).toISOString().replace(/Z$/, "400Z");
        expect(ids((await list({ contextId: c, statusTimestampAfter: justAfter })).tasks)).toEqual(ids(late.filter((t) => timeMs(t.status?.timestamp) > from).reverse()));
      }
      const future = await list({ contextId: c, statusTimestampAfter: new Date(Date.now() + 3_600_000).toISOString() });
      expect([future.tasks, future.totalSize]).toEqual([[], 0]);
    });

    test("includeArtifacts: unset or false omits the artifacts, true includes them", async () => {
      const contextId = `ctx-artifacts-${binding}`;
      const task = await make(quick, contextId);
      expect(task.artifacts.length).toBe(1);
      const artifactsOf = async (includeArtifacts: boolean | undefined) => (await list({ contextId, includeArtifacts })).tasks.map((t) => t.artifacts.map((a) => textOfParts(a.parts)));
      expect(await artifactsOf(undefined)).toEqual([[]]);
      expect(await artifactsOf(false)).toEqual([[]]);
      expect(await artifactsOf(true)).toEqual([["made"]]);
      // GetTask is not affected by it.
      expect((await client.getTask({ tenant: "", id: task.id })).artifacts.length).toBe(1);
    });

    test("pageSize 0 or 101, a bogus pageToken, a negative historyLength: InvalidParams", async () => {
      const contextId = `ctx-paging-${binding}`;
      expect(await failure(binding, () => list({ contextId, pageSize: 0 }))).toBe("InvalidParams");
      expect(await failure(binding, () => list({ contextId, pageSize: 101 }))).toBe("InvalidParams");
      expect(await failure(binding, () => list({ contextId, pageSize: -1 }))).toBe("InvalidParams");
      expect(await failure(binding, () => list({ contextId, pageToken: "not-a-token" }))).toBe("InvalidParams");
      // Well-formed base64url of JSON that is not a cursor.
      expect(await failure(binding, () => list({ contextId, pageToken: Buffer.from('{"offset":3}').toString("base64url") }))).toBe("InvalidParams");
      expect(await failure(binding, () => list({ contextId, historyLength: -1 }))).toBe("InvalidParams");
      // The bounds themselves are fine.
      expect((await list({ contextId, pageSize: 1 })).pageSize).toBe(1);
      expect((await list({ contextId, pageSize: 100 })).pageSize).toBe(100);
      const task = await make(quick, `ctx-bad-${binding}`);
      expect(await failure(binding, () => client.getTask({ tenant: "", id: task.id, historyLength: -1 }))).toBe("InvalidParams");
      expect(await failure(binding, () => client.sendMessage(send(quick, { historyLength: -1 })))).toBe("InvalidParams");
    });
  });

  // Binary protobuf has no empty list to show: the JSON bindings only.
  (binding === "GRPC" ? test.skip : test)("includeArtifacts: true shows artifacts: [] for a task without any, on the JSON bindings' wire (spec 3.1.4, checklist 15 #18)", async () => {
    const contextId = `ctx-no-artifacts-${binding}`;
    const task = await make(asking, contextId);
    expect(task.artifacts ?? []).toEqual([]);
    const wire = async (includeArtifacts: boolean | undefined): Promise<Record<string, unknown>[]> => {
      const query = new URLSearchParams({ contextId, ...(includeArtifacts === undefined ? {} : { includeArtifacts: String(includeArtifacts) }) });
      if (binding === "HTTP+JSON") {
        const got = await rawRest(agent.server, "GET", `/tasks?${query}`);
        return (got.result as { tasks: Record<string, unknown>[] }).tasks;
      }
      const res = await fetch(agent.server.jsonRpcUrl!, {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: { contextId, ...(includeArtifacts === undefined ? {} : { includeArtifacts }) } }),
      });
      return ((await res.json()) as { result: { tasks: Record<string, unknown>[] } }).result.tasks;
    };
    expect((await wire(true)).map((t) => [t.id, t.artifacts])).toEqual([[task.id, []]]);
    for (const omitted of [false, undefined]) expect((await wire(omitted)).map((t) => [t.id, Object.hasOwn(t, "artifacts")])).toEqual([[task.id, false]]);
  });

  describe("8. push delivery", () => {
    test("a config made with CreateTaskPushNotificationConfig: each later update as HTTP+JSON StreamResponse JSON, in order, with its Authorization", async () => {
      const gate = deferred();
      const key = scripts.add("pushed", async function* () {
        yield { state: TaskState.WORKING };
        await gate.promise;
        yield chunk("a", "out");
        yield chunk("b", "out", { append: true });
        yield chunk("c", "out", { append: true, last: true });
      });
      const task = asTask(await client.sendMessage(send(key, { returnImmediately: true })));
      const path = `/created/${binding}`;
      const config = await client.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url(path), scheme: "Bearer", credentials: `hook-secret-${binding}` }));
      expect(config.id).not.toBe("");
      expect([config.taskId, config.url, config.authentication?.scheme, config.authentication?.credentials]).toEqual([task.id, receiver.url(path), "Bearer", `hook-secret-${binding}`]);

      gate.resolve();
      await receiver.when("the COMPLETED notification", completedOn(path));
      const got = receiver.on(path);
      expect(got.map((r) => pushLabel(r.body))).toEqual(["artifact:out:a", "artifact:out:b+", "artifact:out:c+!", "status:COMPLETED"]);
      for (const r of got) {
        expect(r.headers["content-type"]).toBe("application/a2a+json");
        expect(r.headers["authorization"]).toBe(`Bearer hook-secret-${binding}`);
      }
      // ProtoJSON, as HTTP+JSON writes it: camelCase, enum names, parts by their oneof member.
      const final = await client.getTask({ tenant: "", id: task.id });
      expect(JSON.parse(got[0]!.body)).toEqual({
        artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact: { artifactId: "out", parts: [{ text: "a" }] } },
      });
      const completed = JSON.parse(got[3]!.body) as { statusUpdate: { taskId: string; contextId: string; status: { state: string; timestamp: string } } };
      expect(completed.statusUpdate).toMatchObject({ taskId: task.id, contextId: task.contextId, status: { state: "TASK_STATE_COMPLETED" } });
      expect(timeMs(completed.statusUpdate.status.timestamp)).toBe(timeMs(final.status?.timestamp));
    });

    test("a config in SendMessageConfiguration.taskPushNotificationConfig: every update from the Task on", async () => {
      const path = `/in-send/${binding}`;
      const task = asTask(await client.sendMessage(send(quick, { push: { url: receiver.url(path), scheme: "Basic", credentials: "dXNlcjpwYXNz" } })));
      expect(task.status?.state).toBe(S.TASK_STATE_COMPLETED);
      await receiver.when("the COMPLETED notification", completedOn(path));
      const got = receiver.on(path);
      expect(got.map((r) => pushLabel(r.body))).toEqual(["task:SUBMITTED", "status:WORKING", "artifact:out:made", "status:COMPLETED"]);
      for (const r of got) {
        expect(r.headers["content-type"]).toBe("application/a2a+json");
        expect(r.headers["authorization"]).toBe("Basic dXNlcjpwYXNz");
      }
      expect((JSON.parse(got[0]!.body) as { task: { id: string } }).task.id).toBe(task.id);
      // The config is the task's now, with an id of the agent's.
      const configs = await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
      expect(configs.configs.map((c) => [c.taskId, c.url])).toEqual([[task.id, receiver.url(path)]]);
      expect(configs.configs[0]!.id).not.toBe("");
    });

    test("a receiver that answers 500 to the first 2 attempts of each notification still gets every one, in order", async () => {
      const path = `/flaky/${binding}`;
      const previous = receiver.answer;
      receiver.answer = (req, attempt) => (req.path === path && attempt <= 2 ? 500 : previous(req, attempt));
      try {
        const key = scripts.add("retried", async function* () {
          yield { state: TaskState.WORKING };
          yield chunk("a", "out");
          yield chunk("b", "out", { append: true, last: true });
        });
        asTask(await client.sendMessage(send(key, { push: { url: receiver.url(path) } })));
        await receiver.when("the COMPLETED notification to be accepted", () => receiver.on(path).filter((r) => pushLabel(r.body) === "status:COMPLETED").length >= 3);
        const bodies = receiver.on(path).map((r) => r.body);
        const distinct = [...new Set(bodies)];
        expect(distinct.map(pushLabel)).toEqual(["task:SUBMITTED", "status:WORKING", "artifact:out:a", "artifact:out:b+!", "status:COMPLETED"]);
        // Each one three times (500, 500, 200) before the next.
        expect(bodies).toEqual(distinct.flatMap((b) => [b, b, b]));
      } finally {
        receiver.answer = previous;
      }
    });

    test("a deleted config is sent nothing more: not what was queued for it, nor a retry of the one being sent", async () => {
      // Two configs on one url share its lane, in order: the kept one's notifications show when the
      // deleted one's would have been sent.
      const path = `/deleted/${binding}`;
      const release = deferred<number>();
      const previous = receiver.answer;
      receiver.answer = (req, attempt) => (req.path === path && req.headers["x-a2a-notification-token"] === "deleted" ? (attempt === 1 ? release.promise : 500) : previous(req, attempt));
      try {
        const gate = deferred();
        const key = scripts.add("pushed-then-deleted", async function* () {
          yield { state: TaskState.WORKING };
          await gate.promise;
          yield chunk("a", "out");
          yield chunk("b", "out", { append: true, last: true });
        });
        const task = asTask(await client.sendMessage(send(key, { returnImmediately: true })));
        const deleted = await client.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url(path), token: "deleted" }));
        await client.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url(path), token: "kept" }));
        gate.resolve();
        const fromDeleted = () => receiver.on(path).filter((r) => r.headers["x-a2a-notification-token"] === "deleted");
        await receiver.when("the deleted config's first notification, held", () => fromDeleted().length === 1);
        await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: deleted.id });
        release.resolve(500);
        await receiver.when("the COMPLETED notification of the kept config", completedOn(path));
        expect(fromDeleted().map((r) => pushLabel(r.body))).toEqual(["artifact:out:a"]);
        expect(receiver.on(path).filter((r) => r.headers["x-a2a-notification-token"] === "kept").map((r) => pushLabel(r.body))).toEqual(["artifact:out:a", "artifact:out:b+!", "status:COMPLETED"]);
      } finally {
        release.resolve(500);
        receiver.answer = previous;
      }
    });

    test("a config replaced by its id is a delete and a create: what was queued for the one before is dropped, later updates go to the new one", async () => {
      // One url, so one lane (D27): whatever the config before still had queued would come before
      // the new one's notifications. The tokens tell them apart.
      const path = `/replaced/${binding}`;
      const tokenOf = (r: { headers: Record<string, unknown> }) => r.headers["x-a2a-notification-token"];
      const release = deferred<number>();
      const previous = receiver.answer;
      receiver.answer = (req, attempt) => (req.path === path && tokenOf(req) === "before" ? (attempt === 1 ? release.promise : 500) : previous(req, attempt));
      try {
        const gate = deferred();
        const more = deferred();
        const key = scripts.add("pushed-then-replaced", async function* () {
          yield { state: TaskState.WORKING };
          await gate.promise;
          yield chunk("a", "out");
          yield chunk("b", "out", { append: true });
          await more.promise;
          yield chunk("c", "out", { append: true, last: true });
        });
        const task = asTask(await client.sendMessage(send(key, { returnImmediately: true })));
        await client.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url(path), token: "before", id: "swapped" }));
        gate.resolve();
        await receiver.when("the first notification of the config before, held", () => receiver.on(path).length === 1);
        // "b", queued behind the held "a", is dropped with it; the updates from now on go to the new config.
        const replaced = await client.createTaskPushNotificationConfig(pushConfig(task.id, { url: receiver.url(path), token: "after", id: "swapped" }));
        expect(replaced.token).toBe("after");
        release.resolve(500);
        more.resolve();
        await receiver.when("the COMPLETED notification of the new config", completedOn(path));
        // The held one failed and is not tried again.
        expect(receiver.on(path).map((r) => `${String(tokenOf(r))} ${pushLabel(r.body)}`)).toEqual(["before artifact:out:a", "after artifact:out:c+!", "after status:COMPLETED"]);
      } finally {
        release.resolve(500);
        receiver.answer = previous;
      }
    });

    test("a task holds at most 10 push configs: an eleventh is RESOURCE_EXHAUSTED (HTTP 429, JSON-RPC -31429); replacing one by its id, or one more after a delete, is not", async () => {
      const task = await make(asking, `ctx-many-${binding}`);
      const url = receiver.url(`/many/${binding}`);
      const made = [];
      for (let i = 0; i < 10; i++) made.push(await client.createTaskPushNotificationConfig(pushConfig(task.id, { url: `${url}/${i}` })));
      const exhausted = binding === "JSONRPC" ? "jsonrpc -31429" : "ResourceExhausted";
      expect(await failure(binding, () => client.createTaskPushNotificationConfig(pushConfig(task.id, { url: `${url}/10` })))).toBe(exhausted);
      // In SendMessage's configuration too.
      expect(await failure(binding, () => client.sendMessage(send("more", { taskId: task.id, push: { url: `${url}/11` } })))).toBe(exhausted);
      expect((await client.createTaskPushNotificationConfig(pushConfig(task.id, { url: `${url}/again`, id: made[3]!.id }))).url).toBe(`${url}/again`);
      await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: made[0]!.id });
      await client.createTaskPushNotificationConfig(pushConfig(task.id, { url: `${url}/10` }));
      const all = await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
      expect(all.configs.length).toBe(10);
    });

    test("config CRUD: generated ids, list with paging, get, delete twice, get after delete: TaskNotFound", async () => {
      const task = await make(asking, `ctx-crud-${binding}`);
      const url = receiver.url(`/crud/${binding}`);
      const one = await client.createTaskPushNotificationConfig(pushConfig(task.id, { url, scheme: "Bearer", credentials: "one" }));
      const two = await client.createTaskPushNotificationConfig(pushConfig(task.id, { url: `${url}/2` }));
      const mine = await client.createTaskPushNotificationConfig(pushConfig(task.id, { url: `${url}/mine`, id: "mine" }));
      expect(one.id).not.toBe("");
      expect(two.id).not.toBe("");
      expect(one.id).not.toBe(two.id);
      expect(mine.id).toBe("mine");

      const got = await client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: one.id });
      expect([got.id, got.taskId, got.url, got.authentication?.scheme, got.authentication?.credentials]).toEqual([one.id, task.id, url, "Bearer", "one"]);

      const page1 = await listConfigs(task.id, 2, "");
      expect(page1.ids.length).toBe(2);
      expect(page1.nextPageToken).not.toBe("");
      const page2 = await listConfigs(task.id, 2, page1.nextPageToken);
      expect(page2.ids.length).toBe(1);
      expect(page2.nextPageToken).toBe("");
      expect([...page1.ids, ...page2.ids].sort()).toEqual([one.id, two.id, "mine"].sort());
      const whole = await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
      expect([whole.configs.length, whole.nextPageToken]).toEqual([3, ""]);
      expect(await listConfigs(task.id, 2, "bogus").catch((err: Error) => err.message)).toBe("InvalidParams");

      await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: two.id });
      await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: two.id });
      expect(await failure(binding, () => client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: two.id }))).toBe("TaskNotFound");
      const after = await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
      expect(after.configs.map((c) => c.id).sort()).toEqual([one.id, "mine"].sort());
    });

    test("the SSRF guard: a loopback url without the allowance, and a url that is not http(s), are InvalidParams", async () => {
      const guarded = await strict.client(binding);
      const task = asTask(await guarded.sendMessage(send(asking)));
      const loopback = receiver.url(`/never/${binding}`);
      const localhost = loopback.replace("127.0.0.1", "localhost");
      for (const url of [loopback, localhost, "http://[::1]:9/x", "http://10.0.0.1/x", "http://169.254.169.254/latest/meta-data"]) {
        expect([url, await failure(binding, () => guarded.createTaskPushNotificationConfig(pushConfig(task.id, { url })))]).toEqual([url, "InvalidParams"]);
      }
      expect(await failure(binding, () => guarded.sendMessage(send(quick, { push: { url: loopback } })))).toBe("InvalidParams");
      expect(await failure(binding, () => guarded.sendMessage(send(quick, { taskId: task.id, push: { url: loopback } })))).toBe("InvalidParams");
      const none = await guarded.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
      expect(none.configs).toEqual([]);

      const allowed = await make(asking, `ctx-scheme-${binding}`);
      for (const url of ["ftp://127.0.0.1/hook", "file:///etc/passwd", "not a url"]) {
        expect([url, await failure(binding, () => client.createTaskPushNotificationConfig(pushConfig(allowed.id, { url })))]).toEqual([url, "InvalidParams"]);
      }
      expect(await failure(binding, () => client.sendMessage(send(quick, { push: { url: "ftp://127.0.0.1/hook" } })))).toBe("InvalidParams");
      expect(receiver.on(`/never/${binding}`)).toEqual([]);
    });
  });
});
