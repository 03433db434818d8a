/**
 * The SQL task store's schema, as numbered migrations applied in order when
 * a store opens (D70). A migration, once released, is never edited: a
 * change to the schema is a new one at the end. `a2a_schema_migrations`
 * records which ran; opening a database whose schema is newer than this
 * code knows is refused rather than written with old queries.
 *
 * Tables:
 * - a2a_tasks: one row per task, with the columns ListTasks filters and
 *   orders by (tenant, owner, context, state, status time) and the Task
 *   message itself as protobuf bytes without its history and artifacts,
 *   which have rows of their own so that a chunk or a message writes one
 *   row, not the whole task. `version` counts its changes (the seq of its
 *   last event), `history_len` its messages.
 * - a2a_task_messages: the history, one message per row, in `seq` order.
 * - a2a_task_artifacts: the artifacts, at their index in the task.
 * - a2a_push_configs: push notification configs, per task.
 * - a2a_task_events: an append-only log of each task's changes, `seq`
 *   1, 2, ... with no gaps (the row lock of the task's update hands them
 *   out), each with the change's kind and what it wrote, which store
 *   instance wrote it, and (2) a notification on `a2a_task_events` per row,
 *   sent at commit, that other instances follow (log-follower.ts, D71).
 * - (3) a lease on each task that is SUBMITTED or WORKING: the store
 *   instance that wrote it last and until when; that instance renews it,
 *   and any instance fails a task whose lease lapsed (D72).
 * - (4) the A2A version a push config was registered with, when not 1.0
 *   (its notifications' form, D112).
 * - (5) a2a_push_outbox: a push notification due, per event and push config,
 *   written with the event and claimed by the instance delivering it until
 *   it is delivered (D74); events keep their executor metadata for it.
 * - (6) an index for ListTasks filtered by state: a rare state among many
 *   tasks of one owner is found without walking the others (D75).
 * - (7) whether a lease is only a claim, taken for a message not yet written
 *   (D79): the reaper lets a lapsed claim go instead of failing the task,
 *   and a message is written only by the instance that holds the lease.
 *
 * Ids are `COLLATE "C"`: ListTasks orders ties by id in code point order,
 * as the in-memory store does, whatever the database's locale.
 */
import type { SqlDriver } from "./driver.js";

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: "tasks, history, artifacts, push configs and the event log",
    sql: `
CREATE TABLE a2a_tasks (
  id          text COLLATE "C" PRIMARY KEY,
  tenant      text NOT NULL,
  owner       text NOT NULL,
  context_id  text NOT NULL,
  state       integer NOT NULL,
  status_ms   bigint NOT NULL,
  finished_ms bigint,
  version     bigint NOT NULL,
  history_len integer NOT NULL,
  task        bytea NOT NULL
);
CREATE INDEX a2a_tasks_by_owner ON a2a_tasks (tenant, owner, status_ms DESC, id DESC);
CREATE INDEX a2a_tasks_by_context ON a2a_tasks (tenant, owner, context_id, status_ms DESC, id DESC);
CREATE INDEX a2a_tasks_finished ON a2a_tasks (finished_ms) WHERE finished_ms IS NOT NULL;

CREATE TABLE a2a_task_messages (
  task_id text COLLATE "C" NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
  seq     integer NOT NULL,
  message bytea NOT NULL,
  PRIMARY KEY (task_id, seq)
);

CREATE TABLE a2a_task_artifacts (
  task_id  text COLLATE "C" NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
  idx      integer NOT NULL,
  artifact bytea NOT NULL,
  PRIMARY KEY (task_id, idx)
);

CREATE TABLE a2a_push_configs (
  task_id          text COLLATE "C" NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
  id               text COLLATE "C" NOT NULL,
  tenant           text NOT NULL,
  url              text NOT NULL,
  token            text NOT NULL,
  auth_scheme      text,
  auth_credentials text,
  PRIMARY KEY (task_id, id)
);

CREATE TABLE a2a_task_events (
  task_id text COLLATE "C" NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
  seq     bigint NOT NULL,
  kind    text NOT NULL,
  idx     integer,
  at_ms   bigint NOT NULL,
  body    bytea,
  PRIMARY KEY (task_id, seq)
);
`,
  },
  {
    version: 2,
    name: "event writers, chunk flags and a notification per event",
    sql: `
ALTER TABLE a2a_task_events
  ADD COLUMN writer text,
  ADD COLUMN append boolean NOT NULL DEFAULT false,
  ADD COLUMN last_chunk boolean NOT NULL DEFAULT false;

CREATE FUNCTION a2a_task_event_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('a2a_task_events', json_build_object('t', NEW.task_id, 's', NEW.seq, 'w', NEW.writer)::text);
  RETURN NULL;
END
$$;

CREATE TRIGGER a2a_task_event_notify AFTER INSERT ON a2a_task_events
  FOR EACH ROW EXECUTE FUNCTION a2a_task_event_notify();
`,
  },
  {
    version: 3,
    name: "leases of running tasks",
    sql: `
ALTER TABLE a2a_tasks
  ADD COLUMN lease_owner text,
  ADD COLUMN lease_until bigint;
CREATE INDEX a2a_tasks_leases ON a2a_tasks (lease_until) WHERE lease_until IS NOT NULL;
`,
  },
  {
    version: 4,
    name: "push config protocol version",
    sql: `ALTER TABLE a2a_push_configs ADD COLUMN protocol_version text;`,
  },
  {
    version: 5,
    name: "push outbox and event metadata",
    sql: `
ALTER TABLE a2a_task_events ADD COLUMN metadata text;
CREATE TABLE a2a_push_outbox (
  task_id     text COLLATE "C" NOT NULL REFERENCES a2a_tasks (id) ON DELETE CASCADE,
  seq         bigint NOT NULL,
  config_id   text COLLATE "C" NOT NULL,
  claimed_by  text NOT NULL,
  claim_until bigint NOT NULL,
  PRIMARY KEY (task_id, seq, config_id)
);
CREATE INDEX a2a_push_outbox_claims ON a2a_push_outbox (claim_until);
CREATE INDEX a2a_push_outbox_claimant ON a2a_push_outbox (claimed_by);
`,
  },
  {
    version: 6,
    name: "ListTasks by state",
    sql: `
CREATE INDEX a2a_tasks_by_state ON a2a_tasks (tenant, owner, state, status_ms DESC, id DESC);
`,
  },
  {
    version: 7,
    name: "claims apart from leases",
    sql: `ALTER TABLE a2a_tasks ADD COLUMN lease_claim boolean NOT NULL DEFAULT false;`,
  },
];

/** Any fixed number: the advisory lock two instances starting at once take, so one migrates and the other waits. */
const migrationLock = 0x0a2a_5747;

/**
 * Applies the migrations this database has not had, each in its own
 * transaction with its record. Answers the schema version now.
 */
export async function migrate(driver: SqlDriver, list: readonly Migration[] = migrations): Promise<number> {
  return driver.transaction(async (query, exec) => {
    await query("SELECT pg_advisory_xact_lock($1)", [migrationLock]);
    await exec(`CREATE TABLE IF NOT EXISTS a2a_schema_migrations (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`);
    const rows = await query<{ version: number }>("SELECT version FROM a2a_schema_migrations ORDER BY version");
    const applied = new Set(rows.map((r) => r.version));
    const newest = list.at(-1)?.version ?? 0;
    const ahead = rows.filter((r) => r.version > newest);
    if (ahead.length > 0) {
      throw new Error(
        `the ${driver.engine} task store's schema is at version ${ahead.at(-1)!.version}, newer than this code's ${newest}: upgrade protoc-gen-a2a before opening it`,
      );
    }
    for (const m of list) {
      if (applied.has(m.version)) continue;
      await exec(m.sql);
      await query("INSERT INTO a2a_schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
    }
    return newest;
  });
}
