/**
 * The runtime's main entry (`protoc-gen-a2a/runtime`: the endpoints and `createFetchHandler`) and
 * its adapters entry import no `node:` module, so an agent on the fetch adapter runs where there
 * is none (a worker without Node compatibility): runtime/core/background.ts takes async_hooks from
 * the running process instead (`process.getBuiltinModule`), and without it runs background work
 * where it is called. A static import of node:async_hooks had crept in through the tracing
 * module (a review). Checked on the built runtime (dist/, as an application imports it), and run:
 * a fetch-handler agent answers with `process.getBuiltinModule` taken away.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, resolve } from "node:path";
import { projectRoot, scratchDir } from "../support/protos.js";

const builtins = new Set(builtinModules);

/** Every module specifier the file at `file` imports statically, and the files it reaches, recursively. */
function staticImports(file: string, seen = new Map<string, string[]>()): Map<string, string[]> {
  if (seen.has(file)) return seen;
  const found: string[] = [];
  seen.set(file, found);
  // tsc writes one import or re-export per statement; a dynamic import() is no static one.
  for (const m of readFileSync(file, "utf8").matchAll(/^(?:import|export)\s(?:[^;]*?\sfrom\s)?\s*"([^"]+)"/gm)) {
    const spec = m[1]!;
    found.push(spec);
    if (spec.startsWith(".")) {
      const next = resolve(dirname(file), spec);
      if (existsSync(next)) staticImports(next, seen);
    }
  }
  return seen;
}

const entryFile = (name: string): string => {
  const exports = (JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as { exports: Record<string, { default: string }> }).exports;
  return join(projectRoot, exports[name]!.default);
};

test.each(["runtime", "runtime/adapters"])("protoc-gen-a2a/%s imports no node: module, directly or through another", (entry) => {
  const builtin: string[] = [];
  for (const [file, specs] of staticImports(entryFile(`./${entry}`))) {
    for (const spec of specs) if (spec.startsWith("node:") || builtins.has(spec)) builtin.push(`${file.slice(projectRoot.length + 1)}: ${spec}`);
  }
  expect(builtin).toEqual([]);
});

test("a task agent on the fetch handler answers where the process offers no node: module to take (process.getBuiltinModule gone)", () => {
  const { dir, done } = scratchDir("entry-imports");
  try {
    const script = join(dir, "worker.ts");
    writeFileSync(
      script,
      `delete (process as { getBuiltinModule?: unknown }).getBuiltinModule;
const root = process.cwd();
const { createA2AServiceJsonRpcEndpoint } = await import(\`\${root}/generated/a2a_jsonrpc.ts\`);
const { createA2AServiceTaskHandler } = await import(\`\${root}/generated/a2a_tasks.ts\`);
const { createFetchHandler } = await import("protoc-gen-a2a/runtime");
const handler = createA2AServiceTaskHandler(async function* () {
  yield { artifact: { artifactId: "a", parts: [{ content: { case: "text", value: "hi" } }] } };
});
const fetchHandler = createFetchHandler(createA2AServiceJsonRpcEndpoint(handler));
const request = { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] } } };
const res = await fetchHandler(new Request("http://127.0.0.1/", { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" }, body: JSON.stringify(request) }));
const body = await res.json();
console.log(res.status, body.result?.task?.status?.state);
await handler.close();
`,
    );
    const run = spawnSync(process.execPath, ["--import", "./test/support/ts-loader.mjs", script], { encoding: "utf8", cwd: projectRoot, timeout: 60_000 });
    expect({ status: run.status, stdout: run.stdout.trim(), stderr: run.stderr }).toEqual({ status: 0, stdout: "200 TASK_STATE_COMPLETED", stderr: "" });
  } finally {
    done();
  }
});
