// Valid requests of A2AService's 11 methods as fast-check arbitraries, in
// ProtoJSON (the JSON bindings' params and bodies; gRPC encodes the same
// values with protobuf-es). Ids of known tasks, contexts and push configs
// are placeholders ("$task:3") that the harness fills from its pool of ids
// the server handed out (resolvePool), so valid requests reach real tasks.
import fc from "fast-check";

export const methods = [
  "SendMessage",
  "SendStreamingMessage",
  "GetTask",
  "ListTasks",
  "CancelTask",
  "SubscribeToTask",
  "CreateTaskPushNotificationConfig",
  "GetTaskPushNotificationConfig",
  "ListTaskPushNotificationConfigs",
  "GetExtendedAgentCard",
  "DeleteTaskPushNotificationConfig",
];

export const streaming = new Set(["SendStreamingMessage", "SubscribeToTask"]);

const taskId = fc.oneof({ weight: 4, arbitrary: fc.nat(63).map((k) => `$task:${k}`) }, { weight: 1, arbitrary: fc.constantFrom("no-such-task", "00000000-0000-0000-0000-000000000000") });
const contextId = fc.oneof({ weight: 3, arbitrary: fc.nat(63).map((k) => `$ctx:${k}`) }, { weight: 1, arbitrary: fc.constantFrom("ctx-new", "") });
const configRef = fc.nat(15);
const words = fc.array(fc.constantFrom("hello", "world", "echo", "a2a", "fuzz", "the", "ünïcödé", "😀"), { minLength: 1, maxLength: 5 }).map((w) => w.join(" "));
const timestamp = fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString());
const struct = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
const state = fc.constantFrom("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED", 3);

const part = fc.oneof(
  { weight: 6, arbitrary: words.map((text) => ({ text })) },
  { weight: 1, arbitrary: fc.record({ raw: fc.constantFrom("aGVsbG8=", "", "AAEC"), mediaType: fc.constantFrom("application/octet-stream", "image/png"), filename: fc.constantFrom("a.bin", "x.png") }) },
  { weight: 1, arbitrary: fc.record({ url: fc.constantFrom("https://example.invalid/a.png", "http://127.0.0.1/x"), mediaType: fc.constant("image/png") }) },
  { weight: 1, arbitrary: fc.record({ data: fc.jsonValue({ maxDepth: 3 }) }) },
);

const message = fc.record(
  {
    messageId: fc.uuid(),
    role: fc.constantFrom("ROLE_USER", "ROLE_AGENT", 1),
    parts: fc.array(part, { minLength: 1, maxLength: 3 }),
    contextId,
    taskId,
    metadata: struct,
    extensions: fc.array(fc.constantFrom("https://example.invalid/ext/v1", "urn:x"), { maxLength: 2 }),
    referenceTaskIds: fc.array(taskId, { maxLength: 2 }),
  },
  { requiredKeys: ["messageId", "role", "parts"] },
);

const sendParams = fc.record(
  {
    message,
    configuration: fc.record(
      {
        acceptedOutputModes: fc.array(fc.constantFrom("text/plain", "application/json"), { maxLength: 2 }),
        historyLength: fc.integer({ min: 0, max: 50 }),
        returnImmediately: fc.boolean(),
        taskPushNotificationConfig: fc.record({ url: fc.constantFrom("http://127.0.0.1:9/hook", "https://8.8.8.8/hook"), token: fc.string({ maxLength: 8 }) }, { requiredKeys: ["url"] }),
      },
      { requiredKeys: [] },
    ),
    metadata: struct,
  },
  { requiredKeys: ["message"] },
);

const pushConfig = fc.record(
  {
    taskId,
    url: fc.constantFrom("https://8.8.8.8/hook", "http://127.0.0.1:9/hook", "https://203.0.113.5/cb", "ftp://x", "not a url"),
    token: fc.string({ maxLength: 8 }),
    authentication: fc.record({ scheme: fc.constantFrom("Bearer", "Basic"), credentials: fc.string({ maxLength: 8 }) }, { requiredKeys: ["scheme"] }),
  },
  { requiredKeys: ["taskId", "url"] },
);

/** The params (ProtoJSON) of a valid call of each method. */
export const paramsOf = {
  SendMessage: sendParams,
  SendStreamingMessage: sendParams,
  GetTask: fc.record({ id: taskId, historyLength: fc.integer({ min: 0, max: 50 }) }, { requiredKeys: ["id"] }),
  ListTasks: fc.record(
    { contextId, status: state, pageSize: fc.integer({ min: 1, max: 100 }), pageToken: fc.constantFrom("", "bogus"), historyLength: fc.integer({ min: 0, max: 10 }), statusTimestampAfter: timestamp, includeArtifacts: fc.boolean() },
    { requiredKeys: [] },
  ),
  CancelTask: fc.record({ id: taskId, metadata: struct }, { requiredKeys: ["id"] }),
  SubscribeToTask: fc.record({ id: taskId }),
  CreateTaskPushNotificationConfig: pushConfig,
  GetTaskPushNotificationConfig: configRef.map((k) => ({ taskId: `$cfgTask:${k}`, id: `$cfg:${k}` })),
  ListTaskPushNotificationConfigs: fc.record({ taskId: fc.oneof(configRef.map((k) => `$cfgTask:${k}`), taskId), pageSize: fc.integer({ min: 0, max: 100 }), pageToken: fc.constantFrom("", "x") }, { requiredKeys: ["taskId"] }),
  GetExtendedAgentCard: fc.constant({}),
  DeleteTaskPushNotificationConfig: configRef.map((k) => ({ taskId: `$cfgTask:${k}`, id: `$cfg:${k}` })),
};

/** A valid call, freshly generated: its method and params. */
export const freshValidCall = fc.constantFrom(...methods).chain((method) => paramsOf[method].map((params) => ({ method, params })));

/**
 * The valid calls requests start from: a corpus of 4,096 generated once by
 * fast-check (fixed seed), picked by index. Generating a whole valid call
 * per request cost ~70 µs, most of what a request cost the harness; the
 * mutations made per request (mutate.mjs) are where the variety is.
 */
export const corpus = fc.sample(freshValidCall, { seed: 20261202, numRuns: 4096 });
export const validCall = fc.nat(corpus.length - 1).map((i) => corpus[i]);

/** The ids the server handed out, which placeholders are filled from. */
export function createPool() {
  return { tasks: [], contexts: [], configs: [] };
}

const placeholder = /^\$(task|ctx|cfgTask|cfg):(\d+)$/;

function pick(list, k, fallback) {
  return list.length === 0 ? fallback : list[k % list.length];
}

/** `value` with its placeholders filled from `pool` (a copy where anything changed). */
export function resolvePool(value, pool) {
  if (typeof value === "string") {
    const m = placeholder.exec(value);
    if (m === null) return value;
    const k = Number(m[2]);
    switch (m[1]) {
      case "task":
        return pick(pool.tasks, k, "no-task-yet");
      case "ctx":
        return pick(pool.contexts, k, "no-context-yet");
      case "cfgTask":
        return pick(pool.configs, k, { taskId: "no-task-yet" }).taskId;
      case "cfg":
        return pick(pool.configs, k, { id: "no-config-yet" }).id;
    }
  }
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => resolvePool(v, pool));
  const out = {};
  for (const key of Object.keys(value)) Object.defineProperty(out, key, { value: resolvePool(value[key], pool), enumerable: true, writable: true, configurable: true });
  return out;
}

const keep = (list, item, max) => {
  if (item === undefined || item === "" || list.includes(item)) return;
  list.push(item);
  if (list.length > max) list.shift();
};

/** Learns ids from an answer (a Task, a SendMessageResponse, a push config, a StreamResponse, a ListTasksResponse). */
export function learn(pool, result) {
  if (result === null || typeof result !== "object") return;
  const task = result.task ?? (result.status !== undefined && typeof result.id === "string" ? result : undefined);
  if (task !== undefined) {
    keep(pool.tasks, task.id, 64);
    keep(pool.contexts, task.contextId, 64);
  }
  if (typeof result.url === "string" && typeof result.taskId === "string" && typeof result.id === "string") {
    if (!pool.configs.some((c) => c.id === result.id && c.taskId === result.taskId)) pool.configs.push({ taskId: result.taskId, id: result.id });
    if (pool.configs.length > 16) pool.configs.shift();
  }
  if (Array.isArray(result.tasks)) for (const t of result.tasks.slice(0, 8)) learn(pool, t);
}
