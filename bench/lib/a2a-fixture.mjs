// The A2A payloads every benchmark target works with, as ProtoJSON (the wire
// form of both bindings): the message a client sends, the completed Task that
// echoes it (what SendMessage answers) and the task a server has stored (what
// GetTask answers). The servers build the same values in their own shapes
// (bench/lib/ours-handler.mjs, bench/lib/a2a-js-handler.mjs).

import { randomUUID } from "node:crypto";

export const message = {
  messageId: "msg-1",
  contextId: "ctx-1",
  role: "ROLE_USER",
  parts: [{ text: "hello from the benchmark" }],
};

/** The ProtoJSON SendMessageResponse for `message` (a ProtoJSON Message). */
export function echoTaskJson(message) {
  return {
    task: {
      id: `task-${message.messageId}`,
      contextId: message.contextId,
      status: { state: "TASK_STATE_COMPLETED" },
      artifacts: [{ artifactId: "echo", parts: [{ text: message.parts[0].text }] }],
    },
  };
}

/**
 * What @a2a-js/sdk's full stack (DefaultRequestHandler + InMemoryTaskStore,
 * the a2a-js-full targets) answers SendMessage with when its executor
 * publishes exactly the echo task: its ResultManager prepends the user's
 * message, as the client sent it, to the task's history. Everything else is
 * echoTaskJson(message).
 */
export function echoTaskWithHistoryJson(message) {
  const { task } = echoTaskJson(message);
  return { task: { ...task, history: [message] } };
}

/**
 * What a task runtime answers SendMessage with when its executor produces the
 * echo artifact (ours-tasks, bench/tasks/agent.mjs): the full stack's task
 * (echoTaskWithHistoryJson) with a minted task id, the status timestamp, and
 * the user's message in the history carrying the task's id. The task-shaped
 * ceilings of bench/tasks.mjs answer this, minted the same way, so that
 * ours-tasks/ceiling compares the same answer bytes.
 */
export function echoTaskMintedJson(message) {
  // Built as one literal: object spreads cost the ceiling about 0.9 µs more per answer.
  const id = randomUUID();
  const { messageId, contextId, role, parts } = message;
  return {
    task: {
      id,
      contextId,
      status: { state: "TASK_STATE_COMPLETED", timestamp: new Date().toISOString() },
      artifacts: [{ artifactId: "echo", parts: [{ text: parts[0].text }] }],
      history: [{ messageId, contextId, taskId: id, role, parts }],
    },
  };
}

/** Id of the one stored task. */
export const storedTaskId = "task-1";

/** The stored task as ProtoJSON, the body of GET /tasks/{id}. */
export const storedTaskJson = {
  id: storedTaskId,
  contextId: "ctx-1",
  status: { state: "TASK_STATE_COMPLETED" },
  artifacts: [{ artifactId: "echo", parts: [{ text: "hello from the benchmark" }] }],
  history: [{ messageId: "msg-1", contextId: "ctx-1", taskId: storedTaskId, role: "ROLE_USER", parts: [{ text: "hello from the benchmark" }] }],
};
