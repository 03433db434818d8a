/**
 * Golden tests: the fixture protos under proto/fixtures are compiled with the
 * real buf CLI, run through the plugin, and every emitted file is compared
 * byte for byte with its committed copy under test/golden. The golden files
 * are then type-checked with tsc --strict beside protoc-gen-es's output.
 *
 * `npm run golden:update` (UPDATE_GOLDEN=1) rewrites test/golden instead of
 * comparing, deleting files the plugin no longer emits.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { create } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema } from "@bufbuild/protobuf/wkt";
import { codecFixtures } from "./support/codec-fixtures.js";
import { createRequest, projectRoot, runPlugin, scratchDir, writeModule } from "./support/protos.js";

const parameter = "target=ts,import_extension=js,elide_plugin_version=true";
const fixtureDir = join(projectRoot, "proto/fixtures");
const goldenDir = join(projectRoot, "test/golden");
const update = process.env["UPDATE_GOLDEN"] === "1";

/** Relative paths (with "/") of every file below `dir`, sorted; empty when `dir` is missing. */
function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((p) => statSync(join(dir, p)).isFile())
    .map((p) => p.split(sep).join("/"))
    .sort();
}

/** Removes empty folders below `dir` (not `dir` itself). */
function removeEmptyDirs(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const sub = join(dir, e.name);
    removeEmptyDirs(sub);
    if (readdirSync(sub).length === 0) rmSync(sub, { recursive: true });
  }
}

/** Fixture sources keyed by their import path, e.g. `fixtures/v1/library.proto`. */
function readFixtures(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const path of listFiles(fixtureDir).filter((p) => p.endsWith(".proto"))) {
    files[`fixtures/${path}`] = readFileSync(join(fixtureDir, path), "utf8");
  }
  return files;
}

/** Describes where two texts first differ, for a readable failure. */
function firstDifference(name: string, actual: string, expected: string): string {
  const a = actual.split("\n");
  const e = expected.split("\n");
  for (let i = 0; i < Math.max(a.length, e.length); i++) {
    if (a[i] !== e[i]) {
      return `${name}:${i + 1}\n  golden:    ${JSON.stringify(e[i] ?? "<end of file>")}\n  generated: ${JSON.stringify(a[i] ?? "<end of file>")}`;
    }
  }
  return `${name}: differs in line endings or trailing bytes`;
}

const fixtures = readFixtures();
let generated: Map<string, string>;

beforeAll(() => {
  expect(Object.keys(fixtures).length).toBeGreaterThan(0);
  generated = runPlugin(createRequest(fixtures, parameter));
  if (update) {
    mkdirSync(goldenDir, { recursive: true });
    for (const stale of listFiles(goldenDir).filter((p) => !generated.has(p))) {
      rmSync(join(goldenDir, stale));
    }
    for (const [name, content] of generated) {
      mkdirSync(dirname(join(goldenDir, name)), { recursive: true });
      writeFileSync(join(goldenDir, name), content);
    }
    removeEmptyDirs(goldenDir);
  }
}, 30_000);

describe("golden files", () => {
  test("the plugin emits exactly the committed golden files", () => {
    const emitted = [...generated.keys()].sort();
    const golden = listFiles(goldenDir);
    const missing = golden.filter((p) => !generated.has(p));
    const extra = emitted.filter((p) => !golden.includes(p));
    const problems = [
      ...missing.map((p) => `golden file no longer emitted: test/golden/${p}`),
      ...extra.map((p) => `emitted file has no golden copy: test/golden/${p}`),
    ];
    if (problems.length > 0) problems.push("(run `npm run golden:update` if the change is intended)");
    expect(problems).toEqual([]);
  });

  test("every emitted file matches its golden file byte for byte", () => {
    const differences: string[] = [];
    for (const [name, content] of generated) {
      const path = join(goldenDir, name);
      if (!existsSync(path)) continue; // reported by the test above
      const golden = readFileSync(path, "utf8");
      if (golden !== content) differences.push(firstDifference(name, content, golden));
    }
    expect(differences).toEqual([]);
  });

  test("a proto file with messages only gets only a codec", () => {
    const emitted = [...generated.keys()];
    expect(emitted.filter((p) => p.startsWith("fixtures/v1/common_"))).toEqual(["fixtures/v1/common_codec.ts"]);
    // One of each file per fixture with a service, a codec per fixture (each declares messages; the
    // well-known types' codecs are in theirs), nothing else: the A2A error table lives in the runtime.
    expect(emitted.sort()).toEqual(
      [
        ...["fixtures/v1/admin/maintenance", "fixtures/v1/library", "fixtures/v1/routes"].flatMap((base) =>
          ["client", "codec", "grpc", "handler", "jsonrpc", "methods"].map((kind) => `${base}_${kind}.ts`),
        ),
        "fixtures/v1/common_codec.ts",
        // HTTP+JSON only where a service has google.api.http rules.
        "fixtures/v1/library_http.ts",
        "fixtures/v1/routes_http.ts",
      ].sort(),
    );
  });

  test("generating twice gives identical bytes", () => {
    const again = runPlugin(createRequest(fixtures, parameter));
    expect([...again.keys()].sort()).toEqual([...generated.keys()].sort());
    const differing = [...again].filter(([name, content]) => content !== generated.get(name)).map(([name]) => name);
    expect(differing).toEqual([]);
  }, 30_000);
});

describe("output depends on the request's content, not its order", () => {
  // a.proto holds messages of x.proto and y.proto, which do not import each other: a request may
  // list them either way round (protoFile need only put a file after its imports).
  const files = {
    "x/x.proto": `syntax = "proto3"; package x; message X { string v = 1; }`,
    "y/y.proto": `syntax = "proto3"; package y; message Y { string v = 1; }`,
    "a/a.proto": `syntax = "proto3"; package a; import "x/x.proto"; import "y/y.proto"; import "google/api/annotations.proto";
message Req { x.X x = 1; y.Y y = 2; string id = 3; }
service S { rpc Get(Req) returns (Req) { option (google.api.http) = { get: "/a/{id}" }; } }`,
  };

  test("two requests that list independent files in another order give identical bytes", () => {
    const request = createRequest(files, parameter);
    const order = request.protoFile.map((f) => f.name);
    const [x, y] = [order.indexOf("x/x.proto"), order.indexOf("y/y.proto")];
    expect(x).toBeGreaterThanOrEqual(0);
    expect(y).toBeGreaterThanOrEqual(0);
    const swapped = (list: typeof request.protoFile) => list.map((f) => (f.name === "x/x.proto" ? request.protoFile[y] : f.name === "y/y.proto" ? request.protoFile[x] : f) as typeof f);
    const other = create(CodeGeneratorRequestSchema, {
      ...request,
      fileToGenerate: [...request.fileToGenerate].reverse(),
      protoFile: swapped(request.protoFile),
      sourceFileDescriptors: swapped(request.sourceFileDescriptors),
    });
    expect(other.protoFile.map((f) => f.name)).not.toEqual(order);
    const first = runPlugin(request);
    const second = runPlugin(other);
    expect([...second.keys()].sort()).toEqual([...first.keys()].sort());
    expect([...first.keys()].filter((name) => second.get(name) !== first.get(name))).toEqual([]);
    // The file that depends on both lists their codecs.
    expect(first.get("a/a_codec.ts")).toMatch(/\.\.\.xCodecs,\n {2}\.\.\.yCodecs,|xCodecs, yCodecs/);
  }, 30_000);
});

describe("golden files type-check", () => {
  // With them, the codecs emitted for the binary codec's property-test protos
  // (proto2, editions, every field kind: code paths the fixtures' proto3 does not take).
  test("tsc --strict accepts them beside protoc-gen-es's output, and the property tests' codecs too", () => {
    const { dir, done } = scratchDir("golden-tsc");
    try {
      writeModule(dir, { ...fixtures, ...codecFixtures });
      const protocGenEs = join(projectRoot, "node_modules/@bufbuild/protoc-gen-es/bin/protoc-gen-es");
      writeFileSync(
        join(dir, "buf.gen.yaml"),
        [
          "version: v2",
          "plugins:",
          `  - local: ["node", ${JSON.stringify(protocGenEs)}]`,
          "    out: gen",
          "    opt: [target=ts, import_extension=js]",
          "    include_imports: true",
          "",
        ].join("\n"),
      );
      execFileSync(join(projectRoot, "node_modules/.bin/buf"), ["generate", "--path", "fixtures", "--path", "bc"], {
        cwd: dir,
        stdio: ["ignore", "ignore", "pipe"],
      });
      const pbFiles = listFiles(join(dir, "gen")).filter((p) => p.endsWith("_pb.ts"));
      expect(pbFiles).toContain("fixtures/v1/library_pb.ts");
      expect(pbFiles).toContain("google/api/field_behavior_pb.ts");

      const goldenFiles = listFiles(goldenDir);
      expect(goldenFiles.length).toBeGreaterThan(0);
      for (const name of goldenFiles) {
        mkdirSync(dirname(join(dir, "gen", name)), { recursive: true });
        writeFileSync(join(dir, "gen", name), readFileSync(join(goldenDir, name)));
      }
      const codecs = [...runPlugin(createRequest(codecFixtures, parameter))].filter(([name]) => name.endsWith("_codec.ts"));
      expect(codecs.map(([name]) => name).sort()).toEqual(["bc/v1/all_codec.ts", "bc/v2/p2_codec.ts", "bc/v3/ed_codec.ts", "bc/v4/longs_codec.ts"]);
      for (const [name, content] of codecs) writeFileSync(join(dir, "gen", name), content);
      writeFileSync(
        join(dir, "tsconfig.json"),
        JSON.stringify(
          {
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
              paths: { "protoc-gen-a2a/runtime": [join(projectRoot, "runtime/index.ts")], "protoc-gen-a2a/runtime/internal": [join(projectRoot, "runtime/internal.ts")], "protoc-gen-a2a/runtime/grpc": [join(projectRoot, "runtime/grpc.ts")], "protoc-gen-a2a/runtime/server": [join(projectRoot, "runtime/server.ts")] },
            },
            include: ["gen/**/*.ts"],
          },
          null,
          2,
        ),
      );
      const tsc = spawnSync(join(projectRoot, "node_modules/.bin/tsc"), ["--noEmit", "--strict", "-p", "tsconfig.json"], {
        cwd: dir,
        encoding: "utf8",
      });
      const output = `${tsc.stdout}${tsc.stderr}`;
      expect({ status: tsc.status, output }).toEqual({ status: 0, output: "" });
    } finally {
      done();
    }
  }, 60_000);
});
