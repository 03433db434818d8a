/**
 * The A2A messages the task runtime reads and builds, as the shapes it needs
 * of them. They hold for every `a2a.proto` of protocol 1.x (v1.0.0, v1.0.1
 * and main have the same fields), so the runtime is written once; the
 * generated `_tasks.ts` file binds them to the repo's own `a2a_pb` types and
 * hands over the schemas the runtime builds messages with, and the compiler
 * checks the generated types against these shapes.
 */
import { create, type DescEnum, type DescMessage, type JsonObject } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";

export interface PartLike {
  content: { case: string | undefined; value?: unknown };
}

export interface MessageLike {
  messageId: string;
  contextId: string;
  taskId: string;
  role: number;
  parts: PartLike[];
  metadata?: JsonObject | undefined;
}

export interface TaskStatusLike {
  state: number;
  message?: MessageLike | undefined;
  timestamp?: Timestamp | undefined;
}

export interface ArtifactLike {
  artifactId: string;
  parts: PartLike[];
}

export interface TaskLike {
  id: string;
  contextId: string;
  status?: TaskStatusLike | undefined;
  artifacts: ArtifactLike[];
  history: MessageLike[];
  metadata?: JsonObject | undefined;
}

export interface AuthenticationLike {
  scheme: string;
  credentials: string;
}

export interface PushConfigLike {
  tenant: string;
  id: string;
  taskId: string;
  url: string;
  token: string;
  authentication?: AuthenticationLike | undefined;
  /**
   * The A2A version of the call that registered the config, when not 1.0:
   * "0.3" configs are sent 0.3's payload, the task itself (D112). Not a
   * field of the proto; the stores keep it beside the config.
   */
  protocolVersion?: string | undefined;
}

/** The messages the runtime builds, and the TaskState enum, from the generated `a2a_pb`. */
export interface TaskSchemas {
  readonly task: DescMessage;
  readonly taskStatus: DescMessage;
  readonly message: DescMessage;
  readonly artifact: DescMessage;
  readonly statusUpdate: DescMessage;
  readonly artifactUpdate: DescMessage;
  readonly streamResponse: DescMessage;
  readonly taskState: DescEnum;
  readonly role: DescEnum;
}

/** The message types one generated `a2a_pb` has, as the runtime's type parameters. */
export interface TaskTypes {
  readonly message: MessageLike;
  readonly task: TaskLike;
  readonly streamResponse: object;
  readonly pushConfig: PushConfigLike;
}

/** The TaskState numbers the runtime acts on, read from the enum by their proto names. */
export interface TaskStates {
  readonly submitted: number;
  readonly working: number;
  readonly completed: number;
  readonly failed: number;
  readonly canceled: number;
  readonly rejected: number;
  readonly inputRequired: number;
  readonly authRequired: number;
  readonly unspecified: number;
  /** COMPLETED, FAILED, CANCELED, REJECTED: nothing follows them. */
  isTerminal(state: number): boolean;
  /** INPUT_REQUIRED, AUTH_REQUIRED: the task waits for the client (spec 3.2.2). */
  isInterrupted(state: number): boolean;
  /** The state's proto name, for messages. */
  nameOf(state: number): string;
}

export function taskStatesOf(desc: DescEnum): TaskStates {
  const number = (name: string): number => {
    const value = desc.values.find((v) => v.name === `TASK_STATE_${name}`);
    if (value === undefined) throw new Error(`${desc.typeName} has no TASK_STATE_${name}: the task runtime needs it`);
    return value.number;
  };
  const terminal = new Set(["COMPLETED", "FAILED", "CANCELED", "REJECTED"].map(number));
  const interrupted = new Set(["INPUT_REQUIRED", "AUTH_REQUIRED"].map(number));
  return {
    submitted: number("SUBMITTED"),
    working: number("WORKING"),
    completed: number("COMPLETED"),
    failed: number("FAILED"),
    canceled: number("CANCELED"),
    rejected: number("REJECTED"),
    inputRequired: number("INPUT_REQUIRED"),
    authRequired: number("AUTH_REQUIRED"),
    unspecified: number("UNSPECIFIED"),
    isTerminal: (state) => terminal.has(state),
    isInterrupted: (state) => interrupted.has(state),
    nameOf: (state) => desc.values.find((v) => v.number === state)?.name ?? String(state),
  };
}

/** Builds a message of `desc` as the shape `T` the caller knows it by (the schemas come from the same `a2a_pb`). */
export function make<T>(desc: DescMessage, init: object): T {
  return create(desc, init as never) as unknown as T;
}
