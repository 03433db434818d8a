/**
 * Suites of the streaming and client paths run again on Node 22 and 24, the LTS lines beside 20
 * (D44): on 22 the JSON clients' every call failed (its own undici as the global dispatcher), an
 * SSE stream whose events were ready at once went out empty, and one that was once behind never
 * went on (a corked answer's lost 'drain'); 20 showed none of it. `.ci/run` takes those Nodes from
 * npm and names them in A2A_OTHER_NODES.
 */
import { jest } from "@jest/globals";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { projectRoot } from "../support/protos.js";

jest.setTimeout(300_000);
const run = promisify(execFile);

const suites = ["test/jsonrpc/backpressure.test.ts", "test/client/generated-client.test.ts", "test/tasks/lifecycle.test.ts"];
const otherNodes = (process.env.A2A_OTHER_NODES ?? "").split(":").filter((p) => p !== "");
// .ci/run takes them from npm on Linux x64 only.
const required = process.env.A2A_REQUIRE_SYSTEM_PACKAGES === "1" && process.platform === "linux" && process.arch === "x64";
if (otherNodes.length === 0 && !required) {
  process.stderr.write("\nNOTICE: skipping the suites on Node 22 and 24: A2A_OTHER_NODES names no node (.ci/run installs them). Set A2A_REQUIRE_SYSTEM_PACKAGES=1 to make it fail instead.\n\n");
}
const cache = mkdtempSync(join(tmpdir(), "a2a-other-nodes-"));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

(otherNodes.length > 0 || required ? test : test.skip)("A2A_OTHER_NODES names Node 22 and 24", () => {
  expect(otherNodes.map((node) => basename(dirname(dirname(node))))).toEqual(["node-22", "node-24"]);
});

for (const node of otherNodes) {
  test(`on ${node}: ${suites.join(", ")} pass`, async () => {
    const { stdout: version } = await run(node, ["-p", "process.versions.node"]);
    expect(`node-${version.split(".")[0]}`).toBe(basename(dirname(dirname(node))));
    let output: string;
    try {
      const done = await run(node, ["--experimental-vm-modules", "node_modules/jest/bin/jest.js", "--ci", "--cacheDirectory", cache, ...suites], {
        cwd: projectRoot,
        env: { ...process.env, A2A_OTHER_NODES: "" },
        maxBuffer: 64 << 20,
      });
      output = done.stderr;
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`jest on Node ${version.trim()} failed: ${e.message}\n${e.stderr ?? ""}`);
    }
    expect(output).toMatch(new RegExp(`Test Suites: ${suites.length} passed, ${suites.length} total`));
  });
}
