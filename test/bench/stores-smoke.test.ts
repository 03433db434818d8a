/**
 * The smoke of `npm run bench:stores` (bench/stores.mjs, BENCH_SMOKE=1):
 * small sizes, every part on every store, so the bench keeps running; and
 * the query plans it prints show ListTasks served by the indexes (D75): a
 * page deep in the cursor is an index range scan, a state filter uses the
 * state index, never a sort of the owner's tasks.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { projectRoot } from "../support/protos.js";

test("bench:stores smoke: SendMessage and a stream on memory, PGlite and Postgres, ListTasks on its indexes", async () => {
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--import", "./test/support/ts-loader.mjs", join(projectRoot, "bench", "stores.mjs")],
      { cwd: projectRoot, env: { ...process.env, BENCH_SMOKE: "1" }, maxBuffer: 10 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? null), output: `${stdout}${stderr}` }),
    );
  });
  expect({ code, output: code === 0 ? "" : output }).toEqual({ code: 0, output: "" });
  for (const store of ["memory", "pglite", "postgres"]) expect(output).toMatch(new RegExp(`^\\| ${store} +\\| +[\\d,]+ \\|`, "m"));
  const plan = (what: string) => output.split(`EXPLAIN ANALYZE: ${what}\n`)[1]?.split("\n\n")[0] ?? "";
  expect(plan("page 20 deep")).toMatch(/Index Scan using a2a_tasks_by_owner .*\n.*Index Cond: .*ROW\(status_ms, id\) < ROW/);
  expect(plan("page of state WORKING")).toContain("Index Scan using a2a_tasks_by_state");
  for (const what of ["page 20 deep", "page of state WORKING"]) expect(plan(what)).not.toMatch(/Sort Key: t\./);
}, 120_000);
