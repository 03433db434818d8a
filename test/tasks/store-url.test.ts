/**
 * A task store chosen by one string (D73): the URL forms, the refusals that
 * name what to write, and an agent served by serveA2AService on a
 * `pglite:<dir>` store, closed and served again on the same directory with
 * its task still there; a Postgres that cannot be reached fails the start.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { jest } from "@jest/globals";
import pg from "pg";
import { startPostgres } from "../support/postgres.js";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { openTaskStore, parseStoreUrl } from "protoc-gen-a2a/runtime/tasks";
import { textOf } from "protoc-gen-a2a/runtime";
import { AgentCardSchema, Role, TaskState } from "../../generated/a2a_pb.js";
import { createA2AServiceJsonRpcClient } from "../../generated/a2a_client.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";

// Opening PGlite (WASM) takes seconds, more on a loaded machine.
jest.setTimeout(60_000);

const card = create(AgentCardSchema, { name: "store-url", version: "1", capabilities: { streaming: true } });
const echo: A2AServiceExecutor = async function* ({ message }) {
  yield { artifact: { parts: [{ content: { case: "text", value: `echo ${textOf(message)}` } }] } };
};
const forms = "use memory:, pglite:<data dir> (or pglite: for an in-memory database) or postgres://user:password@host:port/database";

test("the URL forms", () => {
  expect(parseStoreUrl("memory:")).toEqual({ engine: "memory" });
  expect(parseStoreUrl("pglite:")).toEqual({ engine: "pglite", dataDir: undefined });
  expect(parseStoreUrl("pglite:./data")).toEqual({ engine: "pglite", dataDir: "./data" });
  expect(parseStoreUrl("pglite:///var/lib/agent")).toEqual({ engine: "pglite", dataDir: "/var/lib/agent" });
  expect(parseStoreUrl("postgres://a:b@db:5432/x")).toEqual({ engine: "postgres", connectionString: "postgres://a:b@db:5432/x" });
  expect(parseStoreUrl("postgresql://db/x")).toEqual({ engine: "postgres", connectionString: "postgresql://db/x" });
});

test("refusals say which forms there are, and never show a password", () => {
  expect(() => parseStoreUrl("")).toThrow("a task store URL is empty: give one of memory:");
  expect(() => parseStoreUrl("memory")).toThrow(`unknown task store URL "memory": ${forms}`);
  expect(() => parseStoreUrl("sqlite:./db")).toThrow(`unknown task store URL "sqlite:./db": ${forms}`);
  expect(() => parseStoreUrl("memory:x")).toThrow('task store URL "memory:x": memory: takes nothing after the colon');
  expect(() => parseStoreUrl("postgres:db")).toThrow('task store URL "postgres:db" names no host: write it as postgres://user:password@host:port/database');
  expect(() => parseStoreUrl("postgres://u:hunter2@db:99999/x")).toThrow('task store URL "postgres://u:***@db:99999/x" is not a URL');
  // Where the handler is made, before anything is opened.
  expect(() => createA2AServiceTaskHandler(echo, { store: "mysql://db/x" })).toThrow(`unknown task store URL "mysql://db/x": ${forms}`);
});

test("openTaskStore opens what the URL names", async () => {
  const memory = await openTaskStore("memory:");
  expect("size" in memory).toBe(true);
  const pglite = await openTaskStore("pglite:");
  expect((pglite as { engine?: string }).engine).toBe("pglite");
  await pglite.close?.();
});

test("an agent on pglite:<dir> keeps its tasks when it is served again", async () => {
  const dir = await mkdtemp(join(tmpdir(), "a2a-store-url-"));
  try {
    const serve = () => serveA2AService(createA2AServiceTaskHandler(echo, { store: `pglite:${dir}` }), card, { port: 0, grpcPort: false });
    const first = await serve();
    const client = createA2AServiceJsonRpcClient(first.jsonRpcUrl ?? "");
    const sent = await client.sendMessage({ message: { messageId: "m1", role: Role.USER, parts: [{ content: { case: "text", value: "kept" } }] } });
    if (sent.payload.case !== "task") throw new Error("no task");
    const id = sent.payload.value.id;
    client.close();
    await first.close();

    const second = await serve();
    const again = createA2AServiceJsonRpcClient(second.jsonRpcUrl ?? "");
    const task = await again.getTask({ id });
    expect(task.status?.state).toBe(TaskState.COMPLETED);
    expect(textOf(task.artifacts[0])).toBe("echo kept");
    again.close();
    await second.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a Postgres that cannot be reached fails serveA2AService, not the first call", async () => {
  // A port nothing listens on: bound, then closed.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  const handler = createA2AServiceTaskHandler(echo, { store: `postgres://a2a@127.0.0.1:${port}/postgres` });
  await expect(serveA2AService(handler, card, { port: 0, grpcPort: false })).rejects.toThrow(/ECONNREFUSED/);
});

// The store's background failures went to console.error as node-postgres's whole error object, past the agent's onError (SQL hunt).
test("a store opened from a URL reports its background failures to the handler's onError", async () => {
  const postgres = await startPostgres();
  const printed = jest.spyOn(console, "error").mockImplementation(() => undefined);
  const reported: { error: unknown; taskId: string }[] = [];
  const handler = createA2AServiceTaskHandler(echo, { store: postgres.url, onError: (error, info) => reported.push({ error, taskId: info.taskId }) });
  const server = await serveA2AService(handler, card, { port: 0, grpcPort: false });
  const admin = new pg.Client({ connectionString: postgres.url });
  try {
    const client = createA2AServiceJsonRpcClient(server.jsonRpcUrl ?? "");
    await client.sendMessage({ message: { messageId: "m1", role: Role.USER, parts: [{ content: { case: "text", value: "hi" } }] } });
    client.close();
    // Every connection of the store cut from the server's side: its idle pool connections and its LISTEN fail in the background.
    await admin.connect();
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = 'postgres'");
    for (let i = 0; i < 200 && reported.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(reported.length).toBeGreaterThan(0);
    expect(reported[0]!.taskId).toBe("");
    expect(String(reported[0]!.error)).toMatch(/terminat/i);
    expect(printed).not.toHaveBeenCalled();
  } finally {
    printed.mockRestore();
    await admin.end().catch(() => undefined);
    await server.close();
    await postgres.stop();
  }
});
