/**
 * ts-jest only transpiles; this is where the project's own code (plugin,
 * runtime, tests) and the generated/ folder are type-checked under --strict,
 * and the generated/ folder again under the strictest flags a user's
 * tsconfig may set.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectRoot } from "./support/protos.js";

test.each(["tsconfig.json", "tsconfig.generated.json"])("tsc -p %s reports nothing", (config) => {
  const result = spawnSync(join(projectRoot, "node_modules/.bin/tsc"), ["-p", join(projectRoot, config), "--noEmit"], {
    encoding: "utf8",
  });
  expect(result.stdout + result.stderr).toBe("");
  expect(result.status).toBe(0);
});

// A user compiles generated code with their own tsconfig, and the runtime only as its .d.ts: what
// these flags say of the runtime's sources (read here through paths) is not the user's concern.
test("the generated code compiles under a user's strictest flags (noPropertyAccessFromIndexSignature, exactOptionalPropertyTypes, isolatedDeclarations, ...)", () => {
  const result = spawnSync(join(projectRoot, "node_modules/.bin/tsc"), ["-p", join(projectRoot, "tsconfig.generated-strict.json"), "--noEmit"], {
    encoding: "utf8",
  });
  const inGenerated = (result.stdout + result.stderr).split("\n").filter((line) => line.startsWith("generated/"));
  expect(inGenerated).toEqual([]);
  // isolatedDeclarations is checked only when declarations are written.
  const declarations = mkdtempSync(join(tmpdir(), "a2a-decl-"));
  try {
    const emitted = spawnSync(join(projectRoot, "node_modules/.bin/tsc"), ["-p", join(projectRoot, "tsconfig.generated-strict.json"), "--noEmit", "false", "--emitDeclarationOnly", "--outDir", declarations], { encoding: "utf8" });
    expect((emitted.stdout + emitted.stderr).split("\n").filter((line) => line.startsWith("generated/"))).toEqual([]);
  } finally {
    rmSync(declarations, { recursive: true, force: true });
  }
  // tsc did read the generated code (an empty run would pass the check above).
  expect(spawnSync(join(projectRoot, "node_modules/.bin/tsc"), ["-p", join(projectRoot, "tsconfig.generated-strict.json"), "--listFilesOnly"], { encoding: "utf8" }).stdout).toContain("generated/a2a_codec.ts");
});
