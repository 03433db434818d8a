/**
 * The TaskStore conformance suite (store-conformance.ts) on the in-memory
 * store, the reference the durable stores are held to. Its bounds (expiry,
 * history cap, heap) are in-memory-store.test.ts.
 */
import { createInMemoryTaskStore, type InMemoryTaskStore, type TaskStore } from "protoc-gen-a2a/runtime/tasks";
import { describeTaskStore } from "./store-conformance.js";

describeTaskStore("in-memory", {
  open: async () => createInMemoryTaskStore(),
  close: async (store: TaskStore) => (store as InMemoryTaskStore).close(),
});
