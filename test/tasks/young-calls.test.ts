/**
 * A call's objects die young, also after a full collection (D116). The task
 * runtime kept the executions and live tasks of the calls in flight in a Set
 * and a Map: V8 keeps a rehashed table's entries, and once the table was old
 * (after the first full collection) each rehash left an old table whose
 * entries the next scavenge took for live, so every call was promoted with
 * all it held, and SendMessage cost about twice as much. The measure
 * (test/support/young-calls-agent.ts, in a process of its own with an 8 MB
 * semi-space) is what the old generation gains during calls made after a
 * full collection.
 */
import { fork } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { projectRoot } from "../support/protos.js";
import { within } from "../support/task-clients.js";

test("after a full collection, the calls that follow are not promoted with what they hold", async () => {
  const loader = pathToFileURL(join(projectRoot, "test/support/ts-loader.mjs")).href;
  const child = fork(join(projectRoot, "test/support/young-calls-agent.ts"), [], {
    execArgv: ["--import", loader, "--expose-gc", "--min-semi-space-size=8", "--max-semi-space-size=8"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`the agent exited (${code})`))));
  exited.catch(() => undefined);
  try {
    const { perCall } = await within("the agent's measure", Promise.race([new Promise<{ perCall: number }>((resolve) => child.once("message", (m) => resolve(m as { perCall: number }))), exited]), 60_000);
    // Promoted, every call took more than a kilobyte with it (1.35 KB here); dying young, a call
    // leaves only what the store keeps of it and what the scavenges met in flight (about 240 bytes).
    expect(perCall).toBeLessThan(600);
  } finally {
    child.kill();
  }
}, 90_000);
