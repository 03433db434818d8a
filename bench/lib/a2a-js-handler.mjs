// A directly implemented A2ARequestHandler of @a2a-js/sdk 1.x ("binding
// only": no DefaultRequestHandler, task store or event bus). sendMessage
// returns the echo task, getTask the one stored task (both as
// bench/lib/a2a-fixture.mjs has them in ProtoJSON); getAgentCard returns a
// static card, because the SDK's express handlers read it on every request to
// check the A2A-Version header against the card's interface for their
// binding; every other method throws.
import { Role, TaskState } from "@a2a-js/sdk";
import { TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { storedTaskId } from "./a2a-fixture.mjs";

const agentCard = {
  name: "bench",
  description: "benchmark agent",
  supportedInterfaces: [
    { url: "http://127.0.0.1/", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    { url: "http://127.0.0.1/", protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" },
  ],
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

const textPart = (value) => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" });
const text = "hello from the benchmark";
const tasks = new Map([
  [
    storedTaskId,
    {
      id: storedTaskId,
      contextId: "ctx-1",
      status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined },
      artifacts: [{ artifactId: "echo", name: "", description: "", parts: [textPart(text)], metadata: undefined, extensions: [] }],
      history: [
        {
          messageId: "msg-1",
          contextId: "ctx-1",
          taskId: storedTaskId,
          role: Role.ROLE_USER,
          parts: [textPart(text)],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
      ],
      metadata: undefined,
    },
  ],
]);

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
      artifacts: [{ artifactId: "echo", name: "", description: "", parts: [textPart(text)], metadata: undefined, extensions: [] }],
      history: [],
      metadata: undefined,
    };
  }
  async getTask(params) {
    const task = tasks.get(params.id);
    if (task === undefined) throw new TaskNotFoundError(`no task ${params.id}`);
    return task;
  }
}
for (const name of [
  "getAuthenticatedExtendedAgentCard",
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
