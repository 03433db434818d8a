/**
 * The TaskStore conformance suite (store-conformance.ts) on the SQL store
 * over PGlite, with a data directory on disk: every store of the suite opens
 * the same directory, one after another (PGlite is one process's), and the
 * restart test reads with a fresh instance what the one before wrote.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { MessageNotStoredError, createPGliteTaskStore, type TaskStore } from "protoc-gen-a2a/runtime/tasks";
import { MessageSchema, Role, SendMessageRequestSchema, TaskSchema, TaskState, TaskStatusSchema } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { callContext, within } from "../support/task-clients.js";
import { describeTaskStore, schemas } from "./store-conformance.js";

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "a2a-pglite-"));
});

afterAll(async () => {
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

const open = () => createPGliteTaskStore({ dataDir });

describeTaskStore("PGlite", {
  open,
  reopen: open,
  close: async (store: TaskStore) => store.close?.(),
});

test("claims on PGlite (the same SQL as on Postgres, D79): a lapsed claim is let go, the claimant's message is then not written (claimLost), and a new claim writes it", async () => {
  const store = await createPGliteTaskStore({ leaseMs: 300 });
  store.attach!(schemas);
  const said = (text: string) => create(MessageSchema, { messageId: text, role: Role.USER, parts: [{ content: { case: "text", value: text } }] });
  try {
    const task = create(TaskSchema, {
      id: "t1",
      contextId: "c1",
      status: create(TaskStatusSchema, { state: TaskState.INPUT_REQUIRED, timestamp: timestampFromMs(Date.now()) }),
      history: [said("start")],
    });
    await store.create({ tenant: "", owner: "o", task: task as never });
    const record = (await store.get("t1"))!;
    expect(await store.claim(record)).toBe(true);
    expect(await store.reapLapsed(Date.now() + 10_000)).toBe(0);
    record.task.history.push(said("late") as never);
    const refused = await Promise.resolve(store.update(record, { kind: "history", claimed: true })).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(MessageNotStoredError);
    expect((refused as MessageNotStoredError).why).toBe("claimLost");
    const again = (await store.get("t1"))!;
    expect(await store.claim(again)).toBe(true);
    again.task.history.push(said("ok") as never);
    await store.update(again, { kind: "history", claimed: true });
    const stored = (await store.get("t1"))!;
    expect([TaskState[stored.task.status!.state], stored.task.history.map((m) => m.messageId)]).toEqual(["INPUT_REQUIRED", ["start", "ok"]]);
  } finally {
    await store.close();
  }
});

test("a waiting task removed on PGlite (the same SQL as on Postgres, with its notice, D70, D71): the stream following it ends with TaskNotFound", async () => {
  const store = await createPGliteTaskStore({ interruptedTtlMs: 200 });
  const asking: A2AServiceExecutor = async function* () {
    yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
  };
  const handler = createA2AServiceTaskHandler(asking, { store });
  try {
    const answer = await handler.sendMessage(create(SendMessageRequestSchema, { message: create(MessageSchema, { messageId: "m", role: Role.USER, parts: [{ content: { case: "text", value: "start" } }] }) }), callContext(""));
    if (answer.payload.case !== "task") throw new Error("expected a task");
    const stream = handler.subscribeToTask({ id: answer.payload.value.id }, callContext(""))[Symbol.asyncIterator]();
    expect((await stream.next()).value?.payload.case).toBe("task");
    await expect(within("the stream to end", stream.next(), 10_000)).rejects.toMatchObject({ name: "TaskNotFoundError" });
    expect(await store.get(answer.payload.value.id)).toBeUndefined();
  } finally {
    await handler.close();
    await store.close();
  }
});

test("a dataDir whose parents are missing is made, as the README's ./data/tasks on a fresh checkout needs; a file:// URL too", async () => {
  for (const [given, folder] of [
    [join(dataDir, "not", "yet", "tasks"), join(dataDir, "not", "yet", "tasks")],
    [pathToFileURL(join(dataDir, "by", "url", "tasks")).href, join(dataDir, "by", "url", "tasks")],
  ]) {
    const store = await createPGliteTaskStore({ dataDir: given });
    try {
      store.attach!(schemas);
      expect(existsSync(folder!)).toBe(true);
    } finally {
      await store.close?.();
    }
  }
});

test("a PGlite folder is one process's: a second store on it is refused while the first is open, and a lock whose process is gone is taken over", async () => {
  const folder = join(dataDir, "locked");
  const first = await createPGliteTaskStore({ dataDir: folder });
  try {
    await expect(createPGliteTaskStore({ dataDir: folder })).rejects.toThrow(
      `the PGlite data folder ${folder} is open in another store of this process: PGlite is one process's database, and a second would write over the first's tasks.`,
    );
  } finally {
    await first.close?.();
  }
  // Closed: the folder is free again.
  const again = await createPGliteTaskStore({ dataDir: folder });
  await again.close?.();
  // A lock left by a process that is gone (a crash): taken over.
  const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
  writeFileSync(join(folder, "a2a-store.lock"), gone);
  const after = await createPGliteTaskStore({ dataDir: folder });
  await after.close?.();
  expect(existsSync(join(folder, "a2a-store.lock"))).toBe(false);
}, 60_000);
