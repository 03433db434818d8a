/**
 * The default task store: objects in this process, bounded. Finished tasks
 * (terminal states) are dropped after `terminalTtlMs` or beyond
 * `maxTerminalTasks`, oldest first, their push configs with them, and each
 * task's history keeps its last `maxHistory` messages, so a busy agent's heap
 * goes back to where it started once its tasks are done. A task waiting for
 * its client (INPUT_REQUIRED, AUTH_REQUIRED) is kept for `interruptedTtlMs`
 * after its last status change, and dropped the same way then or beyond
 * `maxWaitingTasks`, the one that waited longest first; a task still
 * being worked on is kept. A finished task is kept as
 * its protobuf bytes, with nothing of its own on the heap (FinishedTasks,
 * D76), and read back as a new copy.
 */
import { inBackground } from "../../core/background.js";
import type { DescMessage } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { decodeBinary, encodeBinaryWith, ownBytesReadOptions } from "../../core/codec/binary-codec.js";
import { SlotMap } from "../../core/slots.js";
import { FinishedTasks } from "./finished-tasks.js";
import { WaitingTasks } from "./waiting-tasks.js";
import { taskStatesOf, type PushConfigLike, type TaskLike } from "./model.js";
import { NewestFirstPage } from "./newest-first.js";
import { decodeConfigCursor, decodeTaskCursor, encodeConfigCursor, encodeTaskCursor } from "./page-token.js";
import { type ConfigPage, type StoredTask, type TaskChange, type TaskPage, type TaskQuery, type TaskStore } from "./task-store.js";

export interface InMemoryTaskStoreOptions {
  /** How long a finished task is kept. Default 1 hour. */
  readonly terminalTtlMs?: number;
  /** How many finished tasks are kept at most. Default 10,000. */
  readonly maxTerminalTasks?: number;
  /**
   * How many bytes of finished tasks (their protobuf encoding) are kept at most, oldest dropped
   * first: 10,000 tasks of 4 MiB bodies are 40 GB. Default 256 MiB.
   */
  readonly maxTerminalBytes?: number;
  /** Messages kept per task; older ones are dropped. Default 100. */
  readonly maxHistory?: number;
  /**
   * How long a task waiting for its client (INPUT_REQUIRED, AUTH_REQUIRED) is kept after its last
   * status change, for a client that never comes back; then it is dropped with its push configs
   * (TaskNotFound after that). Default 24 hours.
   */
  readonly interruptedTtlMs?: number;
  /**
   * How many tasks waiting for their client are kept at most: beyond it the one that waited
   * longest (since the status that made it wait) is dropped as `interruptedTtlMs` drops one. A task a
   * message continued is being worked on: not counted until its run's next status.
   * Default 10,000 (about 16 MB of heap with short messages, D76).
   */
  readonly maxWaitingTasks?: number;
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

/** A task's status time (epoch ms), what ListTasks orders and filters by; 0 with none. */
const statusTimeMs = (task: TaskLike): number => (task.status?.timestamp === undefined ? 0 : timestampMs(task.status.timestamp));

/**
 * Runs `held`'s sweeps every `ms` until it is collected; unref'd. Outside the store's scope, so the
 * timer's callback holds that weak reference and nothing of the store (closures of one scope share
 * what they hold).
 */
function sweepWhileHeld(held: WeakRef<{ run(): void }>, ms: number): ReturnType<typeof setInterval> {
  // In the background context (D35): made in the context of the code that made the store, the
  // timer held it, an OpenTelemetry span with it, for as long as the store lived.
  const timer = inBackground(() =>
    setInterval(() => {
      const sweeps = held.deref();
      if (sweeps === undefined) clearInterval(timer);
      else sweeps.run();
    }, ms),
  );
  timer.unref();
  return timer;
}

export function createInMemoryTaskStore(options: InMemoryTaskStoreOptions = {}): InMemoryTaskStore {
  const ttlMs = options.terminalTtlMs ?? 3_600_000;
  const maxTerminal = options.maxTerminalTasks ?? 10_000;
  const maxTerminalBytes = options.maxTerminalBytes ?? 256 << 20;
  const maxHistory = options.maxHistory ?? 100;
  const interruptedTtlMs = options.interruptedTtlMs ?? 86_400_000;
  const maxWaiting = options.maxWaitingTasks ?? 10_000;
  if (!(ttlMs > 0) || !(maxTerminal >= 0) || !(maxHistory >= 1) || !(interruptedTtlMs > 0) || !(maxTerminalBytes >= 0) || !(maxWaiting >= 1)) {
    throw new Error(
      "createInMemoryTaskStore: terminalTtlMs and interruptedTtlMs must be > 0, maxTerminalTasks and maxTerminalBytes >= 0, and maxHistory and maxWaitingTasks >= 1",
    );
  }

  /**
   * Every task by id: a running one as the runtime's record (changed in place), a finished one as
   * its seq in `finished`. Slots, not a Map: a task comes and goes per call (D116).
   */
  const tasks = new SlotMap<StoredTask | number>();
  const finished = new FinishedTasks();
  const configs = new Map<string, Map<string, PushConfigLike>>();
  /** The Task message type, once a task handler attached the store: without it finished tasks stay objects. */
  let schema: DescMessage | undefined;
  /** The states of a task waiting for its client, read off the attached schema's enum. */
  let interrupted: ReadonlySet<number> = new Set();

  /**
   * The tasks waiting for their client, in the order of their idle time, counted from the status
   * that interrupted them; a message that continues one takes it out until its run's next status.
   * What `interruptedTtlMs` sweeps and `maxWaitingTasks` drops the front of.
   */
  const waiting = new WaitingTasks();
  /** Told of a waiting task dropped: each handler on the store ends its streams. */
  const droppedWaiting: ((taskId: string) => void)[] = [];
  const dropped = (id: string) => {
    tasks.delete(id);
    if (waiting.size > 0) waiting.leave(id);
    if (configs.size > 0) configs.delete(id);
  };
  const dropWaiting = (id: string) => {
    dropped(id);
    for (const listener of droppedWaiting) listener(id);
  };
  const sweep = (now: number) => finished.expire(now, ttlMs, maxTerminal, dropped, maxTerminalBytes);
  /** Tasks that waited for their client past the TTL: a client that never came back kept each for good. */
  const sweepInterrupted = (now: number) => {
    if (waiting.size === 0) return;
    const stale: string[] = [];
    // The line, not every task: its order is the clock's, which may step back, so all of it is read.
    waiting.forEach((id, sinceMs) => {
      if (now - sinceMs > interruptedTtlMs) stale.push(id);
    });
    for (const id of stale) dropWaiting(id);
  };
  // Tasks expire while the agent is idle too; the timer never keeps the process alive, nor the
  // store: it holds the sweeps weakly, so a store dropped without close() is collected with its
  // tasks (it was kept, all its finished tasks with it, for the life of the process), and the timer
  // stops once it is gone.
  // The store's methods reach the sweeps through this object, which keeps it alive as long as they are.
  const sweeps = {
    finished: sweep,
    run(): void {
      const now = Date.now();
      sweep(now);
      sweepInterrupted(now);
    },
  };
  // A quarter of the interrupted TTL: a task is dropped at most a quarter late.
  const timer = sweepWhileHeld(new WeakRef(sweeps), Math.min(ttlMs, interruptedTtlMs / 4, 60_000));

  const trimHistory = (task: TaskLike) => {
    const over = task.history.length - maxHistory;
    if (over > 0) task.history.splice(0, over);
  };
  const decode = (bytes: Uint8Array) => decodeBinary(schema!, bytes, ownBytesReadOptions) as unknown as TaskLike;
  /**
   * Keeps the line of waiting tasks as `change` to `record` leaves it. A task waits from a status
   * that interrupts it (from that status's time) until one that does not, or a message continuing
   * it (its run works on it). Beyond `maxWaitingTasks`, the one that waited longest goes.
   */
  const wait = (record: StoredTask, change: TaskChange) => {
    const task = record.task;
    const waits = interrupted.has(task.status?.state ?? 0);
    if (change.kind !== "status") {
      // A message that continues it (or its run's artifact): a run works on the task, which waits no
      // more until that run's next status. Kept and not counted, as a running task: moved to the back
      // of the line, it was dropped beyond maxWaitingTasks mid-run by a few other callers' tasks, and
      // its run went on for a task GetTask no longer found. A run always ends in a status (the
      // executor's, or COMPLETED, FAILED, CANCELED), which puts it back in the line if it waits again.
      if (waits && waiting.size > 0) waiting.leave(task.id);
      return;
    }
    if (!waits) {
      if (waiting.size > 0) waiting.leave(task.id);
      return;
    }
    // A task the store dropped (its run went on) is not taken back.
    if (tasks.get(task.id) !== record) return;
    waiting.wait(task.id, statusTimeMs(task));
    // The task just put at the back is never the one dropped (maxWaitingTasks >= 1).
    while (waiting.size > maxWaiting) dropWaiting(waiting.oldest()!);
  };
  /** The stored task: the running one's record, or a new copy of a finished one. */
  const recordOf = (value: StoredTask | number): StoredTask => (typeof value === "number" ? finished.read(value, decode) : value);
  return {
    get size() {
      return tasks.size;
    },

    attach(schemas) {
      if (schema !== undefined && schema !== schemas.task) {
        throw new Error(`this task store already keeps tasks of another ${schema.typeName}: give each task handler its own store`);
      }
      schema = schemas.task;
      // A schema set without the enum (a bare Task schema) has no interrupted states to sweep.
      const states = schemas.taskState === undefined ? undefined : taskStatesOf(schemas.taskState);
      interrupted = new Set(states === undefined ? [] : [states.inputRequired, states.authRequired]);
    },

    onDropped(listener) {
      droppedWaiting.push(listener);
    },

    create(record) {
      const id = record.task.id;
      const taken = tasks.get(id);
      // A newId that repeated the id of a task still running (maybe another owner's): that task is
      // not replaced; the new one is refused, and its caller told it failed.
      if (taken !== undefined && typeof taken !== "number") throw new Error(`task id ${id} is taken by a task that is not finished: newId gave it twice`);
      trimHistory(record.task);
      tasks.set(id, record);
      // The id was taken by a finished task (a newId that repeated one): it is let go now, not
      // dropped later in the new one's place (found by a search: it never happens with random
      // ids), and the old task's push configs go with it, or the new task's updates would be sent
      // to them. The runtime adds the new task's configs after this.
      if (taken !== undefined) {
        finished.forgetId(id);
        configs.delete(id);
      }
    },

    get(id) {
      const value = tasks.get(id);
      return value === undefined ? undefined : recordOf(value);
    },

    update(record, change: TaskChange) {
      if (change.kind !== "artifact") trimHistory(record.task);
      if (interrupted.size > 0) wait(record, change);
      // A task is terminal once: it is kept as finished once. `record` is the object `create` was
      // given (the runtime changes its tasks in place): a copy is not the stored task.
      if (change.kind !== "status" || !change.terminal) return;
      const task = record.task;
      if (tasks.get(task.id) !== record) return;
      const now = Date.now();
      const state = task.status?.state ?? 0;
      const timeMs = statusTimeMs(task);
      let seq: number;
      let refused: { readonly error: unknown } | undefined;
      try {
        seq =
          schema === undefined
            ? finished.push(record, state, timeMs, now, undefined, 0)
            : encodeBinaryWith(schema, task as never, (bytes, length) => finished.push(record, state, timeMs, now, bytes, length));
      } catch (error) {
        // A task that does not encode (a value of the wrong type in what an executor yielded): kept as the
        // object it is, so it still leaves in its turn, and the error is the runtime's to report.
        refused = { error };
        seq = finished.push(record, state, timeMs, now, undefined, 0);
      }
      tasks.set(task.id, seq);
      sweeps.finished(now);
      if (refused !== undefined) throw refused.error;
    },

    list(owner, query: TaskQuery): TaskPage {
      const page = new NewestFirstPage<StoredTask | number>(query.pageSize, query.pageToken === "" ? undefined : decodeTaskCursor(query.pageToken));
      let totalSize = 0;
      // Every task, not an index per owner: two more hash updates per task for a call that reads a page.
      const { tenant, owner: who } = owner;
      const { contextId, state, statusAfterMs } = query;
      tasks.forEach((value, id) => {
        let timeMs: number;
        if (typeof value === "number") {
          timeMs = finished.listedTimeMs(value, tenant, who, contextId, state, statusAfterMs);
          if (Number.isNaN(timeMs)) return;
        } else {
          if (value.tenant !== tenant || value.owner !== who) return;
          if (contextId !== "" && value.task.contextId !== contextId) return;
          if (state !== 0 && (value.task.status?.state ?? 0) !== state) return;
          timeMs = statusTimeMs(value.task);
          if (statusAfterMs !== undefined && timeMs < statusAfterMs) return;
        }
        totalSize++;
        page.offer(timeMs, id, value);
      });
      const { values, cursors, next } = page.take();
      return {
        tasks: values.map((value) => recordOf(value).task),
        totalSize,
        nextPageToken: next === undefined ? "" : encodeTaskCursor(next),
        // Where the task was listed, not its time when asked: a running task changes in place meanwhile.
        tokenAfter: (index) => encodeTaskCursor(cursors[index]!),
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
