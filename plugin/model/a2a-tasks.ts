/**
 * The messages of A2AService the task runtime builds and reads, found by
 * following the RPCs' own fields (SendMessage's request and response,
 * SendStreamingMessage's stream, CreateTaskPushNotificationConfig's input)
 * rather than by their names, so a proto that moves or renames them still
 * generates. A proto whose service lacks one of them is reported here, at
 * generation, naming what is missing.
 */
import type { DescEnum, DescMessage, DescService } from "@bufbuild/protobuf";
import type { Diagnostics } from "./diagnostics.js";

export interface A2ATaskModel {
  readonly message: DescMessage;
  readonly task: DescMessage;
  readonly taskStatus: DescMessage;
  readonly artifact: DescMessage;
  readonly statusUpdate: DescMessage;
  readonly artifactUpdate: DescMessage;
  readonly streamResponse: DescMessage;
  readonly pushConfig: DescMessage;
  readonly taskState: DescEnum;
  readonly role: DescEnum;
}

export function createA2ATaskModel(service: DescService, diag: Diagnostics): A2ATaskModel | undefined {
  const missing: string[] = [];
  const rpc = (name: string) => {
    const method = service.methods.find((m) => m.name === name);
    if (method === undefined) missing.push(`rpc ${name}`);
    return method;
  };
  const message = (of: DescMessage | undefined, field: string): DescMessage | undefined => {
    if (of === undefined) return undefined;
    const f = of.fields.find((x) => x.name === field);
    if (f?.message === undefined) {
      missing.push(`message field ${of.typeName}.${field}`);
      return undefined;
    }
    return f.message;
  };
  const enumOf = (of: DescMessage | undefined, field: string): DescEnum | undefined => {
    if (of === undefined) return undefined;
    const f = of.fields.find((x) => x.name === field);
    if (f?.enum === undefined) {
      missing.push(`enum field ${of.typeName}.${field}`);
      return undefined;
    }
    return f.enum;
  };
  const send = rpc("SendMessage");
  const stream = rpc("SendStreamingMessage");
  const create = rpc("CreateTaskPushNotificationConfig");
  const msg = message(send?.input, "message");
  const task = message(send?.output, "task");
  const taskStatus = message(task, "status");
  const model = {
    message: msg,
    task,
    taskStatus,
    artifact: message(task, "artifacts"),
    statusUpdate: message(stream?.output, "status_update"),
    artifactUpdate: message(stream?.output, "artifact_update"),
    streamResponse: stream?.output,
    pushConfig: create?.input,
    taskState: enumOf(taskStatus, "state"),
    role: enumOf(msg, "role"),
  };
  if (missing.length > 0) {
    diag.service(service, `the task runtime (createA2AServiceTaskHandler) needs ${missing.join(", ")}, which this proto does not have`);
    return undefined;
  }
  return model as A2ATaskModel;
}
