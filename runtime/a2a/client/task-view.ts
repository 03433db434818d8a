/**
 * The task as someone following its streams sees it (D30): made from the
 * first Task a stream sends, changed by each status and artifact event the
 * way the agent changed its own copy (an `append` chunk adds its parts to the
 * artifact of its id, any other artifact event replaces or adds the
 * artifact), and replaced by each later snapshot. What a snapshot holds that
 * the view did not is handed back as the changes that make it, so a caller
 * shown those changes has seen everything exactly once.
 */
import type { ArtifactLike, TaskLike, TaskStatusLike } from "../tasks/model.js";

/** TaskStatusUpdateEvent, as the view reads it. */
export interface StatusUpdateLike {
  taskId: string;
  contextId: string;
  status?: TaskStatusLike | undefined;
}

/** TaskArtifactUpdateEvent, as the view reads it. */
export interface ArtifactUpdateLike {
  taskId: string;
  contextId: string;
  artifact?: ArtifactLike | undefined;
  append: boolean;
  lastChunk: boolean;
}

/** Something a snapshot holds that the view had not: the event that would have shown it. */
export type SnapshotChange =
  | { readonly kind: "artifact"; readonly artifact: ArtifactLike; readonly append: boolean; readonly lastChunk: boolean }
  | { readonly kind: "status"; readonly status: TaskStatusLike };

/** How two parts of an artifact compare (protobuf-es `equals` with the Part schema). */
export type PartEquals = (a: ArtifactLike["parts"][number], b: ArtifactLike["parts"][number]) => boolean;

export class TaskView<T extends TaskLike> {
  readonly #task: T;
  /** The view's artifacts by id: chunks go to the artifact of their id. */
  #artifacts = new Map<string, ArtifactLike>();
  readonly #partEquals: PartEquals;

  constructor(snapshot: T, partEquals: PartEquals) {
    this.#partEquals = partEquals;
    this.#task = { ...snapshot };
    this.#take(snapshot);
  }

  /** The task as the events so far leave it: one object for the whole follow, changed in place (copy it to keep a moment of it). */
  get task(): T {
    return this.#task;
  }

  /**
   * A status event: false, changing nothing, when it says nothing the view
   * does not know (an earlier status, or the same one again: what a snapshot
   * already held). Its message joins the history, as the agent's runtime puts it there.
   */
  applyStatus(update: StatusUpdateLike): boolean {
    const status = update.status;
    if (status === undefined || !isNewStatus(status, this.#task.status)) return false;
    this.#task.status = status;
    const message = status.message;
    if (message !== undefined && !this.#task.history.some((m) => m.messageId === message.messageId)) this.#task.history.push(message);
    return true;
  }

  /** An artifact event: `append` adds its parts to the artifact of its id (if there is none, it is the artifact), any other replaces it or adds it. */
  applyArtifact(update: ArtifactUpdateLike): void {
    const artifact = update.artifact;
    if (artifact === undefined) return;
    const own = this.#artifacts.get(artifact.artifactId);
    if (update.append && own !== undefined) {
      for (const part of artifact.parts) own.parts.push(part);
      return;
    }
    const kept = copyArtifact(artifact);
    const at = own === undefined ? -1 : this.#task.artifacts.indexOf(own);
    if (at >= 0) this.#task.artifacts[at] = kept;
    else this.#task.artifacts.push(kept);
    this.#artifacts.set(kept.artifactId, kept);
  }

  /**
   * Replaces the view with `snapshot` and returns what it holds that the view
   * did not, in the order a stream would have said it: each artifact's parts
   * beyond those already seen as one appended chunk, an artifact that is new
   * or no longer begins with the parts seen as a whole (a replacement), then
   * the status if it is newer. Chunks are marked last when `final` (a
   * terminal task: nothing can follow them); the snapshot cannot say which
   * chunk was last otherwise.
   */
  replace(snapshot: T, final: boolean): SnapshotChange[] {
    const changes: SnapshotChange[] = [];
    for (const next of snapshot.artifacts) {
      const seen = this.#artifacts.get(next.artifactId);
      if (seen !== undefined && this.#continues(seen, next)) {
        if (next.parts.length > seen.parts.length) {
          changes.push({ kind: "artifact", artifact: { ...next, parts: next.parts.slice(seen.parts.length) }, append: true, lastChunk: final });
        }
      } else {
        changes.push({ kind: "artifact", artifact: copyArtifact(next), append: false, lastChunk: final });
      }
    }
    if (snapshot.status !== undefined && isNewStatus(snapshot.status, this.#task.status)) changes.push({ kind: "status", status: snapshot.status });
    this.#take(snapshot);
    return changes;
  }

  /** Whether `next` is `seen` with nothing changed but parts added after those seen. */
  #continues(seen: ArtifactLike, next: ArtifactLike): boolean {
    if (next.parts.length < seen.parts.length) return false;
    for (let i = 0; i < seen.parts.length; i++) if (!this.#partEquals(seen.parts[i]!, next.parts[i]!)) return false;
    return true;
  }

  /**
   * Makes the view the snapshot, in the same object (a caller may hold it),
   * with arrays of its own: they grow with the events, and the snapshot the
   * caller may have been given as an event does not.
   */
  #take(snapshot: T): void {
    // A field the snapshot leaves out (an unset message field) is not the view's any more either.
    for (const key of Object.keys(this.#task)) if (!(key in snapshot)) Reflect.deleteProperty(this.#task, key);
    const artifacts = snapshot.artifacts.map(copyArtifact);
    this.#artifacts = new Map(artifacts.map((a) => [a.artifactId, a]));
    Object.assign(this.#task, snapshot, { artifacts, history: snapshot.history.slice() });
  }
}

/** A copy of an artifact whose parts array is its own (the message's other fields are shared; nothing changes them). */
function copyArtifact<A extends ArtifactLike>(artifact: A): A {
  return { ...artifact, parts: artifact.parts.slice() };
}

/** A status's timestamp in nanoseconds, or undefined. */
function timeOf(status: TaskStatusLike): bigint | undefined {
  const ts = status.timestamp;
  return ts === undefined ? undefined : ts.seconds * 1_000_000_000n + BigInt(ts.nanos);
}

/**
 * Whether `next` says something `current` does not: it is later, or (at the
 * same time, or either undated) in another state or with another message.
 * An earlier status says nothing new: the view already holds a later one.
 */
export function isNewStatus(next: TaskStatusLike, current: TaskStatusLike | undefined): boolean {
  if (current === undefined) return true;
  const a = timeOf(next);
  const b = timeOf(current);
  if (a !== undefined && b !== undefined && a !== b) return a > b;
  return next.state !== current.state || next.message?.messageId !== current.message?.messageId;
}
