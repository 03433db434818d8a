/** The README's nginx example is examples/nginx/a2a.conf, which test/proxy/nginx.test.ts runs in nginx: the two cannot drift. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "../support/protos.js";

test("the README quotes examples/nginx/a2a.conf verbatim", () => {
  const conf = readFileSync(join(projectRoot, "examples/nginx/a2a.conf"), "utf8");
  const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
  expect(readme).toContain("```nginx\n" + conf + "```");
});
