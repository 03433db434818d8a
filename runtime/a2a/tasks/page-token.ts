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
  // What no store gives out: a time that is not a whole number of ms a Timestamp can hold, an id with
  // NUL (a SQL store would be asked for it, and answer with an error of its own).
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !Number.isSafeInteger(parsed[0]) ||
    Math.abs(parsed[0] as number) > maxTimestampMs ||
    typeof parsed[1] !== "string" ||
    parsed[1].includes("\0")
  ) {
    throw new BadPageTokenError(`pageToken "${token}" is not one this agent gave out`);
  }
  return { timeMs: parsed[0] as number, id: parsed[1] };
}

/** The largest Timestamp (9999-12-31T23:59:59.999Z) in ms: a status time is within it. */
const maxTimestampMs = 253_402_300_799_999;

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
  if (after === "" || after.includes("\0") || Buffer.from(after).toString("base64url") !== token) throw new BadPageTokenError(`pageToken "${token}" is not one this agent gave out`);
  return after;
}
