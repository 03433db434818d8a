/**
 * Every statement the SQL task store runs, the same text on PGlite and on
 * a Postgres server (driver.ts). Parameters are cast where they are used,
 * so neither engine has to guess a type, and bigints are read as float8
 * (exact for epoch milliseconds), so both answer numbers.
 */

/** What a lapsed lease of a run is (D72): not a claim, unless the task is in a state $n (SUBMITTED, WORKING) a run set. */
const runLease = (n: number) => `(NOT lease_claim OR state = ANY($${n}::int[]))`;

/**
 * The task row, its history and its artifacts, the push configs its
 * SendMessage brought, the `created` event, and with $16 its outbox rows
 * (one per config, D74), claimed by $14 until $17: one statement.
 */
export const createTask = `
WITH t AS (
  INSERT INTO a2a_tasks (id, tenant, owner, context_id, state, status_ms, finished_ms, version, history_len, task, lease_owner, lease_until)
  VALUES ($1::text, $2::text, $3::text, $4::text, $5::int, $6::bigint, $7::bigint, 1, $8::int, $9::bytea, $14::text, $15::bigint)
  RETURNING id
), m AS (
  INSERT INTO a2a_task_messages (task_id, seq, message)
  SELECT $1::text, n::int, message FROM unnest($10::bytea[]) WITH ORDINALITY AS h (message, n)
), a AS (
  INSERT INTO a2a_task_artifacts (task_id, idx, artifact)
  SELECT $1::text, (n - 1)::int, artifact FROM unnest($11::bytea[]) WITH ORDINALITY AS r (artifact, n)
), c AS (
  INSERT INTO a2a_push_configs (task_id, id, tenant, url, token, auth_scheme, auth_credentials, protocol_version)
  SELECT $1::text, x.id, $2::text, x.url, x.token, x.scheme, x.credentials, x.version
  FROM unnest($18::text[], $19::text[], $20::text[], $21::text[], $22::text[], $23::text[]) AS x (id, url, token, scheme, credentials, version)
  ON CONFLICT (task_id, id) DO NOTHING
), o AS (
  INSERT INTO a2a_push_outbox (task_id, seq, config_id, claimed_by, claim_until)
  SELECT $1::text, 1, x.id, $14::text, $17::bigint FROM unnest($18::text[]) AS x (id) WHERE $16::boolean
  RETURNING 1
)
INSERT INTO a2a_task_events (task_id, seq, kind, idx, at_ms, body, writer)
SELECT id, 1, 'created', NULL, $12::bigint, $13::bytea, $14::text FROM t
RETURNING (SELECT count(*) FROM o)::int AS pushes`;

/**
 * One change: the task row (its version and history length counted up
 * under the row's lock, which orders concurrent writers), the message or
 * artifact it wrote, and its event at seq = the new version. Writes
 * nothing when the task is gone or finished: a task is terminal once, and
 * what an instance that has not heard of it yet (a cancel made on another)
 * still writes is dropped. With $17, only if the task's lease lapsed
 * before then (the lease reaper's FAILED, D72). With $19, a push
 * notification due per push config the task has now, whichever instance
 * made it (the outbox, D74), claimed by $18 until $20; $21 is the
 * executor's event metadata (JSON). With $22 (a message, D79), only if
 * writer $13 holds the task's lease: a claim that lapsed and was let go
 * (another instance may have claimed the task since) writes nothing.
 */
export const updateTask = `
WITH t AS (
  UPDATE a2a_tasks SET
    version = version + 1,
    history_len = history_len + $2::int,
    state = $3::int,
    status_ms = $4::bigint,
    task = $5::bytea,
    finished_ms = CASE WHEN $6::boolean THEN coalesce(finished_ms, $7::bigint) ELSE finished_ms END,
    -- Another instance's lease that has not lapsed is kept (D79): only a terminal status, or the
    -- writer that holds it, changes it.
    lease_owner = CASE WHEN $6::boolean OR lease_until IS NULL OR lease_until < $7::bigint OR lease_owner = $13::text THEN $13::text ELSE lease_owner END,
    lease_until = CASE WHEN $6::boolean OR lease_until IS NULL OR lease_until < $7::bigint OR lease_owner = $13::text THEN $16::bigint ELSE lease_until END,
    -- The holder's first write makes its claim a run's lease: the reaper fails that task if it lapses.
    lease_claim = CASE WHEN $6::boolean OR lease_until IS NULL OR lease_until < $7::bigint OR lease_owner = $13::text THEN false ELSE lease_claim END
  WHERE id = $1::text AND finished_ms IS NULL
    AND ($17::bigint IS NULL OR lease_until < $17::bigint)
    AND (NOT $22::boolean OR (lease_owner = $13::text AND lease_until IS NOT NULL))
  RETURNING version, history_len
), m AS (
  INSERT INTO a2a_task_messages (task_id, seq, message)
  SELECT $1::text, history_len, $8::bytea FROM t WHERE $8::bytea IS NOT NULL
), a AS (
  INSERT INTO a2a_task_artifacts (task_id, idx, artifact)
  SELECT $1::text, $9::int, $10::bytea FROM t WHERE $10::bytea IS NOT NULL
  ON CONFLICT (task_id, idx) DO UPDATE SET artifact = excluded.artifact
), o AS (
  INSERT INTO a2a_push_outbox (task_id, seq, config_id, claimed_by, claim_until)
  SELECT $1::text, t.version, c.id, $18::text, $20::bigint FROM t, a2a_push_configs c
  WHERE $19::boolean AND c.task_id = $1::text
  RETURNING 1
)
INSERT INTO a2a_task_events (task_id, seq, kind, idx, at_ms, body, writer, append, last_chunk, metadata)
SELECT $1::text, version, $11::text, $9::int, $7::bigint, $12::bytea, $13::text, $14::boolean, $15::boolean, $21::text FROM t
RETURNING seq::float8 AS seq, (SELECT count(*) FROM o)::int AS pushes`;

const history = `ARRAY(SELECT message FROM a2a_task_messages WHERE task_id = t.id ORDER BY seq) AS history`;
const artifacts = `ARRAY(SELECT artifact FROM a2a_task_artifacts WHERE task_id = t.id ORDER BY idx) AS artifacts`;

/** Whether instance $2 holds the lease of task $1, which is not finished, and it had not lapsed at $3. */
export const holdsLease = `SELECT 1 FROM a2a_tasks WHERE id = $1::text AND lease_owner = $2::text AND lease_until >= $3::bigint AND finished_ms IS NULL`;

/** Whether task $1 is not finished, and its version (the seq of its last event); no row when it is gone. */
export const openAndVersion = `SELECT finished_ms IS NULL AS open, version::float8 AS version FROM a2a_tasks WHERE id = $1::text`;

export const getTask = `
SELECT t.tenant, t.owner, t.version::float8 AS version, t.task, ${history}, ${artifacts}
FROM a2a_tasks t WHERE t.id = $1::text`;

/**
 * Takes task $1 for instance $2 until $3 (D79), unless another instance holds a lease on it (one
 * that lapsed is the reaper's, D72); with whether it was taken, whether the task is still open,
 * and its version. No row: the task is gone. A task no one held is taken as a claim; this
 * instance's own lease of a run stays one.
 */
export const claimTask = `
WITH c AS (
  UPDATE a2a_tasks SET lease_owner = $2::text, lease_until = $3::bigint, lease_claim = (lease_until IS NULL OR lease_claim)
  WHERE id = $1::text AND finished_ms IS NULL AND (lease_until IS NULL OR lease_owner = $2::text)
  RETURNING version
)
SELECT (SELECT count(*) FROM c)::int AS taken, t.finished_ms IS NULL AS open,
  -- Taken: the version the claim saw (a write it waited for is in it), not the statement's snapshot's.
  coalesce((SELECT version FROM c), t.version)::float8 AS version
FROM a2a_tasks t WHERE t.id = $1::text`;

/**
 * Gives instance $2's claim of task $1 back: no lease, unless its state $3 (SUBMITTED, WORKING) has
 * one of its own. Only a claim: a run's lease (a message written since, of this instance's next
 * run) is never given back.
 */
export const unclaimTask = `
UPDATE a2a_tasks SET lease_until = NULL, lease_claim = false
WHERE id = $1::text AND lease_owner = $2::text AND lease_claim AND finished_ms IS NULL AND NOT (state = ANY($3::int[]))`;

/**
 * ListTasks' filter (spec 3.1.4), always within one tenant and owner (D26). The time bound is
 * compared as a bigint, so that it bounds the index's status_ms range (D75); for whole
 * milliseconds, >= ceil(x) is >= x.
 */
const listFilter = `
t.tenant = $1::text AND t.owner = $2::text
AND ($3::text = '' OR t.context_id = $3::text)
AND ($4::int = 0 OR t.state = $4::int)
AND ($5::float8 IS NULL OR t.status_ms >= ceil($5::float8)::bigint)`;

/** One page, newest status first, ties by id descending; the cursor is the last row of the page before. */
export const listTasks = `
SELECT t.id, t.status_ms::float8 AS status_ms, t.task, ${history}, ${artifacts}
FROM a2a_tasks t
WHERE ${listFilter}
AND ($6::bigint IS NULL OR (t.status_ms, t.id) < ($6::bigint, $7::text COLLATE "C"))
ORDER BY t.status_ms DESC, t.id DESC
LIMIT $8::int`;

export const countTasks = `SELECT count(*)::int AS n FROM a2a_tasks t WHERE ${listFilter}`;

/**
 * At most $2 of the tasks finished before $1, with everything of theirs (ON DELETE CASCADE): a
 * batch, so each statement stays short under statement_timeout (D117).
 */
export const deleteFinished = `
DELETE FROM a2a_tasks WHERE id IN (
  SELECT id FROM a2a_tasks WHERE finished_ms IS NOT NULL AND finished_ms < $1::bigint LIMIT $2::integer
) RETURNING 1`;

/**
 * At most $4 of the tasks waiting for their client (a state in $2, INPUT_REQUIRED or AUTH_REQUIRED)
 * whose status is older than $1 and that no run holds (its lease lapsed or never taken, as of $3),
 * with everything of theirs: a message taking such a task over claims it first (D79), so it stays.
 * Each is announced on the event channel (D71) as deleted by writer $5, at commit: the instances
 * following it read its log, find it gone, and end their streams of it.
 */
export const deleteInterrupted = `
WITH d AS (
  DELETE FROM a2a_tasks WHERE id IN (
    SELECT id FROM a2a_tasks
    WHERE finished_ms IS NULL AND state = ANY($2::int[]) AND status_ms < $1::bigint
      AND (lease_until IS NULL OR lease_until < $3::bigint)
    LIMIT $4::integer
  ) RETURNING id
)
SELECT d.id FROM d CROSS JOIN LATERAL (
  SELECT pg_notify('a2a_task_events', json_build_object('t', d.id, 'w', $5::text, 'gone', true)::text)
) n`;

const configColumns = `task_id, id, tenant, url, token, auth_scheme, auth_credentials, protocol_version`;

export const putConfig = `
INSERT INTO a2a_push_configs (${configColumns})
VALUES ($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text)
ON CONFLICT (task_id, id) DO UPDATE SET
  tenant = excluded.tenant, url = excluded.url, token = excluded.token,
  auth_scheme = excluded.auth_scheme, auth_credentials = excluded.auth_credentials,
  protocol_version = excluded.protocol_version`;

export const getConfig = `SELECT ${configColumns} FROM a2a_push_configs WHERE task_id = $1::text AND id = $2::text`;

export const configsOf = `SELECT ${configColumns} FROM a2a_push_configs WHERE task_id = $1::text ORDER BY id`;

export const listConfigs = `
SELECT ${configColumns} FROM a2a_push_configs
WHERE task_id = $1::text AND ($2::text IS NULL OR id > $2::text COLLATE "C")
ORDER BY id LIMIT $3::int`;

export const deleteConfig = `DELETE FROM a2a_push_configs WHERE task_id = $1::text AND id = $2::text`;

/**
 * What a follower reads (D71): task $1's events after $2, in order, behind one row for the task
 * itself (seq NULL); no row at all when the task is gone (deleted).
 */
export const followEvents = `
SELECT e.seq::float8 AS seq, e.kind, e.idx, e.at_ms::float8 AS at_ms, e.body, e.writer, e.append, e.last_chunk, e.metadata
FROM a2a_tasks t LEFT JOIN a2a_task_events e ON e.task_id = t.id AND e.seq > $2::bigint
WHERE t.id = $1::text ORDER BY e.seq NULLS FIRST`;

/** A task's events after `seq`, in order. */
export const eventsAfter = `
SELECT seq::float8 AS seq, kind, idx, at_ms::float8 AS at_ms, body, writer, append, last_chunk, metadata
FROM a2a_task_events WHERE task_id = $1::text AND seq > $2::bigint ORDER BY seq`;

/**
 * The leases this instance holds, and its outbox claims, renewed (D72, D74); not those of the
 * tasks in $3, whose terminal status this instance could not write (their leases lapse, and the
 * reaper fails them once the database takes writes again).
 */
export const renewLeases = `
WITH o AS (UPDATE a2a_push_outbox SET claim_until = $2::bigint WHERE claimed_by = $1::text)
UPDATE a2a_tasks SET lease_until = $2::bigint
WHERE lease_owner = $1::text AND lease_until IS NOT NULL AND finished_ms IS NULL AND NOT (id = ANY($3::text[]))`;

/** Which of the tasks in $1 instance $2's renewal would not touch: finished, deleted, or holding no lease of its. */
export const notRenewedOf = `
SELECT x.id FROM unnest($1::text[]) AS x(id)
WHERE NOT EXISTS (
  SELECT 1 FROM a2a_tasks t
  WHERE t.id = x.id AND t.finished_ms IS NULL AND t.lease_owner = $2::text AND t.lease_until IS NOT NULL)`;

/**
 * Tasks with outbox rows whose claim lapsed before $1 (the instance delivering them died), oldest
 * first. Not a task whose lease lapsed too (D72): the instance that fails it takes its rows with
 * it, before the FAILED. A task another instance holds (it took the task up after the death, D79)
 * is one: its rows were left for as long as that run held the task. Not one the dead instance
 * itself still holds (a claim or message of its after its last renewal outlives its rows' claims):
 * its lease lapses within leaseMs, and the reaper then sends the rows before the FAILED, where
 * taking them now could have them sent after it, by another instance.
 */
export const lapsedPushTasks = `
SELECT o.task_id FROM a2a_push_outbox o JOIN a2a_tasks t ON t.id = o.task_id
WHERE o.claim_until < $1::bigint
  AND (t.lease_until IS NULL OR (t.lease_until >= $1::bigint AND t.lease_owner IS DISTINCT FROM o.claimed_by))
GROUP BY o.task_id ORDER BY min(o.claim_until) LIMIT 100`;

/**
 * All of task $1's outbox rows whose claim lapsed before $2, claimed by $3 until $4: a task's
 * rows go to one instance together (a second claiming at once waits for the row locks, then
 * finds them claimed), so its notifications keep their order (D74).
 */
export const claimTaskPushes = `
UPDATE a2a_push_outbox SET claimed_by = $3::text, claim_until = $4::bigint
WHERE task_id = $1::text AND claim_until < $2::bigint
RETURNING seq::float8 AS seq`;

/** The task row, if its lease of a run lapsed before $2 (states $3 as in runLease), locked for the one instance that fails it (D72; a claim is let go, D79). */
export const lockLapsedTask = `
SELECT id FROM a2a_tasks WHERE id = $1::text AND finished_ms IS NULL AND lease_until < $2::bigint AND ${runLease(3)}
FOR UPDATE SKIP LOCKED`;

/**
 * The outbox rows $1 claims of the events ($2 task, $3 seq) pairs, with what a notification is
 * made of: the event, the task's context, the config (NULL when it was deleted since), in order.
 */
export const claimedPushes = `
SELECT o.task_id, o.seq::float8 AS seq, o.config_id, e.kind, e.body, e.append, e.last_chunk, e.metadata,
  t.context_id, c.url, c.token, c.auth_scheme, c.auth_credentials, c.protocol_version
FROM unnest($2::text[], $3::bigint[]) AS k (task_id, seq)
JOIN a2a_push_outbox o ON o.task_id = k.task_id AND o.seq = k.seq
JOIN a2a_task_events e ON e.task_id = o.task_id AND e.seq = o.seq
JOIN a2a_tasks t ON t.id = o.task_id
LEFT JOIN a2a_push_configs c ON c.task_id = o.task_id AND c.id = o.config_id
WHERE o.claimed_by = $1::text
ORDER BY o.task_id, o.seq, o.config_id`;

/**
 * Every outbox row $1 claims of the tasks in $2, as claimedPushes answers them, in order: what an
 * instance reads again once a read-back of its own rows failed, or a write or a claim of rows lost
 * its answer (D74), so it sends them itself, and before the task's newer rows.
 */
export const ownPushes = `
SELECT o.task_id, o.seq::float8 AS seq, o.config_id, e.kind, e.body, e.append, e.last_chunk, e.metadata,
  t.context_id, c.url, c.token, c.auth_scheme, c.auth_credentials, c.protocol_version
FROM a2a_push_outbox o
JOIN a2a_task_events e ON e.task_id = o.task_id AND e.seq = o.seq
JOIN a2a_tasks t ON t.id = o.task_id
LEFT JOIN a2a_push_configs c ON c.task_id = o.task_id AND c.id = o.config_id
WHERE o.task_id = ANY($2::text[]) AND o.claimed_by = $1::text
ORDER BY o.task_id, o.seq, o.config_id`;

/** A notification delivered (or given up on): out of the outbox. */
export const deletePush = `DELETE FROM a2a_push_outbox WHERE task_id = $1::text AND seq = $2::bigint AND config_id = $3::text`;

/**
 * Claims that lapsed before $1 (D79): their instance died, or stalled past its lease, before it
 * wrote the message it claimed the task for. Let go: the task waits for its input as before the
 * claim, and a late message of that instance is no longer written (updateTask's $22). Not on a
 * task in a state $2 (SUBMITTED, WORKING) that another instance's run wrote meanwhile: a run
 * works on that one, and its lapsed lease is failed as any run's.
 */
export const dropLapsedClaims = `
UPDATE a2a_tasks SET lease_until = NULL, lease_claim = false
WHERE lease_until < $1::bigint AND lease_claim AND finished_ms IS NULL AND NOT (state = ANY($2::int[]))`;

/** Tasks whose lease of a run lapsed before $1 (states $2 as in runLease): their instance stopped renewing it (D72). */
export const lapsedLeases = `
SELECT id FROM a2a_tasks
WHERE lease_until < $1::bigint AND finished_ms IS NULL AND ${runLease(2)}
ORDER BY lease_until LIMIT 100`;
