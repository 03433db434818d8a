/**
 * Following tasks' event logs for changes other instances wrote (D71). One
 * LISTEN per store instance: every event row's insert notifies
 * `a2a_task_events` with its task, seq and writer (a trigger, migration 2);
 * a notice of a followed task from another writer makes the store read that
 * task's events after the last it handed over, in seq order. The notice is
 * only a wake-up: what is handed over is read from the log, so a notice
 * lost (the listening connection dropped) loses nothing: once listening
 * again, every followed task is read again from where it was.
 *
 * A task's reads run one at a time; a notice during a read makes one more
 * read after it. A read that fails (a pool that timed out, a statement
 * cancelled) is tried again, with backoff, until one succeeds: no notice
 * may come again for what it missed, and a stream or executor of the task
 * here would wait for it for ever (reported once per run of failures).
 * Events this instance wrote are skipped (the runtime published them when
 * it wrote them), but counted, so no read returns them again.
 *
 * A read that finds the task gone (another instance deleted it: a waiting
 * task past interruptedTtlMs, D70) tells `onGone`. The deleting statement
 * notifies the same channel, so the follower reads at once; a notice lost
 * is made up for by the read after listening again, as for events.
 */
import { boundToBackground, inBackground } from "../../../core/background.js";
import { SlotMap } from "../../../core/slots.js";
import type { SqlDriver } from "./driver.js";

export const eventChannel = "a2a_task_events";

/** One event row, as the log holds it. */
export interface LogRow {
  readonly seq: number;
  readonly writer: string | null;
}

interface Follower<R extends LogRow> {
  lastSeq: number;
  readonly onEvent: (row: R) => void;
  /** The reads under way (one at a time; a notice meanwhile makes one more, `again`). */
  current: Promise<void> | undefined;
  again: boolean;
  closed: boolean;
  /** After a read failed: the wait before it is tried again, and its timer. */
  retryMs: number | undefined;
  retry: ReturnType<typeof setTimeout> | undefined;
}

/** The first wait before a failed read is tried again, and the longest. */
const firstRetryMs = 100;
const longestRetryMs = 5000;

export class LogFollowers<R extends LogRow> {
  /** Slots, not a Map: a task is followed while it runs (D116). */
  readonly #followers = new SlotMap<Follower<R>>();
  #listening: Promise<void> | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  #closed = false;
  /** No more listening (the store is closing); followers still read the log when asked (`through`). */
  #stopped = false;
  #retryMs = 100;
  #retry: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly driver: SqlDriver,
    /** This instance's writer id: its own events are not handed over. */
    private readonly writer: string,
    /** The task's events after `afterSeq`; undefined when the task is gone. */
    private readonly read: (taskId: string, afterSeq: number) => Promise<readonly R[] | undefined>,
    private readonly onError: (error: unknown) => void,
    /** A followed task was found gone: deleted, by this instance or another. */
    private readonly onGone: (taskId: string) => void = () => undefined,
  ) {}

  /** How many tasks are followed: for tests and metrics. */
  get size(): number {
    return this.#followers.size;
  }

  /**
   * Hands `onEvent` each event of `taskId` after `afterSeq` that another
   * writer made, in order, until the returned function is called. With
   * `catchUp`, the log is read once at once (the caller's copy may be older
   * than what was written since); a task this instance has just created
   * has nothing to catch up on.
   */
  follow(taskId: string, afterSeq: number, onEvent: (row: R) => void, catchUp: boolean): () => void {
    if (this.#closed) return () => undefined;
    const follower: Follower<R> = { lastSeq: afterSeq, onEvent, current: undefined, again: false, closed: false, retryMs: undefined, retry: undefined };
    this.#followers.set(taskId, follower);
    const listening = this.#listen();
    if (catchUp) void listening.then(() => this.#read(taskId, follower));
    return () => {
      follower.closed = true;
      if (follower.retry !== undefined) clearTimeout(follower.retry);
      if (this.#followers.get(taskId) === follower) this.#followers.delete(taskId);
    };
  }

  /**
   * Resolves once every event of `taskId` up to `seq` was handed over (a followed task), reading
   * the log for them now: true, or false when a read failed (reported) before they all were.
   */
  async through(taskId: string, seq: number): Promise<boolean> {
    const follower = this.#followers.get(taskId);
    if (follower === undefined) return true;
    while (follower.lastSeq < seq && !follower.closed && !this.#closed) {
      const before = follower.lastSeq;
      await follower.current;
      await this.#read(taskId, follower);
      if (follower.lastSeq === before) return false;
    }
    return true;
  }

  /**
   * Lets the listening connection go (UNLISTEN, back to its pool) and listens no more, while the
   * followers stay: a write still under way when the store closes may need `through` to read the
   * log (D117: the store lets the connection go alongside its last writes, not after them).
   */
  async stopListening(): Promise<void> {
    this.#stopped = true;
    if (this.#retry !== undefined) clearTimeout(this.#retry);
    await this.#listening?.catch(() => undefined);
    const unlisten = this.#unlisten;
    this.#unlisten = undefined;
    await unlisten?.().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#followers.forEach((follower) => {
      if (follower.retry !== undefined) clearTimeout(follower.retry);
    });
    this.#followers.clear();
    await this.stopListening();
  }

  /**
   * Opened in the background context (D35), not in that of the call that first followed a task: the
   * connection, its promises and its retries live as long as the store, and held that call's span
   * as long. Its notices and its loss are handled there too, whichever context the driver calls
   * them in (PGlite's is that of the query whose answer carried the notice; a pooled connection's,
   * that of the call that opened it).
   */
  #listen(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return (this.#listening ??= inBackground(() =>
      this.driver
        .listen(
          eventChannel,
          boundToBackground((payload: string) => this.#notified(payload)),
          boundToBackground((err: unknown) => this.#lost(err)),
        )
        .then((unlisten) => {
          this.#retryMs = 100;
          if (this.#stopped) return void unlisten().catch(() => undefined);
          this.#unlisten = unlisten;
        })
        .catch((err: unknown) => this.#lost(err)),
    ));
  }

  /** The listening connection is gone: listen again (with backoff), then read every followed task again. */
  #lost(err: unknown): void {
    if (this.#stopped) return;
    this.onError(err);
    this.#unlisten = undefined;
    this.#listening = undefined;
    if (this.#retry !== undefined) return;
    const wait = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, 5000);
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (this.#stopped) return;
      void this.#listen().then(() => {
        this.#followers.forEach((follower, taskId) => void this.#read(taskId, follower));
      });
    }, wait);
    this.#retry.unref();
  }

  #notified(payload: string): void {
    let notice: { t?: unknown; s?: unknown; w?: unknown };
    try {
      notice = JSON.parse(payload) as typeof notice;
    } catch {
      return;
    }
    if (typeof notice.t !== "string" || notice.w === this.writer) return;
    const follower = this.#followers.get(notice.t);
    if (follower === undefined || (typeof notice.s === "number" && notice.s <= follower.lastSeq)) return;
    void this.#read(notice.t, follower);
  }

  #read(taskId: string, follower: Follower<R>): Promise<void> {
    if (follower.current !== undefined) {
      follower.again = true;
      return follower.current;
    }
    follower.current = this.#readAll(taskId, follower);
    return follower.current;
  }

  async #readAll(taskId: string, follower: Follower<R>): Promise<void> {
    try {
      do {
        follower.again = false;
        const rows = await this.read(taskId, follower.lastSeq);
        if (rows === undefined) {
          if (!follower.closed && !this.#closed) this.onGone(taskId);
          return;
        }
        for (const row of rows) {
          if (follower.closed) return;
          if (row.seq <= follower.lastSeq) continue;
          follower.lastSeq = row.seq;
          if (row.writer !== this.writer) follower.onEvent(row);
        }
      } while (follower.again && !follower.closed);
      follower.retryMs = undefined;
    } catch (err) {
      if (!follower.closed && !this.#closed) this.#readFailed(taskId, follower, err);
    } finally {
      follower.current = undefined;
    }
  }

  /** Reports a failed read (the first of a run of them) and tries it again after a wait. */
  #readFailed(taskId: string, follower: Follower<R>, err: unknown): void {
    if (follower.retryMs === undefined) this.onError(err);
    const wait = follower.retryMs ?? firstRetryMs;
    follower.retryMs = Math.min(wait * 2, longestRetryMs);
    if (follower.retry !== undefined) return;
    follower.retry = setTimeout(() => {
      follower.retry = undefined;
      if (!follower.closed && !this.#closed && this.#followers.get(taskId) === follower) void this.#read(taskId, follower);
    }, wait);
    follower.retry.unref();
  }
}
