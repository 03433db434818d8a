/** The README's complete agent is examples/minimal/agent.ts, which tsc checks: the two cannot drift. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../support/protos.js";

test("the README quotes examples/minimal/agent.ts verbatim, in under 30 lines", () => {
  const agent = readFileSync(join(projectRoot, "examples/minimal/agent.ts"), "utf8");
  const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
  expect(readme).toContain("```ts\n" + agent + "```");
  expect(agent.trimEnd().split("\n").length).toBeLessThan(30);
});
