import { create } from "@bufbuild/protobuf";
import { TaskNotFoundError } from "protoc-gen-a2a/runtime";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { Role, TaskSchema, TaskState, type Task } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";

const tasks = new Map<string, Task>();

const handler: A2AServiceHandler = {
  async sendMessage({ message }) {
    const text = message?.parts.map((p) => (p.content.case === "text" ? p.content.value : "")).join(" ") ?? "";
    const task = create(TaskSchema, { id: crypto.randomUUID(), contextId: message?.contextId || crypto.randomUUID(), status: { state: TaskState.COMPLETED, message: { messageId: crypto.randomUUID(), role: Role.AGENT, parts: [{ content: { case: "text", value: `You said: ${text}` } }] } } });
    tasks.set(task.id, task);
    return { payload: { case: "task", value: task } };
  },
  async getTask({ id }) {
    const task = tasks.get(id);
    if (task === undefined) throw new TaskNotFoundError(`no task ${id}`, { metadata: { taskId: id } });
    return task;
  },
};

const server = await serveA2AService(handler, {
  name: "Echo", description: "Answers what it is told", version: "1.0.0",
  capabilities: {}, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"],
  skills: [{ id: "echo", name: "Echo", description: "Echoes text", tags: ["echo"] }],
}, { port: Number(process.env.PORT ?? 8080), grpcPort: Number(process.env.GRPC_PORT ?? 50051) });
console.log(`Agent card: ${server.cardUrl}`);
