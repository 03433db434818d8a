// A directly implemented A2ARequestHandler of @a2a-js/sdk 1.x ("binding
// only": no DefaultRequestHandler, task store or event bus). sendMessage
// returns the echo task; getAgentCard returns a static card, because the
// SDK's express jsonRpcHandler reads it on every request to check the
// A2A-Version header; every other method throws.
import { TaskState } from "@a2a-js/sdk";
import { UnsupportedOperationError } from "@a2a-js/sdk/errors";

const agentCard = {
  name: "bench",
  description: "JSON-RPC benchmark agent",
  supportedInterfaces: [{ url: "http://127.0.0.1/", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
  provider: undefined,
  version: "1.0.0",
  capabilities: { streaming: false, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [],
  signatures: [],
};

const unsupported = (name) => async () => {
  throw new UnsupportedOperationError(`${name} is not supported by the benchmark agent`);
};

export class EchoRequestHandler {
  async getAgentCard() {
    return agentCard;
  }
  async sendMessage(params) {
    const message = params.message;
    const part = message?.parts[0];
    const text = part?.content?.$case === "text" ? part.content.value : "";
    return {
      id: `task-${message?.messageId}`,
      contextId: message?.contextId ?? "",
      status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
      artifacts: [
        {
          artifactId: "echo",
          name: "",
          description: "",
          parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
          metadata: undefined,
          extensions: [],
        },
      ],
      history: [],
      metadata: undefined,
    };
  }
}
for (const name of [
  "getAuthenticatedExtendedAgentCard",
  "getTask",
  "cancelTask",
  "createTaskPushNotificationConfig",
  "getTaskPushNotificationConfig",
  "listTaskPushNotificationConfigs",
  "deleteTaskPushNotificationConfig",
  "listTasks",
]) {
  EchoRequestHandler.prototype[name] = unsupported(name);
}
EchoRequestHandler.prototype.sendMessageStream = async function* () {
  throw new UnsupportedOperationError("sendMessageStream is not supported by the benchmark agent");
};
EchoRequestHandler.prototype.resubscribe = async function* () {
  throw new UnsupportedOperationError("resubscribe is not supported by the benchmark agent");
};
