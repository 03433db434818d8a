/**
 * "protoc-gen-a2a/runtime/tasks": the parts of the task runtime behind the
 * generated `create<Service>TaskHandler` that an agent may choose or
 * replace: its options, the task store (the in-memory one, the SQL one on
 * PGlite or a Postgres server, and the interface a store implements) and
 * push delivery. The SQL store's drivers are optional peer dependencies,
 * imported by its factories only.
 */
export type { TaskHandlerOptions } from "./a2a/tasks/task-handler.js";
export type { RequestContext } from "./a2a/tasks/executor.js";
export type { IdKind } from "./a2a/tasks/task-runtime.js";
export { createInMemoryTaskStore } from "./a2a/tasks/in-memory-store.js";
export type { InMemoryTaskStore, InMemoryTaskStoreOptions } from "./a2a/tasks/in-memory-store.js";
export { BadPageTokenError, MessageNotStoredError } from "./a2a/tasks/task-store.js";
export type { ConfigPage, StoredTask, TaskChange, TaskOwner, TaskPage, TaskQuery, TaskStore } from "./a2a/tasks/task-store.js";
export type { MessageLike, PushConfigLike, TaskLike } from "./a2a/tasks/model.js";
export { createPushDelivery } from "./a2a/tasks/push-delivery.js";
export type { PushDelivery, PushDeliveryOptions, PushTarget } from "./a2a/tasks/push-delivery.js";
export { openTaskStore, parseStoreUrl } from "./a2a/tasks/store-url.js";
export type { ParsedStoreUrl } from "./a2a/tasks/store-url.js";
export type { PushOutbox } from "./a2a/tasks/task-store.js";
export { createPGliteTaskStore, createPostgresTaskStore } from "./a2a/tasks/sql/sql-store.js";
export type { PGliteTaskStoreOptions, PostgresTaskStoreOptions, SqlTaskStore, SqlTaskStoreOptions, TaskEventRow } from "./a2a/tasks/sql/sql-store.js";
