/**
 * A task store named by one string (D73): `memory:`, `pglite:` (an
 * in-memory PGlite), `pglite:<data dir>`, or `postgres://...` /
 * `postgresql://...`. The string is checked when it is given, so a typo
 * fails the agent's start with a message naming what to write; the SQL
 * engines' drivers are imported only when their store is opened.
 */
import { inBackground } from "../../core/background.js";
import { createInMemoryTaskStore } from "./in-memory-store.js";
import type { SqlTaskStoreOptions } from "./sql/sql-store.js";
import type { TaskStore } from "./task-store.js";

export type ParsedStoreUrl =
  | { readonly engine: "memory" }
  | { readonly engine: "pglite"; readonly dataDir: string | undefined }
  | { readonly engine: "postgres"; readonly connectionString: string };

const forms = "memory:, pglite:<data dir> (or pglite: for an in-memory database) or postgres://user:password@host:port/database";

/** The URL without its password, for messages. */
function shown(url: string): string {
  return url.replace(/^(\w+:\/\/[^:/@]*:)[^@/]*@/, "$1***@");
}

/** Parses a task store URL; throws an Error that says which forms there are. */
export function parseStoreUrl(url: string): ParsedStoreUrl {
  if (typeof url !== "string" || url.trim() === "") throw new Error(`a task store URL is empty: give one of ${forms}`);
  const colon = url.indexOf(":");
  const scheme = colon < 0 ? "" : url.slice(0, colon).toLowerCase();
  const rest = colon < 0 ? "" : url.slice(colon + 1);
  switch (scheme) {
    case "memory":
      if (rest !== "") throw new Error(`task store URL "${url}": memory: takes nothing after the colon (the in-memory store has no location)`);
      return { engine: "memory" };
    case "pglite": {
      // pglite://./data is read as pglite:./data: people write URLs with slashes.
      const dir = rest.startsWith("//") ? rest.slice(2) : rest;
      return { engine: "pglite", dataDir: dir === "" ? undefined : dir };
    }
    case "postgres":
    case "postgresql": {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        throw new Error(`task store URL "${shown(url)}" is not a URL: write it as postgres://user:password@host:port/database (percent-encode special characters)`);
      }
      if (!rest.startsWith("//") || parsed.hostname === "") {
        throw new Error(`task store URL "${shown(url)}" names no host: write it as postgres://user:password@host:port/database`);
      }
      return { engine: "postgres", connectionString: url };
    }
    default:
      throw new Error(`unknown task store URL "${shown(url)}": use ${forms}`);
  }
}

/** Opens the store a URL names (the SQL ones migrated and ready); `options` go to the SQL stores. */
export async function openTaskStore(url: string, options: SqlTaskStoreOptions = {}): Promise<TaskStore> {
  const parsed = parseStoreUrl(url);
  switch (parsed.engine) {
    case "memory":
      return createInMemoryTaskStore();
    case "pglite": {
      // Imported in the background context (D35): the loader keeps the import's job, and the context it was made in, for good.
      const { createPGliteTaskStore } = await inBackground(() => import("./sql/sql-store.js"));
      return createPGliteTaskStore({ ...options, ...(parsed.dataDir === undefined ? {} : { dataDir: parsed.dataDir }) });
    }
    case "postgres": {
      const { createPostgresTaskStore } = await inBackground(() => import("./sql/sql-store.js"));
      return createPostgresTaskStore({ ...options, connectionString: parsed.connectionString });
    }
  }
}
