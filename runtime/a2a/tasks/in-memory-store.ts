/**
 * The default task store: objects in this process, bounded. Finished tasks
 * (terminal states) are dropped after `terminalTtlMs` or beyond
 * `maxTerminalTasks`, oldest first, their push configs with them, and each
 * task's history keeps its last `maxHistory` messages, so a busy agent's heap
 * goes back to where it started once its tasks are done. Tasks that are not
 * finished are kept: they may still be continued.
 */
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { PushConfigLike, TaskLike } from "./model.js";
import { compareNewestFirst, decodeTaskCursor, encodeTaskCursor, type TaskCursor } from "./page-token.js";
import { BadPageTokenError, type ConfigPage, type StoredTask, type TaskChange, type TaskOwner, type TaskPage, type TaskQuery, type TaskStore } from "./task-store.js";

export interface InMemoryTaskStoreOptions {
  /** How long a finished task is kept. Default 1 hour. */
  readonly terminalTtlMs?: number;
  /** How many finished tasks are kept at most. Default 10,000. */
  readonly maxTerminalTasks?: number;
  /** Messages kept per task; older ones are dropped. Default 100. */
  readonly maxHistory?: number;
}

/** The task store the runtime uses when given none. */
export interface InMemoryTaskStore extends TaskStore {
  /** How many tasks are held: for tests and metrics. */
  readonly size: number;
  get(id: string): StoredTask | undefined;
  configsOf(taskId: string): readonly PushConfigLike[];
  close(): void;
}

const defaultConfigPage = 50;

export function createInMemoryTaskStore(options: InMemoryTaskStoreOptions = {}): InMemoryTaskStore {
  const ttlMs = options.terminalTtlMs ?? 3_600_000;
  const maxTerminal = options.maxTerminalTasks ?? 10_000;
  const maxHistory = options.maxHistory ?? 100;
  if (!(ttlMs > 0) || !(maxTerminal >= 0) || !(maxHistory >= 1)) {
    throw new Error("createInMemoryTaskStore: terminalTtlMs must be > 0, maxTerminalTasks >= 0 and maxHistory >= 1");
  }

  const tasks = new Map<string, StoredTask>();
  const byOwner = new Map<string, Set<StoredTask>>();
  /**
   * Finished tasks in the order they finished, with when: a queue, since
   * they leave from its head (a Map iterated from the start after deletes at
   * the front walks every deleted slot again).
   */
  let finished: { readonly id: string; readonly at: number }[] = [];
  let head = 0;
  const configs = new Map<string, Map<string, PushConfigLike>>();
  const ownerKey = (o: TaskOwner) => `${o.tenant.length}:${o.tenant}${o.owner}`;

  const drop = (id: string) => {
    const record = tasks.get(id);
    if (record === undefined) return;
    tasks.delete(id);
    configs.delete(id);
    const key = ownerKey(record);
    const own = byOwner.get(key);
    own?.delete(record);
    if (own?.size === 0) byOwner.delete(key);
  };
  const sweep = (now: number) => {
    while (head < finished.length) {
      const next = finished[head]!;
      if (now - next.at < ttlMs && finished.length - head <= maxTerminal) break;
      head++;
      drop(next.id);
    }
    if (head === finished.length) {
      finished = [];
      head = 0;
    } else if (head >= 1024 && head * 2 >= finished.length) {
      finished = finished.slice(head);
      head = 0;
    }
  };
  // Finished tasks expire while the agent is idle too; the timer never keeps the process alive.
  const timer = setInterval(() => sweep(Date.now()), Math.min(ttlMs, 60_000));
  timer.unref();

  const trimHistory = (task: TaskLike) => {
    const over = task.history.length - maxHistory;
    if (over > 0) task.history.splice(0, over);
  };
  const cursorOf = (task: TaskLike): TaskCursor => ({ timeMs: task.status?.timestamp === undefined ? 0 : timestampMs(task.status.timestamp), id: task.id });

  return {
    get size() {
      return tasks.size;
    },

    create(record) {
      trimHistory(record.task);
      tasks.set(record.task.id, record);
      const key = ownerKey(record);
      let own = byOwner.get(key);
      if (own === undefined) byOwner.set(key, (own = new Set()));
      own.add(record);
    },

    get: (id) => tasks.get(id),

    update(record, change: TaskChange) {
      if (change.kind !== "artifact") trimHistory(record.task);
      // A task is terminal once: it enters the queue once.
      if (change.kind === "status" && change.terminal && tasks.has(record.task.id)) {
        const now = Date.now();
        finished.push({ id: record.task.id, at: now });
        sweep(now);
      }
    },

    list(owner, query: TaskQuery): TaskPage {
      const after = query.pageToken === "" ? undefined : decodeTaskCursor(query.pageToken);
      const matching: { task: TaskLike; cursor: TaskCursor }[] = [];
      for (const { task } of byOwner.get(ownerKey(owner)) ?? []) {
        if (query.contextId !== "" && task.contextId !== query.contextId) continue;
        if (query.state !== 0 && task.status?.state !== query.state) continue;
        const cursor = cursorOf(task);
        if (query.statusAfterMs !== undefined && cursor.timeMs < query.statusAfterMs) continue;
        matching.push({ task, cursor });
      }
      matching.sort((a, b) => compareNewestFirst(a.cursor, b.cursor));
      let start = 0;
      if (after !== undefined) {
        while (start < matching.length && compareNewestFirst(matching[start]!.cursor, after) <= 0) start++;
      }
      const page = matching.slice(start, start + query.pageSize);
      const last = page.at(-1);
      const more = start + page.length < matching.length;
      return {
        tasks: page.map((m) => m.task),
        totalSize: matching.length,
        nextPageToken: more && last !== undefined ? encodeTaskCursor(last.cursor) : "",
      };
    },

    putConfig(config) {
      let own = configs.get(config.taskId);
      if (own === undefined) configs.set(config.taskId, (own = new Map()));
      own.set(config.id, config);
    },

    getConfig: (taskId, id) => configs.get(taskId)?.get(id),

    configsOf: (taskId) => [...(configs.get(taskId)?.values() ?? [])],

    listConfigs(taskId, pageSize, pageToken): ConfigPage {
      const all = [...(configs.get(taskId)?.values() ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      let start = 0;
      if (pageToken !== "") {
        const after = Buffer.from(pageToken, "base64url").toString("utf8");
        if (after === "" || Buffer.from(after).toString("base64url") !== pageToken) throw new BadPageTokenError(`pageToken "${pageToken}" is not one this agent gave out`);
        while (start < all.length && all[start]!.id <= after) start++;
      }
      const size = pageSize === 0 ? defaultConfigPage : pageSize;
      const page = all.slice(start, start + size);
      const more = start + page.length < all.length;
      return { configs: page, nextPageToken: more ? Buffer.from(page.at(-1)!.id).toString("base64url") : "" };
    },

    deleteConfig(taskId, id) {
      const own = configs.get(taskId);
      own?.delete(id);
      if (own?.size === 0) configs.delete(taskId);
    },

    close() {
      clearInterval(timer);
    },
  };
}
