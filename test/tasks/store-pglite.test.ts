/**
 * The TaskStore conformance suite (store-conformance.ts) on the SQL store
 * over PGlite, with a data directory on disk: every store of the suite opens
 * the same directory, one after another (PGlite is one process's), and the
 * restart test reads with a fresh instance what the one before wrote.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPGliteTaskStore, type TaskStore } from "protoc-gen-a2a/runtime/tasks";
import { describeTaskStore } from "./store-conformance.js";

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
