/**
 * Copies of a task as it is now. The runtime changes a running task in
 * place (an appended chunk is one `push`, not a copy of the task), so what
 * it hands out, a snapshot in a stream or an answer the binding serializes
 * later, is a copy of the arrays that may still grow.
 */
import type { TaskLike, TaskStates } from "./model.js";

/**
 * The task with at most `historyLength` of its latest messages (spec 3.2.4:
 * unset is all the store kept, 0 is none) and its artifacts, or none.
 */
export function snapshotOf<T extends TaskLike>(states: TaskStates, task: T, historyLength: number | undefined, withArtifacts = true): T {
  // Nothing changes a terminal task any more: it is answered as it is.
  if (historyLength === undefined && withArtifacts && states.isTerminal(task.status?.state ?? 0)) return task;
  const history = historyLength === undefined ? task.history.slice() : historyLength === 0 ? [] : task.history.slice(-historyLength);
  const artifacts = withArtifacts ? task.artifacts.map((a) => ({ ...a, parts: a.parts.slice() })) : [];
  return { ...task, history, artifacts };
}
