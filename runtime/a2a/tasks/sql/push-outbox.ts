/**
 * The SQL store's push outbox (D74). A change writes, in its own
 * statement, a row per push config of the task (a2a_push_outbox), claimed
 * by the writing store instance. Once the statement committed, that
 * instance reads its rows back with the event they point at, renders each
 * as the StreamResponse the runtime would have pushed, and hands it to push
 * delivery; the row is deleted when delivery settles (delivered, or given
 * up on). An instance that dies stops renewing its claims; another claims
 * the rows once they lapse and delivers them. So a crash anywhere between
 * the event and the receiver's answer loses nothing, and a receiver may get
 * a notification twice: at least once.
 *
 * A live instance renews its claims, so no other takes its rows over: what
 * it failed to send it sends itself. A read-back that failed, or a write or
 * a claim whose answer was lost (a connection reset, a failover), marks the
 * task behind: its next send reads all of this instance's rows of the task,
 * the older first, and a retry after a backoff does the same for a task
 * not written again. A delete that failed is tried again, and its row is
 * not sent again from here. Nothing of this runs until something failed.
 *
 * A 0.3 caller's config (D112) is sent the whole task in 0.3's form, not
 * the event: the writer sends the task it just wrote (as the runtime
 * without an outbox does); an instance taking rows over reads the task as
 * it is then, and of one config's rows in one batch sends only the newest
 * (each would carry the same task), the others leaving the outbox with it.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { inBackground } from "../../../core/background.js";
import { decodeBinary, ownBytesReadOptions } from "../../../core/codec/binary-codec.js";
import { make, type TaskLike, type TaskSchemas } from "../model.js";
import type { PushOutbox } from "../task-store.js";
import type { Query, SqlDriver } from "./driver.js";
import * as q from "./queries.js";

interface PushRow {
  task_id: string;
  seq: number;
  config_id: string;
  kind: string;
  body: Uint8Array | null;
  append: boolean;
  last_chunk: boolean;
  metadata: string | null;
  context_id: string;
  url: string | null;
  token: string | null;
  auth_scheme: string | null;
  auth_credentials: string | null;
  protocol_version: string | null;
}

export interface EventKey {
  readonly taskId: string;
  readonly seq: number;
}

/** The events of these seqs of one task, each once, in order. */
export function keysOf(taskId: string, seqs: readonly number[]): EventKey[] {
  return [...new Set(seqs)].sort((a, b) => a - b).map((seq) => ({ taskId, seq }));
}

/** When the sender reads again what failed (D74): the first wait, doubled after each failed round up to `max`. */
export interface PushRetry {
  readonly first: number;
  readonly max: number;
}

export class PushOutboxSender {
  /** Rows handed to delivery and not settled yet: a claim taken again meanwhile does not send them twice from here. */
  readonly #inFlight = new Set<string>();
  /**
   * Tasks of which this instance may claim rows it has not handed to delivery (a read-back that
   * failed, a write or a claim whose answer was lost), each with its mark: a send of one reads all
   * of this instance's rows of the task, and the mark goes once that read succeeded, unless the
   * task was marked again meanwhile.
   */
  readonly #behind = new Map<string, object>();
  /** Rows delivered whose delete failed: deleted again by the retry, and never sent again from here. */
  readonly #undeleted = new Map<string, PushRow>();
  #retryTimer: NodeJS.Timeout | undefined;
  #retrying: Promise<void> | undefined;
  #retryWait: number;
  #closed = false;
  #outbox: PushOutbox | undefined;

  constructor(
    readonly driver: SqlDriver,
    /** The store instance: whose claims these are. */
    readonly claimant: string,
    readonly schemas: () => TaskSchemas,
    readonly onError: (error: unknown) => void,
    /** The task as it is now (0.3's notifications carry it), or undefined once it is gone. */
    readonly taskOf: (taskId: string) => Promise<TaskLike | undefined>,
    /** Runs `fn` in the task's order of writes (the store's): a retry's rows go between two writes' rows, not among them. */
    readonly serial: (taskId: string, fn: () => Promise<void>) => Promise<void>,
    readonly retry: PushRetry,
  ) {
    this.#retryWait = retry.first;
  }

  /** Whether the runtime gave the store its delivery: without it, no outbox row is written. */
  get attached(): boolean {
    return this.#outbox !== undefined;
  }

  attach(outbox: PushOutbox): void {
    this.#outbox = outbox;
  }

  /**
   * This instance may claim rows of the task it did not hand to delivery (a statement that wrote or
   * claimed them failed, and may have committed): they are read again, by the task's next send or
   * by the retry.
   */
  behind(taskId: string): void {
    if (this.#outbox === undefined || this.#closed) return;
    this.#behind.set(taskId, {});
    this.#schedule();
  }

  /**
   * Sends this instance's outbox rows of these events, in order. `written`
   * is the task as the writer of these events has it (their task's, when
   * given): what its 0.3 configs are sent, read from the store otherwise.
   * Of a task marked behind, all of this instance's rows are sent. Never
   * rejects: a read that fails is reported and marks the events' tasks behind.
   */
  async send(keys: readonly EventKey[], written?: TaskLike): Promise<void> {
    try {
      await this.#send(keys, written);
    } catch (err) {
      // A hand-over that threw (a delivery of one's own): reported, as before, and the write still stands.
      this.onError(err);
    }
  }

  /** As send; answers whether the rows were read. */
  async #send(keys: readonly EventKey[], written?: TaskLike): Promise<boolean> {
    const outbox = this.#outbox;
    if (outbox === undefined || keys.length === 0) return true;
    // Taken before any await: the marks this read answers for.
    const whole = new Map<string, object>();
    for (const { taskId } of keys) {
      const mark = this.#behind.get(taskId);
      if (mark !== undefined) whole.set(taskId, mark);
    }
    const rest = whole.size === 0 ? keys : keys.filter((k) => !whole.has(k.taskId));
    let rows: PushRow[];
    try {
      // With nothing behind (the normal case) this is the one read it always was.
      rows = rest.length === 0 ? [] : await this.driver.query<PushRow>(q.claimedPushes, [this.claimant, rest.map((k) => k.taskId), rest.map((k) => k.seq)]);
      if (whole.size > 0) rows = [...(await this.driver.query<PushRow>(q.ownPushes, [this.claimant, [...whole.keys()]])), ...rows];
    } catch (err) {
      // Claimed by this instance, which renews the claims: no other instance takes them over, so it reads them again itself.
      this.onError(err);
      for (const { taskId } of keys) this.behind(taskId);
      return false;
    }
    await this.#hand(outbox, rows, written);
    // Handed over (in flight, or forgotten): the task's next send needs no more than its own rows.
    for (const [taskId, mark] of whole) if (this.#behind.get(taskId) === mark) this.#behind.delete(taskId);
    return true;
  }

  async #hand(outbox: PushOutbox, rows: readonly PushRow[], written: TaskLike | undefined): Promise<void> {
    // Rows come ordered by task and seq: a 0.3 config's last row in this batch is the one sent.
    const lastV03 = new Map<string, PushRow>();
    for (const row of rows) if (row.protocol_version === "0.3") lastV03.set(`${row.task_id}\u0000${row.config_id}`, row);
    // Read before any row is sent, so the rows are handed to delivery in their order, in one go.
    // A task that cannot be read fails its 0.3 rows as a render failure would, and no other row.
    const tasks = new Map<string, TaskLike | Error | undefined>();
    for (const taskId of new Set([...lastV03.values()].map((r) => r.task_id))) {
      if (written?.id === taskId) {
        tasks.set(taskId, written);
        continue;
      }
      try {
        tasks.set(taskId, await this.taskOf(taskId));
      } catch (err) {
        tasks.set(taskId, err instanceof Error ? err : new Error(String(err)));
      }
    }
    for (const row of rows) {
      const key = `${row.task_id}\u0000${row.seq}\u0000${row.config_id}`;
      // Delivered already, its delete failed: the retry deletes it, it is not sent again.
      if (this.#inFlight.has(key) || this.#undeleted.has(key)) continue;
      const forget = () => this.#forget(key, row);
      if (row.url === null || row.body === null) {
        // The config was deleted since: nothing to send it to.
        void forget();
        continue;
      }
      const v03 = row.protocol_version === "0.3";
      if (v03 && lastV03.get(`${row.task_id}\u0000${row.config_id}`) !== row) {
        // A newer row of this config is sent in this batch, with the same task.
        void forget();
        continue;
      }
      let body: string;
      try {
        if (v03) {
          const task = tasks.get(row.task_id);
          if (task instanceof Error) throw task;
          if (task === undefined) {
            // The task is gone (expired): there is nothing to send.
            void forget();
            continue;
          }
          body = outbox.renderV03(task);
        } else {
          body = this.#render(outbox, row);
        }
      } catch (err) {
        this.onError(err);
        void forget();
        continue;
      }
      this.#inFlight.add(key);
      const auth = row.auth_scheme === null ? undefined : { scheme: row.auth_scheme, credentials: row.auth_credentials ?? "" };
      const target = { configId: row.config_id, url: row.url, token: row.token ?? "", authentication: auth, ...(v03 ? { contentType: "application/json" } : {}) };
      outbox.send(row.task_id, target, body, forget);
    }
  }

  /** Claims, task by task, the rows whose claim lapsed (their instance died) and sends them; answers how many. */
  async claimLapsed(now: number, until: number): Promise<number> {
    if (this.#outbox === undefined) return 0;
    let claimed = 0;
    for (const { task_id: taskId } of await this.driver.query<{ task_id: string }>(q.lapsedPushTasks, [now])) {
      let seqs: number[];
      try {
        seqs = await this.claimTask(this.driver.query, taskId, now, until);
      } catch (err) {
        // The claim may have committed, its answer lost: the rows would be this instance's, renewed and unsent.
        this.behind(taskId);
        throw err;
      }
      claimed += seqs.length;
      await this.send(keysOf(taskId, seqs));
    }
    return claimed;
  }

  /** Claims the task's lapsed rows with `query` (the caller's transaction, when it has one); their seqs. */
  async claimTask(query: Query, taskId: string, now: number, until: number): Promise<number[]> {
    if (this.#outbox === undefined) return [];
    return (await query<{ seq: number }>(q.claimTaskPushes, [taskId, now, this.claimant, until])).map((r) => r.seq);
  }

  async #forget(key: string, row: PushRow): Promise<void> {
    try {
      await this.driver.query(q.deletePush, [row.task_id, row.seq, row.config_id]);
    } catch (err) {
      // Settled, still in the outbox, claimed by this instance: the retry deletes it, and no send
      // of this instance hands it over again. Should the instance stop first, another takes it
      // over and sends it again (at least once).
      this.onError(err);
      if (!this.#closed) {
        this.#undeleted.set(key, row);
        this.#schedule();
      }
    } finally {
      this.#inFlight.delete(key);
    }
  }

  #schedule(): void {
    if (this.#closed || this.#retryTimer !== undefined || this.#retrying !== undefined) return;
    // In the background context (D35): scheduled by the call whose send failed, it would run, and
    // parent the notifications it sends, in that call's context.
    this.#retryTimer = inBackground(() =>
      setTimeout(() => {
        this.#retryTimer = undefined;
        this.#retrying = this.#retryRound().then((ok) => {
          this.#retrying = undefined;
          this.#retryWait = ok ? this.retry.first : Math.min(this.retry.max, this.#retryWait * 2);
          if (this.#behind.size > 0 || this.#undeleted.size > 0) this.#schedule();
        });
      }, this.#retryWait),
    );
    // As the lease timers: the rows outlive the process in the outbox, and another instance sends them.
    this.#retryTimer.unref();
  }

  /** The deletes that failed, then the tasks behind, each in its order of writes; whether all went through. */
  async #retryRound(): Promise<boolean> {
    for (const [key, row] of [...this.#undeleted]) {
      if (this.#closed) return true;
      try {
        await this.driver.query(q.deletePush, [row.task_id, row.seq, row.config_id]);
        this.#undeleted.delete(key);
      } catch (err) {
        // The database still fails: the rest wait for the next round.
        this.onError(err);
        return false;
      }
    }
    let ok = true;
    for (const taskId of [...this.#behind.keys()]) {
      if (this.#closed) break;
      try {
        await this.serial(taskId, async () => {
          if (this.#behind.has(taskId)) ok = (await this.#send([{ taskId, seq: 0 }])) && ok;
        });
      } catch (err) {
        // The store closed under it.
        if (!this.#closed) this.onError(err);
      }
      if (!ok) break;
    }
    return ok;
  }

  /** Stops the retry; resolves once a round under way ended. What is left stays in the outbox, for another instance or a restart. */
  close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    return this.#retrying ?? Promise.resolve();
  }

  /** The StreamResponse the runtime publishes for this event, as ProtoJSON. */
  #render(outbox: PushOutbox, row: PushRow): string {
    const s = this.schemas();
    const body = row.body!;
    const metadata = row.metadata === null ? undefined : (JSON.parse(row.metadata) as JsonObject);
    const ids = { taskId: row.task_id, contextId: row.context_id, ...(metadata === undefined ? {} : { metadata }) };
    switch (row.kind) {
      case "created":
        return outbox.render("task", decodeBinary(s.task, body, ownBytesReadOptions));
      case "status":
        return outbox.render("statusUpdate", make(s.statusUpdate, { ...ids, status: decodeBinary(s.taskStatus, body, ownBytesReadOptions) }));
      case "artifact":
        return outbox.render(
          "artifactUpdate",
          make(s.artifactUpdate, { ...ids, artifact: decodeBinary(s.artifact, body, ownBytesReadOptions), append: row.append, lastChunk: row.last_chunk }),
        );
      default:
        throw new Error(`the push outbox holds an event of kind ${row.kind}, which is never pushed`);
    }
  }
}
