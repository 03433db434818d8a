/**
 * An executor and a store made into the handler of A2AService's task
 * methods: every task rule of the spec (3.1, 3.2.4, 3.4) checked here once,
 * for all three bindings, and every task seen only by the tenant and owner
 * that created it (13.1): a task of someone else is TaskNotFound, exactly
 * as one that does not exist, on every method.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { InvalidParamsError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from "../errors.js";
import { RpcError } from "../../core/errors.js";
import { jsonSizeWithin } from "../../core/codec/json-size.js";
import { jsonLineLogger } from "../../core/failures.js";
import type { A2ACallContext } from "../profile.js";
import type { TaskEvent, TaskExecutor } from "./executor.js";
import { createInMemoryTaskStore } from "./in-memory-store.js";
import { createOpeningStore, type OpeningStore } from "./opening-store.js";
import type { SqlTaskStoreOptions } from "./sql/sql-store.js";
import { openTaskStore, parseStoreUrl } from "./store-url.js";
import { taskStatesOf, type MessageLike, type PushConfigLike, type TaskLike, type TaskSchemas, type TaskTypes } from "./model.js";
import { createPushDelivery, type PushDelivery, type PushDeliveryOptions } from "./push-delivery.js";
import { maxUrlLength, shownUrl } from "./push-guard.js";
import { randomId } from "./random-id.js";
import { snapshotOf } from "./snapshot.js";
import type { Subscriber } from "./subscriber.js";
import { BadPageTokenError, type StoredTask, type TaskOwner, type TaskStore } from "./task-store.js";
import { Execution, TaskRuntime, type IdKind } from "./task-runtime.js";
import type { RequiredFieldTable } from "../../core/method-spec.js";
import { isPromiseLike } from "../../core/dispatch.js";
import { settlesWithin } from "../../core/settles-within.js";

export interface TaskHandlerOptions {
  /**
   * Where tasks and push configs are kept: a store, or a URL naming one (D73): `memory:`,
   * `pglite:./data` (embedded, durable in that folder), `postgres://user:password@host/db`
   * (shared by every instance of the agent). Default: createInMemoryTaskStore().
   */
  readonly store?: TaskStore | string;
  /** The SQL store's options (lease, expiry, errors) when `store` is a pglite: or postgres: URL. */
  readonly storeOptions?: SqlTaskStoreOptions;
  /** Push delivery: its options (SSRF allowlist, timeouts, retries), or one made with createPushDelivery. */
  readonly push?: PushDeliveryOptions | PushDelivery;
  /**
   * Push configs a task may hold (1..100). Every update of a task is POSTed to each of its
   * configs, so one caller's configs multiply what one update sends. Default 10.
   */
  readonly maxPushConfigsPerTask?: number;
  /**
   * About how many bytes of JSON a ListTasks page may weigh: a page ends before the task that
   * would take it past this (the spec lets a page hold fewer than `pageSize`), and holds one task
   * however large. Default 4 MiB, within gRPC's default message size (D78).
   */
  readonly maxListPageBytes?: number;
  /**
   * How long close() lets the push notifications already queued go out, in their lanes' order,
   * before delivery stops and drops the rest; a receiver that is down is not waited for past it.
   * Default 2000 ms; 0 stops at once. Not for a delivery given in `push`: its owner closes it.
   */
  readonly pushDrainMs?: number;
  /**
   * Who owns a caller's tasks, from the principal the authenticate hook
   * returned. Default: the principal itself when a string, else its
   * `subject`, `sub` or `id`; anonymous callers are the owner "".
   */
  readonly ownerOf?: (principal: unknown) => string;
  /** Errors of the executor (the task is FAILED), of push delivery, and of a store opened from a URL (taskId ""). Default: one line on console.error. */
  readonly onError?: (error: unknown, info: { readonly taskId: string }) => void;
  /** Events a stream may be behind before the executor waits for it. Default 64. */
  readonly subscriberHighWater?: number;
  /** How long the executor waits for a stream at the high-water mark before that stream is cut. Default 10,000 ms. */
  readonly slowSubscriberMs?: number;
  /** Ids of new tasks, contexts, agent messages, artifacts and push configs. Default: a random UUID (version 4). */
  readonly newId?: (kind: IdKind) => string;
}

/** What the generated `_tasks.ts` hands over. */
export interface TaskHandlerConfig {
  readonly schemas: TaskSchemas;
  readonly required: RequiredFieldTable;
}

interface SendMessageRequestLike<M> {
  readonly message?: M | undefined;
  readonly configuration?:
    | {
        readonly historyLength?: number | undefined;
        readonly returnImmediately: boolean;
        readonly taskPushNotificationConfig?: PushConfigLike | undefined;
      }
    | undefined;
  readonly metadata?: JsonObject | undefined;
}

interface ListTasksRequestLike {
  readonly contextId: string;
  readonly status: number;
  readonly pageSize?: number | undefined;
  readonly pageToken: string;
  readonly historyLength?: number | undefined;
  readonly statusTimestampAfter?: Timestamp | undefined;
  readonly includeArtifacts?: boolean | undefined;
}

type SendResult<Ty extends TaskTypes> = { payload: { case: "task"; value: Ty["task"] } | { case: "message"; value: Ty["message"] } };

/** The handler the runtime makes: A2AService's ten task and push methods, and close(). */
export interface TaskHandler<Ty extends TaskTypes> {
  sendMessage(request: SendMessageRequestLike<Ty["message"]>, context: A2ACallContext): Promise<SendResult<Ty>>;
  sendStreamingMessage(request: SendMessageRequestLike<Ty["message"]>, context: A2ACallContext): AsyncIterable<Ty["streamResponse"]>;
  getTask(request: { readonly id: string; readonly historyLength?: number | undefined }, context: A2ACallContext): Promise<Ty["task"]>;
  listTasks(request: ListTasksRequestLike, context: A2ACallContext): Promise<{ tasks: Ty["task"][]; nextPageToken: string; pageSize: number; totalSize: number }>;
  cancelTask(request: { readonly id: string }, context: A2ACallContext): Promise<Ty["task"]>;
  subscribeToTask(request: { readonly id: string }, context: A2ACallContext): AsyncIterable<Ty["streamResponse"]>;
  createTaskPushNotificationConfig(request: PushConfigLike, context: A2ACallContext): Promise<Ty["pushConfig"]>;
  getTaskPushNotificationConfig(request: { readonly taskId: string; readonly id: string }, context: A2ACallContext): Promise<Ty["pushConfig"]>;
  listTaskPushNotificationConfigs(
    request: { readonly taskId: string; readonly pageSize: number; readonly pageToken: string },
    context: A2ACallContext,
  ): Promise<{ configs: Ty["pushConfig"][]; nextPageToken: string }>;
  deleteTaskPushNotificationConfig(request: { readonly taskId: string; readonly id: string }, context: A2ACallContext): Promise<Record<string, never>>;
  /** Resolves once the store is open (a store named by URL opens a database); serveA2AService waits for it. */
  ready(): Promise<void>;
  /** Aborts running executors, ends streams, stops push delivery and closes the store. */
  close(): Promise<void>;
}

export function createTaskHandler<Ty extends TaskTypes>(
  config: TaskHandlerConfig,
  executor: TaskExecutor<Ty["message"], Ty["task"], TaskEvent>,
  options: TaskHandlerOptions = {},
): TaskHandler<Ty> {
  const onError = reportingSafely(options.onError ?? reportError);
  // A store the handler opens reports its background failures (a database gone) to the agent's onError too.
  const storeOnError = options.onError === undefined ? undefined : (err: unknown) => onError(err, { taskId: "" });
  const store = storeOf(options.store, storeOnError === undefined || options.storeOptions?.onError !== undefined ? options.storeOptions : { ...options.storeOptions, onError: storeOnError });
  const ownStore = options.store === undefined || typeof options.store === "string";
  store.attach?.(config.schemas);
  // The agent's onError hears of push failures too; the default logs them as what they are (it said "task failed").
  const onPushError = options.onError === undefined ? reportPushError : onError;
  const push = isPushDelivery(options.push) ? options.push : createPushDelivery({ onError: (err, info) => onPushError(err, info), ...options.push });
  const ownPush = !isPushDelivery(options.push);
  const ownerOf = options.ownerOf ?? defaultOwnerOf;
  const newId = options.newId ?? randomId;
  const states = taskStatesOf(config.schemas.taskState);
  const runtime: TaskRuntime = new TaskRuntime({
    schemas: config.schemas,
    states,
    required: config.required,
    executor: executor as unknown as TaskExecutor<MessageLike, TaskLike, TaskEvent>,
    store,
    push,
    onError,
    highWater: options.subscriberHighWater ?? 64,
    slowSubscriberMs: options.slowSubscriberMs ?? 10_000,
    newId,
  });

  store.onDropped?.((taskId) => runtime.taskDropped(taskId));
  store.deliverPushes?.({
    send: (taskId, target, body, settled) => push.deliver(taskId, [target], body, settled),
    render: (kind, value) => runtime.render(kind, value),
    renderV03: (task) => runtime.renderV03(task),
  });

  const ownerOfCall = (context: A2ACallContext): TaskOwner => {
    const owner = { tenant: context.tenant ?? "", owner: ownerOf(context.principal) };
    // Text a SQL store cannot hold: refused alike on every store (D70).
    if (owner.tenant.includes("\0")) throw new InvalidParamsError("tenant must not contain NUL (U+0000)");
    if (owner.owner.includes("\0")) throw new InvalidParamsError("the caller's owner (ownerOf of its principal) must not contain NUL (U+0000)");
    return owner;
  };
  /** A client-chosen contextId (a message's, a ListTasks filter), refused alike on every store when a SQL store could not hold it. */
  const checkedContextId = (contextId: string): string => {
    if (contextId.includes("\0")) throw new InvalidParamsError("contextId must not contain NUL (U+0000)", { metadata: { contextId } });
    return contextId;
  };
  /** The caller's task, or TaskNotFound: another owner's task is not told apart from a missing one (D26). */
  const visible = async (id: string, owner: TaskOwner): Promise<StoredTask> => {
    // Ids are minted here, never with NUL (which a SQL store cannot even be asked for).
    const record = id === "" || id.includes("\0") ? undefined : await store.get(id);
    if (record === undefined || record.tenant !== owner.tenant || record.owner !== owner.owner) {
      throw new TaskNotFoundError(`no task ${id}`, { metadata: { taskId: id } });
    }
    return record;
  };
  const historyOf = (historyLength: number | undefined): number | undefined => {
    if (historyLength !== undefined && historyLength < 0) {
      throw new InvalidParamsError(`historyLength must not be negative (got ${historyLength})`, { metadata: { historyLength: String(historyLength) } });
    }
    return historyLength;
  };
  const pushDrainMs = options.pushDrainMs ?? 2000;
  if (!(pushDrainMs >= 0 && pushDrainMs <= 2 ** 31 - 1)) throw new RangeError(`pushDrainMs must be from 0 to 2147483647 ms, got ${pushDrainMs}`);
  const maxConfigs = options.maxPushConfigsPerTask ?? 10;
  if (!Number.isInteger(maxConfigs) || maxConfigs < 1 || maxConfigs > 100) {
    throw new RangeError(`maxPushConfigsPerTask must be an integer from 1 to 100, got ${maxConfigs}`);
  }
  const maxPageBytes = options.maxListPageBytes ?? 4 << 20;
  if (!(maxPageBytes >= 1)) throw new RangeError(`maxListPageBytes must be at least 1, got ${maxPageBytes}`);
  /** Per task, the config write under way: a count checked and the write that follows are one step here. */
  const configWrites = new Map<string, Promise<void>>();

  /**
   * Stores a push config, which `checkedConfig` made: a new one only while the task holds fewer than
   * `maxConfigs`. True when it replaced a config of its id (`putConfigs` drops the one before's queue).
   */
  const putConfig = (config: PushConfigLike): Promise<boolean> => {
    const written = (configWrites.get(config.taskId) ?? Promise.resolve()).then(async () => {
      const replaced = await store.getConfig(config.taskId, config.id);
      if (replaced === undefined && (await store.listConfigs(config.taskId, maxConfigs, "")).configs.length >= maxConfigs) {
        throw new RpcError("RESOURCE_EXHAUSTED", `task ${config.taskId} holds ${maxConfigs} push configs, as many as it may; delete one, or replace one by its id`, {
          metadata: { taskId: config.taskId },
        });
      }
      await store.putConfig(config);
      return replaced !== undefined;
    });
    const queued = written.then(
      () => undefined,
      () => undefined,
    );
    configWrites.set(config.taskId, queued);
    void queued.then(() => {
      if (configWrites.get(config.taskId) === queued) configWrites.delete(config.taskId);
    });
    return written;
  };

  /**
   * Stores a task's new push configs and puts them in effect; a config that replaced one of its id
   * has what was queued for the one before dropped, as a delete does (its URL or credentials may be
   * another's now), in the step the runtime takes the new one: an update in between went under the
   * old one, and goes too.
   */
  const putConfigs = async (taskId: string, configs: readonly PushConfigLike[]): Promise<void> => {
    const replaced: string[] = [];
    for (const c of configs) if (await putConfig(c)) replaced.push(c.id);
    await runtime.configsChanged(taskId, replaced.length === 0 ? undefined : () => replaced.forEach((id) => push.forget?.(taskId, id)));
  };

  const checkedConfig = async (request: PushConfigLike, taskId: string, tenant: string, context: A2ACallContext): Promise<PushConfigLike> => {
    // Text a SQL store cannot hold, refused alike on every store (D70): it failed the task being created, or was an Internal error.
    const { id, url, token, authentication } = request;
    const texts = { id, url, token, "authentication.scheme": authentication?.scheme ?? "", "authentication.credentials": authentication?.credentials ?? "" };
    for (const [field, text] of Object.entries(texts)) {
      if (text.includes("\0")) throw new InvalidParamsError(`the push config's ${field} must not contain NUL (U+0000)`);
    }
    try {
      await push.check(request.url, { token: request.token, authentication: request.authentication });
    } catch (err) {
      // The URL as the guard's message shows it (no credentials); one too long to take is not echoed at all.
      throw new InvalidParamsError(err instanceof Error ? err.message : String(err), { metadata: request.url.length > maxUrlLength ? {} : { url: shownUrl(request.url) } });
    }
    // D112: a 0.3 caller's config is notified in 0.3's form.
    const legacy = context.protocolVersion === "0.3" ? { protocolVersion: "0.3" } : {};
    return { ...request, id: request.id === "" ? newId("config") : request.id, taskId, tenant, ...legacy };
  };

  interface Accepted {
    readonly exec: Execution;
    readonly historyLength: number | undefined;
  }

  /**
   * Checks a SendMessage and starts its execution. A message that starts a
   * task with no push config touches no store: it is accepted without a
   * promise, which is most messages.
   */
  const accept = (request: SendMessageRequestLike<Ty["message"]>, context: A2ACallContext, stream: Subscriber<object> | undefined): Accepted | Promise<Accepted> => {
    const message = request.message as MessageLike | undefined;
    if (message === undefined) throw new InvalidParamsError("message is required");
    const historyLength = historyOf(request.configuration?.historyLength);
    if (message.taskId !== "" || request.configuration?.taskPushNotificationConfig !== undefined) return acceptStored(request, context, stream, message, historyLength);
    const owner = ownerOfCall(context);
    const taskId = newId("task");
    const contextId = message.contextId === "" ? newId("context") : checkedContextId(message.contextId);
    const exec = new Execution(owner, taskId, contextId, { ...message, taskId, contextId }, context, request.metadata, stream, []);
    exec.answersEarly = request.configuration?.returnImmediately === true;
    exec.historyLength = historyLength;
    void runtime.start(exec, undefined);
    return { exec, historyLength };
  };

  /** accept for a message that continues a task or brings a push config: the store is asked first. */
  const acceptStored = async (
    request: SendMessageRequestLike<Ty["message"]>,
    context: A2ACallContext,
    stream: Subscriber<object> | undefined,
    message: MessageLike,
    historyLength: number | undefined,
  ): Promise<Accepted> => {
    const owner = ownerOfCall(context);
    let record: StoredTask | undefined;
    let taskId: string;
    let contextId: string;
    if (message.taskId !== "") {
      record = await visible(message.taskId, owner);
      taskId = record.task.id;
      contextId = record.task.contextId;
      // Spec 3.4.3: a contextId that is not the task's is rejected, never corrected.
      if (message.contextId !== "" && message.contextId !== contextId) {
        throw new InvalidParamsError(`message.contextId ${message.contextId} is not the context of task ${taskId} (${contextId})`, {
          metadata: { taskId, contextId: message.contextId },
        });
      }
      const state = record.task.status?.state ?? 0;
      if (states.isTerminal(state)) {
        throw new UnsupportedOperationError(`task ${taskId} is ${states.nameOf(state)} and takes no more messages`, { metadata: { taskId } });
      }
    } else {
      taskId = newId("task");
      contextId = message.contextId === "" ? newId("context") : checkedContextId(message.contextId);
    }
    const pushConfig = request.configuration?.taskPushNotificationConfig;
    const configs = pushConfig === undefined ? [] : [await checkedConfig(pushConfig, taskId, owner.tenant, context)];
    if (record !== undefined && configs.length > 0) await putConfigs(taskId, configs);
    const exec = new Execution(
      owner,
      taskId,
      contextId,
      { ...message, taskId, contextId },
      context,
      request.metadata,
      stream,
      record === undefined ? configs : [],
    );
    exec.answersEarly = request.configuration?.returnImmediately === true;
    exec.historyLength = historyLength;
    await runtime.start(exec, record);
    return { exec, historyLength };
  };

  const handler: TaskHandler<Ty> = {
    async sendMessage(request, context) {
      const accepted = accept(request, context, undefined);
      const { exec, historyLength } = isPromiseLike(accepted) ? await accepted : accepted;
      // Blocking unless asked otherwise (spec 3.2.2, D23): until a terminal or interrupted state.
      // Settled comes with or after the first event, a direct reply included: mostly one wait, not two.
      // A caller that went away is not waited for by anyone: the binding drops the answer.
      const early = request.configuration?.returnImmediately === true;
      const waited = early ? exec.first : exec.settled;
      if (!waited.done) {
        // Watched for its caller leaving once it has waited a while (TaskRuntime #watchCallers).
        exec.callerWaits = true;
        await waited.promise;
        exec.callerWaits = false;
        // Gone: no one reads the answer, and the transport lets go of the call once this rejects.
        if (exec.callerLeft) throw context.signal.reason;
      }
      // A store that answers with promises may settle a run a tick before its first event is answered.
      const first = exec.first.done ? exec.first.value! : await exec.first.promise;
      if (exec.refusal !== undefined) throw exec.refusal;
      if ("reply" in first) return { payload: { case: "message", value: first.reply as Ty["message"] } };
      if (early) return { payload: { case: "task", value: snapshotOf(states, first.task, historyLength) as Ty["task"] } };
      return { payload: { case: "task", value: snapshotOf(states, exec.live?.record.task ?? first.task, historyLength) as Ty["task"] } };
    },

    sendStreamingMessage(request, context) {
      return lazyStream(async () => {
        const stream = runtime.newSubscriber(context.signal);
        try {
          const accepted = accept(request, context, stream);
          if (isPromiseLike(accepted)) await accepted;
        } catch (err) {
          void stream.return();
          throw err;
        }
        return stream;
      });
    },

    async getTask(request, context) {
      const historyLength = historyOf(request.historyLength);
      const record = await visible(request.id, ownerOfCall(context));
      return snapshotOf(states, record.task, historyLength) as Ty["task"];
    },

    async listTasks(request, context) {
      const pageSize = request.pageSize ?? 50;
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) {
        throw new InvalidParamsError(`pageSize must be between 1 and 100 (got ${pageSize})`, { metadata: { pageSize: String(pageSize) } });
      }
      const historyLength = historyOf(request.historyLength);
      let page;
      try {
        page = await store.list(ownerOfCall(context), {
          contextId: checkedContextId(request.contextId),
          state: request.status,
          statusAfterMs: request.statusTimestampAfter === undefined ? undefined : msAtOrAfter(request.statusTimestampAfter),
          pageSize,
          pageToken: request.pageToken,
        });
      } catch (err) {
        if (err instanceof BadPageTokenError) throw new InvalidParamsError(err.message, { metadata: { pageToken: request.pageToken } });
        throw err;
      }
      const withArtifacts = request.includeArtifacts === true;
      const tasks: Ty["task"][] = [];
      let nextPageToken = page.nextPageToken;
      let bytes = 0;
      for (let i = 0; i < page.tasks.length; i++) {
        const task = snapshotOf(states, page.tasks[i]!, historyLength, withArtifacts) as Ty["task"];
        if (page.tokenAfter !== undefined && page.tasks.length > 1) {
          // Forty tasks of 3 MB made a 120 MB answer (240 MB as a JSON string), and a hundred one JSON could not hold.
          bytes = jsonSizeWithin(task, maxPageBytes - bytes) + bytes;
          if (bytes > maxPageBytes && i > 0) {
            nextPageToken = page.tokenAfter(i - 1);
            break;
          }
        }
        tasks.push(task);
      }
      return { tasks, nextPageToken, pageSize, totalSize: page.totalSize };
    },

    async cancelTask(request, context) {
      const record = await visible(request.id, ownerOfCall(context));
      const state = record.task.status?.state ?? 0;
      if (states.isTerminal(state)) {
        throw new TaskNotCancelableError(`task ${request.id} is ${states.nameOf(state)} and cannot be canceled`, { metadata: { taskId: request.id } });
      }
      if (!(await runtime.cancel(record))) {
        throw new TaskNotCancelableError(`task ${request.id} is finished and cannot be canceled`, { metadata: { taskId: request.id } });
      }
      const current = (await store.get(request.id)) ?? record;
      return snapshotOf(states, current.task, undefined) as Ty["task"];
    },

    subscribeToTask(request, context) {
      return lazyStream(async () => {
        const record = await visible(request.id, ownerOfCall(context));
        const state = record.task.status?.state ?? 0;
        if (states.isTerminal(state)) {
          throw new UnsupportedOperationError(`task ${request.id} is ${states.nameOf(state)}; there is nothing to follow`, { metadata: { taskId: request.id } });
        }
        const stream = runtime.newSubscriber(context.signal);
        let following: boolean;
        try {
          following = await runtime.subscribe(record, stream);
        } catch (err) {
          // The store failed a read: the subscriber lets go of the request's signal before the caller gets the error.
          void stream.return();
          throw err;
        }
        if (!following) {
          void stream.return();
          throw new UnsupportedOperationError(`task ${request.id} is finished; there is nothing to follow`, { metadata: { taskId: request.id } });
        }
        return stream;
      });
    },

    async createTaskPushNotificationConfig(request, context) {
      const owner = ownerOfCall(context);
      const record = await visible(request.taskId, owner);
      const config = await checkedConfig(request, record.task.id, owner.tenant, context);
      await putConfigs(record.task.id, [config]);
      return config as Ty["pushConfig"];
    },

    async getTaskPushNotificationConfig(request, context) {
      await visible(request.taskId, ownerOfCall(context));
      // Config ids are never stored with NUL (checkedConfig), which a SQL store cannot even be asked for.
      const config = request.id.includes("\0") ? undefined : await store.getConfig(request.taskId, request.id);
      // The spec has no ConfigNotFound: TaskNotFound is the error it names (checklist 1.2).
      if (config === undefined) throw new TaskNotFoundError(`task ${request.taskId} has no push config ${request.id}`, { metadata: { taskId: request.taskId } });
      return config as Ty["pushConfig"];
    },

    async listTaskPushNotificationConfigs(request, context) {
      if (!Number.isInteger(request.pageSize) || request.pageSize < 0 || request.pageSize > 100) {
        throw new InvalidParamsError(`pageSize must be between 1 and 100, or 0 for the default (got ${request.pageSize})`, { metadata: { pageSize: String(request.pageSize) } });
      }
      await visible(request.taskId, ownerOfCall(context));
      try {
        const page = await store.listConfigs(request.taskId, request.pageSize, request.pageToken);
        return { configs: [...page.configs] as Ty["pushConfig"][], nextPageToken: page.nextPageToken };
      } catch (err) {
        if (err instanceof BadPageTokenError) throw new InvalidParamsError(err.message, { metadata: { pageToken: request.pageToken } });
        throw err;
      }
    },

    async deleteTaskPushNotificationConfig(request, context) {
      await visible(request.taskId, ownerOfCall(context));
      // Idempotent (spec 3.1.10): deleting a config that is gone succeeds; one with NUL in its id never was.
      if (request.id.includes("\0")) return {};
      await store.deleteConfig(request.taskId, request.id);
      await runtime.configsChanged(request.taskId);
      // Nothing more is sent to it (spec 3.1.10), what was queued before the delete included.
      push.forget?.(request.taskId, request.id);
      return {};
    },

    ready: () => ("ready" in store ? (store as OpeningStore).ready : Promise.resolve()),

    async close() {
      // What the runtime still writes (the CANCELED of tasks being created) goes in before the store closes.
      await runtime.close();
      if (ownPush) {
        await settlesWithin(push.idle(), pushDrainMs);
        await push.close();
      }
      if (ownStore) await store.close?.();
    },
  };
  return handler;
}

/** The store the option names: itself, the in-memory one, or one a URL names, opening (D73). */
function storeOf(option: TaskStore | string | undefined, sqlOptions: SqlTaskStoreOptions | undefined): TaskStore {
  if (option === undefined) return createInMemoryTaskStore();
  if (typeof option !== "string") return option;
  // Checked now: a wrong URL fails where the handler is made.
  if (parseStoreUrl(option).engine === "memory") return createInMemoryTaskStore();
  return createOpeningStore(openTaskStore(option, sqlOptions));
}

/**
 * The first whole millisecond at or after `timestamp`: status times are kept in milliseconds, so a
 * task at or after the filter (ListTasks' statusTimestampAfter) is one at or after this.
 */
function msAtOrAfter(timestamp: Timestamp): number {
  return Number(timestamp.seconds) * 1000 + Math.ceil(timestamp.nanos / 1_000_000);
}

function isPushDelivery(value: PushDeliveryOptions | PushDelivery | undefined): value is PushDelivery {
  return value !== undefined && typeof (value as Partial<PushDelivery>).deliver === "function";
}

function defaultOwnerOf(principal: unknown): string {
  if (principal === undefined || principal === null) return "";
  if (typeof principal === "string") return principal;
  if (typeof principal === "object") {
    for (const key of ["subject", "sub", "id"] as const) {
      const value = (principal as Record<string, unknown>)[key];
      if (typeof value === "string" && value !== "") return value;
    }
  }
  throw new Error("the task handler cannot tell who owns this caller's tasks: give it an ownerOf option for this principal");
}

/** The default: the same JSON line on stderr as a handler's unexpected failure (D33). */
function reportError(error: unknown, info: { readonly taskId: string }): void {
  jsonLineLogger.error({ err: error, taskId: info.taskId }, "task failed");
}

/** The default for a push notification given up or dropped: one JSON line, as D33's, naming the URL. */
function reportPushError(error: unknown, info: { readonly taskId: string; readonly url?: string }): void {
  jsonLineLogger.error({ err: error, taskId: info.taskId, url: info.url }, "push notification failed");
}

/**
 * The agent's onError, never throwing back into the runtime: it is called
 * where nothing could catch what it throws (an unhandled rejection ends
 * the process), so what it throws is logged with the error it was given.
 */
function reportingSafely(onError: (error: unknown, info: { readonly taskId: string }) => void): (error: unknown, info: { readonly taskId: string }) => void {
  return (error, info) => {
    try {
      onError(error, info);
    } catch (thrown) {
      jsonLineLogger.error({ err: thrown, taskId: info.taskId, reported: String(error) }, "the task handler's onError threw");
    }
  };
}

/**
 * A stream whose checks run at the first read, so that an error there
 * (TaskNotFound, ...) is the binding's normal error response (D14).
 */
function lazyStream<E>(open: () => Promise<AsyncIterator<E>>): AsyncIterable<E> {
  return {
    [Symbol.asyncIterator]() {
      let inner: Promise<AsyncIterator<E>> | undefined;
      let opened: AsyncIterator<E> | undefined;
      const started = () => (inner ??= open());
      return {
        // Once open, reads go straight to the stream: no promise of this wrapper per event.
        next: () =>
          opened !== undefined
            ? opened.next()
            : started().then((it) => {
                opened = it;
                return it.next();
              }),
        return: async () => {
          if (inner === undefined) return { value: undefined, done: true };
          const it = await inner.catch(() => undefined);
          return (await it?.return?.()) ?? { value: undefined, done: true };
        },
      };
    },
  };
}
