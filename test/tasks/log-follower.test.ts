/**
 * D71's follower reads a task's event log when told to; a read that fails
 * (a pool that timed out, a statement cancelled) is tried again with
 * backoff until one succeeds, and reported once. Before, nothing read the
 * log again until another notice came, which may never: a stream of the
 * task here stayed open, and a cancel from another instance never reached
 * the executor. A fake driver and log stand in for the database here; the
 * SQL store's own tests run the follower on PGlite and Postgres.
 */
import { LogFollowers, type LogRow } from "../../runtime/a2a/tasks/sql/log-follower.js";
import type { SqlDriver } from "../../runtime/a2a/tasks/sql/driver.js";
import { deferred, within } from "../support/task-clients.js";

const driver = {
  engine: "fake",
  listen: async () => async () => undefined,
} as unknown as SqlDriver;

test("a failed read is tried again until one succeeds, reported once, and the events reach the follower in order", async () => {
  const log: LogRow[] = [
    { seq: 1, writer: "other" },
    { seq: 2, writer: "other" },
  ];
  let failures = 3;
  const reads: number[] = [];
  const errors: unknown[] = [];
  const followers = new LogFollowers<LogRow>(
    driver,
    "me",
    async (_taskId, afterSeq) => {
      reads.push(afterSeq);
      if (failures-- > 0) throw new Error("timeout exceeded when trying to connect (for the test)");
      return log.filter((r) => r.seq > afterSeq);
    },
    (err) => errors.push(err),
  );
  const seen: number[] = [];
  const both = deferred();
  const stop = followers.follow("t1", 0, (row) => {
    seen.push(row.seq);
    if (seen.length === 2) both.resolve();
  }, true);
  try {
    await within("the events, after three failed reads", both.promise, 5000);
    expect(seen).toEqual([1, 2]);
    expect(reads).toEqual([0, 0, 0, 0]);
    expect(errors.map(String)).toEqual(["Error: timeout exceeded when trying to connect (for the test)"]);
  } finally {
    stop();
    await followers.close();
  }
});

test("a follower stopped while a retry waits is not read again", async () => {
  let reads = 0;
  const failed = deferred();
  const followers = new LogFollowers<LogRow>(
    driver,
    "me",
    async () => {
      reads++;
      failed.resolve();
      throw new Error("down (for the test)");
    },
    () => undefined,
  );
  const stop = followers.follow("t1", 0, () => undefined, true);
  await within("the first read to fail", failed.promise);
  stop();
  // Past the first retry's wait (100 ms): no second read. A window, as this is a negative.
  await new Promise((resolve) => setTimeout(resolve, 250));
  expect(reads).toBe(1);
  await followers.close();
});
