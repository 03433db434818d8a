/**
 * Where tasks and their push configs live. The task runtime keeps each
 * running task's object and changes it in place, event by event, then tells
 * the store what changed, so a store that holds objects (the in-memory one)
 * does nothing per event but bookkeeping, and one that writes rows (a
 * database) knows which part to write. Every method may be asynchronous.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import type { ArtifactLike, MessageLike, PushConfigLike, TaskLike, TaskSchemas, TaskStatusLike } from "./model.js";
import type { PushTarget } from "./push-delivery.js";

/** Who a task belongs to (spec 13.1): only the same tenant and owner see it. */
export interface TaskOwner {
  readonly tenant: string;
  readonly owner: string;
}

export interface StoredTask extends TaskOwner {
  readonly task: TaskLike;
  /** Of a store that other processes write too (`follow`): how many changes the task had when read. */
  readonly version?: number;
}

/** What changed in a stored task since the store last heard of it. */
export type TaskChange =
  /** A new status (and, when it has a message, that message at the end of the history); `terminal` when nothing can follow it. */
  | { readonly kind: "status"; readonly terminal: boolean; readonly metadata?: JsonObject | undefined }
  /**
   * An artifact added or one's parts appended to (`index` into `task.artifacts`): with `append`,
   * its last `parts` parts are the chunk the executor sent; `lastChunk` as the executor said.
   * `metadata`, here and on a status: the executor's event metadata, for a store that renders
   * push notifications from what it wrote (D74).
   */
  | {
      readonly kind: "artifact";
      readonly index: number;
      readonly append?: boolean;
      readonly parts?: number;
      readonly lastChunk?: boolean;
      readonly metadata?: JsonObject | undefined;
      /** The run that yielded it still works on the task (it has not interrupted it): a store of leases keeps it leased (D79). */
      readonly running?: boolean;
    }
  /**
   * A message added at the end of the history: a run takes the task up with it. `claimed`: the
   * runtime claimed the task for it (`claim`), and a store of leases writes it only while that
   * claim holds (D79).
   */
  | { readonly kind: "history"; readonly claimed?: boolean };

/** A change another process made to a task this one follows (TaskStore.follow); `metadata`, the executor's event metadata. */
export type ForeignChange =
  | { readonly kind: "status"; readonly status: TaskStatusLike; readonly metadata?: JsonObject | undefined }
  | { readonly kind: "artifact"; readonly artifact: ArtifactLike; readonly append: boolean; readonly lastChunk: boolean; readonly metadata?: JsonObject | undefined }
  | { readonly kind: "history"; readonly message: MessageLike };

/** ListTasks, as the runtime has checked it (spec 3.1.4). */
export interface TaskQuery {
  /** "" for any. */
  readonly contextId: string;
  /** A TaskState number; 0 (UNSPECIFIED) for any. */
  readonly state: number;
  /** Only tasks whose status timestamp is at or after this (epoch ms). */
  readonly statusAfterMs: number | undefined;
  /** 1..100. */
  readonly pageSize: number;
  /** "" for the first page, else a nextPageToken this store gave out. */
  readonly pageToken: string;
}

export interface TaskPage {
  /** Newest status timestamp first; the stored objects or copies of them (the runtime copies what it answers). */
  readonly tasks: readonly TaskLike[];
  /** How many tasks match the query, over all pages. */
  readonly totalSize: number;
  /** "" on the last page. */
  readonly nextPageToken: string;
  /**
   * The nextPageToken of this page cut after `tasks[index]`: the runtime ends a page early when
   * its tasks weigh more than `maxListPageBytes` (D78). A store without it has its pages answered whole.
   */
  readonly tokenAfter?: ((index: number) => string) | undefined;
}

export interface ConfigPage {
  readonly configs: readonly PushConfigLike[];
  readonly nextPageToken: string;
}

/**
 * `update` of a message (kind `history`) that a store shared by several processes did not write
 * (D79): `claimLost`, the claim taken for it (`claim`) lapsed and was let go before the message
 * reached the store, so another process may run the task now; `ended`, the task was finished
 * first (a cancel, or another process's run ended it). Either way the message is not in the task.
 */
export class MessageNotStoredError extends Error {
  override readonly name = "MessageNotStoredError";
  constructor(
    message: string,
    readonly why: "claimLost" | "ended",
  ) {
    super(message);
  }
}

/** A page token the store did not give out (the runtime answers InvalidParams). */
export class BadPageTokenError extends Error {
  override readonly name = "BadPageTokenError";
}

export interface TaskStore {
  /**
   * Called once by the task handler that uses this store, with the message
   * types of its `a2a_pb`: a store that keeps tasks as bytes or rows encodes
   * them with these. A store serves one handler's types.
   */
  attach?(schemas: TaskSchemas): void;
  /**
   * Tells `listener` of each task the store drops by itself while it was not finished (one that
   * waited for its client past a TTL, or beyond a count): the runtime ends the streams that follow it. Called by each
   * task handler that uses the store.
   */
  onDropped?(listener: (taskId: string) => void): void;
  /**
   * Adds a task the runtime just created. A store with an outbox (`deliverPushes`) is given the
   * push configs of the SendMessage that created it too, to write with the task; other stores
   * are given them by `putConfig`.
   */
  create(record: StoredTask, configs?: readonly PushConfigLike[]): void | Promise<void>;
  /** The task of this id, whoever owns it (the runtime checks the owner), or undefined. */
  get(id: string): StoredTask | undefined | Promise<StoredTask | undefined>;
  /**
   * `record.task` was changed in place; `change` says how. A store that several processes share
   * rejects a message (`history`) it did not write with MessageNotStoredError (D79).
   */
  update(record: StoredTask, change: TaskChange): void | Promise<void>;
  /** The owner's tasks matching `query`, one page. Throws BadPageTokenError. */
  list(owner: TaskOwner, query: TaskQuery): TaskPage | Promise<TaskPage>;

  /** Adds or replaces the config of `config.taskId` with `config.id`. */
  putConfig(config: PushConfigLike): void | Promise<void>;
  getConfig(taskId: string, id: string): PushConfigLike | undefined | Promise<PushConfigLike | undefined>;
  /** All of a task's configs: what each update is delivered to. */
  configsOf(taskId: string): readonly PushConfigLike[] | Promise<readonly PushConfigLike[]>;
  /** One page of a task's configs, in a stable order; pageSize 0 is the store's default. Throws BadPageTokenError. */
  listConfigs(taskId: string, pageSize: number, pageToken: string): ConfigPage | Promise<ConfigPage>;
  /** Removes the config if there is one (deleting twice is not an error). */
  deleteConfig(taskId: string, id: string): void | Promise<void>;

  /**
   * For a store that several processes share (D71): calls `onChange` with each change of the
   * task that another process writes after `version` (StoredTask.version), in order and without
   * gaps, until the returned function is called. With `catchUp` the changes already written
   * after `version` come first; a task this process has just created has none.
   */
  follow?(taskId: string, version: number, onChange: (change: ForeignChange) => void, catchUp: boolean): () => void;

  /**
   * For such a store (D79): takes the task for a run of this process, before its message is
   * stored, unless a run of another process holds it (a lease of that process that has not
   * lapsed, D72): false then, and the message waits for a change that interrupts or ends the
   * task. A task that is finished or gone is held by no one: true.
   */
  claim?(record: StoredTask): boolean | Promise<boolean>;
  /** Gives a claim back whose message will not run (the runtime closed meanwhile): the task is held as before it. */
  unclaim?(record: StoredTask): void | Promise<void>;
  /** How often a refused message claims again while no change of the task wakes it (a claim given back writes none). Default 1 s. */
  readonly claimRetryMs?: number;

  /**
   * For a store that delivers push notifications through an outbox of its own (D74): the
   * runtime hands it the delivery at start and delivers nothing itself from then on. The store
   * writes a notification per push config with each change (`create`, `update`) in the same
   * transaction, and hands it to `outbox.send` once written, and again after a crash.
   */
  deliverPushes?(outbox: PushOutbox): void;

  /** Releases timers and connections. */
  close?(): void | Promise<void>;
}

/** What the runtime gives a store that keeps a push outbox (TaskStore.deliverPushes, D74). */
export interface PushOutbox {
  /** Queues `body` for `target` (PushDelivery.deliver); `settled` once it was delivered or given up on, not when delivery stops at close. */
  send(taskId: string, target: PushTarget, body: string, settled: () => void): void;
  /** The ProtoJSON text of a StreamResponse whose payload is `value` (a Task, TaskStatusUpdateEvent or TaskArtifactUpdateEvent). */
  render(kind: "task" | "statusUpdate" | "artifactUpdate", value: object): string;
  /** The JSON text of a 0.3 caller's notification (D112): the whole task, in 0.3's JSON-RPC shapes. */
  renderV03(task: TaskLike): string;
}
