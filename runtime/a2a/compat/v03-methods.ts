/**
 * A2A 0.3's methods and the 1.0 method each is served by (D110): how a 0.3
 * call's params become the 1.0 request, and how the 1.0 result goes back.
 * Both 0.3 JSON bindings use this one table: JSON-RPC by method name, and
 * HTTP+JSON after its path has been read into the same params.
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { cardTo03 } from "./v03-card.js";
import { obj, pushConfigFrom03, sendParamsFrom03, streamResponseTo03, taskPushConfigTo03, taskTo03, type Dialect, type Obj } from "./v03-shapes.js";

export interface V03Method {
  /** The 1.0 method that serves it. */
  readonly v1: string;
  readonly streaming: boolean;
  /** 0.3 params to the 1.0 request's ProtoJSON. */
  request(params: Obj): JsonObject;
  /** The 1.0 result's ProtoJSON to 0.3's (for a stream, each event's). */
  result(result: Obj, dialect: Dialect): JsonValue;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

const sendResult = (r: Obj, d: Dialect): JsonValue => streamResponseTo03(r, d);

export const v03Methods: Readonly<Record<string, V03Method>> = {
  "message/send": { v1: "SendMessage", streaming: false, request: sendParamsFrom03, result: sendResult },
  "message/stream": { v1: "SendStreamingMessage", streaming: true, request: sendParamsFrom03, result: sendResult },
  "tasks/get": {
    v1: "GetTask",
    streaming: false,
    request: (p) => ({ id: str(p.id), ...(typeof p.historyLength === "number" ? { historyLength: p.historyLength } : {}) }),
    result: (r, d) => taskTo03(r, d),
  },
  "tasks/cancel": {
    v1: "CancelTask",
    streaming: false,
    request: (p) => ({ id: str(p.id), ...(p.metadata !== undefined && p.metadata !== null ? { metadata: p.metadata } : {}) }),
    result: (r, d) => taskTo03(r, d),
  },
  "tasks/resubscribe": { v1: "SubscribeToTask", streaming: true, request: (p) => ({ id: str(p.id) }), result: sendResult },
  "tasks/pushNotificationConfig/set": {
    v1: "CreateTaskPushNotificationConfig",
    streaming: false,
    request(p) {
      const taskId = str(p.taskId);
      const config = pushConfigFrom03(obj(p.pushNotificationConfig), taskId);
      // 0.3's SDKs name a config without an id after its task, and read it back by the task id alone.
      if (str(config.id) === "") config.id = taskId;
      return config;
    },
    result: (r, d) => taskPushConfigTo03(r, d),
  },
  "tasks/pushNotificationConfig/get": {
    v1: "GetTaskPushNotificationConfig",
    streaming: false,
    // 0.3 allowed the config id to be left out: the task's own (see set).
    request: (p) => ({ taskId: str(p.id), id: str(p.pushNotificationConfigId) === "" ? str(p.id) : str(p.pushNotificationConfigId) }),
    result: (r, d) => taskPushConfigTo03(r, d),
  },
  "tasks/pushNotificationConfig/list": {
    v1: "ListTaskPushNotificationConfigs",
    streaming: false,
    request: (p) => ({ taskId: str(p.id) }),
    result(r, d) {
      const configs = (Array.isArray(r.configs) ? r.configs : []).map((c) => taskPushConfigTo03(obj(c), d));
      return d === "jsonrpc" ? configs : { configs, nextPageToken: str(r.nextPageToken) };
    },
  },
  "tasks/pushNotificationConfig/delete": {
    v1: "DeleteTaskPushNotificationConfig",
    streaming: false,
    request: (p) => ({ taskId: str(p.id), id: str(p.pushNotificationConfigId) }),
    result: (_r, d) => (d === "jsonrpc" ? null : {}),
  },
  "agent/getAuthenticatedExtendedCard": { v1: "GetExtendedAgentCard", streaming: false, request: () => ({}), result: (r, d) => cardTo03(r, d) },
};

/**
 * The 0.3 method of a name a caller sent, or undefined: looked up as the
 * table's own key, so a name such as "toString" is no method.
 */
export function v03MethodOf(name: string): V03Method | undefined {
  return Object.hasOwn(v03Methods, name) ? v03Methods[name] : undefined;
}

/** 1.0's JSON-RPC names, each to its 0.3 name: the hint for a 1.0 name sent without A2A-Version. */
export const v1To03Names: ReadonlyMap<string, string> = new Map(Object.entries(v03Methods).map(([name, m]) => [m.v1, name]));

/** What a 0.3 caller is told for a 1.0 method that 0.3 does not have (D110). */
export const noV03Counterpart: Readonly<Record<string, string>> = {
  ListTasks: "ListTasks has no A2A 0.3 counterpart (0.3 has no tasks/list); it is served to A2A 1.0 callers only: send A2A-Version: 1.0 and call ListTasks",
};
