/**
 * ts-jest only transpiles; this is where the project's own code (plugin,
 * runtime, tests) and the generated/ folder are type-checked under --strict.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { projectRoot } from "./support/protos.js";

test.each(["tsconfig.json", "tsconfig.generated.json"])("tsc -p %s reports nothing", (config) => {
  const result = spawnSync(join(projectRoot, "node_modules/.bin/tsc"), ["-p", join(projectRoot, config), "--noEmit"], {
    encoding: "utf8",
  });
  expect(result.stdout + result.stderr).toBe("");
  expect(result.status).toBe(0);
});
