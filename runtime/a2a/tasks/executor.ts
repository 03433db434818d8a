/**
 * What an agent writes: one function, called for each message sent to it,
 * that yields what happens (spec 3.1.1, 3.5). The runtime turns the events
 * into the task, its history and artifacts, the streams and subscribers
 * following it, and the push notifications of its configs.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import type { A2ACallContext } from "../profile.js";
import type { MessageLike, TaskLike } from "./model.js";

/** What the executor learns about the message it answers. */
export interface RequestContext<M = MessageLike, T = TaskLike> {
  /** The message, with the task's `taskId` and `contextId` filled in. */
  readonly message: M;
  /** The task so far (a snapshot), or undefined when the message starts one. */
  readonly task: T | undefined;
  /** The task's id: given by the client to continue one, else minted for the new task. */
  readonly taskId: string;
  readonly contextId: string;
  /** The request's tenant; "" when none. */
  readonly tenant: string;
  /** The caller, as the server's authenticate hook established it. */
  readonly principal: unknown;
  /** Extension URIs the client asked for. */
  readonly requestedExtensions: readonly string[];
  /** The SendMessage request's metadata. */
  readonly metadata: JsonObject | undefined;
  /** Aborted when the task is canceled or the agent shuts down; events after it are dropped. */
  readonly signal: AbortSignal;
  /** The call that brought the message (binding, headers, ...). Its own signal follows the caller, not the task. */
  readonly call: A2ACallContext;
}

/**
 * One thing that happened. `MessageInit` and `ArtifactInit` are the init
 * shapes of the generated Message and Artifact (the generated `_tasks.ts`
 * file names them).
 */
export type TaskEvent<MessageInit = object, ArtifactInit = object, State = number> =
  /** The task moves to `state`, with an optional agent message (text, or a Message). */
  | { readonly state: State; readonly message?: string | MessageInit; readonly metadata?: JsonObject }
  /**
   * An artifact, or a chunk of one: `append` adds its parts to the artifact
   * of the same id sent before, `lastChunk` marks the last one. An empty
   * `artifactId` is minted, or with `append`, that of the last artifact.
   */
  | { readonly artifact: ArtifactInit; readonly append?: boolean; readonly lastChunk?: boolean; readonly metadata?: JsonObject }
  /** A direct answer without a task: only as the only event for a message that starts no task. */
  | { readonly reply: MessageInit };

/**
 * The agent. Returning ends the task COMPLETED unless an event already put
 * it in a terminal or interrupted state; throwing ends it FAILED (the error
 * goes to the `onError` hook, never to the client).
 */
export type TaskExecutor<M = MessageLike, T = TaskLike, E = TaskEvent> = (context: RequestContext<M, T>) => AsyncIterable<E> | Iterable<E>;
