/**
 * What every TaskStore does, run against each store by its own suite
 * (store-memory, store-pglite, store-postgres .test.ts): the store's own
 * methods with tasks of the generated a2a_pb (create, get, each kind of
 * change, ListTasks filters, order, paging, totals and owner isolation, push
 * configs and their paging, bad page tokens), then the task handler on the
 * store (a multi-turn task, a stream, cancel, listing) and the three
 * bindings through the official SDK clients (configs and tasks as answered
 * on the wire). A store that outlives its process (`reopen`) also shows a
 * fresh instance reading what the first wrote.
 *
 * Each test works in a tenant of its own, so the stores are shared by the
 * tests of a suite and never emptied.
 */
import { jest } from "@jest/globals";
import { create, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import type { A2ACallContext } from "protoc-gen-a2a/runtime";
import { BadPageTokenError, type PushConfigLike, type StoredTask, type TaskStore } from "protoc-gen-a2a/runtime/tasks";
import {
  ArtifactSchema,
  MessageSchema,
  PartSchema,
  Role,
  RoleSchema,
  SendMessageRequestSchema,
  StreamResponseSchema,
  TaskArtifactUpdateEventSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
  TaskState,
  TaskStateSchema,
  TaskStatusSchema,
  TaskStatusUpdateEventSchema,
  type Task,
} from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { asTask, BINDINGS, listParams, pushConfig, send as sdkSend, startAgent, textOfParts } from "../support/task-clients.js";

export const schemas = {
  task: TaskSchema,
  taskStatus: TaskStatusSchema,
  message: MessageSchema,
  artifact: ArtifactSchema,
  statusUpdate: TaskStatusUpdateEventSchema,
  artifactUpdate: TaskArtifactUpdateEventSchema,
  streamResponse: StreamResponseSchema,
  taskState: TaskStateSchema,
  role: RoleSchema,
};

export interface StoreUnderTest {
  /** The store the suite shares; opened in beforeAll. */
  open(): Promise<TaskStore>;
  /** A new instance on the same data (a restarted agent), for stores that keep it. */
  reopen?: () => Promise<TaskStore>;
  close(store: TaskStore): Promise<void>;
}

let counter = 0;
const unique = (what: string) => `${what}-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

const text = (t: string, role = Role.USER) => create(MessageSchema, { messageId: unique("m"), role, parts: [{ content: { case: "text", value: t } }] });

function newTask(o: { state?: TaskState; ms?: number; contextId?: string; id?: string } = {}): Task {
  const id = o.id ?? unique("task");
  const contextId = o.contextId ?? unique("ctx");
  const first = text("hello");
  first.taskId = id;
  first.contextId = contextId;
  return create(TaskSchema, {
    id,
    contextId,
    status: { state: o.state ?? TaskState.SUBMITTED, timestamp: timestampFromMs(o.ms ?? Date.now()) },
    history: [first],
    metadata: { made: "by the conformance suite" },
  });
}

/** The text of parts of the generated a2a_pb (textOfParts reads the SDK's). */
const said = (parts: readonly { content: { case: string | undefined; value?: unknown } }[]) =>
  parts.map((p) => (p.content.case === "text" ? String(p.content.value) : "")).join("");

const record = (task: Task, tenant: string, owner = "alice"): StoredTask => ({ tenant, owner, task: task as unknown as StoredTask["task"] });

const query = (o: { contextId?: string; state?: TaskState; statusAfterMs?: number; pageSize?: number; pageToken?: string } = {}) => ({
  contextId: o.contextId ?? "",
  state: o.state ?? TaskState.UNSPECIFIED,
  statusAfterMs: o.statusAfterMs,
  pageSize: o.pageSize ?? 50,
  pageToken: o.pageToken ?? "",
});

function callContext(tenant = "", subject?: string): A2ACallContext {
  return {
    binding: "JSONRPC",
    headers: new Headers(),
    signal: new AbortController().signal,
    principal: subject === undefined ? undefined : { subject },
    protocolVersion: "1.0",
    requestedExtensions: [],
    activatedExtensions: new Set(),
    tenant,
  };
}

export function describeTaskStore(name: string, under: StoreUnderTest): void {
  // Real databases on a busy two-core machine: more than jest's 5 s default, never a wait of its own.
  jest.setTimeout(30_000);

  describe(`${name}: the TaskStore contract`, () => {
    let store: TaskStore;
    beforeAll(async () => {
      store = await under.open();
      store.attach?.(schemas);
    });
    afterAll(async () => {
      if (store !== undefined) await under.close(store);
    });

    test("a created task is read back equal, with its tenant and owner; an unknown id is undefined", async () => {
      const tenant = unique("tenant");
      const task = newTask();
      await store.create(record(task, tenant, "bob"));
      const got = await store.get(task.id);
      expect(got?.tenant).toBe(tenant);
      expect(got?.owner).toBe("bob");
      expect(got?.task).toEqual(task);
      expect(await store.get(unique("nothing"))).toBeUndefined();
    });

    test("creating a task with the id of one that is not finished is refused, and that task is kept as it was, whoever asked", async () => {
      const tenant = unique("tenant");
      const running = newTask({ state: TaskState.WORKING });
      await store.create(record(running, tenant, "alice"));
      // A newId that gave the same id twice: another owner's new task, then the same owner's.
      for (const owner of ["mallory", "alice"]) {
        const again = newTask({ id: running.id, state: TaskState.SUBMITTED });
        let refused = false;
        try {
          await store.create(record(again, tenant, owner));
        } catch {
          refused = true;
        }
        expect(refused).toBe(true);
        const got = await store.get(running.id);
        expect(got?.owner).toBe("alice");
        expect(got?.task).toEqual(running);
      }
    });

    test("a task whose metadata nests deeper than a client's bytes may (60 JSON levels) is read back, live and finished", async () => {
      // A Struct or Value nests two messages per JSON level: past the binary decoder's bound of 100 for a
      // client's bytes, within what ProtoJSON takes. A store reads its own bytes back (found by the fuzz campaign).
      let deep: JsonValue = "bottom";
      for (let i = 0; i < 60; i++) deep = [deep];
      const task = newTask();
      task.metadata = { deep };
      const r = record(task, unique("tenant"));
      await store.create(r);
      expect((await store.get(task.id))?.task.metadata).toEqual({ deep });
      task.status = create(TaskStatusSchema, { state: TaskState.COMPLETED, timestamp: timestampFromMs(Date.now()) });
      await store.update(r, { kind: "status", terminal: true });
      expect((await store.get(task.id))?.task.metadata).toEqual({ deep });
    });

    test("each kind of change is kept: status with its message, artifact added and appended to, history, terminal", async () => {
      const tenant = unique("tenant");
      const task = newTask();
      const r = record(task, tenant);
      await store.create(r);

      const working = text("working on it", Role.AGENT);
      task.status = create(TaskStatusSchema, { state: TaskState.WORKING, message: working, timestamp: timestampFromMs(Date.now()) });
      task.history.push(working);
      await store.update(r, { kind: "status", terminal: false });

      task.artifacts.push(create(ArtifactSchema, { artifactId: "a1", name: "out", parts: [{ content: { case: "text", value: "one " } }] }));
      await store.update(r, { kind: "artifact", index: 0 });
      task.artifacts[0]!.parts.push(create(PartSchema, { content: { case: "text", value: "two" } }));
      await store.update(r, { kind: "artifact", index: 0 });
      task.artifacts.push(create(ArtifactSchema, { artifactId: "a2", parts: [{ content: { case: "text", value: "second" } }], metadata: { n: 2 } }));
      await store.update(r, { kind: "artifact", index: 1 });

      task.history.push(text("and more"));
      await store.update(r, { kind: "history" });

      task.status = create(TaskStatusSchema, { state: TaskState.COMPLETED, timestamp: timestampFromMs(Date.now() + 1) });
      await store.update(r, { kind: "status", terminal: true });

      const got = (await store.get(task.id))?.task as unknown as Task | undefined;
      expect(got).toEqual(task);
      expect(got?.history.map((m) => said(m.parts))).toEqual(["hello", "working on it", "and more"]);
      expect(got?.artifacts.map((a) => [a.artifactId, a.parts.length])).toEqual([
        ["a1", 2],
        ["a2", 1],
      ]);
      expect(got?.status?.state).toBe(TaskState.COMPLETED);
    });

    test("ListTasks: only the owner's tasks in the tenant, newest status first (ties by id), filters, totals, pages", async () => {
      const tenant = unique("tenant");
      const base = Date.UTC(2026, 0, 1);
      const ctx = unique("ctx");
      // Two share a status time: they go by id, descending.
      const specs = [
        { id: "t-a", ms: base + 1000, contextId: ctx, state: TaskState.WORKING },
        { id: "t-b", ms: base + 3000, contextId: ctx, state: TaskState.COMPLETED },
        { id: "t-c", ms: base + 3000, contextId: unique("ctx"), state: TaskState.WORKING },
        { id: "t-d", ms: base + 2000, contextId: ctx, state: TaskState.WORKING },
        { id: "t-e", ms: base + 5000, contextId: unique("ctx"), state: TaskState.FAILED },
      ].map((s) => ({ ...s, id: `${tenant}-${s.id}` }));
      for (const s of specs) await store.create(record(newTask(s), tenant));
      // Other owners and tenants, with the same context: never seen.
      await store.create(record(newTask({ contextId: ctx, ms: base + 4000 }), tenant, "bob"));
      await store.create(record(newTask({ contextId: ctx, ms: base + 4000 }), unique("tenant")));

      const ids = async (o: Parameters<typeof query>[0] = {}) => {
        const page = await store.list({ tenant, owner: "alice" }, query(o));
        return { ids: page.tasks.map((t) => t.id.slice(tenant.length + 1)), total: page.totalSize, next: page.nextPageToken };
      };
      expect(await ids()).toEqual({ ids: ["t-e", "t-c", "t-b", "t-d", "t-a"], total: 5, next: "" });
      expect(await ids({ contextId: ctx })).toEqual({ ids: ["t-b", "t-d", "t-a"], total: 3, next: "" });
      expect(await ids({ state: TaskState.WORKING })).toEqual({ ids: ["t-c", "t-d", "t-a"], total: 3, next: "" });
      expect(await ids({ statusAfterMs: base + 2000 })).toEqual({ ids: ["t-e", "t-c", "t-b", "t-d"], total: 4, next: "" });
      expect((await store.list({ tenant, owner: "carol" }, query())).totalSize).toBe(0);

      // Pages of two: each task once, in order, the total on every page.
      const seen: string[] = [];
      let token = "";
      let pages = 0;
      do {
        const page = await ids({ pageSize: 2, pageToken: token });
        expect(page.total).toBe(5);
        seen.push(...page.ids);
        token = page.next;
        pages++;
      } while (token !== "");
      expect({ seen, pages }).toEqual({ seen: ["t-e", "t-c", "t-b", "t-d", "t-a"], pages: 3 });

      // A task made newer while a client pages is not answered on a later page.
      const first = await store.list({ tenant, owner: "alice" }, query({ pageSize: 2 }));
      await store.create(record(newTask({ ms: base + 9000 }), tenant));
      const rest = await store.list({ tenant, owner: "alice" }, query({ pageSize: 10, pageToken: first.nextPageToken }));
      expect(rest.tasks.map((t) => t.id.slice(tenant.length + 1))).toEqual(["t-b", "t-d", "t-a"]);

      // Tasks come whole: history and artifacts.
      expect(first.tasks[0]?.history).toHaveLength(1);
    });

    test("a page token no store gave out is BadPageTokenError", async () => {
      const owner = { tenant: unique("tenant"), owner: "alice" };
      for (const token of ["not-a-token", Buffer.from("[1]").toString("base64url"), Buffer.from('["x","y"]').toString("base64url")]) {
        await expect(Promise.resolve().then(() => store.list(owner, query({ pageToken: token })))).rejects.toBeInstanceOf(BadPageTokenError);
      }
      const task = newTask();
      await store.create(record(task, owner.tenant));
      await expect(Promise.resolve().then(() => store.listConfigs(task.id, 0, "%%%"))).rejects.toBeInstanceOf(BadPageTokenError);
    });

    test("push configs: put, replace, get, all of a task's, pages in id order, delete twice", async () => {
      const tenant = unique("tenant");
      const task = newTask();
      const other = newTask();
      await store.create(record(task, tenant));
      await store.create(record(other, tenant));
      const config = (id: string, url: string, auth?: { scheme: string; credentials: string }): PushConfigLike =>
        create(TaskPushNotificationConfigSchema, { tenant, id, taskId: task.id, url, token: `tok-${id}`, authentication: auth }) as unknown as PushConfigLike;
      for (const id of ["c3", "c1", "c5", "c2", "c4"]) await store.putConfig(config(id, `https://example.com/${id}`));
      await store.putConfig(config("c1", "https://example.com/replaced", { scheme: "Bearer", credentials: "secret" }));
      await store.putConfig({ ...config("o1", "https://example.com/other"), taskId: other.id });

      const c1 = await store.getConfig(task.id, "c1");
      expect({ url: c1?.url, token: c1?.token, tenant: c1?.tenant, taskId: c1?.taskId, auth: c1?.authentication && { ...c1.authentication } }).toEqual({
        url: "https://example.com/replaced",
        token: "tok-c1",
        tenant,
        taskId: task.id,
        auth: expect.objectContaining({ scheme: "Bearer", credentials: "secret" }),
      });
      expect((await store.getConfig(task.id, "c2"))?.authentication).toBeUndefined();
      // D112: the version a config was registered with is kept (unset is 1.0), and a replacement sets it.
      expect((await store.getConfig(task.id, "c1"))?.protocolVersion).toBeUndefined();
      await store.putConfig({ ...config("c2", "https://example.com/c2"), protocolVersion: "0.3" });
      expect((await store.getConfig(task.id, "c2"))?.protocolVersion).toBe("0.3");
      expect((await store.configsOf(task.id)).find((c) => c.id === "c2")?.protocolVersion).toBe("0.3");
      expect(await store.getConfig(task.id, "o1")).toBeUndefined();
      expect((await store.configsOf(task.id)).map((c) => c.id).sort()).toEqual(["c1", "c2", "c3", "c4", "c5"]);

      const pages: string[][] = [];
      let token = "";
      do {
        const page = await store.listConfigs(task.id, 2, token);
        pages.push(page.configs.map((c) => c.id));
        token = page.nextPageToken;
      } while (token !== "");
      expect(pages).toEqual([["c1", "c2"], ["c3", "c4"], ["c5"]]);
      expect((await store.listConfigs(task.id, 0, "")).configs).toHaveLength(5);

      await store.deleteConfig(task.id, "c3");
      await store.deleteConfig(task.id, "c3");
      expect((await store.configsOf(task.id)).map((c) => c.id).sort()).toEqual(["c1", "c2", "c4", "c5"]);
      expect((await store.configsOf(other.id)).map((c) => c.id)).toEqual(["o1"]);
      expect(await store.configsOf(unique("nothing"))).toEqual([]);
    });

    test("a store keeps the tasks of one a2a_pb: attaching another Task type is refused", () => {
      expect(() => store.attach?.({ ...schemas, task: MessageSchema } as never)).toThrow(/already keeps tasks of another lf\.a2a\.v1\.Task/);
    });
  });

  describe(`${name}: the task handler on it`, () => {
    let store: TaskStore;
    beforeAll(async () => {
      store = await under.open();
    });
    afterAll(async () => {
      if (store !== undefined) await under.close(store);
    });

    const ask: A2AServiceExecutor = async function* ({ message, task }) {
      if (said(message.parts) === "wait") {
        yield { state: TaskState.WORKING };
        yield { state: TaskState.INPUT_REQUIRED, message: "which one?" };
        return;
      }
      yield { state: TaskState.WORKING, message: `seen ${task?.history.length ?? 0}` };
      for (const part of ["a", "b", "c"]) yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: part } }] }, append: part !== "a" };
    };

    test("a multi-turn task, a stream, cancel and listing, as the in-memory store keeps them", async () => {
      const handler = createA2AServiceTaskHandler(ask, { store });
      const tenant = unique("tenant");
      const call = callContext(tenant, "alice");
      try {
        const sent = await handler.sendMessage(create(SendMessageRequestSchema, { message: text("wait") }), call);
        if (sent.payload.case !== "task") throw new Error("expected a task");
        const first = sent.payload.value;
        expect(first.status?.state).toBe(TaskState.INPUT_REQUIRED);

        // The second turn, streamed: the task, its status, three chunks, COMPLETED.
        const events = [];
        for await (const e of handler.sendStreamingMessage(create(SendMessageRequestSchema, { message: { ...text("go"), taskId: first.id } }), call)) {
          const p = e.payload;
          events.push(p.case === "statusUpdate" ? `status:${TaskState[p.value.status!.state]}` : p.case === "artifactUpdate" ? `artifact:${said(p.value.artifact!.parts)}` : p.case);
        }
        expect(events).toEqual(["task", "status:WORKING", "artifact:a", "artifact:b", "artifact:c", "status:COMPLETED"]);

        const done = await handler.getTask({ id: first.id }, call);
        expect(done.status?.state).toBe(TaskState.COMPLETED);
        expect(done.history.map((m) => said(m.parts))).toEqual(["wait", "which one?", "go", "seen 3"]);
        expect(done.artifacts.map((a) => said(a.parts))).toEqual(["abc"]);
        // Another owner, or tenant, is told it does not exist (D26).
        await expect(handler.getTask({ id: first.id }, callContext(tenant, "bob"))).rejects.toMatchObject({ name: "TaskNotFoundError" });
        await expect(handler.getTask({ id: first.id }, callContext(unique("tenant"), "alice"))).rejects.toMatchObject({ name: "TaskNotFoundError" });

        const waiting = await handler.sendMessage(create(SendMessageRequestSchema, { message: text("wait") }), call);
        if (waiting.payload.case !== "task") throw new Error("expected a task");
        expect((await handler.cancelTask({ id: waiting.payload.value.id }, call)).status?.state).toBe(TaskState.CANCELED);
        expect((await handler.getTask({ id: waiting.payload.value.id }, call)).status?.state).toBe(TaskState.CANCELED);

        const listed = await handler.listTasks({ contextId: "", status: TaskState.UNSPECIFIED, pageSize: 10, pageToken: "" }, call);
        expect(listed.tasks.map((t) => [t.id, t.status?.state])).toEqual([
          [waiting.payload.value.id, TaskState.CANCELED],
          [first.id, TaskState.COMPLETED],
        ]);
        await expect(handler.listTasks({ contextId: "", status: TaskState.UNSPECIFIED, pageToken: "nope" }, call)).rejects.toMatchObject({ name: "InvalidParamsError" });
      } finally {
        await handler.close();
      }
    });

    // A SQL store cannot hold NUL: a config with one failed the task a message created, or was an Internal error (SQL hunt).
    test("push configs with NUL are refused alike (D70): InvalidParams, no task failed; get and delete name no config", async () => {
      const handler = createA2AServiceTaskHandler(ask, { store, push: { allow: ["127.0.0.0/8"] } });
      const call = callContext(unique("tenant"), "alice");
      try {
        const withConfig = (config: { id?: string; url?: string; token?: string; credentials?: string }) =>
          handler.sendMessage(
            create(SendMessageRequestSchema, {
              message: text("wait"),
              configuration: {
                taskPushNotificationConfig: {
                  id: config.id ?? "",
                  url: config.url ?? "http://127.0.0.1:9/hook",
                  token: config.token ?? "",
                  authentication: config.credentials === undefined ? undefined : { scheme: "Bearer", credentials: config.credentials },
                },
              },
            }),
            call,
          );
        await expect(withConfig({ id: "p\0" })).rejects.toMatchObject({ name: "InvalidParamsError", message: "the push config's id must not contain NUL (U+0000)" });
        await expect(withConfig({ url: "http://127.0.0.1:9/\0" })).rejects.toMatchObject({ name: "InvalidParamsError" });
        await expect(withConfig({ credentials: "c\0" })).rejects.toMatchObject({ name: "InvalidParamsError" });
        expect((await handler.listTasks({ contextId: "", status: TaskState.UNSPECIFIED, pageToken: "" }, call)).tasks).toEqual([]);

        const sent = await handler.sendMessage(create(SendMessageRequestSchema, { message: text("wait") }), call);
        if (sent.payload.case !== "task") throw new Error("expected a task");
        const taskId = sent.payload.value.id;
        const config = (id: string, url = "http://127.0.0.1:9/hook") => create(TaskPushNotificationConfigSchema, { taskId, id, url });
        await expect(handler.createTaskPushNotificationConfig(config("a\0b"), call)).rejects.toMatchObject({ name: "InvalidParamsError" });
        await expect(handler.createTaskPushNotificationConfig(config("a", "http://127.0.0.1:9/\0"), call)).rejects.toMatchObject({ name: "InvalidParamsError" });
        await expect(handler.getTaskPushNotificationConfig({ taskId, id: "a\0b" }, call)).rejects.toMatchObject({ name: "TaskNotFoundError" });
        await expect(handler.deleteTaskPushNotificationConfig({ taskId, id: "a\0b" }, call)).resolves.toEqual({});
        expect((await handler.getTask({ id: taskId }, call)).status?.state).toBe(TaskState.INPUT_REQUIRED);
      } finally {
        await handler.close();
      }
    });

    // Forty tasks of 3 MB with includeArtifacts made one 120 MB answer (and a hundred, JSON too large to write: an empty 500).
    describe("a ListTasks page ends before the task that takes it past maxListPageBytes (D78)", () => {
      const big: A2AServiceExecutor = async function* ({ message }) {
        yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: said(message.parts).repeat(40_000) } }] } };
      };
      let handler: ReturnType<typeof createA2AServiceTaskHandler>;
      let agent: Awaited<ReturnType<typeof startAgent>>;
      const tenant = unique("tenant");
      const made: string[] = [];
      beforeAll(async () => {
        handler = createA2AServiceTaskHandler(big, { store, maxListPageBytes: 100_000 });
        // Each task's artifact is 40 KB of JSON: two fit a page of 100 KB, a third does not.
        for (const word of ["a", "b", "c", "d", "e"]) {
          const sent = await handler.sendMessage(create(SendMessageRequestSchema, { message: text(word) }), callContext(tenant, "alice"));
          if (sent.payload.case !== "task") throw new Error("expected a task");
          made.push(sent.payload.value.id);
        }
        agent = await startAgent(big, { store, maxListPageBytes: 100_000 });
      });
      afterAll(async () => {
        await handler?.close();
        await agent?.close();
      });

      test("the handler: pages of two, walked to the end, every task once, in the list's order", async () => {
        // Without artifacts the tasks are small, and the page is whole: the order to expect (tasks of one millisecond go by id).
        const light = await handler.listTasks({ contextId: "", status: TaskState.UNSPECIFIED, pageSize: 50, pageToken: "" }, callContext(tenant, "alice"));
        const order = light.tasks.map((t) => t.id);
        expect([...order].sort()).toEqual([...made].sort());
        expect(light.nextPageToken).toBe("");
        const pages: string[][] = [];
        let pageToken = "";
        do {
          const page = await handler.listTasks({ contextId: "", status: TaskState.UNSPECIFIED, pageSize: 50, pageToken, includeArtifacts: true }, callContext(tenant, "alice"));
          expect(page).toMatchObject({ pageSize: 50, totalSize: 5 });
          pages.push(page.tasks.map((t) => t.id));
          for (const t of page.tasks) expect(said(t.artifacts[0]!.parts)).toHaveLength(40_000);
          pageToken = page.nextPageToken;
        } while (pageToken !== "");
        expect(pages).toEqual([order.slice(0, 2), order.slice(2, 4), order.slice(4)]);
      });

      test("a task heavier than the bound is a page of its own", async () => {
        const alone = createA2AServiceTaskHandler(big, { store, maxListPageBytes: 10_000 });
        try {
          const list = (pageToken: string, includeArtifacts: boolean) =>
            alone.listTasks({ contextId: "", status: TaskState.UNSPECIFIED, pageSize: 3, pageToken, includeArtifacts }, callContext(tenant, "alice"));
          const order = (await list("", false)).tasks.map((t) => t.id);
          const page = await list("", true);
          expect(page.tasks.map((t) => t.id)).toEqual([order[0]]);
          const next = await list(page.nextPageToken, true);
          expect(next.tasks.map((t) => t.id)).toEqual([order[1]]);
        } finally {
          await alone.close();
        }
      });

      test.each(BINDINGS)("%s: the SDK client pages through cut pages", async (binding) => {
        const client = await agent.client(binding);
        const contextId = unique("ctx");
        for (const word of ["x", "y", "z"]) asTask(await client.sendMessage(sdkSend(word, { contextId })));
        const order = (await client.listTasks(listParams({ contextId }))).tasks.map((t) => t.id);
        expect(order).toHaveLength(3);
        const pages: string[][] = [];
        let pageToken = "";
        do {
          const page = await client.listTasks(listParams({ contextId, pageToken, includeArtifacts: true }));
          expect(page.totalSize).toBe(3);
          pages.push(page.tasks.map((t) => t.id));
          pageToken = page.nextPageToken;
        } while (pageToken !== "" && pages.length < 5);
        expect(pages).toEqual([order.slice(0, 2), order.slice(2)]);
      });
    });

    test.each(BINDINGS)("%s: tasks and push configs as the SDK client gets them", async (binding) => {
      const agent = await startAgent(ask, { store, push: { allow: ["127.0.0.0/8"] } });
      try {
        const client = await agent.client(binding);
        const task = asTask(await client.sendMessage(sdkSend("wait")));
        const hook = { url: "http://127.0.0.1:9/hook", id: "cfg", token: "t0k", scheme: "Bearer", credentials: "c" };
        await client.createTaskPushNotificationConfig(pushConfig(task.id, hook));
        const got = await client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "cfg" });
        expect({ id: got.id, taskId: got.taskId, url: got.url, token: got.token, scheme: got.authentication?.scheme }).toEqual({
          id: "cfg",
          taskId: task.id,
          url: hook.url,
          token: "t0k",
          scheme: "Bearer",
        });
        const configs = await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" });
        expect(configs.configs.map((c) => c.id)).toEqual(["cfg"]);
        const fetched = await client.getTask({ tenant: "", id: task.id, historyLength: undefined });
        expect(fetched.history.map((m) => textOfParts(m.parts))).toEqual(["wait", "which one?"]);
        const listed = await client.listTasks(listParams({ contextId: task.contextId }));
        expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);
      } finally {
        await agent.close();
      }
    });
  });

  const reopen = under.reopen;
  if (reopen !== undefined) {
    describe(`${name}: after a restart`, () => {
      test("a fresh store instance on the same data reads the tasks, their changes and configs the first wrote", async () => {
        const tenant = unique("tenant");
        const handlerStore = await under.open();
        const handler = createA2AServiceTaskHandler(ask2, { store: handlerStore, push: { allow: ["127.0.0.0/8"] } });
        const call = callContext(tenant, "alice");
        let id: string;
        let before: Task;
        try {
          const sent = await handler.sendMessage(create(SendMessageRequestSchema, { message: text("remember me") }), call);
          if (sent.payload.case !== "task") throw new Error("expected a task");
          id = sent.payload.value.id;
          await handler.createTaskPushNotificationConfig(create(TaskPushNotificationConfigSchema, { taskId: id, id: "kept", url: "http://127.0.0.1:9/kept" }), call);
          before = await handler.getTask({ id }, call);
          expect(before.status?.state).toBe(TaskState.COMPLETED);
        } finally {
          await handler.close();
          await under.close(handlerStore);
        }

        const fresh = await reopen();
        try {
          fresh.attach?.(schemas);
          const got = await fresh.get(id);
          expect(got?.tenant).toBe(tenant);
          expect(got?.owner).toBe("alice");
          expect(got?.task).toEqual(before);
          expect((await fresh.configsOf(id)).map((c) => c.url)).toEqual(["http://127.0.0.1:9/kept"]);
          const page = await fresh.list({ tenant, owner: "alice" }, query());
          expect(page.tasks.map((t) => t.id)).toEqual([id]);
          expect(timestampMs(page.tasks[0]!.status!.timestamp!)).toBe(timestampMs(before.status!.timestamp!));
        } finally {
          await under.close(fresh);
        }
      });
    });
  }
}

const ask2: A2AServiceExecutor = async function* ({ message }) {
  yield { state: TaskState.WORKING };
  yield { artifact: { name: "echo", parts: message.parts } };
};
