/**
 * The suite watchdog of this test run (test/support/watchdog/): a jest run of three suites, one
 * blocked in a spawnSync whose child never exits, one spinning on microtasks, one that passes,
 * with a limit of 8 s (a worker on a loaded machine may take seconds to reach its test). Jest's
 * own timeout reaches neither. The run ends anyway: the blocked suite's child is killed (its test
 * fails with the spawnSync's signal), the spinning suite's worker is killed after its stack was
 * taken, and the output names both and where they were.
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { jest } from "@jest/globals";
import { projectRoot, scratchDir } from "./protos.js";

jest.setTimeout(120_000);

const scratch = scratchDir("watchdog");
afterAll(() => scratch.done());

test("a suite blocked in a child and one spinning in JavaScript are named, killed, and the run ends with them failed", async () => {
  const dir = scratch.dir;
  writeFileSync(join(dir, "blocked.test.mjs"), `import { spawnSync } from "node:child_process";\ntest("waits on a child", () => { expect(spawnSync("sleep", ["600"]).signal).toBe(null); });\n`);
  writeFileSync(join(dir, "spinning.test.mjs"), `test("spins", async () => {\n  for (;;) await null;\n});\n`);
  writeFileSync(join(dir, "fine.test.mjs"), `test("passes", () => { expect(1).toBe(1); });\n`);
  const watchdog = join(projectRoot, "test/support/watchdog");
  writeFileSync(
    join(dir, "jest.config.mjs"),
    `export default ${JSON.stringify({
      rootDir: dir,
      testEnvironment: "node",
      testMatch: ["**/*.test.mjs"],
      transform: {},
      maxWorkers: 2,
      reporters: ["default", join(watchdog, "reporter.mjs")],
      setupFilesAfterEnv: [join(watchdog, "setup.mjs")],
      cacheDirectory: join(dir, "cache"),
    })};\n`,
  );
  const jestBin = join(projectRoot, "node_modules/jest/bin/jest.js");
  const run = promisify(execFile)(process.execPath, ["--experimental-vm-modules", jestBin, "--config", join(dir, "jest.config.mjs")], {
    cwd: dir,
    // Its workers' inspectors on ports of their own, not 9229, which another run may hold.
    env: { ...process.env, A2A_SUITE_LIMIT_S: "8", NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --inspect-port=0` },
    timeout: 100_000,
  });
  const failed = await run.then(
    () => undefined,
    (err: { code?: number; stderr?: string }) => err,
  );
  expect(failed?.code).toBe(1);
  const out = failed?.stderr ?? "";
  expect(out).toMatch(/WATCHDOG: .*blocked\.test\.mjs has run for \d+ s/);
  expect(out).toMatch(/\d+ \(\d+ s old\): sleep 600/);
  expect(out).toMatch(/killing the processes it waits on/);
  expect(out).toMatch(/Received: "SIGKILL"/);
  expect(out).toMatch(/WATCHDOG: .*spinning\.test\.mjs has run for \d+ s/);
  expect(out).toMatch(/killing the worker \(\d+\)/);
  expect(out).toMatch(/where its JavaScript ran[^]*spinning\.test\.mjs:2:/);
  expect(out).toMatch(/Test Suites: 2 failed, 1 passed, 3 total/);
});
