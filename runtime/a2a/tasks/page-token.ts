/**
 * ListTasks page tokens: a cursor, the (status timestamp, task id) of the
 * last task of the page, not an offset, so a task added while a client pages
 * shifts nothing and no task is answered twice or skipped for it. A task
 * updated while a client pages moves ahead of the cursor instead (D78).
 * Opaque to clients (base64url); one that does not decode is the client's error.
 */
import { BadPageTokenError } from "./task-store.js";

export interface TaskCursor {
  readonly timeMs: number;
  readonly id: string;
}

export function encodeTaskCursor(cursor: TaskCursor): string {
  return Buffer.from(JSON.stringify([cursor.timeMs, cursor.id])).toString("base64url");
}

export function decodeTaskCursor(token: string): TaskCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || !Number.isFinite(parsed[0]) || typeof parsed[1] !== "string") {
    throw new BadPageTokenError(`pageToken "${token}" is not one this agent gave out`);
  }
  return { timeMs: parsed[0] as number, id: parsed[1] };
}

/** Newest first, then by id descending: the order ListTasks answers in (spec 3.1.4). */
export function compareNewestFirst(a: TaskCursor, b: TaskCursor): number {
  if (a.timeMs !== b.timeMs) return b.timeMs - a.timeMs;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * Push config page tokens: the id of the last config of the page
 * (base64url), configs being listed in id order.
 */
export function encodeConfigCursor(lastId: string): string {
  return Buffer.from(lastId).toString("base64url");
}

/** The id after which the page starts. Throws BadPageTokenError for a token no store gave out. */
export function decodeConfigCursor(token: string): string {
  const after = Buffer.from(token, "base64url").toString("utf8");
  if (after === "" || Buffer.from(after).toString("base64url") !== token) throw new BadPageTokenError(`pageToken "${token}" is not one this agent gave out`);
  return after;
}
