/**
 * Shared by the interop suites (JSON-RPC and HTTP+JSON against the official
 * `@a2a-js/sdk` client): a small in-memory A2A agent, a handler that fails
 * on demand, and the SDK-shaped requests and expectations the suites use.
 */
import { clone, create } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { Role, TaskState, type Message as SdkMessage, type SendMessageRequest, type StreamResponse as SdkStreamResponse } from "@a2a-js/sdk";
import type { A2ACallContext } from "protoc-gen-a2a/runtime";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import * as ours from "../../runtime/a2a/errors.js";
import {
  ArtifactSchema,
  MessageSchema,
  Role as PbRole,
  StreamResponseSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
  TaskState as PbTaskState,
  TaskStatusSchema,
  type AgentCard,
  type Artifact,
  type Message,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
} from "../../generated/a2a_pb.js";

// ---------------------------------------------------------------- the in-memory agent

export const BASE_MS = Date.UTC(2025, 0, 1, 12, 0, 0);
/** What the server's Timestamp serializes to at a given clock tick (ProtoJSON drops a zero fraction). */
export const iso = (tick: number) => new Date(BASE_MS + tick * 1000).toISOString().replace(".000Z", "Z");

const terminal = new Set<PbTaskState>([PbTaskState.COMPLETED, PbTaskState.FAILED, PbTaskState.CANCELED, PbTaskState.REJECTED]);

export interface Seen {
  readonly method: string;
  readonly binding: string;
  readonly protocolVersion: string;
  readonly requestedExtensions: readonly string[];
  readonly tenant: string | undefined;
}

export const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

export function textPart(text: string) {
  return { content: { case: "text" as const, value: text }, mediaType: "text/plain" };
}

export function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((p) => (p.content.case === "text" ? p.content.value : "")).join("");
}

export function taskEvent(task: Task): StreamResponse {
  return create(StreamResponseSchema, { payload: { case: "task", value: clone(TaskSchema, task) } });
}

export function statusEvent(task: Task): StreamResponse {
  return create(StreamResponseSchema, {
    payload: { case: "statusUpdate", value: { taskId: task.id, contextId: task.contextId, status: task.status } },
  });
}

export function artifactEvent(task: Task, artifact: Artifact, append: boolean, lastChunk: boolean): StreamResponse {
  return create(StreamResponseSchema, {
    payload: { case: "artifactUpdate", value: { taskId: task.id, contextId: task.contextId, artifact, append, lastChunk } },
  });
}

/**
 * A small but real agent: tasks keyed by id, push configs per task, a clock
 * that ticks one second per state change (reset per test, so timestamps are
 * exact), and the spec's errors where the spec asks for them.
 */
export function createAgent(extendedCard: () => AgentCard) {
  const tasks = new Map<string, Task>();
  const configs = new Map<string, Map<string, TaskPushNotificationConfig>>();
  const seen: Seen[] = [];
  let tick = 0;
  let configCounter = 0;

  const note = (method: string, context: A2ACallContext) =>
    seen.push({
      method,
      binding: context.binding,
      protocolVersion: context.protocolVersion,
      requestedExtensions: [...context.requestedExtensions],
      tenant: context.tenant,
    });

  const setState = (task: Task, state: PbTaskState) => {
    task.status = create(TaskStatusSchema, { state, timestamp: timestampFromMs(BASE_MS + ++tick * 1000) });
  };

  const lookup = (id: string): Task => {
    const task = tasks.get(id);
    if (task === undefined) throw new ours.TaskNotFoundError(`Task ${id} was not found`, { metadata: { taskId: id } });
    return task;
  };

  const snapshot = (task: Task, historyLength?: number): Task => {
    const copy = clone(TaskSchema, task);
    if (historyLength !== undefined) copy.history = historyLength === 0 ? [] : copy.history.slice(-historyLength);
    return copy;
  };

  const configsOf = (taskId: string) => {
    let map = configs.get(taskId);
    if (map === undefined) configs.set(taskId, (map = new Map()));
    return map;
  };

  /** The task a message starts (new task) or continues (message.taskId), with the message in its history. */
  const taskFor = (message: Message): Task => {
    if (message.taskId !== "") {
      const task = lookup(message.taskId);
      if (terminal.has(task.status?.state ?? PbTaskState.UNSPECIFIED)) {
        throw new ours.UnsupportedOperationError(`Task ${task.id} is in a terminal state`, { metadata: { taskId: task.id } });
      }
      task.history.push(clone(MessageSchema, message));
      return task;
    }
    const id = `task-${message.messageId}`;
    const contextId = message.contextId !== "" ? message.contextId : `ctx-${message.messageId}`;
    const task = create(TaskSchema, { id, contextId, history: [{ ...clone(MessageSchema, message), taskId: id, contextId }] });
    tasks.set(id, task);
    return task;
  };

  const handler: A2AServiceHandler = {
    async sendMessage(request, context) {
      note("SendMessage", context);
      const message = request.message ?? create(MessageSchema);
      if (textOf(message) === "ping") {
        const contextId = message.contextId !== "" ? message.contextId : "ctx-direct";
        return {
          payload: {
            case: "message",
            value: { messageId: `${message.messageId}-reply`, contextId, role: PbRole.AGENT, parts: [textPart("pong")] },
          },
        };
      }
      const task = taskFor(message);
      if (request.configuration?.returnImmediately === true) {
        setState(task, PbTaskState.WORKING);
      } else {
        task.artifacts.push(create(ArtifactSchema, { artifactId: "echo", name: "echo", parts: [textPart(`echo: ${textOf(message)}`)] }));
        setState(task, PbTaskState.COMPLETED);
      }
      return { payload: { case: "task", value: snapshot(task, request.configuration?.historyLength) } };
    },

    async *sendStreamingMessage(request, context) {
      note("SendStreamingMessage", context);
      const message = request.message ?? create(MessageSchema);
      const slow = textOf(message).includes("slowly");
      const task = taskFor(message);
      setState(task, PbTaskState.SUBMITTED);
      yield taskEvent(task);
      if (slow) await sleep(40, context.signal);
      setState(task, PbTaskState.WORKING);
      yield statusEvent(task);
      if (slow) await sleep(40, context.signal);
      const first = create(ArtifactSchema, { artifactId: "answer", name: "answer", parts: [textPart("You said: ")] });
      yield artifactEvent(task, first, false, false);
      if (slow) await sleep(40, context.signal);
      const second = create(ArtifactSchema, { artifactId: "answer", parts: [textPart(textOf(message))] });
      yield artifactEvent(task, second, true, true);
      task.artifacts.push(create(ArtifactSchema, { artifactId: "answer", name: "answer", parts: [...first.parts, ...second.parts] }));
      setState(task, PbTaskState.COMPLETED);
      yield statusEvent(task);
    },

    async getTask(request, context) {
      note("GetTask", context);
      return snapshot(lookup(request.id), request.historyLength);
    },

    async listTasks(request, context) {
      note("ListTasks", context);
      const pageSize = request.pageSize ?? 50;
      if (pageSize < 1 || pageSize > 100) throw new ours.InvalidParamsError("pageSize must be between 1 and 100");
      const offset = request.pageToken === "" ? 0 : Number(request.pageToken);
      const stamp = (t: Task) => (t.status?.timestamp === undefined ? 0 : timestampMs(t.status.timestamp));
      const matching = [...tasks.values()]
        .filter((t) => request.contextId === "" || t.contextId === request.contextId)
        .filter((t) => request.status === PbTaskState.UNSPECIFIED || t.status?.state === request.status)
        .filter((t) => request.statusTimestampAfter === undefined || stamp(t) >= timestampMs(request.statusTimestampAfter))
        .sort((a, b) => stamp(b) - stamp(a));
      const page = matching.slice(offset, offset + pageSize).map((t) => {
        const copy = snapshot(t, request.historyLength);
        if (request.includeArtifacts !== true) copy.artifacts = [];
        return copy;
      });
      const next = offset + pageSize < matching.length ? String(offset + pageSize) : "";
      return { tasks: page, nextPageToken: next, pageSize, totalSize: matching.length };
    },

    async cancelTask(request, context) {
      note("CancelTask", context);
      const task = lookup(request.id);
      const state = task.status?.state ?? PbTaskState.UNSPECIFIED;
      if (terminal.has(state)) {
        throw new ours.TaskNotCancelableError(`Task ${task.id} is ${PbTaskState[state]} and cannot be canceled`, { metadata: { taskId: task.id } });
      }
      setState(task, PbTaskState.CANCELED);
      return snapshot(task);
    },

    async *subscribeToTask(request, context) {
      note("SubscribeToTask", context);
      const task = lookup(request.id);
      if (terminal.has(task.status?.state ?? PbTaskState.UNSPECIFIED)) {
        throw new ours.UnsupportedOperationError(`Task ${task.id} is in a terminal state`, { metadata: { taskId: task.id } });
      }
      yield taskEvent(task);
      const artifact = create(ArtifactSchema, { artifactId: "resumed", name: "resumed", parts: [textPart("finished while you watched")] });
      task.artifacts.push(artifact);
      yield artifactEvent(task, artifact, false, true);
      setState(task, PbTaskState.COMPLETED);
      yield statusEvent(task);
    },

    async createTaskPushNotificationConfig(request, context) {
      note("CreateTaskPushNotificationConfig", context);
      const task = lookup(request.taskId);
      const id = request.id !== "" ? request.id : `cfg-${++configCounter}`;
      const config = create(TaskPushNotificationConfigSchema, {
        tenant: request.tenant,
        id,
        taskId: task.id,
        url: request.url,
        token: request.token,
        authentication: request.authentication,
      });
      configsOf(task.id).set(id, config);
      return config;
    },

    async getTaskPushNotificationConfig(request, context) {
      note("GetTaskPushNotificationConfig", context);
      const task = lookup(request.taskId);
      const config = configsOf(task.id).get(request.id);
      // The spec has no ConfigNotFound: a missing config is TaskNotFound (checklist 1.2 #8).
      if (config === undefined) {
        throw new ours.TaskNotFoundError(`Push notification config ${request.id} was not found for task ${task.id}`, {
          metadata: { taskId: task.id, configId: request.id },
        });
      }
      return config;
    },

    async listTaskPushNotificationConfigs(request, context) {
      note("ListTaskPushNotificationConfigs", context);
      const task = lookup(request.taskId);
      return { configs: [...configsOf(task.id).values()], nextPageToken: "" };
    },

    async deleteTaskPushNotificationConfig(request, context) {
      note("DeleteTaskPushNotificationConfig", context);
      const task = lookup(request.taskId);
      // Idempotent (spec 3.1.10): deleting a config that is gone succeeds.
      configsOf(task.id).delete(request.id);
      return {};
    },

    async getExtendedAgentCard(_request, context) {
      note("GetExtendedAgentCard", context);
      return extendedCard();
    },
  };

  return {
    handler,
    tasks,
    seen,
    reset() {
      tasks.clear();
      configs.clear();
      seen.length = 0;
      tick = 0;
      configCounter = 0;
    },
  };
}

// ---------------------------------------------------------------- a handler that fails on demand

/**
 * Every unary method throws `failure()`; both streaming methods first yield
 * `prelude` (possibly nothing), then throw `failure()` if one is set.
 */
export function createFailingAgent() {
  const state: { failure: (() => unknown) | undefined; prelude: StreamResponse[] } = { failure: undefined, prelude: [] };
  const fail = (): never => {
    throw state.failure === undefined ? new Error("the test set no failure") : state.failure();
  };
  async function* stream(): AsyncGenerator<StreamResponse> {
    for (const event of state.prelude) yield event;
    if (state.failure !== undefined) throw state.failure();
  }
  const handler: A2AServiceHandler = {
    sendMessage: async () => fail(),
    sendStreamingMessage: () => stream(),
    getTask: async () => fail(),
    listTasks: async () => fail(),
    cancelTask: async () => fail(),
    subscribeToTask: () => stream(),
    createTaskPushNotificationConfig: async () => fail(),
    getTaskPushNotificationConfig: async () => fail(),
    listTaskPushNotificationConfigs: async () => fail(),
    deleteTaskPushNotificationConfig: async () => fail(),
    getExtendedAgentCard: async () => fail(),
  };
  return {
    handler,
    set(failure: (() => unknown) | undefined, prelude: StreamResponse[] = []) {
      state.failure = failure;
      state.prelude = prelude;
    },
  };
}

// ---------------------------------------------------------------- SDK-shaped expectations

/** A text part as the SDK decodes it. */
export const sdkText = (text: string, mediaType = "text/plain") => ({ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType });

export const sdkArtifact = (artifactId: string, name: string, texts: readonly string[]) => ({
  artifactId,
  name,
  description: "",
  parts: texts.map((t) => sdkText(t)),
  metadata: undefined,
  extensions: [],
});

export const sdkUserMessage = (messageId: string, text: string, taskId = "", contextId = ""): SdkMessage => ({
  messageId,
  contextId,
  taskId,
  role: Role.ROLE_USER,
  parts: [sdkText(text)] as SdkMessage["parts"],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

export const sdkStatus = (state: TaskState, tick: number) => ({ state, message: undefined, timestamp: iso(tick) });

export const sdkTask = (fields: {
  id: string;
  contextId: string;
  state: TaskState;
  tick: number;
  artifacts?: unknown[];
  history?: unknown[];
}) => ({
  id: fields.id,
  contextId: fields.contextId,
  status: sdkStatus(fields.state, fields.tick),
  artifacts: fields.artifacts ?? [],
  history: fields.history ?? [],
  metadata: undefined,
});

// ---------------------------------------------------------------- SDK-shaped requests

export function send(messageId: string, text: string, options: { contextId?: string; taskId?: string; returnImmediately?: boolean; historyLength?: number } = {}): SendMessageRequest {
  return {
    tenant: "",
    message: { ...sdkUserMessage(messageId, text, options.taskId ?? "", options.contextId ?? "") },
    configuration: {
      acceptedOutputModes: ["text/plain"],
      taskPushNotificationConfig: undefined,
      returnImmediately: options.returnImmediately ?? false,
      historyLength: options.historyLength,
    },
    metadata: undefined,
  };
}

export function listParams(
  fields: { contextId?: string; status?: TaskState; pageSize?: number; pageToken?: string; includeArtifacts?: boolean; statusTimestampAfter?: string } = {},
) {
  return {
    tenant: "",
    contextId: fields.contextId ?? "",
    status: fields.status ?? TaskState.TASK_STATE_UNSPECIFIED,
    pageSize: fields.pageSize,
    pageToken: fields.pageToken ?? "",
    historyLength: undefined,
    statusTimestampAfter: fields.statusTimestampAfter,
    includeArtifacts: fields.includeArtifacts,
  };
}

export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const events: T[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** Runs a stream to its end; resolves with the events before the error and the error (undefined when none). */
export async function collectUntilError<T>(stream: AsyncIterable<T>): Promise<{ events: T[]; error: unknown }> {
  const events: T[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    return { events, error };
  }
  return { events, error: undefined };
}

/** The rejection of `promise`; fails the test when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to fail, but it succeeded");
}

export const payloadCases = (events: readonly SdkStreamResponse[]) => events.map((e) => e.payload?.$case);
