/**
 * The plugin runs @bufbuild/protoplugin's parts without its index (plugin/protoplugin.ts,
 * plugin/ecmascript-plugin.ts), so that a target=ts process never loads the TypeScript
 * compiler. These tests are what an upgrade of protoplugin must pass: our run answers exactly
 * what protoplugin's own createEcmaScriptPlugin answers for the same generator, and the bin,
 * run as buf runs it, loads TypeScript for js and dts only.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, CodeGeneratorResponseSchema, type CodeGeneratorRequest, type CodeGeneratorResponse } from "@bufbuild/protobuf/wkt";
import { createEcmaScriptPlugin as protopluginsOwn } from "@bufbuild/protoplugin";
import { protocGenA2a, protocGenA2aInit } from "../../plugin/plugin.js";
import { createRequest, projectRoot, scratchDir } from "../support/protos.js";

const fixtureDir = join(projectRoot, "proto/fixtures");
const fixtures = Object.fromEntries(
  readdirSync(fixtureDir, { recursive: true, encoding: "utf8" })
    .filter((p) => p.endsWith(".proto"))
    .map((p) => [`fixtures/${p.split("\\").join("/")}`, readFileSync(join(fixtureDir, p), "utf8")]),
);
const base = createRequest(fixtures);

function request(parameter: string): CodeGeneratorRequest {
  return create(CodeGeneratorRequestSchema, { ...base, parameter });
}

/** The response, or the error thrown, in a form whose differences read well. */
function outcome(run: () => CodeGeneratorResponse) {
  let response: CodeGeneratorResponse;
  try {
    response = run();
  } catch (e) {
    return { thrown: (e as Error).message };
  }
  return {
    files: response.file.map((f) => [f.name, f.content]),
    rest: { ...create(CodeGeneratorResponseSchema, response), file: [] },
    bytes: Buffer.from(toBinary(CodeGeneratorResponseSchema, response)).toString("base64"),
  };
}

describe("the same answer as protoplugin's createEcmaScriptPlugin", () => {
  test.each([
    "target=ts",
    "target=ts,import_extension=js,elide_plugin_version=true",
    "target=ts,keep_empty_files=true",
    "target=ts,ts_nocheck=true,runtime_import=@my/rt,import_extension=ts",
    "target=js",
    "target=dts",
    "target=js+dts",
    "target=ts+js+dts",
    "",
    "target=js,js_import_style=legacy_commonjs,import_extension=js",
    "foo=bar",
    "target=ts,runtime_import=",
    "target=xyz",
  ])("parameter %j", (parameter) => {
    // A new protoplugin plugin per request: its js and dts flags carry over from one run to the next.
    const theirs = outcome(() => protopluginsOwn(protocGenA2aInit).run(request(parameter)));
    const ours = outcome(() => protocGenA2a.run(request(parameter)));
    expect(ours).toEqual(theirs);
  }, 60_000);

  test("a js run does not make later ts runs emit js", () => {
    const ts = outcome(() => protocGenA2a.run(request("target=ts")));
    protocGenA2a.run(request("target=js"));
    expect(outcome(() => protocGenA2a.run(request("target=ts")))).toEqual(ts);
  }, 60_000);
});

describe("what the bin loads, run as buf runs it", () => {
  const bin = join(projectRoot, "bin/protoc-gen-a2a.js");
  const recorder = pathToFileURL(join(projectRoot, "test/support/record-loads.mjs")).href;

  /** Runs the bin on `parameter` with every module it loads recorded; the response and the modules. */
  function runBin(parameter: string): { response: CodeGeneratorResponse; loaded: string[] } {
    const { dir, done } = scratchDir("loads");
    try {
      const out = join(dir, "loaded.txt");
      const result = spawnSync(process.execPath, ["--import", recorder, bin], {
        input: toBinary(CodeGeneratorRequestSchema, request(parameter)),
        env: { ...process.env, RECORD_LOADS: out },
      });
      if (result.status !== 0) throw new Error(`protoc-gen-a2a failed: ${result.stderr.toString()}`);
      return { response: fromBinary(CodeGeneratorResponseSchema, result.stdout), loaded: readFileSync(out, "utf8").split("\n").filter(Boolean) };
    } finally {
      done();
    }
  }

  const typescript = /[\\/]node_modules[\\/](typescript|@typescript[\\/]vfs)[\\/]|[\\/]@bufbuild[\\/]protoplugin[\\/]dist[\\/](esm|cjs)[\\/](transpile|create-es-plugin|index)\.js$/;

  test("target=ts: protoplugin's parts, and no TypeScript compiler", () => {
    const { response, loaded } = runBin("target=ts,import_extension=js");
    expect(response.error ?? "").toBe("");
    expect(response.file.map((f) => f.name)).toContain("fixtures/v1/library_methods.ts");
    // The recorder sees imports (and require()s: the js+dts test below), or the check would prove nothing.
    expect(loaded).toContainEqual(expect.stringMatching(/^import file:.*[\\/]@bufbuild[\\/]protoplugin[\\/]dist[\\/]esm[\\/]schema\.js$/));
    // A value imported from "@bufbuild/protoplugin" itself loads its index, and TypeScript
    // with it: plugin/protoplugin.ts has what the plugin may use.
    expect(loaded.filter((m) => typescript.test(m))).toEqual([]);
  }, 30_000);

  test("target=js+dts: TypeScript is loaded, and the .js and .d.ts are what the plugin answers in-process", () => {
    const { response, loaded } = runBin("target=js+dts,import_extension=js");
    expect(loaded).toContainEqual(expect.stringMatching(/^require .*[\\/]node_modules[\\/]typescript[\\/]lib[\\/]typescript\.js$/));
    const names = response.file.map((f) => f.name);
    expect(names).toEqual(expect.arrayContaining(["fixtures/v1/library_methods.js", "fixtures/v1/library_methods.d.ts"]));
    expect(names.filter((n) => n.endsWith(".ts") && !n.endsWith(".d.ts"))).toEqual([]);
    expect(outcome(() => response)).toEqual(outcome(() => protocGenA2a.run(request("target=js+dts,import_extension=js"))));
  }, 60_000);
});
