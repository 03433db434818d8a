/**
 * The durable task store (issue 14, D70): one schema (migrations.ts) and one
 * query set (queries.ts) on two engines (driver.ts), PGlite embedded in the
 * agent's process with a data directory on disk, or a Postgres server that
 * several instances of an agent share.
 *
 * Tasks are protobuf bytes of the handler's own Task type (`attach`): the
 * row holds the Task without its history and artifacts, which are rows of
 * their own, so each change the runtime reports (TaskChange) writes the
 * task's small row, the one message or artifact it touched, and an event,
 * in one statement. What `get` and `list` answer are new copies, decoded
 * from the rows; the runtime keeps its own object of a running task (a
 * store of rows is what TaskStore was written for).
 *
 * A task's writes go to the database in the order the runtime made them:
 * each waits for the one before (the runtime may report a cancel while an
 * executor's event is being written), and each encodes the task as it was
 * when reported.
 */
import type { DescMessage, JsonObject } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { decodeBinary, encodeBuffer, ownBytesReadOptions } from "../../../core/codec/binary-codec.js";
import { inBackground } from "../../../core/background.js";
import { jsonLineLogger } from "../../../core/failures.js";
import { loadTracingApi } from "../../../core/tracing.js";
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { make, taskStatesOf, type ArtifactLike, type MessageLike, type PushConfigLike, type TaskLike, type TaskSchemas, type TaskStates, type TaskStatusLike } from "../model.js";
import { decodeConfigCursor, decodeTaskCursor, encodeConfigCursor, encodeTaskCursor } from "../page-token.js";
import { MessageNotStoredError, type ConfigPage, type ForeignChange, type PushOutbox, type StoredTask, type TaskChange, type TaskOwner, type TaskPage, type TaskQuery, type TaskStore } from "../task-store.js";
import { importPeer, pgDriver, pgliteDriver, type PGliteLike, type PgPoolLike, type SqlDriver } from "./driver.js";
import { SlotMap } from "../../../core/slots.js";
import { LogFollowers } from "./log-follower.js";
import { migrate } from "./migrations.js";
import { PushOutboxSender, keysOf } from "./push-outbox.js";
import * as q from "./queries.js";

/** The waits before a refused terminal status is written again (D72): about 2 s in all. */
const finishRetryMs = [100, 400, 1600];

export interface SqlTaskStoreOptions {
  /**
   * Errors of the store's background work (following other instances' changes, its pool's idle
   * connections). Default: one JSON line on stderr (D33); a task handler that opens the store from
   * a URL passes its own onError.
   */
  readonly onError?: (error: unknown) => void;
  /**
   * How long a finished task (COMPLETED, FAILED, CANCELED, REJECTED) is
   * kept, with its history, artifacts, push configs and events. Default:
   * kept until deleted (`deleteFinished`).
   */
  readonly terminalTtlMs?: number;
  /**
   * How long a task waiting for its client (INPUT_REQUIRED, AUTH_REQUIRED) is kept after its last
   * status change, when no run holds it, for a client that never comes back. Default: kept until
   * deleted, as a finished one is (the in-memory store drops it after 24 h, D76).
   */
  readonly interruptedTtlMs?: number;
  /**
   * How long a SUBMITTED or WORKING task's lease lasts (D72): the instance that wrote the task
   * last renews it every third of this, and any instance moves a task whose lease lapsed (its
   * instance died) to FAILED. Default 30 s.
   */
  readonly leaseMs?: number;
}

export interface PGliteTaskStoreOptions extends SqlTaskStoreOptions {
  /**
   * The data directory, created if missing: the tasks are there after a
   * restart. Unset keeps the database in memory (gone with the process).
   */
  readonly dataDir?: string;
  /** A PGlite instance of your own instead (not closed by the store). */
  readonly db?: PGliteLike;
}

export interface PostgresTaskStoreOptions extends SqlTaskStoreOptions {
  /** `postgres://user:password@host:port/database`: the store opens a pool of its own (closed with it). */
  readonly connectionString?: string;
  /** How many connections that pool opens at most. Default 10. */
  readonly maxConnections?: number;
  /**
   * How long one statement of that pool may run before the server cancels it (`statement_timeout`:
   * a lock that is never released, a query stuck behind another), and, one second more, how long
   * the store waits for any answer (node-postgres's `query_timeout`: a server or network that no
   * longer answers). A call whose write timed out is answered as when the database is down
   * (D117), and `close()` waits no longer than this for a write. Default 30 s.
   */
  readonly queryTimeoutMs?: number;
  /** How long that pool waits for a connection (a new one, or a free one when all are busy). Default 10 s. */
  readonly connectTimeoutMs?: number;
  /**
   * A node-postgres Pool of your own instead (not closed by the store); the store holds one of its
   * connections to LISTEN. Its timeouts are yours to set (`statement_timeout`, `query_timeout`,
   * `connectionTimeoutMillis`): without them a database that stops answering holds calls and
   * `close()` for as long.
   */
  readonly pool?: PgPoolLike;
}

/** A task store on PGlite or a Postgres server. */
export interface SqlTaskStore extends TaskStore {
  /** "pglite" or "postgres". */
  readonly engine: string;
  /** The schema version the database is at: the last migration applied. */
  readonly schemaVersion: number;
  list(owner: TaskOwner, query: TaskQuery): Promise<TaskPage>;
  configsOf(taskId: string): Promise<readonly PushConfigLike[]>;
  get(id: string): Promise<(StoredTask & { readonly version: number }) | undefined>;
  /** A task's change log after `seq` (0 for all), in order: seq 1 is `created`. */
  events(taskId: string, afterSeq?: number): Promise<readonly TaskEventRow[]>;
  follow(taskId: string, version: number, onChange: (change: ForeignChange) => void, catchUp: boolean): () => void;
  claim(record: StoredTask): Promise<boolean>;
  unclaim(record: StoredTask): Promise<void>;
  readonly claimRetryMs: number;
  /** Moves the tasks whose lease of a run lapsed before `now` to FAILED (D72), and lets lapsed claims go (D79); answers how many it failed. A timer calls it every half lease. */
  reapLapsed(now?: number): Promise<number>;
  /** Deletes the tasks that finished before `beforeMs` (epoch ms), with all that is theirs; answers how many. */
  deleteFinished(beforeMs: number): Promise<number>;
  /** Deletes the tasks waiting for their client (INPUT_REQUIRED, AUTH_REQUIRED) whose status is older than `beforeMs` and that no run holds; answers how many. */
  deleteInterrupted(beforeMs: number): Promise<number>;
  /** Waits for the writes under way, then closes what the store opened. */
  close(): Promise<void>;
}

/** One row of a task's event log. */
export interface TaskEventRow {
  readonly seq: number;
  readonly kind: "created" | TaskChange["kind"];
  /** The artifact's index, for `artifact`. */
  readonly index: number | undefined;
  readonly atMs: number;
  /** What the change wrote, as protobuf bytes: the Task (`created`), the TaskStatus, the Artifact (with `append`, only the chunk appended), or the Message. */
  readonly body: Uint8Array | undefined;
  /** An artifact chunk appended to the artifact of its id. */
  readonly append: boolean;
  readonly lastChunk: boolean;
  /** The store instance that wrote it. */
  readonly writer: string | undefined;
}

/** A store on an embedded PGlite database: one process, durable in `dataDir`. */
export async function createPGliteTaskStore(options: PGliteTaskStoreOptions = {}): Promise<SqlTaskStore> {
  if (options.db !== undefined) return openSqlTaskStore(pgliteDriver(options.db, false), options);
  const { PGlite } = await importPeer("@electric-sql/pglite", () => import("@electric-sql/pglite"));
  // PGlite makes the folder itself but not its parents: `./data/tasks` on a fresh checkout failed
  // with a bare ENOENT. A `file://` URL is a folder; PGlite's other URLs (`memory://`, `idb://`) are not.
  const folder = options.dataDir?.startsWith("file://") === true ? fileURLToPath(options.dataDir) : options.dataDir?.includes("://") === false ? options.dataDir : undefined;
  if (folder !== undefined) mkdirSync(resolve(folder), { recursive: true });
  const unlock = folder === undefined ? () => undefined : lockFolder(resolve(folder));
  let driver: SqlDriver;
  try {
    const db = (await PGlite.create(options.dataDir === undefined ? {} : { dataDir: options.dataDir })) as unknown as PGliteLike;
    const owned = pgliteDriver(db, true);
    driver = { ...owned, close: () => owned.close().finally(unlock) };
  } catch (err) {
    unlock();
    throw err;
  }
  return openSqlTaskStore(driver, options);
}

const lockName = "a2a-store.lock";

/**
 * Takes the PGlite folder for this store: PGlite is one process's database, and a second opener
 * (another agent, `npm test` beside a running agent) read it into its own memory and wrote it back
 * over the first's tasks, with no error anywhere. The lock file holds the pid; one whose process is
 * gone is taken over. Answers the release.
 */
function lockFolder(folder: string): () => void {
  const file = join(folder, lockName);
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return () => {
        try {
          if (readFileSync(file, "utf8") === String(process.pid)) unlinkSync(file);
        } catch {
          // Gone already: nothing to release.
        }
      };
    } catch (err) {
      if ((err as { code?: string }).code !== "EEXIST") throw err;
    }
    const holder = Number(readFileSync(file, "utf8"));
    if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) {
      const who = holder === process.pid ? "another store of this process" : `process ${holder}`;
      throw new Error(
        `the PGlite data folder ${folder} is open in ${who}: PGlite is one process's database, and a second would write over the first's tasks. ` +
          "Close that store first, give this one another folder, or share tasks between processes on Postgres.",
      );
    }
    // Its process is gone (a crash, a kill): the folder is free.
    unlinkSync(file);
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, another user's.
    return (err as { code?: string }).code === "EPERM";
  }
}

/** A store on a Postgres server, which any number of agent instances may share. */
export async function createPostgresTaskStore(options: PostgresTaskStoreOptions): Promise<SqlTaskStore> {
  let pool = options.pool;
  if (pool === undefined) {
    if (options.connectionString === undefined) throw new Error("createPostgresTaskStore: give a connectionString or a pool");
    const queryTimeoutMs = positiveMs("queryTimeoutMs", options.queryTimeoutMs, 30_000);
    const connectTimeoutMs = positiveMs("connectTimeoutMs", options.connectTimeoutMs, 10_000);
    const pg = await importPeer("pg", () => import("pg"));
    const Pool = (pg.default ?? pg).Pool;
    const own = new Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 10,
      // D117: the server cancels a statement first (its transaction rolls back: no write lands after
      // its caller was told it failed); the client's own bound is for a server that cannot answer.
      statement_timeout: queryTimeoutMs,
      query_timeout: queryTimeoutMs + 1000,
      connectionTimeoutMillis: connectTimeoutMs,
    });
    own.on("error", options.onError ?? reportError);
    pool = own as unknown as PgPoolLike;
  } else if (options.queryTimeoutMs !== undefined || options.connectTimeoutMs !== undefined) {
    throw new Error("createPostgresTaskStore: queryTimeoutMs and connectTimeoutMs set the pool the store opens; on a pool of your own set statement_timeout, query_timeout and connectionTimeoutMillis");
  }
  return openSqlTaskStore(pgDriver(pool, options.pool === undefined), options);
}

const maxTimeoutMs = 2_000_000_000;

/** A whole number of milliseconds above 0, or `fallback` when unset. */
function positiveMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  // Node runs a timer longer than 2^31 - 1 ms at once, and Postgres refuses a statement_timeout past it.
  if (!Number.isInteger(value) || value <= 0 || value > maxTimeoutMs) {
    throw new Error(`createPostgresTaskStore: ${name} must be a whole number of milliseconds from 1 to ${maxTimeoutMs} (got ${value})`);
  }
  return value;
}

/** Migrates the database, then serves the store on it. Closes the driver if migrating fails. */
export async function openSqlTaskStore(driver: SqlDriver, options: SqlTaskStoreOptions = {}): Promise<SqlTaskStore> {
  // The store's own work (migrating, its timers, the rows it takes over, its LISTEN connection) runs
  // in the background context, OpenTelemetry's root once the API is known (D35): started in the
  // caller's, it ran as the caller's children and held the caller's span for as long as the store lives.
  await loadTracingApi();
  let version: number;
  try {
    version = await inBackground(() => migrate(driver));
  } catch (err) {
    await driver.close().catch(() => undefined);
    if (!timedOut(err)) throw err;
    throw new Error(
      `migrating the ${driver.engine} task store timed out (another instance migrating it, or a migration on a large table, ran longer than queryTimeoutMs): open it with a larger queryTimeoutMs (on a pool of your own, a larger statement_timeout and query_timeout)`,
      { cause: err },
    );
  }
  return inBackground(() => new Store(driver, version, options));
}

/** A statement the server cancelled at its statement_timeout, or a query node-postgres gave up on (D117). */
function timedOut(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  // 57014 is also a cancel by hand (pg_cancel_backend): only the statement timeout's counts.
  return ((err as { code?: unknown }).code === "57014" && err.message.includes("statement timeout")) || err.message === "Query read timeout";
}

/** The default: one JSON line, as a handler's unexpected failure (D33), not the driver's whole error object. */
const reportError = (err: unknown) => jsonLineLogger.error({ err }, "SQL task store failed");

/** The bigint columns of a status time: whole epoch milliseconds. */
const msOf = (task: TaskLike): number => (task.status?.timestamp === undefined ? 0 : Math.floor(timestampMs(task.status.timestamp)));

const defaultConfigPage = 50;
/** Finished tasks deleted per statement by deleteFinished. */
const deleteBatch = 500;

interface ConfigRow {
  task_id: string;
  id: string;
  tenant: string;
  url: string;
  token: string;
  auth_scheme: string | null;
  auth_credentials: string | null;
  protocol_version: string | null;
}

interface EventRow {
  seq: number;
  kind: TaskEventRow["kind"];
  idx: number | null;
  at_ms: number;
  body: Uint8Array | null;
  writer: string | null;
  append: boolean;
  last_chunk: boolean;
  metadata: string | null;
}

interface TaskRow {
  task: Uint8Array;
  history: Uint8Array[];
  artifacts: Uint8Array[];
}

class Store implements SqlTaskStore {
  readonly engine: string;
  #schemas: TaskSchemas | undefined;
  /** Per task, the last write reported: the next one waits for it. Slots, not a Map (D116). */
  readonly #writes = new SlotMap<Promise<void>>();
  readonly #timer: ReturnType<typeof setInterval> | undefined;
  #sweep: Promise<unknown> | undefined;
  readonly #leaseMs: number;
  readonly #leaseTimers: ReturnType<typeof setInterval>[] = [];
  /**
   * Tasks whose terminal status the database refused: their leases are no longer renewed, so the
   * reaper fails them (D72) rather than this instance holding them WORKING for as long as it lives.
   */
  readonly #abandoned = new Set<string>();
  /** The waits of terminal statuses to be tried again (D72): close() ends them. */
  readonly #wakeOnClose = new Set<() => void>();
  /** The renewal or reaping under way: one at a time each; close() waits for them. */
  #renewing: Promise<unknown> | undefined;
  #reaping: Promise<unknown> | undefined;
  #states: TaskStates | undefined;
  /** Told of each waiting task deleteInterrupted removed, here or on another instance (D71). */
  readonly #dropped: ((taskId: string) => void)[] = [];
  /** SUBMITTED and WORKING: the states a run holds a lease in of its own (D72), whatever claim came before (D79). */
  #running: number[] = [];
  readonly #onError: (error: unknown) => void;
  #closed = false;
  /** This instance, in the event log: its own events are not handed to `follow`. */
  readonly #writer = randomUUID();
  readonly #followers: LogFollowers<EventRow>;
  readonly #pushes: PushOutboxSender;

  constructor(
    readonly driver: SqlDriver,
    readonly schemaVersion: number,
    options: SqlTaskStoreOptions,
  ) {
    this.engine = driver.engine;
    this.#onError = options.onError ?? reportError;
    // A followed task found gone was deleted by another instance (interruptedTtlMs, D70): the
    // handlers here end its streams as the deleting instance's do.
    this.#followers = new LogFollowers<EventRow>(driver, this.#writer, (taskId, after) => this.#followRows(taskId, after), this.#onError, (taskId) => this.#tellDropped(taskId));
    const leaseMs = options.leaseMs ?? 30_000;
    if (!(leaseMs > 0)) throw new Error("leaseMs must be > 0");
    // What failed is read again after the claim retry's wait, doubling up to a lease (D74).
    const firstRetry = Math.min(1000, Math.max(10, Math.floor(leaseMs / 3)));
    this.#pushes = new PushOutboxSender(
      driver,
      this.#writer,
      () => this.#s,
      this.#onError,
      async (taskId) => (await this.get(taskId))?.task,
      (taskId, fn) => this.#serial(taskId, fn),
      { first: firstRetry, max: Math.max(firstRetry, Math.min(leaseMs, 30_000)) },
    );
    this.#leaseMs = leaseMs;
    const renew = setInterval(() => {
      this.#renewing ??= this.driver
        .query(q.renewLeases, [this.#writer, Date.now() + leaseMs, [...this.#abandoned]])
        .catch(this.#onError)
        .finally(() => (this.#renewing = undefined));
    }, Math.max(1, Math.floor(leaseMs / 3)));
    const reap = setInterval(() => {
      if (this.#schemas === undefined) return;
      // Failing a task takes its notifications with it; what is left are those of tasks no one runs, or a live instance runs now (D74).
      // Each step checks for close(), which waits for the round: against a database that stopped
      // answering, each would wait out its own timeout (D117).
      this.#reaping ??= this.reapLapsed()
        .catch(this.#onError)
        .then(() => (this.#closed ? undefined : this.#forgetUnrenewed()))
        .catch(this.#onError)
        .then(() => (this.#closed ? undefined : this.#pushes.claimLapsed(Date.now(), Date.now() + leaseMs)))
        .catch(this.#onError)
        .finally(() => (this.#reaping = undefined));
    }, Math.max(1, Math.floor(leaseMs / 2)));
    for (const timer of [renew, reap]) timer.unref();
    this.#leaseTimers.push(renew, reap);
    const ttl = options.terminalTtlMs;
    const waitingTtl = options.interruptedTtlMs;
    if (ttl !== undefined && !(ttl > 0)) throw new Error("terminalTtlMs must be > 0");
    if (waitingTtl !== undefined && !(waitingTtl > 0)) throw new Error("interruptedTtlMs must be > 0");
    if (ttl !== undefined || waitingTtl !== undefined) {
      // Tasks expire while the agent is idle too; the timer never keeps the process alive.
      // One sweep at a time; close() waits for the one under way. A failed sweep is reported and
      // tried again at the next tick (what it deleted in batches before failing stays deleted).
      this.#timer = setInterval(
        () => {
          if (this.#sweep !== undefined) return;
          const now = Date.now();
          this.#sweep = (async () => {
            if (ttl !== undefined) await this.deleteFinished(now - ttl);
            if (waitingTtl !== undefined) await this.deleteInterrupted(now - waitingTtl);
          })()
            .catch(this.#onError)
            .finally(() => (this.#sweep = undefined));
        },
        // A waiting task is dropped at most a quarter of its TTL late, as in memory (D76).
        Math.min(ttl ?? Infinity, waitingTtl === undefined ? Infinity : waitingTtl / 4, 60_000),
      );
      this.#timer.unref();
    }
  }

  deliverPushes(outbox: PushOutbox): void {
    this.#pushes.attach(outbox);
  }

  attach(schemas: TaskSchemas): void {
    if (this.#schemas !== undefined && this.#schemas.task !== schemas.task) {
      throw new Error(`this task store already keeps tasks of another ${this.#schemas.task.typeName}: give each task handler its own store`);
    }
    this.#schemas = schemas;
    this.#states = taskStatesOf(schemas.taskState);
    this.#running = [this.#states.submitted, this.#states.working];
  }

  /**
   * SUBMITTED and WORKING tasks are leased: an instance runs them. Interrupted and terminal ones
   * wait for no one, unless a run took one up (its message, D79) or still works on it (its
   * artifacts, before it sets a state).
   */
  #leaseUntil(task: TaskLike, now: number, change?: TaskChange): number | null {
    if (change !== undefined && (change.kind === "history" || (change.kind === "artifact" && change.running === true))) return now + this.#leaseMs;
    const state = task.status?.state ?? 0;
    const states = this.#states!;
    return state === states.submitted || state === states.working ? now + this.#leaseMs : null;
  }

  /**
   * Moves the tasks whose lease lapsed to FAILED, with an agent message saying why, as a change
   * of the task (its event tells the other instances). Answers how many. The timer calls it.
   */
  async reapLapsed(now = Date.now()): Promise<number> {
    const s = this.#s;
    const states = this.#states!;
    const agent = s.role.values.find((v) => v.name === "ROLE_AGENT")?.number ?? 0;
    let failed = 0;
    // A claim is not a run (D79): nothing ran, so the task is not failed; it waits for its input again.
    // Refused, the lapsed runs are still failed below; the claims are let go at the next round.
    await this.driver.query(q.dropLapsedClaims, [now, this.#running]).catch(this.#onError);
    if (this.#closed) return failed;
    for (const { id } of await this.driver.query<{ id: string }>(q.lapsedLeases, [now, this.#running])) {
      if (this.#closed) break;
      const record = await this.get(id);
      if (record === undefined) continue;
      const task = record.task;
      const message = make<MessageLike>(s.message, {
        messageId: randomUUID(),
        role: agent,
        taskId: task.id,
        contextId: task.contextId,
        parts: [{ content: { case: "text", value: "the agent instance running this task stopped before the task ended" } }],
      });
      const before = task.status?.timestamp === undefined ? 0 : timestampMs(task.status.timestamp);
      task.status = make<TaskStatusLike>(s.taskStatus, { state: states.failed, message, timestamp: timestampFromMs(Math.max(now, Math.ceil(before))) });
      task.history.push(message);
      // Written as another writer than this instance's, so that this instance's own followers get it too.
      // One task the database refuses (a constraint, a trigger, a full row) does not hold the others back.
      try {
        if (await this.#update(record, { kind: "status", terminal: true }, now, `${this.#writer}/lease`)) failed++;
      } catch (err) {
        this.#onError(err);
      }
    }
    return failed;
  }

  get #s(): TaskSchemas {
    if (this.#schemas === undefined) throw new Error("the SQL task store keeps tasks as protobuf bytes: attach it to a task handler (createA2AServiceTaskHandler does) before use");
    return this.#schemas;
  }

  #encode(desc: DescMessage, value: object): Buffer {
    return encodeBuffer(desc, value as never);
  }

  /** The row's Task: the task without its history and artifacts. */
  #header(task: TaskLike): Buffer {
    return this.#encode(this.#s.task, { ...task, history: [], artifacts: [] });
  }

  #decode(row: TaskRow): TaskLike {
    const s = this.#s;
    const task = decodeBinary(s.task, row.task, ownBytesReadOptions) as unknown as TaskLike;
    task.history = row.history.map((b) => decodeBinary(s.message, b, ownBytesReadOptions) as unknown as MessageLike);
    task.artifacts = row.artifacts.map((b) => decodeBinary(s.artifact, b, ownBytesReadOptions) as unknown as ArtifactLike);
    return task;
  }

  /** Runs `write` after the task's writes before it. */
  #serial(id: string, write: () => Promise<unknown>): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the task store is closed"));
    const before = this.#writes.get(id) ?? Promise.resolve();
    const mine = before.then(write, write).then(() => undefined);
    this.#writes.set(id, mine);
    void mine.then(
      () => this.#forget(id, mine),
      () => this.#forget(id, mine),
    );
    return mine;
  }

  #forget(id: string, write: Promise<void>): void {
    if (this.#writes.get(id) === write) this.#writes.delete(id);
  }

  create(record: StoredTask, configs: readonly PushConfigLike[] = []): Promise<void> {
    const { task } = record;
    const state = task.status?.state ?? 0;
    const now = Date.now();
    const pushes = this.#pushes.attached;
    const params = [
      task.id,
      record.tenant,
      record.owner,
      task.contextId,
      state,
      msOf(task),
      null,
      task.history.length,
      this.#header(task),
      task.history.map((m) => this.#encode(this.#s.message, m)),
      task.artifacts.map((a) => this.#encode(this.#s.artifact, a)),
      now,
      this.#encode(this.#s.task, task),
      this.#writer,
      this.#leaseUntil(task, now),
      pushes,
      now + this.#leaseMs,
      configs.map((c) => c.id),
      configs.map((c) => c.url),
      configs.map((c) => c.token),
      configs.map((c) => c.authentication?.scheme ?? null),
      configs.map((c) => c.authentication?.credentials ?? null),
      configs.map((c) => c.protocolVersion ?? null),
    ];
    return this.#serial(task.id, async () => {
      let row: { pushes: number } | undefined;
      try {
        [row] = await this.driver.query<{ pushes: number }>(q.createTask, params);
      } catch (err) {
        // Its answer lost, it may have committed: its outbox rows would be this instance's, unsent (D74).
        if (pushes) this.#pushes.behind(task.id);
        throw err;
      }
      if ((row?.pushes ?? 0) > 0) await this.#pushes.send([{ taskId: task.id, seq: 1 }], task);
    });
  }

  async get(id: string): Promise<(StoredTask & { readonly version: number }) | undefined> {
    const [row] = await this.driver.query<TaskRow & { tenant: string; owner: string; version: number }>(q.getTask, [id]);
    return row === undefined ? undefined : { tenant: row.tenant, owner: row.owner, version: row.version, task: this.#decode(row) };
  }

  async claim(record: StoredTask): Promise<boolean> {
    if (this.#closed) throw new Error("the task store is closed");
    const id = record.task.id;
    const now = Date.now();
    // A lease of this instance's own is taken: a task whose terminal status was refused is run here no more (D72).
    const [row] = await this.driver.query<{ taken: number; open: boolean; version: number }>(q.claimTask, [id, this.#writer, now + this.#leaseMs]);
    if (row === undefined) return true;
    if (row.taken === 0 && row.open) return false;
    if (row.taken > 0) this.#abandoned.delete(id);
    // What other instances wrote before the claim reaches the task's follower first: the run's
    // message then comes after the status that asked for it, here as in the log.
    // Not caught up (a read failed): the runtime asks again, and this instance's lease is taken again then.
    if (!(await this.#followers.through(id, row.version))) throw new Error(`task ${id}: its changes up to the claim could not be read`);
    return true;
  }

  /** A refused message asks again as often as leases are renewed, at most every second. */
  get claimRetryMs(): number {
    return Math.min(1000, Math.max(10, Math.floor(this.#leaseMs / 3)));
  }

  async unclaim(record: StoredTask): Promise<void> {
    const id = record.task.id;
    // Refused, it is tried again as a terminal status is (D72). Refused through every try, it is no
    // longer renewed: it lapses, and the reaper lets it go (D79), rather than this instance holding
    // the task for as long as it lives.
    try {
      await this.#withTries(`task ${id}: the database refused to give back its claim`, () => this.driver.query(q.unclaimTask, [id, this.#writer, this.#running]));
    } catch (err) {
      this.#abandoned.add(id);
      throw err;
    }
  }

  /** `call`, tried again after a refusal as a terminal status is (#triedAgain); its last refusal thrown. */
  async #withTries<T>(what: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        if (!(await this.#triedAgain(attempt, err, what))) throw err;
      }
    }
  }

  /**
   * After a refusal of a write that must not be lost (a terminal status, a claim given back):
   * whether to try again, having reported the refusal and waited the next of `finishRetryMs`
   * (D72); false once they are spent or the store closed.
   */
  async #triedAgain(attempt: number, err: unknown, what: string): Promise<boolean> {
    const wait = finishRetryMs[attempt];
    if (wait === undefined || this.#closed) return false;
    const why = err instanceof Error ? err.message : String(err);
    this.#onError(new Error(`${what} (${why}); trying again in ${wait} ms`, { cause: err }));
    await this.#pause(wait);
    return !this.#closed;
  }

  update(record: StoredTask, change: TaskChange): Promise<void> {
    return this.#update(record, change, null, this.#writer).then(
      () => {
        // Written again (a message took the task up): it is run here, and leased, again.
        if (this.#abandoned.size > 0) this.#abandoned.delete(record.task.id);
      },
      (err: unknown) => {
        // The runtime has nowhere else to put the task: its lease must lapse for the reaper to fail it.
        if (change.kind === "status" && change.terminal) this.#abandoned.add(record.task.id);
        throw err;
      },
    );
  }

  /** Waits `ms`, or less when the store closes (D72's tries of a terminal status). */
  #pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#wakeOnClose.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.#wakeOnClose.add(wake);
    });
  }

  /** Stops keeping aside the abandoned tasks this instance's renewal would not touch anyway (finished, gone, leased by no one or another). */
  async #forgetUnrenewed(): Promise<void> {
    if (this.#abandoned.size === 0) return;
    for (const { id } of await this.driver.query<{ id: string }>(q.notRenewedOf, [[...this.#abandoned], this.#writer])) this.#abandoned.delete(id);
  }

  /** Writes the change; with `lapsedBefore`, only if the task's lease lapsed before then. Answers whether it was written. */
  #update(record: StoredTask, change: TaskChange, lapsedBefore: number | null, writer: string): Promise<boolean> {
    const { task } = record;
    const s = this.#s;
    let terminal = false;
    let message: Buffer | null = null;
    let index: number | null = null;
    let artifact: Buffer | null = null;
    let append = false;
    let lastChunk = false;
    let body: Buffer | null;
    if (change.kind === "status") {
      terminal = change.terminal;
      const last = task.history.at(-1);
      // The status's message was put at the end of the history (TaskChange).
      if (task.status?.message !== undefined && last !== undefined) message = this.#encode(s.message, last);
      body = this.#encode(s.taskStatus, task.status ?? {});
    } else if (change.kind === "artifact") {
      const changed = task.artifacts[change.index];
      if (changed === undefined) return Promise.reject(new Error(`task ${task.id} has no artifact ${change.index}`));
      index = change.index;
      artifact = this.#encode(s.artifact, changed);
      append = change.append === true;
      lastChunk = change.lastChunk === true;
      // The event holds the chunk, as the streams got it; the row the whole artifact.
      const parts = change.parts ?? changed.parts.length;
      body = append ? this.#encode(s.artifact, { ...changed, parts: changed.parts.slice(changed.parts.length - parts) }) : artifact;
    } else {
      const last = task.history.at(-1);
      if (last === undefined) return Promise.reject(new Error(`task ${task.id} has no history to add`));
      message = body = this.#encode(s.message, last);
    }
    const now = Date.now();
    const pushes = this.#pushes.attached && change.kind !== "history";
    const params = [
      task.id,
      message === null ? 0 : 1,
      task.status?.state ?? 0,
      msOf(task),
      this.#header(task),
      terminal,
      now,
      message,
      index,
      artifact,
      change.kind,
      body,
      writer,
      append,
      lastChunk,
      this.#leaseUntil(task, now, change),
      lapsedBefore,
      this.#writer,
      pushes,
      now + this.#leaseMs,
      change.kind === "history" || change.metadata === undefined ? null : JSON.stringify(change.metadata),
      change.kind === "history" && change.claimed === true,
    ];
    if (lapsedBefore !== null) return this.#reap(task.id, params, lapsedBefore);
    let written = false;
    return this.#serial(task.id, async () => {
      for (let attempt = 0; ; attempt++) {
        let row: { seq: number; pushes: number } | undefined;
        try {
          [row] = await this.driver.query<{ seq: number; pushes: number }>(q.updateTask, params);
        } catch (err) {
          // Its answer lost, it may have committed: its outbox rows would be this instance's, unsent (D74).
          if (pushes) this.#pushes.behind(task.id);
          // A terminal status the database refused is tried again (D72), in this write's turn: the
          // task's later writes wait for it, as for any write, and close() for its last try.
          if (terminal && (await this.#triedAgain(attempt, err, `task ${task.id}: the database refused its terminal status`))) continue;
          // A claimed message whose write failed, by an instance that no longer holds the task: not
          // written (it could not have been), and the run must not fail the task another instance
          // may run now (D79). Still holding it, the write failed as any write does.
          if (change.kind === "history" && change.claimed === true && !(await this.#holdsLease(task.id))) {
            this.#onError(err);
            await this.#notStored(task.id);
          }
          throw err;
        }
        written = row !== undefined;
        // Sent in the task's order of writes: the next write waits for this hand-over (D74).
        // Not read back now (the database failed): the task is behind, its rows read again by its
        // next send or the retry, in this order of writes (D74).
        if (row !== undefined && row.pushes > 0) await this.#pushes.send([{ taskId: task.id, seq: row.seq }], task);
        // Tried again and not written: a try whose answer was lost may have written it, its outbox
        // rows claimed by this instance; they are sent now, not after a restart (none if another
        // instance finished the task: its rows are its own).
        if (row === undefined && attempt > 0) await this.#sendLost(task).catch(this.#onError);
        if (row === undefined && change.kind === "history") await this.#notStored(task.id);
        return;
      }
    }).then(() => written);
  }

  /**
   * A message not written (D79): its claim was let go, or the task ended first (asked apart from
   * the write: a task that ends in between was ended first as far as the message goes). Ended, the
   * task's follower reads the log up to now first, so the runtime answers with the task as it
   * ended, not as this instance last heard of it. Always throws: a read that fails here still
   * leaves the message not written, and that is what the runtime is told.
   */
  async #notStored(id: string): Promise<never> {
    let row: { open: boolean; version: number } | undefined;
    let read = true;
    try {
      [row] = await this.driver.query<{ open: boolean; version: number }>(q.openAndVersion, [id]);
    } catch (err) {
      read = false;
      this.#onError(err);
    }
    if (read && (row === undefined || !row.open)) {
      if (row !== undefined) await this.#followers.through(id, row.version).catch(this.#onError);
      throw new MessageNotStoredError(`task ${id}: the task ended before this message was stored`, "ended");
    }
    // Not renewed from now on, should a lease still be this instance's (the runtime gives it back
    // too): it lapses, and no claim outlives its message. A new claim renews it again.
    this.#abandoned.add(id);
    throw new MessageNotStoredError(`task ${id}: the claim for this message lapsed before the message was stored, and another instance may run the task now`, "claimLost");
  }

  /**
   * Whether this instance holds task `id`'s lease (its claim or its run's), not lapsed. A refused
   * read is tried again as a terminal status is: a write whose answer was lost may have been
   * taken, and only this read tells a run's lease from a lost claim. False once the tries are spent.
   */
  async #holdsLease(id: string): Promise<boolean> {
    try {
      return (await this.#withTries(`task ${id}: the database refused to say whether this instance holds it`, () => this.driver.query(q.holdsLease, [id, this.#writer, Date.now()]))).length > 0;
    } catch {
      return false;
    }
  }

  /** The outbox rows this instance claimed for the task's last event, sent (see #update). */
  async #sendLost(task: TaskLike): Promise<void> {
    if (!this.#pushes.attached) return;
    const [row] = await this.driver.query<{ version: number }>(q.openAndVersion, [task.id]);
    if (row !== undefined) await this.#pushes.send([{ taskId: task.id, seq: row.version }], task);
  }

  /**
   * The lease reaper's FAILED (D72), in one transaction: the task row locked (another instance
   * reaping it at once skips it), the task's lapsed outbox rows claimed, the change written;
   * then all of them sent, the FAILED last, so a receiver gets the dead instance's
   * notifications before it (D74). Answers whether it was written.
   */
  async #reap(taskId: string, params: readonly unknown[], lapsedBefore: number): Promise<boolean> {
    let done: { written: boolean; seqs: number[] } | undefined;
    try {
      done = await this.driver.transaction(async (query) => {
        if ((await query(q.lockLapsedTask, [taskId, lapsedBefore, this.#running])).length === 0) return undefined;
        const claimed = await this.#pushes.claimTask(query, taskId, lapsedBefore, Date.now() + this.#leaseMs);
        const [row] = await query<{ seq: number; pushes: number }>(q.updateTask, params);
        return { written: row !== undefined, seqs: row !== undefined && row.pushes > 0 ? [...claimed, row.seq] : claimed };
      });
    } catch (err) {
      // Its COMMIT's answer lost, the rows it claimed and wrote would be this instance's, unsent (D74).
      this.#pushes.behind(taskId);
      throw err;
    }
    if (done === undefined) return false;
    await this.#pushes.send(keysOf(taskId, done.seqs));
    return done.written;
  }

  async list(owner: TaskOwner, query: TaskQuery): Promise<TaskPage> {
    const after = query.pageToken === "" ? undefined : decodeTaskCursor(query.pageToken);
    const filter = [owner.tenant, owner.owner, query.contextId, query.state, query.statusAfterMs ?? null];
    const rows = this.driver.query<TaskRow & { id: string; status_ms: number }>(q.listTasks, [...filter, after?.timeMs ?? null, after?.id ?? null, query.pageSize + 1]);
    // totalSize is exact (spec 3.1.4, D75): a count of the matching tasks, unless one first page holds them all.
    const counted = after === undefined ? undefined : this.driver.query<{ n: number }>(q.countTasks, filter);
    const found = await rows;
    const total = counted !== undefined ? (await counted)[0]?.n ?? 0 : found.length <= query.pageSize ? found.length : (await this.driver.query<{ n: number }>(q.countTasks, filter))[0]?.n ?? 0;
    const page = found.slice(0, query.pageSize);
    const last = page.at(-1);
    return {
      tasks: page.map((r) => this.#decode(r)),
      totalSize: total,
      nextPageToken: found.length > query.pageSize && last !== undefined ? encodeTaskCursor({ timeMs: last.status_ms, id: last.id }) : "",
      tokenAfter: (index) => encodeTaskCursor({ timeMs: page[index]!.status_ms, id: page[index]!.id }),
    };
  }

  async putConfig(config: PushConfigLike): Promise<void> {
    const auth = config.authentication;
    await this.driver.query(q.putConfig, [config.taskId, config.id, config.tenant, config.url, config.token, auth?.scheme ?? null, auth?.credentials ?? null, config.protocolVersion ?? null]);
  }

  async getConfig(taskId: string, id: string): Promise<PushConfigLike | undefined> {
    const [row] = await this.driver.query<ConfigRow>(q.getConfig, [taskId, id]);
    return row === undefined ? undefined : configOf(row);
  }

  async configsOf(taskId: string): Promise<readonly PushConfigLike[]> {
    return (await this.driver.query<ConfigRow>(q.configsOf, [taskId])).map(configOf);
  }

  async listConfigs(taskId: string, pageSize: number, pageToken: string): Promise<ConfigPage> {
    const after = pageToken === "" ? null : decodeConfigCursor(pageToken);
    const size = pageSize === 0 ? defaultConfigPage : pageSize;
    const rows = await this.driver.query<ConfigRow>(q.listConfigs, [taskId, after, size + 1]);
    const page = rows.slice(0, size).map(configOf);
    return { configs: page, nextPageToken: rows.length > size ? encodeConfigCursor(page.at(-1)!.id) : "" };
  }

  async deleteConfig(taskId: string, id: string): Promise<void> {
    await this.driver.query(q.deleteConfig, [taskId, id]);
  }

  #eventRows(taskId: string, afterSeq: number): Promise<EventRow[]> {
    return this.driver.query<EventRow>(q.eventsAfter, [taskId, afterSeq]);
  }

  /** A followed task's events after `afterSeq`, or undefined once it is gone (deleted). */
  async #followRows(taskId: string, afterSeq: number): Promise<EventRow[] | undefined> {
    const rows = await this.driver.query<EventRow & { seq: number | null }>(q.followEvents, [taskId, afterSeq]);
    if (rows.length === 0) return undefined;
    return rows.filter((r): r is EventRow => r.seq !== null);
  }

  async events(taskId: string, afterSeq = 0): Promise<readonly TaskEventRow[]> {
    return (await this.#eventRows(taskId, afterSeq)).map((r) => ({
      seq: r.seq,
      kind: r.kind,
      index: r.idx ?? undefined,
      atMs: r.at_ms,
      body: r.body ?? undefined,
      append: r.append,
      lastChunk: r.last_chunk,
      writer: r.writer ?? undefined,
    }));
  }

  follow(taskId: string, version: number, onChange: (change: ForeignChange) => void, catchUp: boolean): () => void {
    return this.#followers.follow(
      taskId,
      version,
      (row) => {
        const change = this.#foreignChange(row);
        if (change !== undefined) onChange(change);
      },
      catchUp,
    );
  }

  #foreignChange(row: EventRow): ForeignChange | undefined {
    const s = this.#s;
    if (row.body === null) return undefined;
    const metadata = row.metadata === null ? {} : { metadata: JSON.parse(row.metadata) as JsonObject };
    switch (row.kind) {
      case "status":
        return { kind: "status", status: decodeBinary(s.taskStatus, row.body, ownBytesReadOptions) as unknown as TaskStatusLike, ...metadata };
      case "artifact":
        return {
          kind: "artifact",
          artifact: decodeBinary(s.artifact, row.body, ownBytesReadOptions) as unknown as ArtifactLike,
          append: row.append,
          lastChunk: row.last_chunk,
          ...metadata,
        };
      case "history":
        return { kind: "history", message: decodeBinary(s.message, row.body, ownBytesReadOptions) as unknown as MessageLike };
      default:
        // `created` is seq 1: a task is followed from its creation on, never before.
        return undefined;
    }
  }

  async deleteFinished(beforeMs: number): Promise<number> {
    // In batches, each its own statement: a backlog of finished tasks (with their messages,
    // artifacts and events) is deleted over several statements, none near the statement timeout.
    let deleted = 0;
    for (;;) {
      const rows = await this.driver.query(q.deleteFinished, [Math.floor(beforeMs), deleteBatch]);
      deleted += rows.length;
      if (rows.length < deleteBatch || this.#closed) return deleted;
    }
  }

  /** Deletes the tasks waiting for their client whose status is older than `beforeMs` and that no run holds; answers how many. */
  async deleteInterrupted(beforeMs: number): Promise<number> {
    const states = this.#states;
    if (states === undefined) return 0;
    let deleted = 0;
    for (;;) {
      const rows = await this.driver.query<{ id: string }>(q.deleteInterrupted, [Math.floor(beforeMs), [states.inputRequired, states.authRequired], Date.now(), deleteBatch, this.#writer]);
      deleted += rows.length;
      // The handlers on this store end the streams that follow them (D76); other instances hear
      // of it on the event channel (the statement's notice skips this instance's followers).
      for (const { id } of rows) this.#tellDropped(id);
      if (rows.length < deleteBatch || this.#closed) return deleted;
    }
  }

  #tellDropped(taskId: string): void {
    for (const listener of this.#dropped) listener(taskId);
  }

  onDropped(listener: (taskId: string) => void): void {
    this.#dropped.push(listener);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    for (const timer of this.#leaseTimers) clearInterval(timer);
    for (const wake of this.#wakeOnClose) wake();
    this.#wakeOnClose.clear();
    const pushRetry = this.#pushes.close();
    // The listening connection is let go meanwhile, not after: against a database that stopped
    // answering, its UNLISTEN would wait out a timeout of its own (D117). The followers stay until
    // the writes are done: a message refused as the task ended reads the log through them first.
    await Promise.allSettled([...this.#writes.values(), pushRetry, this.#sweep, this.#renewing, this.#reaping, this.#followers.stopListening()]);
    await this.#followers.close();
    await this.driver.close();
  }
}

function configOf(row: ConfigRow): PushConfigLike {
  return {
    tenant: row.tenant,
    id: row.id,
    taskId: row.task_id,
    url: row.url,
    token: row.token,
    authentication: row.auth_scheme === null ? undefined : { scheme: row.auth_scheme, credentials: row.auth_credentials ?? "" },
    ...(row.protocol_version === null ? {} : { protocolVersion: row.protocol_version }),
  };
}
