// The campaign's valid calls as an A2A 0.3 caller sends them (FUZZ_COMPAT=1):
// 0.3's JSON-RPC method names and params (kind-tagged parts, lower-case
// roles, `blocking`, push configs under `pushNotificationConfig`), made from
// the same 1.0 corpus (values.mjs) with the server's own 1.0 -> 0.3 shapes,
// then mutated like any other call. ListTasks has no 0.3 counterpart and
// stays as it is: the 0.3 layer refuses it.
import { messageTo03, taskPushConfigTo03 } from "../dist/runtime/a2a/compat/v03-shapes.js";

const names = {
  SendMessage: "message/send",
  SendStreamingMessage: "message/stream",
  GetTask: "tasks/get",
  CancelTask: "tasks/cancel",
  SubscribeToTask: "tasks/resubscribe",
  CreateTaskPushNotificationConfig: "tasks/pushNotificationConfig/set",
  GetTaskPushNotificationConfig: "tasks/pushNotificationConfig/get",
  ListTaskPushNotificationConfigs: "tasks/pushNotificationConfig/list",
  DeleteTaskPushNotificationConfig: "tasks/pushNotificationConfig/delete",
  GetExtendedAgentCard: "agent/getAuthenticatedExtendedCard",
};

/** `call` ({ method, params } of 1.0) as 0.3's method and params. */
export function callTo03(call) {
  const name = names[call.method];
  if (name === undefined) return call;
  const p = call.params;
  switch (call.method) {
    case "SendMessage":
    case "SendStreamingMessage": {
      const c = p.configuration ?? {};
      const configuration = {
        ...(c.historyLength === undefined ? {} : { historyLength: c.historyLength }),
        ...(c.returnImmediately === undefined ? {} : { blocking: !c.returnImmediately }),
        ...(c.taskPushNotificationConfig === undefined ? {} : { pushNotificationConfig: c.taskPushNotificationConfig }),
      };
      return { method: name, params: { message: messageTo03(p.message, "jsonrpc"), configuration, ...(p.metadata === undefined ? {} : { metadata: p.metadata }) } };
    }
    case "GetTask":
      return { method: name, params: { id: p.id, ...(p.historyLength === undefined ? {} : { historyLength: p.historyLength }) } };
    case "CancelTask":
      return { method: name, params: { id: p.id, ...(p.metadata === undefined ? {} : { metadata: p.metadata }) } };
    case "SubscribeToTask":
    case "ListTaskPushNotificationConfigs":
      return { method: name, params: { id: p.taskId ?? p.id } };
    case "CreateTaskPushNotificationConfig":
      return { method: name, params: taskPushConfigTo03(p, "jsonrpc") };
    case "GetTaskPushNotificationConfig":
    case "DeleteTaskPushNotificationConfig":
      return { method: name, params: { id: p.taskId, pushNotificationConfigId: p.id } };
    default:
      return { method: name, params: {} };
  }
}
