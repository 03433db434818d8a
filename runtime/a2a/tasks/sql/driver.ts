/**
 * The two engines the SQL task store runs on, behind one small interface.
 * Both speak PostgreSQL: the store's queries (queries.ts) are the same text
 * on each, with `$n` parameters. What differs is only how a connection is
 * had, and it is all here:
 *
 * - PGlite (Postgres compiled to WASM, in this process, a data directory on
 *   disk) is one connection: a query is `db.query`, a script of several
 *   statements `db.exec`, a transaction `db.transaction`.
 * - A Postgres server through node-postgres (`pg`) is a pool of
 *   connections: a transaction holds one client from BEGIN to COMMIT, and a
 *   script is sent as one simple-protocol query.
 *
 * Values come back alike once the queries cast them (queries.ts casts every
 * bigint to float8, since pg answers int8 as a string and PGlite as a
 * number); bytea is a Uint8Array from both (a Buffer from pg).
 *
 * The drivers are optional peer dependencies, imported only by the factory
 * of their engine (as grpc-js is only by the gRPC entry), and typed here by
 * the few members used, so this file's types need neither package.
 */

import { inBackground } from "../../../core/background.js";

/** Runs one statement with `$n` parameters and answers its rows. */
export type Query = <R = Record<string, unknown>>(text: string, params?: readonly unknown[]) => Promise<R[]>;

export interface SqlDriver {
  /** "pglite" or "postgres": for messages. */
  readonly engine: string;
  readonly query: Query;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (query: Query, exec: (script: string) => Promise<void>) => Promise<T>): Promise<T>;
  /**
   * LISTENs on `channel`: `onPayload` gets each notification's payload, `onLost` the error that
   * ended the listening connection (it does not listen any more then). Answers UNLISTEN.
   */
  listen(channel: string, onPayload: (payload: string) => void, onLost: (error: unknown) => void): Promise<() => Promise<void>>;
  /** Releases the connection or pool, when the store opened it. */
  close(): Promise<void>;
}

/** The members of a PGlite instance the store uses (`@electric-sql/pglite`). */
export interface PGliteLike {
  query<R>(text: string, params?: unknown[]): Promise<{ rows: R[] }>;
  exec(text: string): Promise<unknown>;
  transaction<T>(fn: (tx: { query<R>(text: string, params?: unknown[]): Promise<{ rows: R[] }>; exec(text: string): Promise<unknown> }) => Promise<T>): Promise<T>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** The members of a node-postgres Pool the store uses (`pg`). */
export interface PgPoolLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  connect(): Promise<PgClientLike>;
  end(): Promise<void>;
}

export interface PgClientLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  release(error?: Error | boolean): void;
  on(event: "notification", listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  removeAllListeners(event: "notification" | "error"): unknown;
}

export function pgliteDriver(db: PGliteLike, owned: boolean): SqlDriver {
  return {
    engine: "pglite",
    query: async <R>(text: string, params: readonly unknown[] = []) => (await db.query<R>(text, params as unknown[])).rows,
    transaction: (fn) =>
      db.transaction((tx) =>
        fn(
          async <R>(text: string, params: readonly unknown[] = []) => (await tx.query<R>(text, params as unknown[])).rows,
          async (script) => void (await tx.exec(script)),
        ),
      ),
    // One process, one connection: nothing to lose.
    listen: (channel, onPayload) => db.listen(channel, onPayload),
    close: async () => {
      if (owned) await db.close();
    },
  };
}

export function pgDriver(pool: PgPoolLike, owned: boolean): SqlDriver {
  return {
    engine: "postgres",
    query: async <R>(text: string, params: readonly unknown[] = []) => (await pool.query(text, params as unknown[])).rows as R[],
    async transaction(fn) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query("BEGIN");
        const result = await fn(
          async <R>(text: string, params: readonly unknown[] = []) => (await client.query(text, params as unknown[])).rows as R[],
          // No parameters: node-postgres sends it as a simple query, which may hold several statements.
          async (script) => void (await client.query(script)),
        );
        await client.query("COMMIT");
        return result;
      } catch (err) {
        try {
          await client.query("ROLLBACK");
        } catch (rollback) {
          // A connection that cannot roll back is not given back to the pool.
          broken = rollback instanceof Error ? rollback : new Error(String(rollback));
        }
        throw err;
      } finally {
        client.release(broken);
      }
    },
    async listen(channel, onPayload, onLost) {
      // A connection of the pool held for as long as the store listens.
      const client = await pool.connect();
      let done = false;
      const stop = (error?: Error) => {
        if (done) return false;
        done = true;
        client.removeAllListeners("notification");
        client.removeAllListeners("error");
        // Swallow what the dying connection still reports.
        client.on("error", () => undefined);
        client.release(error);
        return true;
      };
      client.on("notification", (m) => {
        if (m.channel === channel && m.payload !== undefined) onPayload(m.payload);
      });
      client.on("error", (err) => {
        if (stop(err)) onLost(err);
      });
      try {
        await client.query(`LISTEN ${quoteIdent(channel)}`);
      } catch (err) {
        stop(err instanceof Error ? err : new Error(String(err)));
        throw err;
      }
      return async () => {
        if (done) return;
        try {
          await client.query(`UNLISTEN ${quoteIdent(channel)}`);
          stop();
        } catch (err) {
          stop(err instanceof Error ? err : new Error(String(err)));
        }
      };
    },
    close: async () => {
      if (owned) await pool.end();
    },
  };
}

/** A channel name as an SQL identifier: LISTEN takes no parameter. */
function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * Imports an optional peer dependency, or says which package to install:
 * the store's engines are chosen at run time, and an agent on one engine
 * does not install the other's driver.
 */
export async function importPeer<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    // In the background context (D35): the loader keeps its job for the module, with the context it
    // was made in, for good; imported inside a call's span, the span was kept as long.
    return await inBackground(load);
  } catch (err) {
    const code = (err as { code?: unknown } | undefined)?.code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      throw new Error(`this task store needs the package "${name}": npm install ${name}`, { cause: err });
    }
    throw err;
  }
}
