/**
 * ts-morph is an optional peer dependency (D63): without it, an upgrade that
 * would edit the handler fails before writing anything, with a message that
 * says how to install it, and the report alone still works. Run in a child
 * process on the built package (dist/, built by `npm test`'s pretest) with
 * a resolve hook that hides ts-morph, as in a repo that never installed it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot, scratchDir, writeModule } from "../../support/protos.js";
import { a2aNext } from "./a2a-next.js";

const dist = join(projectRoot, "dist/cli/upgrade/index.js");
const hook = join(projectRoot, "test/cli/upgrade/without-ts-morph.mjs");

function run(script: string, env: Record<string, string>): { out: string; status: number | null } {
  const r = spawnSync(process.execPath, ["--import", hook, "--input-type=module", "-e", script], { encoding: "utf8", env: { ...process.env, ...env } });
  return { out: `${r.stdout}${r.stderr}`.trim(), status: r.status };
}

test("without ts-morph: the edit is refused with the install command, nothing is written, and the report alone works", () => {
  expect(existsSync(dist)).toBe(true); // `npm run build` first (npm test does)
  const { dir, done } = scratchDir("upgrade-no-ts-morph");
  try {
    mkdirSync(join(dir, "src"));
    const agent = 'import type { A2AServiceHandler } from "../gen/a2a_handler.js";\nexport const h: A2AServiceHandler = {\n};\n';
    writeFileSync(join(dir, "src/agent.ts"), agent);
    writeModule(join(dir, "next"), { "a2a.proto": a2aNext(projectRoot) });
    const common = `
      const { runUpgrade } = await import(${JSON.stringify(dist)});
      const options = { repoDir: process.env.DIR, oldProtoDir: [process.env.ROOT + "/vendor/a2a/v1.0.1", process.env.ROOT + "/vendor/googleapis"], newProtoDir: process.env.DIR + "/next", from: "v1.0.1", to: "next" };`;
    const env = { DIR: dir, ROOT: projectRoot };

    // The module resolution really is hidden.
    expect(run(`await import("ts-morph")`, env).out).toContain("hidden by without-ts-morph.mjs");

    const edit = run(`${common}
      try { await runUpgrade(options); console.log("no error"); } catch (e) { console.log(e.name + ": " + e.message); }`, env);
    expect(edit.out).toMatch(/^TsMorphMissingError: protoc-gen-a2a upgrade edits your handler with ts-morph, which is not installed .*`npm install --save-dev ts-morph`/);
    expect(readFileSync(join(dir, "src/agent.ts"), "utf8")).toBe(agent);

    const reportOnly = run(`${common}
      const r = await runUpgrade({ ...options, editHandlers: false });
      console.log(r.handlers === undefined, r.diff.services[0].added.map((x) => x.name).join(","));`, env);
    expect(reportOnly.out).toBe("true GetTaskStatus,WatchTasks");

    // A comment-only upgrade has nothing to edit, so it never needs ts-morph.
    const comments = run(`${common}
      const r = await runUpgrade({ ...options, newProtoDir: [process.env.ROOT + "/vendor/a2a/main", process.env.ROOT + "/vendor/googleapis"], to: "main" });
      console.log(r.diff.commentOnly, r.files.length);`, env);
    expect(comments.out).toBe("true 0");
  } finally {
    done();
  }
}, 60_000);
