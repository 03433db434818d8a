/**
 * The handler edits of `upgrade`, on a small user project (an object-literal
 * handler, a class handler, an agent on the task runtime) written against
 * code generated from the pinned a2a.proto v1.0.1, upgraded to a made-up
 * next version (a2a-next.ts: two RPCs added, one removed). Checked: every
 * original line is kept, the edits are the ones expected, and the project
 * type-checks with tsc --strict before the edit against the old generated
 * code and after it against the new.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { editHandlers, findSourceFiles, onlyLinesInserted, runUpgrade, type UpgradeResult } from "../../../cli/upgrade/index.js";
import { createRequest, projectRoot, runPlugin, scratchDir, writeModule } from "../../support/protos.js";
import { a2aNext } from "./a2a-next.js";
import { diffDescriptors } from "../../../cli/upgrade/diff.js";
import { buildDescriptors } from "../../../cli/upgrade/descriptors.js";

const fixtureDir = join(projectRoot, "test/cli/upgrade/fixtures/agent");
const oldProto = readFileSync(join(projectRoot, "vendor/a2a/v1.0.1/a2a.proto"), "utf8");
const newProto = a2aNext(projectRoot);
const fixtureFiles = readdirSync(fixtureDir).filter((f) => f.endsWith(".ts")).sort();

/** Generates protoc-gen-es's and the plugin's code for `proto` (as `name`, a2a.proto by default) into `<dir>/gen`, replacing what is there. */
function generateInto(dir: string, proto: string, name = "a2a.proto"): void {
  const work = join(dir, "proto");
  rmSync(work, { recursive: true, force: true });
  rmSync(join(dir, "gen"), { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  writeModule(work, { [name]: proto });
  const protocGenEs = join(projectRoot, "node_modules/@bufbuild/protoc-gen-es/bin/protoc-gen-es");
  writeFileSync(
    join(work, "buf.gen.yaml"),
    ["version: v2", "plugins:", `  - local: ["node", ${JSON.stringify(protocGenEs)}]`, "    out: ../gen", "    opt: [target=ts, import_extension=js]", "    include_imports: true", ""].join("\n"),
  );
  execFileSync(join(projectRoot, "node_modules/.bin/buf"), ["generate", "--path", name], { cwd: work, stdio: ["ignore", "ignore", "pipe"] });
  for (const [file, content] of runPlugin(createRequest({ [name]: proto }, "target=ts,import_extension=js"))) {
    mkdirSync(dirname(join(dir, "gen", file)), { recursive: true });
    writeFileSync(join(dir, "gen", file), content);
  }
}

/** tsc --strict over src/ and gen/; returns its output ("" when clean). */
function typecheck(dir: string): string {
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noUncheckedIndexedAccess: true,
        noUnusedLocals: true,
        noUnusedParameters: true,
        skipLibCheck: true,
        noEmit: true,
        types: ["node"],
        paths: {
          "protoc-gen-a2a/runtime": [join(projectRoot, "runtime/index.ts")],
          "protoc-gen-a2a/runtime/internal": [join(projectRoot, "runtime/internal.ts")],
          "protoc-gen-a2a/runtime/grpc": [join(projectRoot, "runtime/grpc.ts")],
          "protoc-gen-a2a/runtime/server": [join(projectRoot, "runtime/server.ts")],
          "protoc-gen-a2a/runtime/tasks": [join(projectRoot, "runtime/tasks.ts")],
        },
      },
      include: ["src/**/*.ts", "gen/**/*.ts"],
    }),
  );
  const tsc = spawnSync(join(projectRoot, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], { cwd: dir, encoding: "utf8" });
  return `${tsc.stdout}${tsc.stderr}`.trim() + (tsc.status === 0 ? "" : `\n(exit ${tsc.status})`);
}

describe("upgrade edits a user's handlers (v1.0.1 -> next: GetTaskStatus and WatchTasks added, DeleteTaskPushNotificationConfig removed)", () => {
  let dir: string;
  let done: () => void;
  let result: UpgradeResult;
  const originals = new Map<string, string>();

  beforeAll(async () => {
    ({ dir, done } = scratchDir("upgrade-stubs"));
    cpSync(fixtureDir, join(dir, "src"), { recursive: true });
    for (const f of fixtureFiles) originals.set(`src/${f}`, readFileSync(join(dir, "src", f), "utf8"));
    mkdirSync(join(dir, "old"));
    mkdirSync(join(dir, "new"));
    writeModule(join(dir, "old"), { "a2a.proto": oldProto });
    writeModule(join(dir, "new"), { "a2a.proto": newProto });
  }, 60_000);
  afterAll(() => done());

  test("the fixture project type-checks against the code generated from v1.0.1", () => {
    generateInto(dir, oldProto);
    expect(typecheck(dir)).toBe("");
  }, 120_000);

  test("a dry run computes the edits and writes nothing", async () => {
    const dry = await runUpgrade({ repoDir: dir, oldProtoDir: join(dir, "old"), newProtoDir: join(dir, "new"), handlerFiles: fixtureFiles.map((f) => `src/${f}`), from: "v1.0.1", to: "next", dryRun: true });
    expect(dry.written).toBe(false);
    expect(dry.files.map((f) => f.path)).toEqual(["src/class-agent.ts", "src/object-agent.ts"]);
    for (const [path, text] of originals) expect(readFileSync(join(dir, path), "utf8")).toBe(text);
    expect(dry.text).toContain("Your code (dry run: nothing written)");
    expect(dry.text).toContain("would add a stub for lf.a2a.v1.A2AService.GetTaskStatus as getTaskStatus");
  }, 60_000);

  test("the edits: a stub per new RPC in each handler, a mark on each removed method", async () => {
    // The handler files are found by searching the repo (src/ and the protos' folders, which hold no .ts).
    result = await runUpgrade({ repoDir: dir, oldProtoDir: join(dir, "old"), newProtoDir: join(dir, "new"), from: "v1.0.1", to: "next" });
    expect(result.written).toBe(true);
    const edits = result.handlers?.edits.map((e) => `${e.file}:${e.line} ${e.handler} ${e.action} ${e.method}`);
    expect(edits).toEqual([
      "src/class-agent.ts:19 class ClassAgent marked-removed deleteTaskPushNotificationConfig",
      "src/class-agent.ts:24 class ClassAgent stub-added getTaskStatus",
      "src/class-agent.ts:29 class ClassAgent stub-added watchTasks",
      'src/object-agent.ts:14 object literal "handler" stub-added getTaskStatus',
      'src/object-agent.ts:19 object literal "handler" stub-added watchTasks',
      'src/object-agent.ts:31 object literal "handler" marked-removed deleteTaskPushNotificationConfig',
    ]);
    expect(result.handlers?.manual).toEqual([]);
    expect(result.handlers?.notes).toEqual([]);
    expect(result.text).toContain("src/class-agent.ts:24, class ClassAgent: added a stub for lf.a2a.v1.A2AService.GetTaskStatus as getTaskStatus");
  }, 60_000);

  test("every line of the user's files is kept, byte for byte, in order; only whole lines are added", () => {
    for (const [path, before] of originals) {
      const after = readFileSync(join(dir, path), "utf8");
      expect(onlyLinesInserted(before, after)).toBe(true);
      const added = after.split("\n").length - before.split("\n").length;
      if (path === "src/task-agent.ts") expect(added).toBe(0);
      else expect(added).toBeGreaterThan(0);
    }
    // The check itself fails on a changed line.
    expect(onlyLinesInserted("a\nb\n", "a\nB\nb\n")).toBe(true);
    expect(onlyLinesInserted("a\nb\n", "a\nb,\n")).toBe(false);
  });

  test("the stubs are typed with the generated types and throw UnsupportedOperationError; the object literal's removed method gets @ts-expect-error, the class's does not", () => {
    const object = readFileSync(join(dir, "src/object-agent.ts"), "utf8");
    expect(object).toContain(
      [
        "  async getTaskStatus(_request: GetTaskRequest, _context: A2ACallContext): Promise<MessageInitShape<typeof TaskStatusSchema>> {",
        '    throw new UnsupportedOperationError("GetTaskStatus is not implemented by this agent yet");',
        "  },",
      ].join("\n"),
    );
    expect(object).toContain("  async *watchTasks(_request: ListTasksRequest, _context: A2ACallContext): AsyncGenerator<StreamResponse> {");
    // GetTaskRequest was imported already (from the same module): not imported twice.
    expect(object.match(/^import.*\bGetTaskRequest\b/gm)).toHaveLength(1);
    // The new imports: one declaration per module and kind, after the file's own.
    expect(object).toContain(
      [
        'import { serveA2AService } from "../gen/a2a_server.js";',
        'import { UnsupportedOperationError } from "protoc-gen-a2a/runtime";',
        'import type { A2ACallContext } from "protoc-gen-a2a/runtime";',
        'import type { TaskStatusSchema, ListTasksRequest, StreamResponse } from "../gen/a2a_pb.js";',
        'import type { MessageInitShape } from "@bufbuild/protobuf";',
        "",
      ].join("\n"),
    );
    expect(object).toMatch(/\/\/ protoc-gen-a2a upgrade \(v1\.0\.1 -> next\): RPC lf\.a2a\.v1\.A2AService\.DeleteTaskPushNotificationConfig was removed.*\n {2}\/\/ @ts-expect-error -- deleteTaskPushNotificationConfig is no longer in A2AServiceHandler.*\n {2}async deleteTaskPushNotificationConfig\(\) \{/);

    const cls = readFileSync(join(dir, "src/class-agent.ts"), "utf8");
    // The class is indented with tabs: so are its stubs.
    expect(cls).toContain("\tasync getTaskStatus(_request: GetTaskRequest, _context: A2ACallContext): Promise<MessageInitShape<typeof TaskStatusSchema>> {\n\t\tthrow new UnsupportedOperationError(");
    expect(cls).toMatch(/\t\/\/ protoc-gen-a2a upgrade \(v1\.0\.1 -> next\): RPC lf\.a2a\.v1\.A2AService\.DeleteTaskPushNotificationConfig was removed.*\n\tasync deleteTaskPushNotificationConfig\(/);
    expect(cls).not.toContain("@ts-expect-error");
    // A2ACallContext was imported by the class file already.
    expect(cls.match(/import type \{ A2ACallContext \}/g)).toHaveLength(1);
  });

  test("the task-runtime agent beside them is left as it was", () => {
    expect(readFileSync(join(dir, "src/task-agent.ts"), "utf8")).toBe(originals.get("src/task-agent.ts"));
    expect(result.text).not.toContain("task-agent.ts:");
  });

  test("the edited project type-checks against the code generated from the next proto", () => {
    generateInto(dir, newProto);
    expect(typecheck(dir)).toBe("");
  }, 120_000);

  test("running the upgrade again edits nothing: the stubs are there and the marks are seen", async () => {
    const again = await runUpgrade({ repoDir: dir, oldProtoDir: join(dir, "old"), newProtoDir: join(dir, "new"), from: "v1.0.1", to: "next", dryRun: true });
    expect(again.handlers?.edits).toEqual([]);
    expect(again.files).toEqual([]);
  }, 60_000);
});

describe("an object literal with the methods of two removed RPCs", () => {
  // TypeScript reports only the first excess property of a literal: a @ts-expect-error on the
  // second was itself an error (unused), and the project stopped compiling.
  test("only the first gets @ts-expect-error, both get their comment, and the project type-checks", async () => {
    const { dir, done } = scratchDir("upgrade-two-removed");
    try {
      const head = "  // Gets a push notification config for a task.\n  rpc GetTaskPushNotificationConfig(";
      const start = newProto.indexOf(head);
      const end = newProto.indexOf("\n  }\n", start);
      if (start < 0 || end < 0) throw new Error("no GetTaskPushNotificationConfig in the next proto");
      const twoRemoved = newProto.slice(0, start) + newProto.slice(end + "\n  }\n".length);
      mkdirSync(join(dir, "src"));
      writeFileSync(
        join(dir, "src/agent.ts"),
        [
          'import type { A2AServiceHandler } from "../gen/a2a_handler.js";',
          "",
          "export const handler: A2AServiceHandler = {",
          "  async getTaskPushNotificationConfig() {",
          '    return { id: "c", taskId: "t", url: "https://example.com/h", tenant: "", token: "" };',
          "  },",
          "  async deleteTaskPushNotificationConfig() {",
          "    return {};",
          "  },",
          "};",
          "",
        ].join("\n"),
      );
      generateInto(dir, oldProto);
      expect(typecheck(dir)).toBe("");
      mkdirSync(join(dir, "old"));
      mkdirSync(join(dir, "new"));
      writeModule(join(dir, "old"), { "a2a.proto": oldProto });
      writeModule(join(dir, "new"), { "a2a.proto": twoRemoved });
      await runUpgrade({ repoDir: dir, oldProtoDir: join(dir, "old"), newProtoDir: join(dir, "new"), handlerFiles: ["src/agent.ts"], from: "v1.0.1", to: "next" });
      const edited = readFileSync(join(dir, "src/agent.ts"), "utf8");
      expect(edited.match(/\/\/ protoc-gen-a2a upgrade .* was removed/g)).toHaveLength(2);
      expect(edited.match(/@ts-expect-error/g)).toHaveLength(1);
      expect(edited).toMatch(/@ts-expect-error -- getTaskPushNotificationConfig is no longer in A2AServiceHandler.*\n {2}async getTaskPushNotificationConfig\(/);
      generateInto(dir, twoRemoved);
      expect(typecheck(dir)).toBe("");
    } finally {
      done();
    }
  }, 180_000);
});

describe("a service whose messages are named Promise and AsyncGenerator", () => {
  // The stubs' return types named the globals, which the file's imports of those messages shadowed.
  test("the stubs name the global types as globalThis.<name>, and the project type-checks", async () => {
    const { dir, done } = scratchDir("upgrade-global-names");
    try {
      const proto = (rpcs: string) =>
        [
          'syntax = "proto3";',
          "package vow.v1;",
          'import "google/api/annotations.proto";',
          "message Promise { string id = 1; }",
          "message AsyncGenerator { string id = 1; }",
          "service Vows {",
          '  rpc Keep(Promise) returns (Promise) { option (google.api.http) = { post: "/v1/keep" body: "*" }; }',
          rpcs,
          "}",
          "",
        ].join("\n");
      const before = proto("");
      const after = proto(
        [
          '  rpc Make(Promise) returns (Promise) { option (google.api.http) = { post: "/v1/make" body: "*" }; }',
          '  rpc Watch(Promise) returns (stream AsyncGenerator) { option (google.api.http) = { get: "/v1/watch/{id}" }; }',
        ].join("\n"),
      );
      mkdirSync(join(dir, "src"));
      writeFileSync(
        join(dir, "src/vows.ts"),
        [
          'import type { VowsHandler } from "../gen/vow_handler.js";',
          'import type { Promise } from "../gen/vow_pb.js";',
          "",
          "export const handler: VowsHandler = {",
          "  async keep(request: Promise) {",
          "    return { id: request.id };",
          "  },",
          "};",
          "",
        ].join("\n"),
      );
      generateInto(dir, before, "vow.proto");
      expect(typecheck(dir)).toBe("");
      writeModule(join(dir, "old"), { "vow.proto": before });
      writeModule(join(dir, "new"), { "vow.proto": after });
      await runUpgrade({ repoDir: dir, oldProtoDir: join(dir, "old"), newProtoDir: join(dir, "new"), handlerFiles: ["src/vows.ts"] });
      const edited = readFileSync(join(dir, "src/vows.ts"), "utf8");
      expect(edited).toContain("async make(_request: Promise, _context: CallContext): globalThis.Promise<MessageInitShape<typeof PromiseSchema>> {");
      expect(edited).toContain("async *watch(_request: Promise, _context: CallContext): globalThis.AsyncGenerator<AsyncGenerator> {");
      generateInto(dir, after, "vow.proto");
      expect(typecheck(dir)).toBe("");
    } finally {
      done();
    }
  }, 180_000);
});

describe("a repo whose only handler is the task runtime", () => {
  test("nothing to stub, and the report says so and names the RPCs the runtime leaves unanswered", async () => {
    const { dir, done } = scratchDir("upgrade-tasks");
    try {
      mkdirSync(join(dir, "src"));
      cpSync(join(fixtureDir, "task-agent.ts"), join(dir, "src/agent.ts"));
      const diff = diffDescriptors(
        buildDescriptors([join(projectRoot, "vendor/a2a/v1.0.1"), join(projectRoot, "vendor/googleapis")]),
        (() => {
          writeModule(join(dir, "next"), { "a2a.proto": newProto });
          return buildDescriptors(join(dir, "next"));
        })(),
      );
      const result = await editHandlers({ repoDir: dir, diff, handlerFiles: ["src/agent.ts"] });
      expect(result.edits).toEqual([]);
      expect(result.files).toEqual([]);
      expect(result.notes).toEqual([
        "src/agent.ts: the A2AService handler is the task runtime (createA2AServiceTaskHandler), with no handler object or class of your own: nothing to stub. The task runtime does not implement GetTaskStatus, WatchTasks; until it does, the bindings answer them with the spec's error for a method the agent does not implement.",
      ]);
    } finally {
      done();
    }
  }, 60_000);

  test("a handler on one line cannot take a stub without changing that line: the stub is handed back to add by hand", async () => {
    const { dir, done } = scratchDir("upgrade-oneline");
    try {
      mkdirSync(join(dir, "src"));
      const text = 'import type { A2AServiceHandler } from "../gen/a2a_handler.js";\nexport const h: A2AServiceHandler = {};\n';
      writeFileSync(join(dir, "src/h.ts"), text);
      writeModule(join(dir, "next"), { "a2a.proto": newProto });
      const diff = diffDescriptors(buildDescriptors([join(projectRoot, "vendor/a2a/v1.0.1"), join(projectRoot, "vendor/googleapis")]), buildDescriptors(join(dir, "next")));
      const result = await editHandlers({ repoDir: dir, diff });
      expect(result.files).toEqual([]);
      expect(result.manual.map((m) => `${m.file} ${m.method}: ${m.why}`)).toEqual([
        "src/h.ts getTaskStatus: the object literal opens and closes on one line, or has code after its `{`",
        "src/h.ts watchTasks: the object literal opens and closes on one line, or has code after its `{`",
      ]);
      expect(result.manual[0]?.text).toContain("throw new UnsupportedOperationError(");
    } finally {
      done();
    }
  }, 60_000);
});

describe("findSourceFiles", () => {
  // protoc-gen-es writes its marker after the proto's leading comments: googleapis' licence put it
  // past the 600 characters read, and google/api/*_pb.ts were counted as the user's code (CLI hunt).
  test("skips generated files whose marker comes after a long leading comment, and keeps the user's", () => {
    const dir = mkdtempSync(join(tmpdir(), "a2a-find-sources-"));
    try {
      mkdirSync(join(dir, "src/gen/google/api"), { recursive: true });
      const licence = `// ${"Licensed under the Apache License, Version 2.0. ".repeat(30)}\n`;
      writeFileSync(join(dir, "src/gen/google/api/http_pb.ts"), `${licence}\n// @generated by protoc-gen-es v2.13.0\nexport {};\n`);
      writeFileSync(join(dir, "src/gen/a2a_handler.ts"), "// @generated by protoc-gen-a2a\nexport {};\n");
      writeFileSync(join(dir, "src/agent.ts"), `${licence}export const agent = 1;\n`);
      expect(findSourceFiles(dir).map((f) => relative(dir, f))).toEqual([join("src", "agent.ts")]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
