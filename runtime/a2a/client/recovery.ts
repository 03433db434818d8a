/**
 * Stream recovery (D30): follows a task to a terminal or interrupted state
 * across transport failures. A stream cut (UNAVAILABLE), cancelled by the
 * agent's side (CANCELLED while the caller's signal is not aborted) or ended
 * before such a state (a proxy's idle cut that closes cleanly) is followed by
 * GetTask, and by SubscribeToTask only while the task is not terminal (spec
 * 3.1.6: a terminal task answers UnsupportedOperation). Each subscription's
 * first Task replaces the follower's view, and what it holds that the caller
 * was not shown yet is yielded as the events that would have shown it, so
 * every status and every artifact chunk reaches the caller exactly once.
 * Works on any client with the generated client's shape, on every binding.
 */
import { create, equals, type DescMessage, type Message } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { connectionWait, transportFailure, type ClientCallOptions } from "../../core/client/client.js";
import { RpcError, isRpcError } from "../../core/errors.js";
import { taskStatesOf, type MessageLike, type TaskLike, type TaskStates, type TaskStatusLike } from "../tasks/model.js";
import { TaskView, isNewStatus, type ArtifactUpdateLike, type PartEquals, type SnapshotChange, type StatusUpdateLike } from "./task-view.js";

/** StreamResponse, as the follower reads it. */
export interface StreamEventLike<T extends TaskLike = TaskLike> {
  payload:
    | { case: "task"; value: T }
    | { case: "message"; value: MessageLike }
    | { case: "statusUpdate"; value: StatusUpdateLike }
    | { case: "artifactUpdate"; value: ArtifactUpdateLike }
    | { case: undefined; value?: undefined };
}

/** The three methods of the generated A2A client the follower calls (any binding). */
export interface FollowableClient<E, T, R> {
  sendStreamingMessage(request: R, options?: ClientCallOptions): AsyncIterable<E>;
  getTask(request: { id: string; tenant?: string }, options?: ClientCallOptions): Promise<T>;
  subscribeToTask(request: { id: string; tenant?: string }, options?: ClientCallOptions): AsyncIterable<E>;
  /** The runtime's gRPC clients: waits while the channel is between reconnection attempts. */
  readonly [connectionWait]?: (timeoutMs: number, signal: AbortSignal | undefined) => Promise<void>;
}

export interface FollowTaskOptions {
  /**
   * Stops following: the call under way is cancelled and the iteration
   * throws CANCELLED (DEADLINE_EXCEEDED for `AbortSignal.timeout`). What the
   * caller stopped is never retried.
   */
  readonly signal?: AbortSignal;
  /** Headers (or gRPC metadata) for every call the follower makes. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Reconnections in a row that bring no event past their snapshot before the last error is thrown. Default 5. */
  readonly maxRetries?: number;
  /** The wait before the first reconnection, doubled for each one after it (with jitter: half to all of it). Default 200 ms. */
  readonly backoffMs?: number;
  /** The longest wait. Default 5 s. */
  readonly maxBackoffMs?: number;
  /**
   * How long a reconnection's GetTask may go unanswered before it counts as a failed
   * reconnection (UNAVAILABLE) and the next one is tried. GetTask reads a task, at once: one
   * that hangs went out on a dead connection (a link gone half-open keeps the pooled connections
   * to the agent, where undici waits five minutes for an answer's head). Default 30 s; 0: none.
   */
  readonly getTaskTimeoutMs?: number;
  /** Told before each reconnection: which one in a row, how long it waits, and the error (or early end) it follows. */
  readonly onRetry?: (info: { readonly attempt: number; readonly delayMs: number; readonly error: RpcError }) => void;
}

/** A reconnection's GetTask, unanswered this long, failed (FollowTaskOptions.getTaskTimeoutMs). */
const defaultGetTaskTimeoutMs = 30_000;
/** setTimeout's longest delay: a longer one fires at once. */
const maxTimerMs = 2 ** 31 - 1;

/** One event of a followed task. */
export interface FollowedEvent<E, T> {
  /** The event: as the agent sent it, or made by the follower from a snapshot (`synthetic`). */
  readonly event: E;
  /**
   * The task as the events so far leave it, artifacts assembled; undefined
   * only beside a direct Message answer (no task). The follower's own object,
   * changed in place: copy it to keep a moment of it.
   */
  readonly task: T | undefined;
  /** Made from a snapshot: what changed while the follower was away, or GetTask's task. */
  readonly synthetic: boolean;
}

/** A task being followed: its events (iterate once), and the task as they leave it. */
export interface TaskFollow<E, T> extends AsyncIterable<FollowedEvent<E, T>> {
  /** The task as the events so far leave it (undefined before the first). */
  readonly task: T | undefined;
  /** The task's id, once known. */
  readonly taskId: string | undefined;
}

/** A task already under way, to follow from now on. */
export interface TaskRef {
  readonly taskId: string;
  readonly tenant?: string;
}

/**
 * Follows a task to its end across transport failures: `start` is the
 * SendMessageRequest to send as SendStreamingMessage, or `{ taskId }` of a
 * task under way. `options.schema` is the StreamResponse schema of the
 * client's `a2a_pb` (events made from snapshots are of it); the generated
 * `follow<Service>Task` passes it.
 */
export function followTask<E extends Message & StreamEventLike<T>, T extends TaskLike, R extends object>(
  client: FollowableClient<E, T, R>,
  start: R | TaskRef,
  options: FollowTaskOptions & { readonly schema: GenMessage<E> },
): TaskFollow<E, T> {
  return new Follower(client, start, options);
}

const isTaskRef = (start: object): start is TaskRef => typeof (start as { taskId?: unknown }).taskId === "string" && !("message" in start);

class Follower<E extends Message & StreamEventLike<T>, T extends TaskLike, R extends object> implements TaskFollow<E, T> {
  readonly #client: FollowableClient<E, T, R>;
  readonly #options: FollowTaskOptions;
  readonly #schema: DescMessage;
  readonly #states: TaskStates;
  readonly #partEquals: PartEquals;
  readonly #call: ClientCallOptions;
  readonly #request: R | undefined;
  readonly #tenant: string | undefined;
  /** The request continues a task: the interrupted state its first snapshot shows is the one this message answers. */
  readonly #continues: boolean;
  /** That first snapshot's status: an interrupted state ends the follow only once the status is another. */
  #baseline: TaskStatusLike | undefined;
  #taskId: string | undefined;
  #view: TaskView<T> | undefined;
  #events: AsyncGenerator<FollowedEvent<E, T>, void, undefined> | undefined;

  constructor(client: FollowableClient<E, T, R>, start: R | TaskRef, options: FollowTaskOptions & { readonly schema: GenMessage<E> }) {
    this.#client = client;
    this.#options = options;
    this.#schema = options.schema;
    const described = describe(options.schema);
    this.#states = described.states;
    this.#partEquals = described.partEquals;
    this.#call = { signal: options.signal, headers: options.headers };
    const bound = options.getTaskTimeoutMs;
    if (bound !== undefined && !(bound >= 0 && bound <= maxTimerMs)) throw new TypeError(`getTaskTimeoutMs must be 0 (none) to ${maxTimerMs} milliseconds, got ${String(bound)}`);
    if (isTaskRef(start)) {
      this.#taskId = start.taskId;
      this.#tenant = start.tenant;
      this.#continues = false;
    } else {
      this.#request = start;
      const { tenant, message } = start as { tenant?: unknown; message?: { taskId?: unknown } };
      this.#tenant = typeof tenant === "string" && tenant !== "" ? tenant : undefined;
      this.#continues = typeof message?.taskId === "string" && message.taskId !== "";
    }
  }

  get task(): T | undefined {
    return this.#view?.task;
  }

  get taskId(): string | undefined {
    return this.#taskId;
  }

  [Symbol.asyncIterator](): AsyncIterator<FollowedEvent<E, T>> {
    return (this.#events ??= this.#run());
  }

  async *#run(): AsyncGenerator<FollowedEvent<E, T>, void, undefined> {
    const maxRetries = this.#options.maxRetries ?? 5;
    let stream: AsyncIterable<E> | undefined = this.#request === undefined ? undefined : this.#client.sendStreamingMessage(this.#request, this.#call);
    // Following a task already under way starts with GetTask, neither waiting nor counted.
    let reconnecting = stream !== undefined;
    let subscribed = false;
    let failures = 0;
    let lastError = new RpcError("UNAVAILABLE", "no call was made");
    // The task turned terminal between GetTask and SubscribeToTask: ask again at once.
    let now = false;
    for (;;) {
      if (stream === undefined) {
        if (reconnecting) {
          if (++failures > maxRetries) throw lastError;
          const delayMs = now ? 0 : this.#backoff(failures);
          now = false;
          this.#options.onRetry?.({ attempt: failures, delayMs, error: lastError });
          await pause(delayMs, this.#options.signal);
          // gRPC: between its reconnection attempts grpc-js's channel fails a call at once, where a
          // JSON call dials; up to as long again for the channel to connect, so each reconnection
          // tries the agent.
          await this.#client[connectionWait]?.(delayMs, this.#options.signal);
          if (this.#options.signal?.aborted === true) throw transportFailure(this.#options.signal.reason, this.#options.signal);
        }
        reconnecting = true;
        let task: T;
        try {
          task = await this.#getTask();
        } catch (err) {
          lastError = this.#retryable(err);
          continue;
        }
        if (this.#settles(task.status)) {
          yield* this.#snapshot(task, undefined);
          return;
        }
        stream = this.#client.subscribeToTask(this.#ref(), this.#call);
        subscribed = true;
      }
      const seen = { events: 0, shown: 0 };
      try {
        if (yield* this.#read(stream, seen)) return;
        lastError = new RpcError("UNAVAILABLE", "the stream ended before the task reached a terminal or interrupted state");
        // Ended before its first event (a stream opens before it, D14): there is no task to resume, as after any failure then.
        if (this.#taskId === undefined) throw new RpcError("UNAVAILABLE", "the stream ended before its first event");
      } catch (err) {
        if (subscribed && seen.events === 0 && isRpcError(err, "UNSUPPORTED_OPERATION") && this.#options.signal?.aborted !== true) {
          lastError = err;
          now = true;
        } else {
          lastError = this.#retryable(err);
        }
      }
      // A stream that showed the caller something new worked: the next failure is the first in a row.
      // (Events it held that were shown before, a repeated status, are no news: counted, a server that
      // repeats one and fails were followed for ever.)
      if (seen.shown > 0) failures = 0;
      stream = undefined;
    }
  }

  /** One stream's events, applied to the view and yielded; true when the follow is over. */
  async *#read(stream: AsyncIterable<E>, seen: { events: number; shown: number }): AsyncGenerator<FollowedEvent<E, T>, boolean, undefined> {
    // The last status this stream brought is INPUT_REQUIRED or AUTH_REQUIRED: its end is the follow's.
    let waiting = false;
    for await (const event of stream) {
      seen.events++;
      const payload = event.payload;
      if (payload.case === "task") {
        if (yield* this.#snapshot(payload.value, event, seen)) return true;
        continue;
      }
      if (payload.case === "message") {
        seen.shown++;
        yield { event, task: this.#view?.task, synthetic: false };
        // A direct answer: there is no task to follow (spec 3.1.2).
        if (this.#view === undefined) return true;
        continue;
      }
      if (payload.case === undefined) continue; // A payload this proto does not know (spec 5.7).
      const view = this.#view;
      if (view === undefined) throw new RpcError("INTERNAL", `the stream began with a ${payload.case}, not a Task or a Message (spec 3.1.2)`);
      if (payload.case === "artifactUpdate") {
        view.applyArtifact(payload.value);
        seen.shown++;
        yield { event, task: view.task, synthetic: false };
        continue;
      }
      if (!view.applyStatus(payload.value)) continue; // Already in the view: a snapshot held it.
      seen.shown++;
      yield { event, task: view.task, synthetic: false };
      const state = payload.value.status?.state ?? 0;
      if (this.#states.isTerminal(state)) return true;
      // An agent may close here (D24) or keep the stream open (spec 7.6.1): either is followed.
      waiting = this.#states.isInterrupted(state);
    }
    return waiting;
  }

  /**
   * A Task: the first makes the view and is yielded as it is (`event`, or
   * one made of GetTask's task); any later one replaces the view, and only
   * what it holds that the caller was not shown is yielded. True when the
   * task is settled.
   */
  async *#snapshot(task: T, event: E | undefined, seen?: { shown: number }): AsyncGenerator<FollowedEvent<E, T>, boolean, undefined> {
    if (this.#view === undefined) {
      this.#view = new TaskView(task, this.#partEquals);
      this.#taskId = task.id;
      if (this.#continues) this.#baseline = task.status;
      if (seen !== undefined) seen.shown++;
      yield { event: event ?? this.#event({ case: "task", value: task }), task: this.#view.task, synthetic: event === undefined };
    } else {
      const final = this.#states.isTerminal(task.status?.state ?? 0);
      for (const change of this.#view.replace(task, final)) {
        if (seen !== undefined) seen.shown++;
        yield { event: this.#changeEvent(task, change), task: this.#view.task, synthetic: true };
      }
    }
    return this.#settles(task.status);
  }

  /**
   * Whether a snapshot ends the follow: a terminal task, or one waiting for
   * the caller (INPUT_REQUIRED, AUTH_REQUIRED), unless that is the state the
   * request was sent to answer. A subscription that begins waiting is not
   * read on: an agent keeps it open until the task moves, which the caller
   * must make happen.
   */
  #settles(status: TaskStatusLike | undefined): boolean {
    if (status === undefined) return false;
    if (this.#states.isTerminal(status.state)) return true;
    if (!this.#states.isInterrupted(status.state)) return false;
    return this.#baseline === undefined || isNewStatus(status, this.#baseline);
  }

  /** GetTask, bounded by getTaskTimeoutMs: past it, UNAVAILABLE (a reconnection that failed), never the caller's deadline. */
  async #getTask(): Promise<T> {
    const ms = this.#options.getTaskTimeoutMs ?? defaultGetTaskTimeoutMs;
    if (ms === 0) return this.#client.getTask(this.#ref(), this.#call);
    const bound = new AbortController();
    const timer = setTimeout(() => bound.abort(), ms);
    const signal = this.#call.signal === undefined ? bound.signal : AbortSignal.any([this.#call.signal, bound.signal]);
    try {
      return await this.#client.getTask(this.#ref(), { ...this.#call, signal });
    } catch (err) {
      if (bound.signal.aborted && this.#call.signal?.aborted !== true) throw new RpcError("UNAVAILABLE", `GetTask brought no answer within ${ms} ms (getTaskTimeoutMs): the connection is taken for dead`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The error to retry after, or the error thrown when it is not one to retry. */
  #retryable(err: unknown): RpcError {
    // The caller stopped (its own CANCELLED or DEADLINE_EXCEEDED), or nothing to resume yet: the message may not have arrived.
    if (this.#options.signal?.aborted === true || this.#taskId === undefined || !isRpcError(err)) throw err;
    const code = err.entry.grpcStatus;
    if (code !== "UNAVAILABLE" && code !== "CANCELLED") throw err;
    return err;
  }

  #backoff(attempt: number): number {
    const base = this.#options.backoffMs ?? 200;
    const ceiling = Math.min(this.#options.maxBackoffMs ?? 5_000, base * 2 ** (attempt - 1));
    // Half fixed, half random: followers cut together do not come back together.
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  #ref(): { id: string; tenant?: string } {
    const id = this.#taskId ?? "";
    return this.#tenant === undefined ? { id } : { id, tenant: this.#tenant };
  }

  #changeEvent(task: T, change: SnapshotChange): E {
    const ids = { taskId: task.id, contextId: task.contextId };
    return change.kind === "status"
      ? this.#event({ case: "statusUpdate", value: { ...ids, status: change.status } })
      : this.#event({ case: "artifactUpdate", value: { ...ids, artifact: change.artifact, append: change.append, lastChunk: change.lastChunk } });
  }

  #event(payload: { readonly case: "task" | "statusUpdate" | "artifactUpdate"; readonly value: object }): E {
    // The schema is the client's StreamResponse (GenMessage<E>): what create makes of it is an E.
    return create(this.#schema, { payload } as never) as unknown as E;
  }
}

/** The TaskState numbers and the Part comparison, found through the StreamResponse schema's fields. */
function describe(schema: DescMessage): { states: TaskStates; partEquals: PartEquals } {
  const field = (desc: DescMessage | undefined, name: string) => {
    const f = desc?.fields.find((x) => x.localName === name);
    if (f === undefined) throw new Error(`${desc?.typeName ?? "?"} has no field ${name}: followTask needs the StreamResponse schema of a2a.proto 1.x`);
    return f;
  };
  const status = field(field(schema, "statusUpdate").message, "status").message;
  const taskState = field(status, "state").enum;
  const part = field(field(field(schema, "artifactUpdate").message, "artifact").message, "parts").message;
  if (taskState === undefined || part === undefined) throw new Error(`${schema.typeName} is not the StreamResponse of a2a.proto 1.x`);
  return { states: taskStatesOf(taskState), partEquals: (a, b) => equals(part, a as never, b as never) };
}

/** Waits `ms`, or rejects as a call would (CANCELLED, DEADLINE_EXCEEDED) when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted === true) return Promise.reject(transportFailure(signal.reason, signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(transportFailure(signal?.reason, signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
