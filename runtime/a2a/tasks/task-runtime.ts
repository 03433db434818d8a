/**
 * The task lifecycle (spec 3.1, 3.4, 3.5): runs the executor for each message,
 * applies its events to the task in place, and fans each event out, in the
 * order it happened, to every stream following the task and to its push
 * configs. What lives here is what only this process knows: the running
 * executions, their abort controllers and the subscribers; the tasks
 * themselves are the store's.
 */
import { inBackground } from "../../core/background.js";
import type { DescMessage, JsonObject } from "@bufbuild/protobuf";
import { TimestampSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import { jsonWriter } from "../../core/codec/json-writer.js";
import { isPromiseLike } from "../../core/dispatch.js";
import { zeroFactory } from "../../core/codec/message-zero.js";
import type { RequiredFieldTable } from "../../core/method-spec.js";
import type { A2ACallContext } from "../profile.js";
import type { RequestContext, TaskEvent, TaskExecutor } from "./executor.js";
import { obj, taskTo03 } from "../compat/v03-shapes.js";
import { make, type ArtifactLike, type MessageLike, type PushConfigLike, type TaskLike, type TaskSchemas, type TaskStates, type TaskStatusLike } from "./model.js";
import type { PushDelivery } from "./push-delivery.js";
import { snapshotOf } from "./snapshot.js";
import { Subscriber } from "./subscriber.js";
import { MessageNotStoredError, type ForeignChange, type StoredTask, type TaskOwner, type TaskStore } from "./task-store.js";
import { RpcError, isRpcError } from "../../core/errors.js";
import { TaskNotFoundError, UnsupportedOperationError } from "../errors.js";
import { SlotMap, SlotSet } from "../../core/slots.js";

type StreamEvent = object;

/** What an id is minted for. */
export type IdKind = "task" | "context" | "message" | "artifact" | "config";

export interface TaskRuntimeSettings {
  readonly schemas: TaskSchemas;
  readonly states: TaskStates;
  readonly required: RequiredFieldTable;
  readonly executor: TaskExecutor<MessageLike, TaskLike, TaskEvent>;
  readonly store: TaskStore;
  readonly push: PushDelivery;
  readonly onError: (error: unknown, info: { readonly taskId: string }) => void;
  readonly highWater: number;
  readonly slowSubscriberMs: number;
  readonly newId: (kind: IdKind) => string;
}

/** How often a message refused by a claim asks again while no change wakes it (D79), unless the store says. */
const defaultClaimRetryMs = 1000;

/** No subscriber: what a live task's `subscribers` is until a stream follows it (most never are). */
const noSubscribers: ReadonlySet<Subscriber<StreamEvent>> = new Set();

/** Up to this many artifacts a task's artifact is found by a search; beyond it, by a map. */
const artifactSearchLimit = 8;

/** A task this process is running an executor for, or streaming to someone. */
class LiveTask {
  #subscribers: Set<Subscriber<StreamEvent>> | undefined;
  /** Executions of one task run one after the other, in the order their messages came: the next one waits for this. */
  chain: Latch<void> = Latch.done;
  queued = 0;
  running: Execution | undefined;
  /** What resumes the message waiting for a run of another instance sharing the store (D79), once a change interrupts or ends the task. */
  waiting: Set<() => void> | undefined;
  /** How many changes interrupted or ended the task here: a claim refused meanwhile is asked again at once. */
  turns = 0;
  configs: readonly PushConfigLike[] = [];
  /** Reads of `configs` started by configsChanged: only the latest one's answer is kept. */
  configReads = 0;
  /** Changes made to the task whose write the store has not answered yet, so whose events are not out. */
  writing = 0;
  /** The latest read of `configs` started, once applied. */
  configsApplied: Promise<void> | undefined;
  /** What waits for `writing` to be back at 0 (a SubscribeToTask's snapshot, a takeover). */
  afterWrites: (() => void)[] | undefined;
  ready: Promise<void> = Promise.resolve();
  #artifacts: Map<string, ArtifactLike> | undefined;
  lastArtifactId: string;
  /** Stops following the changes other processes make to the task (a store they share, D71). */
  unfollow: (() => void) | undefined;

  constructor(public record: StoredTask) {
    this.lastArtifactId = record.task.artifacts.at(-1)?.artifactId ?? "";
  }

  /** The streams following the task. */
  get subscribers(): ReadonlySet<Subscriber<StreamEvent>> {
    return this.#subscribers ?? noSubscribers;
  }

  addSubscriber(s: Subscriber<StreamEvent>): void {
    (this.#subscribers ??= new Set()).add(s);
  }

  deleteSubscriber(s: Subscriber<StreamEvent>): void {
    this.#subscribers?.delete(s);
  }

  clearSubscribers(): void {
    this.#subscribers?.clear();
  }

  /**
   * The task's artifact of this id, for appends: searched from the end while
   * the task has few (chunks go to the latest one, mostly), then by a map
   * made once it has more.
   */
  artifactOf(id: string): ArtifactLike | undefined {
    const artifacts = this.record.task.artifacts;
    if (this.#artifacts === undefined) {
      if (artifacts.length <= artifactSearchLimit) {
        for (let i = artifacts.length - 1; i >= 0; i--) if (artifacts[i]!.artifactId === id) return artifacts[i];
        return undefined;
      }
      this.#artifacts = new Map();
      for (const artifact of artifacts) this.#artifacts.set(artifact.artifactId, artifact);
    }
    return this.#artifacts.get(id);
  }

  /** `artifact` is now the task's artifact of its id (added, or replacing the one before). */
  artifactSet(artifact: ArtifactLike): void {
    this.#artifacts?.set(artifact.artifactId, artifact);
  }

  /** Whether anyone gets this task's events: a stream or a push config. */
  get followed(): boolean {
    return this.subscribers.size > 0 || this.configs.length > 0;
  }
}

/**
 * A promise resolved from outside, made only when someone waits for it:
 * most executions are resolved three ways and waited for one way or none.
 */
class Latch<T> {
  static readonly done = Latch.#resolved();
  #promise: Promise<T> | undefined;
  #resolve: ((value: T) => void) | undefined;
  #settled = false;
  #value: T | undefined;

  static #resolved(): Latch<void> {
    const latch = new Latch<void>();
    latch.resolve();
    return latch;
  }

  get promise(): Promise<T> {
    if (this.#promise === undefined) {
      this.#promise = this.#settled ? Promise.resolve(this.#value as T) : new Promise<T>((r) => (this.#resolve = r));
    }
    return this.#promise;
  }

  /** Resolved already: `value` holds what it was resolved with. */
  get done(): boolean {
    return this.#settled;
  }

  get value(): T | undefined {
    return this.#value;
  }

  /** The first value counts, as for a promise. */
  resolve(value: T): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#value = value;
    this.#resolve?.(value);
  }

  /**
   * Wakes whoever waits now, with no value and without resolving (a later wait waits for the
   * value): a waiter that is woken checks why (a SendMessage whose caller left, callerLeft()).
   */
  wake(): void {
    const resolve = this.#resolve;
    if (resolve === undefined || this.#settled) return;
    this.#promise = undefined;
    this.#resolve = undefined;
    resolve(undefined as T);
  }
}

/** How often SendMessage calls still waiting are watched for their caller leaving (#watchCallers). */
const callerSweepMs = 1000;

/** `exec`'s caller left while it waited: its wait ends (it checks why it woke), the run goes on. */
function callerLeft(exec: Execution): void {
  if (!exec.callerWaits) return;
  exec.callerLeft = true;
  exec.settled.wake();
  exec.first.wake();
}

/** What the first event of an execution made: the task as that event left it, or a direct reply. */
export type FirstOutcome = { readonly task: TaskLike } | { readonly reply: MessageLike };

/** One run of the executor for one message. */
export class Execution {
  #controller: AbortController | undefined;
  #abortReason: unknown;
  /** Canceled, or the runtime closed: nothing the executor yields counts any more. */
  aborted = false;
  readonly first = new Latch<FirstOutcome>();
  /** Resolves when the task reached a terminal or interrupted state, or the executor ended. */
  readonly settled = new Latch<void>();
  /** No event is taken any more: the task is terminal, or this run ended. */
  over = false;
  /** `first` is resolved. */
  answered = false;
  /** SendMessage with returnImmediately: `first` carries a snapshot of the task as the first event left it. */
  answersEarly = false;
  /** A SendMessage waits on it (for `settled`, or for `first` when it answers early). */
  callerWaits = false;
  /** That caller's signal is watched (#watchCallers). */
  callerWatched = false;
  /** That caller left while it waited: its wait ended, the run goes on. */
  callerLeft = false;
  /** Resolves when this run no longer holds the task: it ended, or the task is terminal. Later messages wait for it. */
  readonly released = new Latch<void>();
  /** This run put the task in a terminal or interrupted state: returning does not complete it. */
  stopped = false;
  /** A claim for this message failed (reported once; it is asked again, D79). */
  claimFailed = false;
  /** The message was not taken (its claim was lost before it was stored, D79): what its caller gets instead of the task. */
  refusal: RpcError | undefined;
  /** Its message is being written: it is answered and let go once the store answered (#storeMessage). */
  storing = false;
  /** The call's historyLength (spec 3.2.4): how much history its stream's first Task carries; unset is all. */
  historyLength: number | undefined;
  /** The store refused to create the task: it never came to be, and is not tried again. */
  createRefused = false;
  /** What the run failed with was the executor's own throw (not the runtime's, nor the store's). */
  executorThrew = false;
  live: LiveTask | undefined;
  /** Its slot in the runtime's executions (-1: in none). */
  slot = -1;

  constructor(
    readonly owner: TaskOwner,
    readonly taskId: string,
    readonly contextId: string,
    readonly message: MessageLike,
    readonly call: A2ACallContext,
    readonly metadata: JsonObject | undefined,
    /** The stream of the SendStreamingMessage that brought the message, before the task exists. */
    readonly stream: Subscriber<StreamEvent> | undefined,
    readonly configs: readonly PushConfigLike[],
  ) {}

  /** The executor's signal, made when it is first read: most executions end without anyone listening. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.#abortReason);
    }
    return this.#controller.signal;
  }

  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }
}

/** What the executor is called with. A class: its signal is a getter, and an object literal with one is built on V8's slow path. */
class ExecutionContext implements RequestContext {
  readonly message: MessageLike;
  readonly taskId: string;
  readonly contextId: string;
  readonly tenant: string;
  readonly principal: unknown;
  readonly requestedExtensions: readonly string[];
  readonly metadata: JsonObject | undefined;
  readonly call: A2ACallContext;

  readonly #exec: Execution;

  constructor(
    exec: Execution,
    readonly task: TaskLike | undefined,
  ) {
    this.#exec = exec;
    this.message = exec.message;
    this.taskId = exec.taskId;
    this.contextId = exec.contextId;
    this.tenant = exec.owner.tenant;
    this.principal = exec.call.principal;
    this.requestedExtensions = exec.call.requestedExtensions;
    this.metadata = exec.metadata;
    this.call = exec.call;
  }

  get signal(): AbortSignal {
    return this.#exec.signal;
  }
}

/** What close() tells executions, and what a run meets when close() came while its task was being made (#stopClosed). */
class ShuttingDown extends Error {
  constructor() {
    super("the agent is shutting down");
  }
}

/** New messages of the types the runtime builds, as object literals where a codec was generated (message-zero.ts). */
interface Builders {
  readonly task: () => TaskLike;
  readonly taskStatus: () => TaskStatusLike;
  readonly timestamp: () => Timestamp;
  readonly statusUpdate: () => { taskId: string; contextId: string; status?: TaskStatusLike | undefined; metadata?: JsonObject | undefined };
  readonly artifactUpdate: () => { taskId: string; contextId: string; artifact?: ArtifactLike | undefined; append: boolean; lastChunk: boolean; metadata?: JsonObject | undefined };
  readonly streamResponse: () => { payload: { case: string | undefined; value?: unknown } };
}

function buildersOf(schemas: TaskSchemas): Builders {
  const zero = <T>(desc: DescMessage) => zeroFactory(desc) as unknown as () => T;
  return {
    task: zero(schemas.task),
    taskStatus: zero(schemas.taskStatus),
    timestamp: zero(TimestampSchema),
    statusUpdate: zero(schemas.statusUpdate),
    artifactUpdate: zero(schemas.artifactUpdate),
    streamResponse: zero(schemas.streamResponse),
  };
}

export class TaskRuntime {
  readonly #s: TaskRuntimeSettings;
  /** Tasks with a run, a queued message, a stream or a write: slots, not a Map, as they come and go per call (D116). */
  readonly #live = new SlotMap<LiveTask>();
  /** Which task each stream follows. */
  readonly #following = new WeakMap<Subscriber<StreamEvent>, LiveTask>();
  readonly #writeJson: (value: unknown) => unknown;
  readonly #new: Builders;
  readonly #agentRole: number;
  /** The store writes and delivers push notifications itself, through its outbox (D74). */
  readonly #outbox: boolean;
  #closed = false;
  /** Executions started and not ended: close() reaches those no live task holds yet (before their first event, queued). */
  readonly #executions = new SlotSet<Execution>();
  /**
   * Store calls close() waits for, so the store is closed after them: creates (or first configs)
   * not answered yet, with the CANCELED a create ended by close() writes (#stopClosed); claims
   * (D79), one answered after close() being given back.
   */
  readonly #storeCalls = new SlotSet<Promise<unknown>>();
  readonly #callerSweep: ReturnType<typeof setInterval>;

  constructor(settings: TaskRuntimeSettings) {
    this.#s = settings;
    this.#writeJson = jsonWriter(settings.schemas.streamResponse, settings.required);
    this.#new = buildersOf(settings.schemas);
    const agent = settings.schemas.role.values.find((v) => v.name === "ROLE_AGENT");
    if (agent === undefined) throw new Error(`${settings.schemas.role.typeName} has no ROLE_AGENT: the task runtime needs it`);
    this.#agentRole = agent.number;
    this.#outbox = settings.store.deliverPushes !== undefined;
    // Through a weak reference: a handler dropped without close() is not kept by its timer, which
    // then stops itself.
    const self = new WeakRef(this);
    // In the background context (D35), not that of the code that made the handler, which it held.
    const sweep = inBackground(() =>
      setInterval(() => {
        const runtime = self.deref();
        if (runtime === undefined) clearInterval(sweep);
        else runtime.#watchCallers();
      }, callerSweepMs),
    );
    sweep.unref();
    this.#callerSweep = sweep;
  }

  /**
   * A SendMessage's caller may leave while it waits (a client's timeout on a long task): its wait
   * ends then, the task running on, so that the transport answers (no one) and lets go of the
   * call's request and response (D114) instead of holding them, a few KB, for as long as the task
   * runs. Watching a call costs its signal (an AbortController and a listener on the transport),
   * and holding calls for a watch to come promotes them (D116): so every `callerSweepMs` the calls
   * still waiting are watched from then on, and a call that settles sooner, most, costs nothing.
   */
  #watchCallers(): void {
    for (const exec of this.#executions) {
      if (!exec.callerWaits || exec.callerWatched) continue;
      exec.callerWatched = true;
      const signal = exec.call.signal;
      if (signal.aborted) callerLeft(exec);
      else signal.addEventListener("abort", () => callerLeft(exec), { once: true });
    }
  }

  /** The ProtoJSON text of a StreamResponse with this payload: what a push notification carries. */
  render(kind: "task" | "statusUpdate" | "artifactUpdate", value: object): string {
    return JSON.stringify(this.#writeJson(this.#streamResponse(kind, value)));
  }

  /** What a 0.3 caller's push config is sent (D112): the whole task in 0.3's JSON-RPC shapes. */
  renderV03(task: TaskLike): string {
    return JSON.stringify(taskTo03(obj(obj(this.#writeJson(this.#snapshotEvent(task))).task), "jsonrpc"));
  }

  /** Executions started and not ended: for tests and metrics. */
  get executions(): number {
    return this.#executions.size;
  }

  get states(): TaskStates {
    return this.#s.states;
  }

  /** A subscriber stream that ends when `signal` aborts (the caller left) or the task ends. */
  newSubscriber(signal: AbortSignal): Subscriber<StreamEvent> {
    return new Subscriber<StreamEvent>(this.#s.highWater, signal, (s) => this.#unsubscribe(s));
  }

  /**
   * Starts an execution for `message`: of the stored task `record` (which
   * the caller checked is the owner's and not terminal), or of a new task.
   */
  start(exec: Execution, record: StoredTask | undefined): void | Promise<void> {
    if (this.#closed) throw new Error("the task runtime is closed");
    if (record !== undefined) return this.#startContinued(exec, record);
    exec.slot = this.#executions.add(exec);
    // A message for the new task waits for this run (the task's chain starts with it, #ensureTask).
    void this.#run(exec);
  }

  #startContinued(exec: Execution, record: StoredTask): Promise<void> {
    return this.#liveOf(record, (live) => {
      // Counted once it holds a place on the task: a read that failed before leaves nothing to end.
      exec.slot = this.#executions.add(exec);
      live.queued++;
      exec.live = live;
      // A run that left the task interrupted had its turn (D77): a new message takes the task over
      // instead of waiting for an executor that may be waiting for this very message.
      if (live.running !== undefined) this.#takeOver(live, live.running);
      // The next message waits until this run ends or the task is terminal (a cancel releases it).
      const before = live.chain;
      live.chain = exec.released;
      if (!before.done && !this.#supersedes(live, before)) this.#answerInLine(exec);
      void before.promise.then(() => this.#continue(live, exec));
    });
  }

  /**
   * Whether the run `before` lets go of is one that left the task interrupted: a message takes it
   * over at once (D77). So is one whose interrupting status is still being written (a store that
   * answers with promises): the task shows it already, and the run stops once it is out.
   */
  #supersedes(live: LiveTask, before: Latch<void>): boolean {
    const running = live.running;
    if (running === undefined || running.released !== before || !this.#s.states.isInterrupted(live.record.task.status?.state ?? 0)) return false;
    return running.stopped || live.writing > 0;
  }

  /**
   * A `returnImmediately` message that must wait in line, behind a run here or another instance's
   * (D79), is answered now with the task as it is (spec 3.2.2: it does not wait), its message not
   * in the history yet; its run comes in its turn, or, if the task ends first, it is refused then
   * (#refuseEnded) with no one waiting for the refusal. Waiting for its own first event, it
   * waited for the whole run before it.
   */
  #answerInLine(exec: Execution): void {
    if (exec.answersEarly && !exec.answered) this.#answer(exec);
  }

  /**
   * A message waits for `exec`, the running execution: when `exec` left the
   * task interrupted, it is superseded, once what it wrote is out (a write
   * still in flight would otherwise reach the new run's streams).
   */
  #takeOver(live: LiveTask, exec: Execution): void {
    const go = () => {
      if (live.running === exec && exec.stopped && !exec.over && this.#s.states.isInterrupted(live.record.task.status?.state ?? 0)) this.#supersede(live, exec);
    };
    if (live.writing === 0) go();
    else (live.afterWrites ??= []).push(go);
  }

  /** `exec` lost the task to another instance's run (D79): let go once its writes under way are out. */
  #loseTurn(live: LiveTask, exec: Execution): void {
    const go = () => {
      if (live.running === exec && !exec.over) this.#supersede(live, exec);
    };
    if (live.writing === 0) go();
    else (live.afterWrites ??= []).push(go);
  }

  /**
   * Ends `exec`'s hold on the task it left interrupted: its signal aborts,
   * what it still yields is dropped, and the message waiting on it starts.
   */
  #supersede(live: LiveTask, exec: Execution): void {
    // Let go here: an executor that never returns is not kept for it.
    this.#letGo(exec, new Error("a new message continued the task"));
    live.running = undefined;
    // Continued by another instance (D79): nothing here may hold the task any more.
    this.#release(live);
  }

  /**
   * Follows the stored task `record`: its snapshot first, then its live
   * events (SubscribeToTask). False, following nothing, when the task turned
   * out terminal (it finished while the caller's copy was read).
   */
  async subscribe(record: StoredTask, subscriber: Subscriber<StreamEvent>): Promise<boolean> {
    return await this.#liveOf<boolean | Promise<boolean>>(record, (live) => {
      // A change being written is in the task already, and its event comes once the store answers:
      // the snapshot waits for it, or the stream would get that change twice (an appended chunk's
      // text twice). Only a store that answers with promises leaves such a gap.
      if (live.writing === 0) return this.#subscribeNow(live, subscriber);
      return new Promise<boolean>((resolve) => (live.afterWrites ??= []).push(() => resolve(this.#subscribeNow(live, subscriber))));
    });
  }

  #subscribeNow(live: LiveTask, subscriber: Subscriber<StreamEvent>): boolean {
    // Closed while it waited for a write: it fails as a SubscribeToTask after close() does.
    if (this.#closed) {
      subscriber.end(new Error("the task runtime is closed"));
      return true;
    }
    const task = live.record.task;
    if (this.#s.states.isTerminal(task.status?.state ?? 0)) {
      this.#release(live);
      return false;
    }
    subscriber.push(this.#snapshotEvent(task));
    this.#follow(live, subscriber);
    return true;
  }

  /**
   * Cancels a task that is not terminal: its executor is asked to stop,
   * everyone following it is told (D25). False when it turned out terminal.
   */
  async cancel(record: StoredTask): Promise<boolean> {
    const claimed = await this.#liveOf(record, (live) => {
      if (this.#s.states.isTerminal(live.record.task.status?.state ?? 0)) {
        this.#release(live);
        return undefined;
      }
      const running = live.running;
      running?.abort(new Error("the task was canceled"));
      const status = this.#status(live.record.task, this.#s.states.canceled, undefined);
      // Started here, in the same step as the check: the task is CANCELED before anything else can take it up.
      return { live, running, status, written: (async () => this.#setStatus(live, running, status))() };
    });
    if (claimed === undefined) return false;
    const { live, running, status, written } = claimed;
    try {
      await written;
    } catch (err) {
      // The store refused the cancel: the caller gets its error, but the executor was stopped all the same.
      this.#tellRefused(live, running, status);
      throw err;
    }
    return true;
  }

  /**
   * The store dropped a task that waited for its client (interruptedTtlMs, maxWaitingTasks): the streams following
   * it end with TaskNotFound, as a SubscribeToTask would now be answered; they stayed open for as
   * long as their clients did.
   */
  taskDropped(taskId: string): void {
    const live = this.#live.get(taskId);
    if (live === undefined || live.running !== undefined || live.queued > 0) return;
    for (const s of [...live.subscribers]) s.end(new TaskNotFoundError(`task ${taskId} is no longer in the task store (a task waiting for input is removed past interruptedTtlMs, or beyond maxWaitingTasks)`, { metadata: { taskId } }));
  }

  /** The push configs of a task changed: what its next updates are delivered to. */
  async configsChanged(taskId: string, onApplied?: () => void): Promise<void> {
    // `onApplied` runs in the step that puts the new configs in effect: what was queued before went
    // under the old ones, nothing after (a replaced config's queue is dropped there, with no gap).
    let told = false;
    const tell = () => {
      if (told) return;
      told = true;
      onApplied?.();
    };
    const live = this.#live.get(taskId);
    if (live === undefined) return tell();
    // Two changes at once (a create and a delete) may have their reads answered out of order: the
    // read started last came after both writes, and is the one kept. A change is in effect once
    // that read is: a delete answered before would leave the deleted config sent to a while longer.
    const read = ++live.configReads;
    const applied = Promise.resolve(this.#s.store.configsOf(taskId)).then((configs) => {
      if (read !== live.configReads) return;
      live.configs = configs;
      tell();
    });
    live.configsApplied = applied;
    await applied;
    let waited: Promise<void> | undefined = applied;
    while (live.configsApplied !== waited && live.configsApplied !== undefined) {
      waited = live.configsApplied;
      await waited.catch(() => undefined);
    }
    tell();
  }

  /**
   * Aborts every execution and ends every stream, at once. The promise resolves once the tasks
   * that were being created have their CANCELED written (or refused): the owner of the store
   * closes it after that, not while those writes are under way.
   */
  close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#callerSweep);
    const reason = new ShuttingDown();
    // Every execution, those that have no task yet or wait for their turn included: its executor
    // is asked to stop, its caller answered with the task as it is (CANCELED when there is none
    // yet), its stream ended, even when the executor does not listen.
    for (const exec of this.#executions) {
      // One whose message is being written is answered once the store said whether it took it.
      if (exec.storing) {
        exec.abort(reason);
        continue;
      }
      this.#letGo(exec, reason);
      exec.stream?.end();
    }
    for (const live of this.#live.values()) {
      for (const s of live.subscribers) s.end();
      live.clearSubscribers();
      live.unfollow?.();
    }
    this.#live.clear();
    return Promise.allSettled([...this.#storeCalls]).then(() => undefined);
  }

  /**
   * The live task of a stored one, its push configs read (once: configsChanged keeps them current),
   * handed to `claim` in the same step as it is found still the task's: an entry let go while this
   * call waited (the run ending then, the last stream leaving) gets none of the task's later
   * events, so the task is taken up again; and one found must be claimed (queued on, followed)
   * before anything else runs, or it could be let go in between.
   */
  async #liveOf<T>(record: StoredTask, claim: (live: LiveTask) => T): Promise<T> {
    for (;;) {
      if (this.#closed) throw new Error("the task runtime is closed");
      const live = await this.#liveEntryOf(record);
      if (this.#live.get(record.task.id) === live) return claim(live);
    }
  }

  /** The task's entry in the live map, made and read from the store when there is none. */
  async #liveEntryOf(record: StoredTask): Promise<LiveTask> {
    let live = this.#live.get(record.task.id);
    if (live === undefined) {
      live = new LiveTask(record);
      this.#live.set(record.task.id, live);
      // Read again: the caller's record may be a copy older than the task (a store of rows).
      const made = live;
      made.ready = (async () => {
        const fresh = await this.#s.store.get(record.task.id);
        if (fresh !== undefined && fresh !== record) {
          made.record = fresh;
          made.lastArtifactId = fresh.task.artifacts.at(-1)?.artifactId ?? "";
        }
        // A configsChanged started meanwhile read after a later write: its answer is kept, not this one.
        const read = made.configReads;
        const configs = await this.#s.store.configsOf(record.task.id);
        if (read === made.configReads) made.configs = configs;
        // Changes made elsewhere since that read come first, then as they are made.
        this.#followForeign(made, made.record.version, true);
      })();
      // A store that failed these reads (its callers get the error) leaves nothing behind: the next call reads again.
      made.ready.catch(() => this.#release(made));
    }
    await live.ready;
    return live;
  }

  #release(live: LiveTask): void {
    // A write still out keeps the entry (#wrote releases it): a message meanwhile must meet the task
    // as this process left it (a CANCELED the store is still taking, D72), not as the store still has it.
    if (live.queued === 0 && live.running === undefined && live.subscribers.size === 0 && live.writing === 0 && this.#live.get(live.record.task.id) === live) {
      this.#live.delete(live.record.task.id);
      live.unfollow?.();
      live.unfollow = undefined;
    }
  }

  /** Follows what other processes sharing the store write to the task (D71), if the store can tell. */
  #followForeign(live: LiveTask, version: number | undefined, catchUp: boolean): void {
    const store = this.#s.store;
    if (store.follow === undefined || version === undefined || live.unfollow !== undefined) return;
    live.unfollow = store.follow(live.record.task.id, version, (change) => this.#foreign(live, change), catchUp);
  }

  /**
   * A change another process wrote (and delivered to push configs): applied to this process's
   * copy of the task and sent to its streams. A terminal status (a cancel made elsewhere) stops
   * the executor this process runs for the task.
   */
  #foreign(live: LiveTask, change: ForeignChange): void {
    const task = live.record.task;
    if (this.#live.get(task.id) !== live || this.#s.states.isTerminal(task.status?.state ?? 0)) return;
    if (change.kind === "history") {
      task.history.push(change.message);
      // Another instance's message continued the task (D79): only a run that claimed the task
      // writes one, so this process's run has lost its turn, whether it left the task interrupted
      // (D77) or moved it on since; it is let go once its writes under way are out.
      const running = live.running;
      if (running !== undefined) this.#loseTurn(live, running);
      return;
    }
    if (change.kind === "artifact") {
      const { artifact, append } = change;
      const own = live.artifactOf(artifact.artifactId);
      if (append && own !== undefined) {
        for (const part of artifact.parts) own.parts.push(part);
      } else {
        const kept = copyArtifact(artifact);
        const at = own === undefined ? -1 : task.artifacts.indexOf(own);
        if (at >= 0) task.artifacts[at] = kept;
        else task.artifacts.push(kept);
        live.artifactSet(kept);
      }
      live.lastArtifactId = artifact.artifactId;
      this.#publishArtifact(live, artifact, append, { lastChunk: change.lastChunk, ...(change.metadata === undefined ? {} : { metadata: change.metadata }) }, false);
      return;
    }
    const status = change.status;
    task.status = status;
    if (status.message !== undefined) task.history.push(status.message);
    const terminal = this.#s.states.isTerminal(status.state);
    if (terminal) live.running?.abort(new Error(`the task was made ${this.#s.states.nameOf(status.state)} by another instance`));
    this.#statusSet(live, live.running, status, terminal, change.metadata, false);
  }

  /** Adds a stream to the task's followers, unless its caller already left. */
  #follow(live: LiveTask, s: Subscriber<StreamEvent>): void {
    if (s.finished) return;
    live.addSubscriber(s);
    this.#following.set(s, live);
  }

  #unsubscribe(s: Subscriber<StreamEvent>): void {
    const live = this.#following.get(s);
    if (live === undefined) return;
    this.#following.delete(s);
    live.deleteSubscriber(s);
    this.#release(live);
  }

  /** A message for an existing task: in its history, the streams told, then the executor. */
  async #continue(live: LiveTask, exec: Execution): Promise<void> {
    // Not this process's turn yet: a run of another instance holds the task, and the message waits on (D79).
    const turn = this.#s.store.claim === undefined || exec.over ? "free" : await this.#turn(live, exec);
    if (turn === "waiting") {
      this.#answerInLine(exec);
      return;
    }
    live.queued--;
    const task = live.record.task;
    // Closed while this message waited (it was answered then), or close() came in the last steps of a claim.
    if (exec.over) {
      if (turn === "claimed") this.#giveBack(live.record, exec);
      return;
    }
    if (this.#s.states.isTerminal(task.status?.state ?? 0)) {
      // Ended (completed, failed, canceled) while this message waited for the run before it.
      this.#refuseEnded(exec, task);
      this.#letGo(exec);
      this.#release(live);
      return;
    }
    task.history.push(exec.message);
    // The message is stored as the run's first step: a store that refuses it fails the run, as an executor that throws does.
    // close() waits for the write, and for a claim given back after it.
    await this.#run(exec, () => this.#closeWaitsFor(this.#storeMessage(live, exec, turn === "claimed")));
  }

  /**
   * The message written, as a write under way: another instance's message heard meanwhile takes
   * the turn only once it is out (#loseTurn), a snapshot waits for it, and the run is answered
   * and let go only then (#statusSet), so no answer holds a message the store may not have
   * taken. Its stream starts once it is stored. A message the store did not take (D79) is taken
   * out of this process's copy and the executor is not run: on a task that ended first, its
   * caller gets the task as it is; when its claim was lost, it is told to send the message again.
   */
  async #storeMessage(live: LiveTask, exec: Execution, claimed: boolean): Promise<void> {
    live.writing++;
    exec.storing = true;
    let giveBack = false;
    try {
      // Let go once it is out (the run's own finally does), close() or not.
      await this.#s.store.update(live.record, claimed ? { kind: "history", claimed } : { kind: "history" });
      this.#startStream(live, exec);
    } catch (err) {
      if (!(err instanceof MessageNotStoredError)) {
        // Refused: the run fails, and its stream, which has the message, follows the task to its FAILED.
        // A run stopped meanwhile (canceled, closed) does not fail the task: the refusal is still reported.
        if (exec.aborted) this.#s.onError(err, { taskId: exec.taskId });
        this.#startStream(live, exec);
        throw err;
      }
      const task = live.record.task;
      const at = task.history.lastIndexOf(exec.message);
      if (at >= 0) task.history.splice(at, 1);
      exec.over = true;
      // Ended for the store, or here (a cancel through this instance, its write queued behind this one).
      if (err.why === "ended" || this.#s.states.isTerminal(task.status?.state ?? 0)) {
        this.#refuseEnded(exec, task);
      } else {
        exec.refusal = new RpcError("ABORTED", "the message was not stored: the task was taken up by another instance meanwhile; send it again", { cause: err });
        exec.stream?.end(exec.refusal);
        // Told now: the give-back below changes nothing of its answer.
        this.#answer(exec);
        exec.settled.resolve();
        giveBack = claimed;
      }
    } finally {
      exec.storing = false;
      this.#wrote(live);
    }
    // Still this instance's (it could not tell): given back, so that the task does not stay claimed
    // by a run that is not coming; before the run is let go, so that it is never the claim of the
    // next message queued here.
    if (giveBack) await this.#unclaim(live.record, exec);
  }

  /**
   * A message whose task ended before its turn came (the run before it completed it, a cancel, an
   * instance sharing the store): refused as a message to a finished task is (spec 3.1.1), not
   * stored and not run, so its caller, blocking or streaming, knows it was not taken. (Answered
   * with the ended task, it looked taken.)
   */
  #refuseEnded(exec: Execution, task: TaskLike): void {
    const state = this.#s.states.nameOf(task.status?.state ?? 0);
    exec.refusal = new UnsupportedOperationError(`task ${task.id} became ${state} before this message's turn and takes no more messages; the message was not stored`, {
      metadata: { taskId: task.id },
    });
    exec.stream?.end(exec.refusal);
  }

  /** The stream of a message that continued the task: the task with the message first, then what follows. */
  #startStream(live: LiveTask, exec: Execution): void {
    const stream = exec.stream;
    if (stream === undefined) return;
    const task = live.record.task;
    stream.push(this.#snapshotEvent(task, exec.historyLength));
    // Ended meanwhile (a cancel through another instance): the snapshot says so, and there is nothing
    // to follow; closed meanwhile, no stream is followed any more.
    if (this.#closed || this.#s.states.isTerminal(task.status?.state ?? 0)) stream.end();
    else this.#follow(live, stream);
  }

  /**
   * Whether `exec`'s message may run now (D79): "claimed", the store took the task for it; "free",
   * the task ended; "waiting", another instance's run holds it (or the store could not answer):
   * the message asks again after the next change that interrupts or ends the task (one that came
   * while the store was asked counts too), or after the store's retry time, whichever comes first.
   */
  async #turn(live: LiveTask, exec: Execution): Promise<"claimed" | "free" | "waiting"> {
    for (;;) {
      const turns = live.turns;
      const turn = await this.#closeWaitsFor(this.#claim(live, exec));
      if (turn !== "waiting" || exec.over) return turn;
      if (live.turns === turns) break;
    }
    // Whichever comes first, once: the change (#statusSet) or the retry time.
    const resume = () => {
      clearTimeout(timer);
      live.waiting?.delete(resume);
      void this.#continue(live, exec);
    };
    const timer = setTimeout(resume, this.#s.store.claimRetryMs ?? defaultClaimRetryMs);
    (timer as { unref?: () => void }).unref?.();
    (live.waiting ??= new Set()).add(resume);
    return "waiting";
  }

  /**
   * One claim, never rejecting; one taken while close() came, or for a task that ended meanwhile,
   * is given back before it settles. A store that fails to answer is asked again later (reported
   * once per message): going on unclaimed could run the message beside another instance's run.
   */
  async #claim(live: LiveTask, exec: Execution): Promise<"claimed" | "free" | "waiting"> {
    if (this.#s.states.isTerminal(live.record.task.status?.state ?? 0)) return "free";
    let claimed: boolean;
    try {
      claimed = await this.#s.store.claim!(live.record);
    } catch (err) {
      if (!exec.claimFailed) this.#s.onError(err, { taskId: exec.taskId });
      exec.claimFailed = true;
      return "waiting";
    }
    if (!claimed) return "waiting";
    if (!exec.over && !this.#s.states.isTerminal(live.record.task.status?.state ?? 0)) return "claimed";
    await this.#unclaim(live.record, exec);
    return "free";
  }

  /** A claim whose message will not run, given back; close() waits for it. */
  #giveBack(record: StoredTask, exec: Execution): void {
    void this.#closeWaitsFor(this.#unclaim(record, exec));
  }

  /** `call`, which close() waits for until it settles. */
  #closeWaitsFor<T>(call: Promise<T>): Promise<T> {
    const slot = this.#storeCalls.add(call);
    const done = () => void this.#storeCalls.delete(slot, call);
    call.then(done, done);
    return call;
  }

  /** Never rejects: a give-back the store refuses is reported. */
  async #unclaim(record: StoredTask, exec: Execution): Promise<void> {
    try {
      await this.#s.store.unclaim?.(record);
    } catch (err) {
      this.#s.onError(err, { taskId: exec.taskId });
    }
  }

  async #run(exec: Execution, first?: () => void | Promise<void>): Promise<void> {
    if (exec.live !== undefined) exec.live.running = exec;
    try {
      if (first !== undefined) {
        await first();
        // Canceled (or shut down) while the message was being stored: its executor is not called at all.
        if (exec.aborted || exec.over) return;
      }
      let events: ReturnType<TaskRuntimeSettings["executor"]>;
      try {
        events = this.#s.executor(new ExecutionContext(exec, exec.live === undefined ? undefined : snapshotOf(this.#s.states, exec.live.record.task, undefined)));
      } catch (err) {
        exec.executorThrew = true;
        throw err;
      }
      const iterator: AsyncIterator<TaskEvent> | Iterator<TaskEvent> =
        Symbol.asyncIterator in events ? events[Symbol.asyncIterator]() : events[Symbol.iterator]();
      let finished = false;
      try {
        for (;;) {
          const room = exec.live === undefined ? undefined : this.#room(exec.live);
          if (room !== undefined) await room;
          if (exec.over || exec.aborted) break;
          let step: IteratorResult<TaskEvent>;
          try {
            step = await iterator.next();
          } catch (err) {
            exec.executorThrew = true;
            throw err;
          }
          if (step.done === true) finished = true;
          if (finished || exec.over || exec.aborted) break;
          // The in-memory store answers at once: no promise, no tick, unless the store makes one.
          const applied = this.#apply(exec, step.value);
          if (applied !== undefined) await applied;
          if (!exec.answered) this.#answer(exec);
        }
      } finally {
        // Stopped reading before the end (terminal state, cancel, a throw): the executor's own `finally` runs.
        if (!finished) void Promise.resolve(iterator.return?.()).catch(() => undefined);
      }
      if (!exec.over && !exec.aborted) {
        const finished = this.#finishReturned(exec);
        if (finished !== undefined) await finished;
      }
    } catch (err) {
      if (exec.aborted) {
        // Stopped first (canceled, closed): what it threw then is not a failure.
      } else if (exec.executorThrew && exec.live === undefined && !exec.answered && isRpcError(err)) {
        // An A2A error the executor threw before its first event, on a message that would start a
        // task (a part of a type it does not take: ContentTypeNotSupported): the caller's answer,
        // and no task is made (D23).
        exec.refusal = err;
        exec.over = true;
        exec.answered = true;
        exec.stream?.end(err);
        exec.first.resolve({ task: this.#newTask(exec, this.#s.states.failed) });
      } else {
        this.#s.onError(err, { taskId: exec.taskId });
        if (!exec.over) await this.#fail(exec);
      }
    } finally {
      this.#letGo(exec);
      const live = exec.live;
      if (live !== undefined) {
        if (live.running === exec) live.running = undefined;
        this.#release(live);
      } else {
        exec.stream?.end();
      }
    }
  }

  /** Waits while a subscriber is at the high-water mark, or cuts it after its grace time (D24). */
  #room(live: LiveTask): Promise<void> | undefined {
    for (const s of live.subscribers) {
      // An ended stream is read to its end or not at all: it holds no one back.
      if (!s.finished && s.backlog >= this.#s.highWater) return s.whenDrained(this.#s.slowSubscriberMs).then(() => this.#room(live));
    }
    return undefined;
  }

  /** The executor returned: COMPLETED unless this run left the task interrupted (an earlier run's INPUT_REQUIRED does not count). */
  #finishReturned(exec: Execution): void | Promise<void> {
    return then(this.#ensureTask(exec), (live) => {
      if (exec.stopped || live.running !== exec) return;
      return this.#setStatus(live, exec, this.#status(live.record.task, this.#s.states.completed, undefined));
    });
  }

  /**
   * The run failed: the task is FAILED. Never throws, as a run's promise is
   * nobody's to catch: a store that refuses this write too (a database that
   * is down) is reported, and the task is still FAILED for this process, its
   * streams told and closed. A task already terminal here got there by a
   * write the store refused (a told terminal status ends the run first):
   * its streams are told of that status instead.
   */
  async #fail(exec: Execution): Promise<void> {
    // A task the store refused to create is not tried again: the caller is told it FAILED (#answer).
    if (exec.live === undefined && exec.createRefused) return;
    let status: TaskStatusLike | undefined;
    try {
      const live = await this.#ensureTask(exec);
      const current = live.record.task.status;
      if (current !== undefined && this.#s.states.isTerminal(current.state)) {
        this.#tellRefused(live, exec, current);
        return;
      }
      status = this.#status(live.record.task, this.#s.states.failed, undefined);
      await this.#setStatus(live, exec, status);
    } catch (err) {
      // Closed while the task was being made: it is CANCELED, as its caller was told; nothing failed.
      if (err instanceof ShuttingDown) return;
      this.#s.onError(err, { taskId: exec.taskId });
      if (exec.live !== undefined && status !== undefined) this.#tellRefused(exec.live, exec, status);
    }
  }

  /**
   * A terminal `status` the store refused to write, still the task's here: this process's streams
   * are told and closed, and the run ended, rather than left waiting for events that will not
   * come; push configs are not sent what the store does not have.
   */
  #tellRefused(live: LiveTask, exec: Execution | undefined, status: TaskStatusLike): void {
    if (live.record.task.status === status) this.#statusSet(live, exec, status, true, undefined, false);
  }

  /** Applies one event; a promise only when the store answered with one. */
  #apply(exec: Execution, event: TaskEvent): void | Promise<void> {
    if ("reply" in event) {
      if (exec.live !== undefined) {
        this.#s.onError(new Error("the executor replied with a message to a task it had already started; the reply was dropped"), { taskId: exec.taskId });
        return;
      }
      const reply = this.#message(exec, event.reply, false);
      exec.over = true;
      exec.answered = true;
      exec.first.resolve({ reply });
      exec.stream?.push(this.#streamResponse("message", reply));
      exec.stream?.end();
      return;
    }
    return then(this.#ensureTask(exec), (live) => this.#applyTo(exec, live, event));
  }

  #applyTo(exec: Execution, live: LiveTask, event: Exclude<TaskEvent, { reply: unknown }>): void | Promise<void> {
    const task = live.record.task;
    // Canceled, or finished by another way: what this run still yields is not the task's any more.
    if (live.running !== exec || this.#s.states.isTerminal(task.status?.state ?? 0)) {
      exec.over = true;
      return;
    }
    if ("state" in event) {
      if (event.state === this.#s.states.unspecified || this.#s.states.nameOf(event.state) === String(event.state)) {
        throw new Error(`the executor sent state ${event.state}, which is not a TaskState this agent knows`);
      }
      const message = event.message === undefined ? undefined : this.#message(exec, typeof event.message === "string" ? this.#text(event.message) : event.message, true);
      return this.#setStatus(live, exec, this.#status(task, event.state, message), event.metadata);
    }
    // An untyped executor's event of no known shape (`{ status }`, say) was an empty artifact, and its task completed.
    if (typeof (event as { artifact?: unknown }).artifact !== "object" || (event as { artifact?: unknown }).artifact === null) {
      throw new Error(`the executor sent an event that is none of { state }, { artifact } or { reply }: it has ${JSON.stringify(Object.keys(event))}`);
    }
    const artifact = ownCopy(make<ArtifactLike>(this.#s.schemas.artifact, event.artifact), event.artifact);
    const append = event.append === true;
    if (artifact.artifactId === "") artifact.artifactId = append && live.lastArtifactId !== "" ? live.lastArtifactId : this.#s.newId("artifact");
    const own = live.artifactOf(artifact.artifactId);
    let index: number;
    let shared = false;
    if (append && own !== undefined) {
      for (const part of artifact.parts) own.parts.push(part);
      // Chunks go to the latest artifact, mostly: searched from the end.
      index = task.artifacts.lastIndexOf(own);
    } else {
      // The event's artifact is sent as it is now, while later chunks grow the task's: the task
      // keeps a copy when the event goes anywhere, and is copied when it goes (a stream came since).
      const kept = live.followed ? copyArtifact(artifact) : artifact;
      shared = kept === artifact;
      const at = own === undefined ? -1 : task.artifacts.indexOf(own);
      if (at >= 0) task.artifacts[at] = kept;
      else task.artifacts.push(kept);
      index = at >= 0 ? at : task.artifacts.length - 1;
      live.artifactSet(kept);
    }
    live.lastArtifactId = artifact.artifactId;
    const appended = append && own !== undefined;
    const change = { kind: "artifact" as const, index, append: appended, parts: artifact.parts.length, lastChunk: event.lastChunk === true, metadata: event.metadata, running: !exec.stopped };
    return this.#written(live, this.#s.store.update(live.record, change), () =>
      // `appended`, as stored: an append to an artifact never sent is a new artifact for every reader (D71).
      this.#publishArtifact(live, shared && live.followed ? copyArtifact(artifact) : artifact, appended, event, true),
    );
  }

  #publishArtifact(live: LiveTask, artifact: ArtifactLike, append: boolean, event: { readonly lastChunk?: boolean; readonly metadata?: JsonObject }, push: boolean): void {
    if (!live.followed) return;
    const task = live.record.task;
    const update = this.#new.artifactUpdate();
    update.taskId = task.id;
    update.contextId = task.contextId;
    update.artifact = artifact;
    update.append = append;
    update.lastChunk = event.lastChunk === true;
    if (event.metadata !== undefined) update.metadata = event.metadata;
    this.#publish(live, this.#streamResponse("artifactUpdate", update), push);
  }

  /** The live task of the execution, creating the task (SUBMITTED, the message its history) at the first event (D23). */
  #ensureTask(exec: Execution): LiveTask | Promise<LiveTask> {
    if (exec.live !== undefined) return exec.live;
    const task = this.#newTask(exec, this.#s.states.submitted);
    const record: StoredTask = { tenant: exec.owner.tenant, owner: exec.owner.owner, task };
    // A store with an outbox writes the configs with the task: its first notification goes to them (D74).
    let created: void | PromiseLike<void>;
    try {
      created = this.#outbox ? this.#s.store.create(record, exec.configs) : this.#s.store.create(record);
    } catch (err) {
      exec.createRefused = true;
      throw err;
    }
    if (exec.configs.length > 0 || isPromiseLike(created)) {
      // close() waits for it: the CANCELED it writes when closed meanwhile must reach the store before the store closes.
      return this.#closeWaitsFor(this.#createWithConfigs(exec, record, created));
    }
    return this.#goLive(exec, record, []);
  }

  async #createWithConfigs(exec: Execution, record: StoredTask, created: void | PromiseLike<void>): Promise<LiveTask> {
    try {
      await created;
    } catch (err) {
      exec.createRefused = true;
      throw err;
    }
    if (exec.over) await this.#stopClosed(exec, record);
    // The task is stored from here on: a config the store then refuses fails the run on a live task, whose FAILED is written.
    let configs: readonly PushConfigLike[] = [];
    let refused: { readonly error: unknown } | undefined;
    try {
      if (!this.#outbox) for (const config of exec.configs) await this.#s.store.putConfig({ ...config, taskId: record.task.id });
      if (exec.configs.length > 0) configs = await this.#s.store.configsOf(record.task.id);
    } catch (error) {
      refused = { error };
    }
    if (exec.over) await this.#stopClosed(exec, record);
    const live = this.#goLive(exec, record, configs);
    if (refused !== undefined) throw refused.error;
    return live;
  }

  /**
   * Closed while the store made the task (or its configs): its caller was told CANCELED
   * (close()), and so is the store, as far as it still takes writes (a refusal, even a throw, is
   * reported); the run goes no further. Awaited, so that close() waits for the write too.
   */
  async #stopClosed(exec: Execution, record: StoredTask): Promise<never> {
    record.task.status = this.#status(record.task, this.#s.states.canceled, undefined);
    try {
      await this.#s.store.update(record, { kind: "status", terminal: true });
    } catch (err) {
      this.#s.onError(err, { taskId: exec.taskId });
    }
    throw new ShuttingDown();
  }

  #goLive(exec: Execution, record: StoredTask, configs: readonly PushConfigLike[]): LiveTask {
    const task = record.task;
    const live = new LiveTask(record);
    live.configs = configs;
    this.#live.set(task.id, live);
    live.running = exec;
    live.chain = exec.released;
    exec.live = live;
    const cut = exec.stream !== undefined && exec.historyLength !== undefined;
    if (exec.stream !== undefined && !cut) this.#follow(live, exec.stream);
    // A task just created: nothing was written to it elsewhere yet.
    this.#followForeign(live, record.version ?? 1, false);
    if (live.followed) this.#publish(live, this.#snapshotEvent(task), true);
    if (cut) {
      // The stream's first Task has the call's historyLength; push configs got the whole task.
      exec.stream!.push(this.#snapshotEvent(task, exec.historyLength));
      this.#follow(live, exec.stream!);
    }
    return live;
  }

  /** The first event is applied (or the run ended without one): what SendMessage may answer now. */
  #answer(exec: Execution): void {
    exec.answered = true;
    const live = exec.live;
    // Only an early answer needs the task as it is now; a blocking one snapshots it when settled.
    if (live !== undefined) {
      exec.first.resolve({ task: exec.answersEarly ? snapshotOf(this.#s.states, live.record.task, undefined) : live.record.task });
      return;
    }
    // The task never came to be: aborted at shutdown before any event (the caller gets it as canceled), or
    // the store refused to create it (as failed, on a stream too, before the stream ends).
    const task = this.#newTask(exec, exec.aborted ? this.#s.states.canceled : this.#s.states.failed);
    exec.first.resolve({ task });
    if (!exec.aborted) exec.stream?.push(this.#snapshotEvent(task, exec.historyLength));
  }

  #newTask(exec: Execution, state: number): TaskLike {
    const task = this.#new.task();
    task.id = exec.taskId;
    task.contextId = exec.contextId;
    task.status = this.#statusAt(state, Date.now(), undefined);
    task.history.push(exec.message);
    return task;
  }

  #status(task: TaskLike, state: number, message: MessageLike | undefined): TaskStatusLike {
    // Status timestamps order ListTasks: never earlier than the one before.
    const before = task.status?.timestamp;
    const beforeMs = before === undefined ? 0 : Number(before.seconds) * 1000 + Math.floor(before.nanos / 1e6);
    return this.#statusAt(state, Math.max(Date.now(), beforeMs), message);
  }

  #statusAt(state: number, ms: number, message: MessageLike | undefined): TaskStatusLike {
    const timestamp = this.#new.timestamp();
    timestamp.seconds = BigInt(Math.floor(ms / 1000));
    timestamp.nanos = (ms % 1000) * 1_000_000;
    const status = this.#new.taskStatus();
    status.state = state;
    status.timestamp = timestamp;
    if (message !== undefined) status.message = message;
    return status;
  }

  #setStatus(live: LiveTask, exec: Execution | undefined, status: TaskStatusLike, metadata?: JsonObject): void | Promise<void> {
    const task = live.record.task;
    if (this.#s.states.isTerminal(task.status?.state ?? 0)) return;
    task.status = status;
    if (status.message !== undefined) task.history.push(status.message);
    const terminal = this.#s.states.isTerminal(status.state);
    return this.#written(live, this.#s.store.update(live.record, { kind: "status", terminal, metadata }), () => this.#statusSet(live, exec, status, terminal, metadata, true));
  }

  /** `published()` once the store has the change, at once when it answered without a promise. */
  #written(live: LiveTask, stored: void | PromiseLike<void>, published: () => void): void | Promise<void> {
    if (!isPromiseLike(stored)) return published();
    live.writing++;
    return Promise.resolve(stored).then(
      () => {
        try {
          published();
        } finally {
          this.#wrote(live);
        }
      },
      (err: unknown) => {
        this.#wrote(live);
        throw err;
      },
    );
  }

  #wrote(live: LiveTask): void {
    if (--live.writing > 0) return;
    const waiting = live.afterWrites;
    live.afterWrites = undefined;
    if (waiting !== undefined) for (const run of waiting) run();
    this.#release(live);
  }

  /** The status is stored: the streams are told, and push configs when `push` (a change made elsewhere was pushed there). */
  #statusSet(live: LiveTask, exec: Execution | undefined, status: TaskStatusLike, terminal: boolean, metadata: JsonObject | undefined, push: boolean): void {
    const task = live.record.task;
    if (live.followed) {
      const update = this.#new.statusUpdate();
      update.taskId = task.id;
      update.contextId = task.contextId;
      update.status = status;
      if (metadata !== undefined) update.metadata = metadata;
      this.#publish(live, this.#streamResponse("statusUpdate", update), push);
    }
    const interrupted = this.#s.states.isInterrupted(status.state);
    // A run that moves the task on after interrupting it completes it by returning again; a change
    // another instance made (push false) is that instance's run, not this one.
    if (push && exec !== undefined && !terminal && !interrupted) exec.stopped = false;
    if (terminal || interrupted) {
      // The message waiting for another instance's run has its turn (D79).
      live.turns++;
      const waiting = live.waiting;
      live.waiting = undefined;
      waiting?.forEach((resume) => resume());
      // Another instance's interruption is its own run's (D71): this instance's run goes on.
      const own = push || terminal ? exec : undefined;
      if (own !== undefined) own.stopped = true;
      // Streams close at a terminal or interrupted state (spec 3.1.2, 11.7); SubscribeToTask follows it again.
      for (const s of live.subscribers) s.end();
      live.clearSubscribers();
      if (own !== undefined && !own.storing) own.settled.resolve();
      // A message that came while the run worked has waited for this (D77).
      if (interrupted && own !== undefined && live.running === own && live.queued > 0) this.#takeOver(live, own);
      if (terminal) {
        // Done with the task, the running execution too, even one that ignores its signal (a run
        // canceled before its first event is answered here).
        // A run whose message is still being written is let go by its own run once the store answered.
        if (exec !== undefined && !exec.storing) this.#letGo(exec);
        if (live.running !== undefined && !live.running.storing) this.#letGo(live.running);
        live.running = undefined;
      }
    }
    this.#release(live);
  }

  /**
   * `exec` holds its task no more: with `reason`, its executor is asked to stop; what it still
   * yields is dropped, its caller is answered with the task as it is (if it was not yet), whoever
   * waits on it goes on, and close() has nothing left to do for it.
   */
  #letGo(exec: Execution, reason?: Error): void {
    if (reason !== undefined) exec.abort(reason);
    exec.over = true;
    if (!exec.answered) this.#answer(exec);
    exec.settled.resolve();
    exec.released.resolve();
    this.#executions.delete(exec.slot, exec);
  }

  #publish(live: LiveTask, event: StreamEvent, push: boolean): void {
    for (const s of live.subscribers) s.push(event);
    if (push && live.configs.length > 0) {
      // Push delivery only queues (D27): it never holds the task back. A store with an outbox
      // delivers every notification itself, 0.3's included (D74, D112).
      if (this.#outbox) return;
      // The streams have the event: a notification that cannot be made or queued is reported, and never
      // undoes that (a caller told it failed, a stream told it twice).
      try {
        const current = live.configs.filter((c) => c.protocolVersion !== "0.3");
        if (current.length > 0) this.#s.push.deliver(live.record.task.id, current.map(pushTarget), JSON.stringify(this.#writeJson(event)));
        const legacy = live.configs.filter((c) => c.protocolVersion === "0.3");
        if (legacy.length > 0) this.#s.push.deliver(live.record.task.id, legacy.map(pushTarget), this.renderV03(live.record.task));
      } catch (err) {
        this.#s.onError(err, { taskId: live.record.task.id });
      }
    }
  }

  #snapshotEvent(task: TaskLike, historyLength?: number): StreamEvent {
    return this.#streamResponse("task", snapshotOf(this.#s.states, task, historyLength));
  }

  #streamResponse(kind: "task" | "message" | "statusUpdate" | "artifactUpdate", value: object): StreamEvent {
    const response = this.#new.streamResponse();
    response.payload = { case: kind, value };
    return response;
  }

  #text(text: string): object {
    return { parts: [{ content: { case: "text", value: text } }] };
  }

  /** An agent message: its ids filled in (a direct reply belongs to no task), role AGENT unless given. */
  #message(exec: Execution, init: object, ofTask: boolean): MessageLike {
    const message = ownMessage(make<MessageLike>(this.#s.schemas.message, init), init);
    if (message.messageId === "") message.messageId = this.#s.newId("message");
    if (message.role === 0) message.role = this.#agentRole;
    message.contextId = exec.contextId;
    message.taskId = ofTask ? exec.taskId : "";
    return message;
  }
}

/**
 * `next(value)`, at once when `value` is not a promise: the in-memory store
 * answers synchronously, and an async step per store call would cost every
 * event a promise and a tick for nothing.
 */
function then<T, R>(value: T | PromiseLike<T>, next: (value: T) => R | PromiseLike<R>): R | Promise<R> {
  return isPromiseLike(value) ? Promise.resolve(value).then(next) : (next(value) as R | Promise<R>);
}

const copyArtifact = (artifact: ArtifactLike): ArtifactLike => ({ ...artifact, parts: artifact.parts.slice() });

// create() answers a message that is already one as it is. The task keeps its own: an executor that
// changes what it yielded, or yields the same artifact again to append to it, must not be changing
// the task (appending an artifact's parts to themselves never ends).
const ownCopy = (made: ArtifactLike, init: object): ArtifactLike => (made === init ? copyArtifact(made) : made);
const ownMessage = (made: MessageLike, init: object): MessageLike => (made === init ? { ...made, parts: made.parts.slice() } : made);

function pushTarget(config: PushConfigLike) {
  return {
    configId: config.id,
    url: config.url,
    token: config.token,
    authentication: config.authentication === undefined ? undefined : { scheme: config.authentication.scheme, credentials: config.authentication.credentials },
    ...(config.protocolVersion === "0.3" ? { contentType: "application/json" } : {}),
  };
}
