/**
 * The TaskStore conformance suite (store-conformance.ts) on the SQL store
 * over a Postgres server of the suite's own (test/support/postgres.ts:
 * initdb and pg_ctl in a temporary directory, a free loopback port). Each
 * store is an instance with its own connection pool, as each agent
 * instance has; the restart test reads with a new one what another wrote.
 */
import { createPostgresTaskStore, type TaskStore } from "protoc-gen-a2a/runtime/tasks";
import { startPostgres, type TestPostgres } from "../support/postgres.js";
import { describeTaskStore } from "./store-conformance.js";

let server: TestPostgres;

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(async () => {
  await server?.stop();
});

const open = () => createPostgresTaskStore({ connectionString: server.url });

describeTaskStore("Postgres", {
  open,
  reopen: open,
  close: async (store: TaskStore) => store.close?.(),
});
