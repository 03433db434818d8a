// Prepares what the campaign's server child imports: generated/ and the
// reference agent's card and auth rule (examples/reference-agent/config.ts)
// transpiled type-free into fuzz/.build/ (ignored), beside each other as in
// the source tree, so their imports resolve; the runtime is the built one
// (dist/runtime, `npm run build`), reached as protoc-gen-a2a/runtime through
// the package's own exports, as bench/ does (bench/lib/harness.mjs).
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const fuzzDir = dirname(fileURLToPath(import.meta.url));
export const root = join(fuzzDir, "..");
export const buildDir = join(fuzzDir, ".build");

function newest(dir, ext) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith(ext)) t = Math.max(t, statSync(join(e.parentPath ?? e.path, e.name)).mtimeMs);
  }
  return t;
}

function transpile(file, dest) {
  const compilerOptions = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true };
  const { outputText } = ts.transpileModule(readFileSync(file, "utf8"), { compilerOptions, fileName: file });
  mkdirSync(dirname(dest), { recursive: true });
  writeFileSync(dest, outputText);
}

/** Transpiles generated/ and the reference agent's config into fuzz/.build/. */
export function prepare() {
  const generated = join(root, "generated");
  if (!existsSync(join(generated, "a2a_server.ts"))) throw new Error("generated/a2a_server.ts is missing: run `npm run generate` first");
  if (!existsSync(join(root, "dist/runtime/server.js"))) throw new Error("dist/runtime is missing: run `npm run build` first");
  if (newest(join(root, "runtime"), ".ts") > newest(join(root, "dist/runtime"), ".js")) {
    console.warn("warning: runtime/*.ts is newer than dist/runtime: run `npm run build` (npm run fuzz does)");
  }
  for (const e of readdirSync(generated, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith(".ts")) continue;
    const file = join(e.parentPath ?? e.path, e.name);
    transpile(file, join(buildDir, "generated", relative(generated, file)).replace(/\.ts$/, ".js"));
  }
  transpile(join(root, "examples/reference-agent/config.ts"), join(buildDir, "examples/reference-agent/config.js"));
}
