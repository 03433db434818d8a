// A directly implemented A2ARequestHandler of @a2a-js/sdk 1.x ("binding
// only": no DefaultRequestHandler, task store or event bus). sendMessage
// returns the echo task, getTask the one stored task (both as
// bench/lib/a2a-fixture.mjs has them in ProtoJSON); getAgentCard returns a
// static card, because the SDK's express handlers read it on every request to
// check the A2A-Version header against the card's interface for their
// binding; every other method throws. The card, the echo task and the stored
// task (in the SDK's own shapes) are exported for the full-stack target too
// (bench/lib/a2a-js-full.mjs), so both serve exactly the same values.
import { Role, TaskState } from "@a2a-js/sdk";
import { TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { storedTaskId } from "./a2a-fixture.mjs";

export const agentCard = {
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

/** The card with the GRPC interface the SDK's grpcService checks a2a-version against on every call. */
export const withGrpcInterface = (card) => ({
  ...card,
  supportedInterfaces: [...card.supportedInterfaces, { url: "127.0.0.1", protocolBinding: "GRPC", tenant: "", protocolVersion: "1.0" }],
});

/** The card with capabilities.streaming (bench/streams). */
export const withStreaming = (card) => ({ ...card, capabilities: { ...card.capabilities, streaming: true } });

export const textPart = (value) => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" });
const text = "hello from the benchmark";

/** The stored task (bench/lib/a2a-fixture.mjs's storedTaskJson). */
export const storedTask = {
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
};
const tasks = new Map([[storedTaskId, storedTask]]);

/** The completed Task echoing `message`'s text (a Message in the SDK's shape), what SendMessage answers. */
export function echoTask(message) {
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

const unsupported = (name) => async () => {
  throw new UnsupportedOperationError(`${name} is not supported by the benchmark agent`);
};

export class EchoRequestHandler {
  async getAgentCard() {
    return agentCard;
  }
  async sendMessage(params) {
    return echoTask(params.message);
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
