/**
 * The default task store: objects in this process, bounded. Finished tasks
 * (terminal states) are dropped after `terminalTtlMs` or beyond
 * `maxTerminalTasks`, oldest first, their push configs with them, and each
 * task's history keeps its last `maxHistory` messages, so a busy agent's heap
 * goes back to where it started once its tasks are done. Tasks that are not
 * finished are kept: they may still be continued. A finished task is kept as
 * its protobuf bytes (see Entry), and read back as a new copy.
 */
import type { DescMessage } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { decodeBinary, encodeBinaryWith, ownBytesReadOptions } from "../../core/codec/binary-codec.js";
import type { PushConfigLike, TaskLike } from "./model.js";
import { compareNewestFirst, decodeConfigCursor, decodeTaskCursor, encodeConfigCursor, encodeTaskCursor, type TaskCursor } from "./page-token.js";
import { type ConfigPage, type StoredTask, type TaskChange, type TaskOwner, type TaskPage, type TaskQuery, type TaskStore } from "./task-store.js";

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

/**
 * One task in the store. A finished task cannot change any more (no message
 * continues it, nothing cancels it), so it is kept as its protobuf bytes
 * once it is terminal, with the few fields ListTasks filters on beside
 * them: a retained graph of some thirty objects per task would be copied by
 * every scavenge it survives and marked by every full collection for as
 * long as it is kept, and a busy agent keeps thousands.
 *
 * The bytes are kept as a one-byte string, one character per byte: one
 * object the collector never looks into. A Uint8Array of its own is three
 * (the view, its ArrayBuffer, memory outside the heap the collector tracks
 * and frees one by one), costs an allocation outside the heap per finished
 * task, and took five times as long to make; a slice of Buffer's shared
 * pool would keep the whole 8 KB block alive for as long as the task.
 * (Node makes a string of about a megabyte or more an external one: a task
 * that large is kept outside the heap, as `external` memory.)
 */
class Entry implements TaskOwner {
  /** The task's object while it may change: the one the runtime changes in place. */
  live: StoredTask | undefined;
  /** The finished task's bytes (the Task type's protobuf binary), a character per byte. */
  frozen: string | undefined;
  /** A finished task's state and status time. */
  state = 0;
  timeMs = 0;
  /** When the task finished (epoch ms): its place in the expiry queue. */
  finishedAt = 0;

  constructor(
    readonly tenant: string,
    readonly owner: string,
    readonly ownerKey: string,
    readonly id: string,
    readonly contextId: string,
    live: StoredTask,
  ) {
    this.live = live;
  }

  /** The state and status time ListTasks filters and orders by. */
  cursor(): { readonly state: number; readonly timeMs: number } {
    if (this.live === undefined) return this;
    const status = this.live.task.status;
    return { state: status?.state ?? 0, timeMs: status?.timestamp === undefined ? 0 : timestampMs(status.timestamp) };
  }
}

/** Bytes as a string of the same length, a character per byte (Entry). */
const toLatin1 = (bytes: Uint8Array, length: number): string => Buffer.from(bytes.buffer, bytes.byteOffset, length).toString("latin1");

/**
 * The bytes of a string toLatin1 made, in memory of their own, not a slice
 * of Buffer's pool: a decoded task's `bytes` fields are views of them, and
 * a caller may keep the task. A plain Uint8Array, not a Buffer, so those
 * fields are what fromBinary gives everywhere else.
 */
function fromLatin1(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  Buffer.from(bytes.buffer, 0, bytes.length).write(text, 0, text.length, "latin1");
  return bytes;
}

export function createInMemoryTaskStore(options: InMemoryTaskStoreOptions = {}): InMemoryTaskStore {
  const ttlMs = options.terminalTtlMs ?? 3_600_000;
  const maxTerminal = options.maxTerminalTasks ?? 10_000;
  const maxHistory = options.maxHistory ?? 100;
  if (!(ttlMs > 0) || !(maxTerminal >= 0) || !(maxHistory >= 1)) {
    throw new Error("createInMemoryTaskStore: terminalTtlMs must be > 0, maxTerminalTasks >= 0 and maxHistory >= 1");
  }

  const tasks = new Map<string, Entry>();
  const byOwner = new Map<string, Set<Entry>>();
  /**
   * Finished tasks in the order they finished, with when: a queue, since
   * they leave from its head (a Map iterated from the start after deletes at
   * the front walks every deleted slot again).
   */
  let finished: (Entry | undefined)[] = [];
  let head = 0;
  const configs = new Map<string, Map<string, PushConfigLike>>();
  const ownerKey = (o: TaskOwner) => `${o.tenant.length}:${o.tenant}${o.owner}`;
  /** The Task message type, once a task handler attached the store: without it finished tasks stay objects. */
  let schema: DescMessage | undefined;

  const drop = (entry: Entry) => {
    if (tasks.get(entry.id) !== entry) return;
    tasks.delete(entry.id);
    configs.delete(entry.id);
    const own = byOwner.get(entry.ownerKey);
    own?.delete(entry);
    if (own?.size === 0) byOwner.delete(entry.ownerKey);
  };
  const sweep = (now: number) => {
    while (head < finished.length) {
      const next = finished[head]!;
      if (now - next.finishedAt < ttlMs && finished.length - head <= maxTerminal) break;
      // The slot lets go of the entry at once: the queue is compacted only now and then.
      finished[head++] = undefined;
      drop(next);
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
  const freeze = (entry: Entry, task: TaskLike) => {
    if (schema === undefined) return;
    const { state, timeMs } = entry.cursor();
    entry.state = state;
    entry.timeMs = timeMs;
    entry.frozen = encodeBinaryWith(schema, task as never, toLatin1);
    entry.live = undefined;
  };
  /** The stored task: the live object, or a new copy of a finished one. */
  const recordOf = (entry: Entry): StoredTask =>
    entry.live ?? { tenant: entry.tenant, owner: entry.owner, task: decodeBinary(schema!, fromLatin1(entry.frozen!), ownBytesReadOptions) as unknown as TaskLike };

  return {
    get size() {
      return tasks.size;
    },

    attach(schemas) {
      if (schema !== undefined && schema !== schemas.task) {
        throw new Error(`this task store already keeps tasks of another ${schema.typeName}: give each task handler its own store`);
      }
      schema = schemas.task;
    },

    create(record) {
      trimHistory(record.task);
      const key = ownerKey(record);
      const entry = new Entry(record.tenant, record.owner, key, record.task.id, record.task.contextId, record);
      tasks.set(entry.id, entry);
      let own = byOwner.get(key);
      if (own === undefined) byOwner.set(key, (own = new Set()));
      own.add(entry);
    },

    get(id) {
      const entry = tasks.get(id);
      return entry === undefined ? undefined : recordOf(entry);
    },

    update(record, change: TaskChange) {
      if (change.kind !== "artifact") trimHistory(record.task);
      // A task is terminal once: it enters the queue once.
      if (change.kind === "status" && change.terminal) {
        const entry = tasks.get(record.task.id);
        if (entry?.live === undefined) return;
        freeze(entry, record.task);
        entry.finishedAt = Date.now();
        finished.push(entry);
        sweep(entry.finishedAt);
      }
    },

    list(owner, query: TaskQuery): TaskPage {
      const after = query.pageToken === "" ? undefined : decodeTaskCursor(query.pageToken);
      const matching: { entry: Entry; cursor: TaskCursor }[] = [];
      for (const entry of byOwner.get(ownerKey(owner)) ?? []) {
        if (query.contextId !== "" && entry.contextId !== query.contextId) continue;
        const { state, timeMs } = entry.cursor();
        if (query.state !== 0 && state !== query.state) continue;
        if (query.statusAfterMs !== undefined && timeMs < query.statusAfterMs) continue;
        matching.push({ entry, cursor: { timeMs, id: entry.id } });
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
        tasks: page.map((m) => recordOf(m.entry).task),
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
        const after = decodeConfigCursor(pageToken);
        while (start < all.length && all[start]!.id <= after) start++;
      }
      const size = pageSize === 0 ? defaultConfigPage : pageSize;
      const page = all.slice(start, start + size);
      const more = start + page.length < all.length;
      return { configs: page, nextPageToken: more ? encodeConfigCursor(page.at(-1)!.id) : "" };
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
