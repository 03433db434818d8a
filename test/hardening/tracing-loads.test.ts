/**
 * Tracing costs nothing when it is off or absent (D35): an agent served on
 * all three bindings and called by the generated clients, in a child
 * process whose every loaded module is recorded, loads nothing of
 * OpenTelemetry when told `tracing: false`, nor when `@opentelemetry/api`
 * cannot be found (a resolve hook refuses it, as a missing package is
 * refused); and, as the control that shows the recorder would see it, loads
 * the API by default when it is installed. The generated code and the built
 * runtime (dist/, made by `npm run generate`) run as an application runs them.
 */
import { spawnSync } from "node:child_process";
import { jest } from "@jest/globals";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";
import { projectRoot, scratchDir } from "../support/protos.js";

jest.setTimeout(60_000);

/** The generated TypeScript as JavaScript (type-free: the project compiles with isolatedModules), below `to`. */
function transpileGenerated(to: string): void {
  const from = join(projectRoot, "generated");
  for (const entry of readdirSync(from, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = join(entry.parentPath, entry.name);
    const { outputText } = ts.transpileModule(readFileSync(file, "utf8"), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      fileName: file,
    });
    const dest = join(to, relative(from, file)).replace(/\.ts$/, ".js");
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, outputText);
  }
}

/** Serves an agent, calls GetTask on each binding with the generated clients, and closes; `off` passes tracing: false to all. */
const agent = `
import { serveA2AService } from "./generated/a2a_server.js";
import { createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient } from "./generated/a2a_client.js";
import { createA2AServiceGrpcClient } from "./generated/a2a_grpc.js";
const off = process.argv[2] === "off" ? { tracing: false } : {};
const card = { name: "A", description: "a", version: "1", capabilities: {}, defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"], skills: [] };
const server = await serveA2AService({ async getTask(r) { return { id: r.id, contextId: "c", status: { state: 1 } }; } }, card, { port: 0, grpcPort: 0, drainMs: 0, ...off });
const clients = [createA2AServiceJsonRpcClient(server.jsonRpcUrl, off), createA2AServiceHttpJsonClient(server.httpJsonUrl, off), createA2AServiceGrpcClient(server.grpcAddress, off)];
for (const client of clients) {
  const task = await client.getTask({ id: "t" });
  if (task.id !== "t") throw new Error("unexpected answer " + JSON.stringify(task));
  client.close();
}
await server.close();
console.log("served");
`;

/** Makes "@opentelemetry/api" unresolvable, as it is where the package is not installed. */
const absentHooks = `
export async function resolve(specifier, context, next) {
  if (specifier === "@opentelemetry/api" || specifier.startsWith("@opentelemetry/api/")) {
    throw Object.assign(new Error("Cannot find package '" + specifier + "'"), { code: "ERR_MODULE_NOT_FOUND" });
  }
  return next(specifier, context);
}
`;
const absent = `import { register } from "node:module"; register("./absent-hooks.mjs", import.meta.url);\n`;

let dir: string;
let done: () => void;

beforeAll(() => {
  ({ dir, done } = scratchDir("tracing-loads"));
  transpileGenerated(join(dir, "generated"));
  writeFileSync(join(dir, "agent.mjs"), agent);
  writeFileSync(join(dir, "absent-hooks.mjs"), absentHooks);
  writeFileSync(join(dir, "absent.mjs"), absent);
});

afterAll(() => done());

/** Runs the agent with every module it loads recorded; the modules. */
function run(arg: string, imports: readonly string[] = []): string[] {
  const out = join(dir, `loaded-${arg}-${imports.length}.txt`);
  const recorder = pathToFileURL(join(projectRoot, "test/support/record-loads.mjs")).href;
  const result = spawnSync(process.execPath, [...imports.flatMap((i) => ["--import", pathToFileURL(join(dir, i)).href]), "--import", recorder, join(dir, "agent.mjs"), arg], {
    cwd: dir,
    env: { ...process.env, RECORD_LOADS: out },
    encoding: "utf8",
    // A process that does not end after close() has a handle left open: a failure, not a hung run.
    timeout: 45_000,
  });
  if (result.error !== undefined) throw new Error(`the agent did not exit within 45 s (a handle left open after close()?): ${result.error.message}\n${result.stdout}\n${result.stderr}`);
  if (result.status !== 0 || !result.stdout.includes("served")) throw new Error(`the agent failed: ${result.stderr}`);
  return readFileSync(out, "utf8").split("\n").filter(Boolean);
}

const otel = (loaded: readonly string[]) => loaded.filter((l) => l.includes("@opentelemetry"));

test("control: by default, with the package installed, the API is loaded (so the recorder would see it)", () => {
  expect(otel(run("default"))).not.toEqual([]);
});

test("tracing: false on the server and the clients: nothing of OpenTelemetry is loaded", () => {
  const loaded = run("off");
  expect(loaded.some((l) => l.includes("/generated/a2a_grpc.js"))).toBe(true);
  expect(otel(loaded)).toEqual([]);
});

test("the package not installed: every binding serves and calls as before, and nothing of it is loaded", () => {
  expect(otel(run("default", ["absent.mjs"]))).toEqual([]);
});
