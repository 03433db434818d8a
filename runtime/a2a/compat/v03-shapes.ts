/**
 * A2A 0.3's JSON shapes to and from 1.0's ProtoJSON (D110), written once for
 * both 0.3 JSON bindings. They share one model and differ in spelling, so
 * each function takes the dialect:
 *
 * - `jsonrpc`: 0.3's JSON-RPC types (specification/json/a2a.json at v0.3.0):
 *   `kind` discriminators, lower-case roles and states (`input-required`),
 *   `parts` of `{kind:"file", file:{bytes|uri, name, mimeType}}`, results bare;
 * - `proto`: the v0.3.0 `a2a.proto`'s ProtoJSON, what 0.3's HTTP+JSON binding
 *   (and the a2a-js 0.3 REST client) sends: `ROLE_USER`, `TASK_STATE_CANCELLED`,
 *   a message's parts in `content`, `{file:{fileWithUri|fileWithBytes,
 *   mimeType}}`, `{data:{data}}`, results wrapped as `{task}` / `{message}`.
 *
 * What has no counterpart is listed in D110 and in the README; each place
 * that drops or invents a value says so.
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { RequestShapeError } from "../../core/http/request-encoding.js";

export type Dialect = "jsonrpc" | "proto";

/** A JSON object read from a 0.3 or 1.0 body; anything else reads as empty. */
export type Obj = Readonly<Record<string, JsonValue | undefined>>;

export function obj(value: unknown): Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Obj) : {};
}

function list(value: unknown): readonly JsonValue[] {
  return Array.isArray(value) ? (value as JsonValue[]) : [];
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** Copies the named fields that are set, unchanged. */
function pick(from: Obj, names: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const name of names) {
    const v = from[name];
    if (v !== undefined && v !== null) out[name] = v;
  }
  return out;
}

// ------------------------------------------------------------------ enums

const states: readonly (readonly [string, string, string])[] = [
  // 1.0 name, 0.3 JSON-RPC, 0.3 proto
  ["TASK_STATE_SUBMITTED", "submitted", "TASK_STATE_SUBMITTED"],
  ["TASK_STATE_WORKING", "working", "TASK_STATE_WORKING"],
  ["TASK_STATE_COMPLETED", "completed", "TASK_STATE_COMPLETED"],
  ["TASK_STATE_FAILED", "failed", "TASK_STATE_FAILED"],
  ["TASK_STATE_CANCELED", "canceled", "TASK_STATE_CANCELLED"],
  ["TASK_STATE_INPUT_REQUIRED", "input-required", "TASK_STATE_INPUT_REQUIRED"],
  ["TASK_STATE_REJECTED", "rejected", "TASK_STATE_REJECTED"],
  ["TASK_STATE_AUTH_REQUIRED", "auth-required", "TASK_STATE_AUTH_REQUIRED"],
  ["TASK_STATE_UNSPECIFIED", "unknown", "TASK_STATE_UNSPECIFIED"],
];

export function stateTo03(state: unknown, dialect: Dialect): string {
  const row = states.find((s) => s[0] === state) ?? states[states.length - 1]!;
  return dialect === "jsonrpc" ? row[1] : row[2];
}

export function stateFrom03(state: unknown): string {
  return (states.find((s) => s[1] === state || s[2] === state) ?? states[states.length - 1]!)[0];
}

const roles: readonly (readonly [string, string])[] = [
  ["ROLE_USER", "user"],
  ["ROLE_AGENT", "agent"],
];

function roleTo03(role: unknown, dialect: Dialect): string {
  if (dialect === "proto") return typeof role === "string" ? role : "ROLE_UNSPECIFIED";
  return roles.find((r) => r[0] === role)?.[1] ?? "user";
}

function roleFrom03(role: unknown): string {
  return roles.find((r) => r[0] === role || r[1] === role)?.[0] ?? "ROLE_UNSPECIFIED";
}

// ------------------------------------------------------------------ parts

/**
 * 1.0's Part to 0.3's. 1.0's `data` may be any JSON value, 0.3's is an
 * object: anything else is wrapped as `{"value": ...}`. 0.3's proto Part has
 * no metadata and its file no name: both are dropped in that dialect.
 */
export function partTo03(part: Obj, dialect: Dialect): JsonObject {
  const meta = dialect === "jsonrpc" ? pick(part, ["metadata"]) : {};
  const mimeType = str(part.mediaType);
  if (part.raw !== undefined || part.url !== undefined) {
    if (dialect === "proto") {
      const file: JsonObject = part.raw !== undefined ? { fileWithBytes: part.raw } : { fileWithUri: part.url ?? "" };
      if (mimeType !== undefined) file.mimeType = mimeType;
      return { file };
    }
    const file: JsonObject = part.raw !== undefined ? { bytes: part.raw } : { uri: part.url ?? "" };
    if (mimeType !== undefined) file.mimeType = mimeType;
    if (str(part.filename) !== undefined) file.name = part.filename as string;
    return { kind: "file", file, ...meta };
  }
  if (part.data !== undefined) {
    const data = typeof part.data === "object" && part.data !== null && !Array.isArray(part.data) ? part.data : { value: part.data };
    return dialect === "proto" ? { data: { data } } : { kind: "data", data, ...meta };
  }
  const text = str(part.text) ?? "";
  return dialect === "proto" ? { text } : { kind: "text", text, ...meta };
}

/** 0.3's Part (either dialect: `kind` or the proto's oneof keys) to 1.0's. */
export function partFrom03(part: Obj): JsonObject {
  const out: JsonObject = pick(part, ["metadata"]);
  if (part.file !== undefined) {
    const file = obj(part.file);
    const bytes = file.bytes ?? file.fileWithBytes;
    if (bytes !== undefined) out.raw = bytes;
    else out.url = file.uri ?? file.fileWithUri ?? "";
    if (str(file.mimeType) !== undefined) out.mediaType = file.mimeType as string;
    if (str(file.name) !== undefined) out.filename = file.name as string;
    return out;
  }
  if (part.data !== undefined) {
    // The proto dialect nests the Struct once more ({data:{data:{...}}}); the JSON-RPC one does not.
    out.data = part.kind === undefined && part.text === undefined && obj(part.data).data !== undefined && Object.keys(obj(part.data)).length === 1 ? (obj(part.data).data as JsonValue) : part.data;
    return out;
  }
  // A part of none of 0.3's kinds (1.0's `url`/`raw` keys, a `kind` 0.3 has not) is refused: taken as
  // empty text, the agent would answer a message whose file or content it never saw.
  const text = str(part.text);
  if (text === undefined) throw new RequestShapeError(`a part has none of 0.3's text, file or data${typeof part.kind === "string" ? ` (kind "${part.kind.slice(0, 64)}")` : ""}`);
  out.text = text;
  return out;
}

// ------------------------------------------------------------------ messages, tasks, events

export function messageTo03(message: Obj, dialect: Dialect): JsonObject {
  const parts = list(message.parts).map((p) => partTo03(obj(p), dialect));
  const out: JsonObject = {
    ...(dialect === "jsonrpc" ? { kind: "message" } : {}),
    messageId: str(message.messageId) ?? "",
    role: roleTo03(message.role, dialect),
    [dialect === "jsonrpc" ? "parts" : "content"]: parts,
    ...pick(message, ["contextId", "taskId", "metadata", "extensions"]),
  };
  // 0.3's proto Message has no referenceTaskIds.
  if (dialect === "jsonrpc") Object.assign(out, pick(message, ["referenceTaskIds"]));
  return out;
}

export function messageFrom03(message: Obj): JsonObject {
  return {
    ...pick(message, ["messageId", "contextId", "taskId", "metadata", "extensions", "referenceTaskIds"]),
    role: roleFrom03(message.role),
    parts: list(message.parts ?? message.content).map((p) => partFrom03(obj(p))),
  };
}

export function statusTo03(status: Obj, dialect: Dialect): JsonObject {
  const out: JsonObject = { state: stateTo03(status.state, dialect), ...pick(status, ["timestamp"]) };
  if (status.message !== undefined) out.message = messageTo03(obj(status.message), dialect);
  return out;
}

function statusFrom03(status: Obj): JsonObject {
  const out: JsonObject = { state: stateFrom03(status.state), ...pick(status, ["timestamp"]) };
  if (status.message !== undefined) out.message = messageFrom03(obj(status.message));
  return out;
}

export function artifactTo03(artifact: Obj, dialect: Dialect): JsonObject {
  return {
    ...pick(artifact, ["artifactId", "name", "description", "metadata", "extensions"]),
    artifactId: str(artifact.artifactId) ?? "",
    parts: list(artifact.parts).map((p) => partTo03(obj(p), dialect)),
  };
}

export function artifactFrom03(artifact: Obj): JsonObject {
  return { ...pick(artifact, ["artifactId", "name", "description", "metadata", "extensions"]), parts: list(artifact.parts).map((p) => partFrom03(obj(p))) };
}

export function taskTo03(task: Obj, dialect: Dialect): JsonObject {
  const out: JsonObject = {
    ...(dialect === "jsonrpc" ? { kind: "task" } : {}),
    id: str(task.id) ?? "",
    // 0.3's JSON-RPC Task requires contextId.
    contextId: str(task.contextId) ?? "",
    status: statusTo03(obj(task.status), dialect),
    ...pick(task, ["metadata"]),
  };
  if (task.artifacts !== undefined) out.artifacts = list(task.artifacts).map((a) => artifactTo03(obj(a), dialect));
  if (task.history !== undefined) out.history = list(task.history).map((m) => messageTo03(obj(m), dialect));
  return out;
}

export function taskFrom03(task: Obj): JsonObject {
  const out: JsonObject = { ...pick(task, ["id", "contextId", "metadata"]), status: statusFrom03(obj(task.status)) };
  if (task.artifacts !== undefined) out.artifacts = list(task.artifacts).map((a) => artifactFrom03(obj(a)));
  if (task.history !== undefined) out.history = list(task.history).map((m) => messageFrom03(obj(m)));
  return out;
}

/** States after which a 1.0 stream closes (D24): 0.3's `final: true`. */
const closing = new Set(["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"]);

export function statusUpdateTo03(event: Obj, dialect: Dialect): JsonObject {
  const status = obj(event.status);
  return {
    ...(dialect === "jsonrpc" ? { kind: "status-update" } : {}),
    taskId: str(event.taskId) ?? "",
    contextId: str(event.contextId) ?? "",
    status: statusTo03(status, dialect),
    // 1.0 dropped `final`: the stream's end says it. 0.3 clients still read it.
    final: closing.has(String(status.state)),
    ...pick(event, ["metadata"]),
  };
}

export function statusUpdateFrom03(event: Obj): JsonObject {
  return { ...pick(event, ["taskId", "contextId", "metadata"]), status: statusFrom03(obj(event.status)) };
}

export function artifactUpdateTo03(event: Obj, dialect: Dialect): JsonObject {
  return {
    ...(dialect === "jsonrpc" ? { kind: "artifact-update" } : {}),
    taskId: str(event.taskId) ?? "",
    contextId: str(event.contextId) ?? "",
    artifact: artifactTo03(obj(event.artifact), dialect),
    ...pick(event, ["append", "lastChunk", "metadata"]),
  };
}

export function artifactUpdateFrom03(event: Obj): JsonObject {
  return { ...pick(event, ["taskId", "contextId", "append", "lastChunk", "metadata"]), artifact: artifactFrom03(obj(event.artifact)) };
}

/**
 * 1.0's StreamResponse (or SendMessageResponse) to 0.3's: the bare object
 * with its `kind` in the JSON-RPC dialect, the proto's wrapper otherwise.
 */
export function streamResponseTo03(response: Obj, dialect: Dialect): JsonObject {
  const wrap = (key: string, value: JsonObject): JsonObject => (dialect === "jsonrpc" ? value : { [key]: value });
  if (response.task !== undefined) return wrap("task", taskTo03(obj(response.task), dialect));
  if (response.message !== undefined) return wrap("message", messageTo03(obj(response.message), dialect));
  if (response.statusUpdate !== undefined) return wrap("statusUpdate", statusUpdateTo03(obj(response.statusUpdate), dialect));
  if (response.artifactUpdate !== undefined) return wrap("artifactUpdate", artifactUpdateTo03(obj(response.artifactUpdate), dialect));
  return {};
}

/** 0.3's stream event or send result (either dialect) to 1.0's StreamResponse. */
export function streamResponseFrom03(event: Obj): JsonObject {
  switch (event.kind) {
    case "task":
      return { task: taskFrom03(event) };
    case "message":
      return { message: messageFrom03(event) };
    case "status-update":
      return { statusUpdate: statusUpdateFrom03(event) };
    case "artifact-update":
      return { artifactUpdate: artifactUpdateFrom03(event) };
  }
  if (event.task !== undefined) return { task: taskFrom03(obj(event.task)) };
  if (event.message !== undefined) return { message: messageFrom03(obj(event.message)) };
  if (event.statusUpdate !== undefined) return { statusUpdate: statusUpdateFrom03(obj(event.statusUpdate)) };
  if (event.artifactUpdate !== undefined) return { artifactUpdate: artifactUpdateFrom03(obj(event.artifactUpdate)) };
  return {};
}

// ------------------------------------------------------------------ push configs

/** 0.3's PushNotificationConfig body: `authentication.schemes` (a list) became one `scheme`; the first is kept. */
export function pushConfigFrom03(config: Obj, taskId: string): JsonObject {
  const out: JsonObject = { taskId, ...pick(config, ["id", "url", "token"]) };
  const auth = obj(config.authentication);
  const scheme = str(list(auth.schemes)[0]);
  if (scheme !== undefined) out.authentication = { scheme, ...pick(auth, ["credentials"]) };
  return out;
}

/** 1.0's TaskPushNotificationConfig to 0.3's: `{taskId, pushNotificationConfig}` (JSON-RPC) or `{name, pushNotificationConfig}` (proto). */
export function taskPushConfigTo03(config: Obj, dialect: Dialect): JsonObject {
  const inner: JsonObject = { ...pick(config, ["id", "token"]), url: str(config.url) ?? "" };
  if (config.authentication !== undefined) {
    const auth = obj(config.authentication);
    inner.authentication = { schemes: str(auth.scheme) === undefined ? [] : [auth.scheme as string], ...pick(auth, ["credentials"]) };
  }
  const taskId = str(config.taskId) ?? "";
  return dialect === "jsonrpc"
    ? { taskId, pushNotificationConfig: inner }
    : { name: `tasks/${taskId}/pushNotificationConfigs/${str(config.id) ?? ""}`, pushNotificationConfig: inner };
}

/**
 * 0.3's MessageSendParams (or the proto's SendMessageRequest) to 1.0's
 * SendMessageRequest. `blocking` is inverted into `returnImmediately`; an
 * absent `blocking` is not blocking, as 0.3's schema reads (checklist part 16).
 */
export function sendParamsFrom03(params: Obj): JsonObject {
  const out: JsonObject = { message: messageFrom03(obj(params.message)), ...pick(params, ["metadata"]) };
  if (params.configuration !== undefined) {
    const c = obj(params.configuration);
    const configuration: JsonObject = { ...pick(c, ["acceptedOutputModes", "historyLength"]), returnImmediately: c.blocking !== true };
    const push = c.pushNotificationConfig ?? c.pushNotification;
    if (push !== undefined) configuration.taskPushNotificationConfig = pushConfigFrom03(obj(push), "");
    out.configuration = configuration;
  } else {
    out.configuration = { returnImmediately: true };
  }
  return out;
}
