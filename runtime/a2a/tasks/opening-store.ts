/**
 * A store that is still opening (a database being reached and migrated)
 * when the task handler is made: the handler is made synchronously, the
 * store named by a URL opens asynchronously (D73). Every call waits for the
 * store; `ready` is what serveA2AService waits for before it listens, so a
 * database that cannot be reached fails the start, not the first call.
 */
import type { PushConfigLike, TaskSchemas } from "./model.js";
import type { ForeignChange, StoredTask, TaskChange, TaskOwner, TaskQuery, TaskStore } from "./task-store.js";
import type { PushOutbox } from "./task-store.js";

export interface OpeningStore extends TaskStore {
  /** Resolves once the store is open; rejects with why it could not open. */
  readonly ready: Promise<void>;
}

export function createOpeningStore(opening: Promise<TaskStore>): OpeningStore {
  let schemas: TaskSchemas | undefined;
  let outbox: PushOutbox | undefined;
  let store: TaskStore | undefined;
  const dropped: ((taskId: string) => void)[] = [];
  const opened = opening.then((s) => {
    if (schemas !== undefined) s.attach?.(schemas);
    if (outbox !== undefined) s.deliverPushes?.(outbox);
    for (const listener of dropped) s.onDropped?.(listener);
    store = s;
    return s;
  });
  // Nobody may wait for `ready` (a handler used without serveA2AService): its calls then fail with the reason.
  opened.catch(() => undefined);
  const use = <R>(fn: (s: TaskStore) => R | Promise<R>): Promise<R> => (store === undefined ? opened.then(fn) : Promise.resolve(fn(store)));
  return {
    ready: opened.then(() => undefined),
    attach(s) {
      schemas = s;
      store?.attach?.(s);
    },
    onDropped(listener) {
      if (store === undefined) dropped.push(listener);
      else store.onDropped?.(listener);
    },
    // The stores a URL names all keep an outbox but the in-memory one, which is never opened this way.
    deliverPushes(o) {
      outbox = o;
      store?.deliverPushes?.(o);
    },
    create: (record: StoredTask, configs?: readonly PushConfigLike[]) => use((s) => s.create(record, configs)),
    get: (id: string) => use((s) => s.get(id)),
    update: (record: StoredTask, change: TaskChange) => use((s) => s.update(record, change)),
    list: (owner: TaskOwner, query: TaskQuery) => use((s) => s.list(owner, query)),
    putConfig: (config: PushConfigLike) => use((s) => s.putConfig(config)),
    getConfig: (taskId: string, id: string) => use((s) => s.getConfig(taskId, id)),
    configsOf: (taskId: string) => use((s) => s.configsOf(taskId)),
    listConfigs: (taskId: string, pageSize: number, pageToken: string) => use((s) => s.listConfigs(taskId, pageSize, pageToken)),
    deleteConfig: (taskId: string, id: string) => use((s) => s.deleteConfig(taskId, id)),
    // Called only for a task read from the store (StoredTask.version), so the store is open by then.
    follow: (taskId: string, version: number, onChange: (change: ForeignChange) => void, catchUp: boolean) =>
      store?.follow?.(taskId, version, onChange, catchUp) ?? (() => undefined),
    // D79: a store that keeps no leases is claimed from no one.
    claim: (record: StoredTask) => use((s) => s.claim?.(record) ?? true),
    unclaim: (record: StoredTask) => use((s) => s.unclaim?.(record)),
    get claimRetryMs() {
      return store?.claimRetryMs;
    },
    close: () => opened.then((s) => s.close?.(), () => undefined),
  };
}
