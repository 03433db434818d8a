/**
 * The reference agent: a small but real A2A agent built only from generated
 * code and the public runtime. It keeps tasks in memory, answers a message by
 * echoing its text as an artifact (streamed word by word on the streaming
 * methods), can be canceled, keeps push-notification configs per task, and
 * hands out an extended card to authenticated callers.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate, timestampMs } from "@bufbuild/protobuf/wkt";
import {
  InvalidParamsError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "protoc-gen-a2a/runtime";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import {
  ArtifactSchema,
  StreamResponseSchema,
  TaskSchema,
  TaskState,
  type AgentCard,
  type Message,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
} from "../../generated/a2a_pb.js";

const terminal = new Set([TaskState.COMPLETED, TaskState.FAILED, TaskState.CANCELED, TaskState.REJECTED]);

/** Per task: the task, its push configs, and the streams following it. */
interface Entry {
  task: Task;
  readonly configs: Map<string, TaskPushNotificationConfig>;
  readonly followers: Set<(event: StreamResponse) => void>;
}

export function createReferenceAgent(extendedCard: AgentCard): A2AServiceHandler {
  const entries = new Map<string, Entry>();
  let nextId = 1;
  const id = (prefix: string) => `${prefix}-${nextId++}`;

  const entryOf = (taskId: string): Entry => {
    const entry = entries.get(taskId);
    if (entry === undefined) throw new TaskNotFoundError(`no task ${taskId}`, { metadata: { taskId } });
    return entry;
  };
  const publish = (entry: Entry, event: StreamResponse) => {
    for (const follow of entry.followers) follow(event);
  };
  const setState = (entry: Entry, state: TaskState) => {
    entry.task.status = { $typeName: "lf.a2a.v1.TaskStatus", state, timestamp: timestampFromDate(new Date()) };
    publish(entry, create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId: entry.task.id, contextId: entry.task.contextId, status: entry.task.status } } }));
  };
  const addChunk = (entry: Entry, text: string, append: boolean, lastChunk: boolean) => {
    const artifact = entry.task.artifacts.find((a) => a.artifactId === "echo");
    const part = { $typeName: "lf.a2a.v1.Part" as const, content: { case: "text" as const, value: text }, filename: "", mediaType: "" };
    if (artifact === undefined) entry.task.artifacts.push(create(ArtifactSchema, { artifactId: "echo", name: "echo", parts: [part] }));
    else artifact.parts.push(part);
    publish(entry, create(StreamResponseSchema, {
      payload: { case: "artifactUpdate", value: { taskId: entry.task.id, contextId: entry.task.contextId, artifact: { artifactId: "echo", name: "echo", parts: [part] }, append, lastChunk } },
    }));
  };

  /** Starts or continues the task a message belongs to. */
  const accept = (message: Message | undefined): Entry => {
    if (message === undefined) throw new InvalidParamsError("message is required");
    if (message.taskId !== "") {
      const entry = entryOf(message.taskId);
      if (terminal.has(entry.task.status?.state ?? TaskState.UNSPECIFIED)) {
        throw new UnsupportedOperationError(`task ${message.taskId} is finished and takes no more messages`);
      }
      entry.task.history.push(message);
      return entry;
    }
    const taskId = id("task");
    const contextId = message.contextId === "" ? id("ctx") : message.contextId;
    const task = create(TaskSchema, { id: taskId, contextId, history: [{ ...message, taskId, contextId }] });
    const entry: Entry = { task, configs: new Map(), followers: new Set() };
    entries.set(taskId, entry);
    setState(entry, TaskState.SUBMITTED);
    return entry;
  };
  const words = (message: Message | undefined) =>
    (message?.parts ?? []).flatMap((p) => (p.content.case === "text" ? p.content.value.split(/\s+/).filter(Boolean) : []));
  /** The agent's work: echo the text word by word, then complete. */
  const work = async (entry: Entry, message: Message | undefined, signal: AbortSignal) => {
    setState(entry, TaskState.WORKING);
    const all = words(message);
    for (const [i, word] of all.entries()) {
      if (signal.aborted || entry.task.status?.state === TaskState.CANCELED) return;
      await new Promise((resolve) => setImmediate(resolve));
      addChunk(entry, i === 0 ? word : ` ${word}`, i > 0, i === all.length - 1);
    }
    if (entry.task.status?.state !== TaskState.CANCELED) setState(entry, TaskState.COMPLETED);
  };
  const trimmed = (task: Task, historyLength: number | undefined): Task =>
    historyLength === undefined ? task : { ...task, history: historyLength === 0 ? [] : task.history.slice(-historyLength) };

  /** Streams a task's events from now on: its snapshot first, ending at a terminal state. */
  async function* follow(entry: Entry, signal: AbortSignal, start?: () => Promise<void>): AsyncGenerator<StreamResponse> {
    const queue: StreamResponse[] = [];
    let wake: (() => void) | undefined;
    const listener = (event: StreamResponse) => {
      queue.push(event);
      wake?.();
    };
    entry.followers.add(listener);
    const abort = () => wake?.();
    signal.addEventListener("abort", abort);
    try {
      yield create(StreamResponseSchema, { payload: { case: "task", value: entry.task } });
      void start?.();
      for (;;) {
        while (queue.length === 0 && !signal.aborted) await new Promise<void>((resolve) => (wake = resolve));
        const event = queue.shift();
        if (event === undefined) return;
        yield event;
        if (event.payload.case === "statusUpdate" && terminal.has(event.payload.value.status?.state ?? TaskState.UNSPECIFIED)) return;
      }
    } finally {
      entry.followers.delete(listener);
      signal.removeEventListener("abort", abort);
    }
  }

  return {
    async sendMessage(request, context) {
      const entry = accept(request.message);
      const done = work(entry, request.message, context.signal);
      // Blocking unless asked otherwise (spec 3.2.2): answer with the finished task.
      if (request.configuration?.returnImmediately !== true) await done;
      return { payload: { case: "task", value: trimmed(entry.task, request.configuration?.historyLength) } };
    },

    sendStreamingMessage(request, context) {
      const entry = accept(request.message);
      return follow(entry, context.signal, () => work(entry, request.message, context.signal));
    },

    async getTask(request) {
      return trimmed(entryOf(request.id).task, request.historyLength);
    },

    async listTasks(request) {
      const pageSize = request.pageSize ?? 50;
      if (pageSize < 1 || pageSize > 100) throw new InvalidParamsError("pageSize must be between 1 and 100", { metadata: { pageSize: String(pageSize) } });
      const after = request.statusTimestampAfter === undefined ? undefined : timestampMs(request.statusTimestampAfter);
      const matching = [...entries.values()]
        .map((e) => e.task)
        .filter((t) => request.contextId === "" || t.contextId === request.contextId)
        .filter((t) => request.status === TaskState.UNSPECIFIED || t.status?.state === request.status)
        .filter((t) => after === undefined || (t.status?.timestamp !== undefined && timestampMs(t.status.timestamp) >= after))
        .sort((a, b) => timestampMs(b.status?.timestamp ?? timestampFromDate(new Date(0))) - timestampMs(a.status?.timestamp ?? timestampFromDate(new Date(0))));
      const offset = request.pageToken === "" ? 0 : Number(request.pageToken);
      if (!Number.isInteger(offset) || offset < 0) throw new InvalidParamsError("pageToken is not one this agent gave out");
      const page = matching.slice(offset, offset + pageSize).map((t) => ({
        ...trimmed(t, request.historyLength),
        artifacts: request.includeArtifacts === true ? t.artifacts : [],
      }));
      return { tasks: page, pageSize, totalSize: matching.length, nextPageToken: offset + pageSize < matching.length ? String(offset + pageSize) : "" };
    },

    async cancelTask(request) {
      const entry = entryOf(request.id);
      const state = entry.task.status?.state ?? TaskState.UNSPECIFIED;
      if (terminal.has(state)) {
        throw new TaskNotCancelableError(`task ${request.id} is ${TaskState[state]} and cannot be canceled`, { metadata: { taskId: request.id } });
      }
      setState(entry, TaskState.CANCELED);
      return entry.task;
    },

    subscribeToTask(request, context) {
      const entry = entryOf(request.id);
      if (terminal.has(entry.task.status?.state ?? TaskState.UNSPECIFIED)) {
        throw new UnsupportedOperationError(`task ${request.id} is finished; there is nothing to follow`, { metadata: { taskId: request.id } });
      }
      return follow(entry, context.signal);
    },

    async createTaskPushNotificationConfig(request) {
      const entry = entryOf(request.taskId);
      const config = { ...request, id: request.id === "" ? id("cfg") : request.id };
      entry.configs.set(config.id, config);
      return config;
    },

    async getTaskPushNotificationConfig(request) {
      const config = entryOf(request.taskId).configs.get(request.id);
      // The spec has no ConfigNotFound error; TaskNotFound is what it names (Part B 1.2).
      if (config === undefined) throw new TaskNotFoundError(`task ${request.taskId} has no push config ${request.id}`, { metadata: { taskId: request.taskId } });
      return config;
    },

    async listTaskPushNotificationConfigs(request) {
      return { configs: [...entryOf(request.taskId).configs.values()], nextPageToken: "" };
    },

    async deleteTaskPushNotificationConfig(request) {
      // Idempotent (spec 3.1.10): deleting a config that is gone succeeds.
      entryOf(request.taskId).configs.delete(request.id);
      return {};
    },

    async getExtendedAgentCard() {
      return extendedCard;
    },
  };
}
