/**
 * What the A2A profile adds to a call's span (D35): the A2A method, the task
 * the call is about when its request or its answer names one, and the
 * ErrorInfo reason of an A2A error. Read by message type, from a message or
 * its init shape alike (a handler may answer with either).
 */
import type { RpcError } from "../core/errors.js";
import type { MethodSpec } from "../core/method-spec.js";
import type { TraceAttributes, TraceProfile } from "../core/tracing.js";

type Reader = (value: Record<string, unknown>) => unknown;

const field =
  (name: string): Reader =>
  (v) =>
    v[name];
/** A oneof `payload` ({ case, value }) whose task is the Task's id or the event's (or Message's) taskId. */
const payload: Reader = (v) => {
  const p = v.payload as { case?: string; value?: Record<string, unknown> } | undefined;
  if (p?.value === undefined) return undefined;
  return p.case === "task" ? p.value.id : p.value.taskId;
};

/** Where each A2A message carries the id of the task it is about. */
const taskIdOf: Readonly<Record<string, Reader>> = {
  "lf.a2a.v1.Task": field("id"),
  "lf.a2a.v1.Message": field("taskId"),
  "lf.a2a.v1.TaskStatusUpdateEvent": field("taskId"),
  "lf.a2a.v1.TaskArtifactUpdateEvent": field("taskId"),
  "lf.a2a.v1.TaskPushNotificationConfig": field("taskId"),
  "lf.a2a.v1.SendMessageRequest": (v) => (v.message as Record<string, unknown> | undefined)?.taskId,
  "lf.a2a.v1.SendMessageResponse": payload,
  "lf.a2a.v1.StreamResponse": payload,
  "lf.a2a.v1.GetTaskRequest": field("id"),
  "lf.a2a.v1.CancelTaskRequest": field("id"),
  "lf.a2a.v1.SubscribeToTaskRequest": field("id"),
  "lf.a2a.v1.GetTaskPushNotificationConfigRequest": field("taskId"),
  "lf.a2a.v1.DeleteTaskPushNotificationConfigRequest": field("taskId"),
  "lf.a2a.v1.ListTaskPushNotificationConfigsRequest": field("taskId"),
};

export const a2aTrace: TraceProfile = {
  method: (spec: MethodSpec): TraceAttributes => ({ "a2a.method": spec.name }),

  message(spec, message, role): TraceAttributes | undefined {
    if (message === null || typeof message !== "object") return undefined;
    const desc = role === "request" ? spec.input : spec.output;
    const id = taskIdOf[desc.typeName]?.(message as Record<string, unknown>);
    return typeof id === "string" && id !== "" ? { "a2a.task.id": id } : undefined;
  },

  error(err: RpcError): TraceAttributes | undefined {
    // Only an error with ErrorInfo has a reason the client sees; the core's own codes have none.
    return err.entry.domain === "" ? undefined : { "a2a.error.reason": err.entry.reason };
  },
};
