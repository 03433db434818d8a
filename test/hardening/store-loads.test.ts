/**
 * A task store's engine is loaded only when its URL asks for it (D73): a
 * task handler on `memory:`, in a child process whose every loaded module
 * is recorded, loads neither the SQL store nor `pg` nor PGlite; one on
 * `pglite:` loads PGlite and not `pg` (the control that shows the recorder
 * sees a driver when one is loaded).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { jest } from "@jest/globals";
import { projectRoot, scratchDir } from "../support/protos.js";

jest.setTimeout(60_000);

const scratch = scratchDir("store-loads");
afterAll(() => scratch.done());

/** Opens and closes a task handler on `url` with every module the process loads recorded; the modules. */
function loadsFor(url: string): string[] {
  const out = join(scratch.dir, `loaded-${url.replace(/\W/g, "")}.txt`);
  const tasks = pathToFileURL(join(projectRoot, "generated/a2a_tasks.ts")).href;
  const script = `
const { createA2AServiceTaskHandler } = await import(${JSON.stringify(tasks)});
const handler = createA2AServiceTaskHandler(async function* () {}, { store: ${JSON.stringify(url)} });
await handler.ready();
await handler.close();
console.log("opened");`;
  const hook = (file: string) => ["--import", pathToFileURL(join(projectRoot, "test/support", file)).href];
  const result = spawnSync(process.execPath, [...hook("ts-loader.mjs"), ...hook("record-loads.mjs"), "--input-type=module", "-e", script], {
    cwd: projectRoot,
    env: { ...process.env, RECORD_LOADS: out },
    encoding: "utf8",
    // A process that does not end after close() has a handle left open: a failure, not a hung run.
    timeout: 45_000,
  });
  if (result.error !== undefined) throw new Error(`the handler on ${url} did not exit within 45 s (a handle left open after close()?): ${result.error.message}\n${result.stdout}\n${result.stderr}`);
  if (result.status !== 0 || !result.stdout.includes("opened")) throw new Error(`the handler on ${url} failed: ${result.stderr}`);
  return readFileSync(out, "utf8").split("\n").filter(Boolean);
}

const pglite = (loaded: readonly string[]) => loaded.filter((l) => l.includes("/@electric-sql/pglite/"));
const pg = (loaded: readonly string[]) => loaded.filter((l) => /\/node_modules\/pg(-[a-z-]+)?\//.test(l));
const sqlStore = (loaded: readonly string[]) => loaded.filter((l) => l.includes("/tasks/sql/"));

test("memory: loads no SQL store and no driver", () => {
  const loaded = loadsFor("memory:");
  expect(loaded.some((l) => l.includes("/tasks/in-memory-store"))).toBe(true);
  expect({ sql: sqlStore(loaded), pglite: pglite(loaded), pg: pg(loaded) }).toEqual({ sql: [], pglite: [], pg: [] });
});

test("control: pglite: loads PGlite and the SQL store, and not pg", () => {
  const loaded = loadsFor("pglite:");
  expect(pglite(loaded)).not.toEqual([]);
  expect(sqlStore(loaded)).not.toEqual([]);
  expect(pg(loaded)).toEqual([]);
});
