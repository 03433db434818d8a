// The A2AServiceHandler "ours" serves on every binding: sendMessage answers
// with a completed Task echoing the message text, getTask returns the stored
// task (bench/lib/a2a-fixture.mjs has both as ProtoJSON). Imports the
// generated code transpiled into bench/.build/generated/ (prepareOurs in
// bench/lib/harness.mjs).
import { Role, TaskState } from "../.build/generated/a2a_pb.js";
import { storedTaskId } from "./a2a-fixture.mjs";

const text = "hello from the benchmark";
const tasks = new Map([
  [
    storedTaskId,
    {
      id: storedTaskId,
      contextId: "ctx-1",
      status: { state: TaskState.COMPLETED },
      artifacts: [{ artifactId: "echo", parts: [{ content: { case: "text", value: text } }] }],
      history: [{ messageId: "msg-1", contextId: "ctx-1", taskId: storedTaskId, role: Role.USER, parts: [{ content: { case: "text", value: text } }] }],
    },
  ],
]);

/** @type {import("../../generated/a2a_handler.js").A2AServiceHandler} */
export const handler = {
  async sendMessage(request) {
    const message = request.message;
    const part = message?.parts[0];
    const text = part?.content.case === "text" ? part.content.value : "";
    return {
      payload: {
        case: "task",
        value: {
          id: `task-${message?.messageId}`,
          contextId: message?.contextId ?? "",
          status: { state: TaskState.COMPLETED },
          artifacts: [{ artifactId: "echo", parts: [{ content: { case: "text", value: text } }] }],
        },
      },
    };
  },
  async getTask(request) {
    const task = tasks.get(request.id);
    if (task === undefined) throw new Error(`no task ${request.id}`);
    return task;
  },
};
