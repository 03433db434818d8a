/**
 * The names generated code writes (D118): the globals it uses are meant whatever a proto names
 * its messages.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import ts from "typescript";
import { codecFixtures } from "../support/codec-fixtures.js";
import { bufBin, generate, projectRoot, scratchDir, writeModule } from "../support/protos.js";

const parameter = "target=ts,import_extension=js";

/** Writes `files` and protoc-gen-es's output for them, adds `generated`, and runs tsc --strict on it all. */
function typeCheck(files: Readonly<Record<string, string>>, generated: ReadonlyMap<string, string>): { status: number | null; output: string } {
  const { dir, done } = scratchDir("names");
  try {
    writeModule(dir, files);
    const protocGenEs = join(projectRoot, "node_modules/@bufbuild/protoc-gen-es/bin/protoc-gen-es");
    writeFileSync(
      join(dir, "buf.gen.yaml"),
      ["version: v2", "plugins:", `  - local: ["node", ${JSON.stringify(protocGenEs)}]`, "    out: gen", "    opt: [target=ts, import_extension=js]", "    include_imports: true", ""].join("\n"),
    );
    const roots = [...new Set(Object.keys(files).map((p) => p.split("/")[0] as string))];
    execFileSync(bufBin, ["generate", ...roots.flatMap((r) => ["--path", r])], { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    for (const [name, content] of generated) {
      mkdirSync(dirname(join(dir, "gen", name)), { recursive: true });
      writeFileSync(join(dir, "gen", name), content);
    }
    const runtime = (entry: string) => [join(projectRoot, `runtime/${entry}.ts`)];
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: true,
          noEmit: true,
          types: ["node"],
          paths: {
            "protoc-gen-a2a/runtime": runtime("index"),
            "protoc-gen-a2a/runtime/internal": runtime("internal"),
            "protoc-gen-a2a/runtime/grpc": runtime("grpc"),
            "protoc-gen-a2a/runtime/server": runtime("server"),
          },
        },
        include: ["gen/**/*.ts"],
      }),
    );
    const tsc = spawnSync(join(projectRoot, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], { cwd: dir, encoding: "utf8" });
    return { status: tsc.status, output: `${tsc.stdout}${tsc.stderr}` };
  } finally {
    done();
  }
}

/**
 * Every name in `generated` (file name -> source) that resolves to a declaration of TypeScript's
 * lib or @types/node, as `<name> in <file>`: a global the file names bare. `globalThis.Promise` names
 * `globalThis`. Imports do not resolve here (no module is on disk), which keeps them the file's own.
 */
function bareGlobals(generated: ReadonlyMap<string, string>): string[] {
  const root = "/generated/";
  const options: ts.CompilerOptions = { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, types: ["node"], noEmit: true };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getCurrentDirectory = () => projectRoot;
  host.readFile = (file) => (file.startsWith(root) ? generated.get(file.slice(root.length)) : readFile(file));
  host.fileExists = (file) => (file.startsWith(root) ? generated.has(file.slice(root.length)) : ts.sys.fileExists(file));
  host.getSourceFile = (file, language) => {
    const text = file.startsWith(root) ? generated.get(file.slice(root.length)) : undefined;
    return text === undefined ? getSourceFile(file, language) : ts.createSourceFile(file, text, language, true);
  };
  const files = [...generated.keys()].map((name) => root + name);
  const program = ts.createProgram(files, options, host);
  const checker = program.getTypeChecker();
  const found = new Set<string>();
  const inLib = (d: ts.Declaration) => /[\\/]typescript[\\/]lib[\\/]lib\.|[\\/]@types[\\/]node[\\/]/.test(d.getSourceFile().fileName);
  for (const file of files) {
    const source = program.getSourceFile(file) as ts.SourceFile;
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node)) {
        const p = node.parent;
        const isMemberName =
          ((ts.isPropertyAccessExpression(p) || ts.isQualifiedName(p)) && (ts.isPropertyAccessExpression(p) ? p.name : p.right) === node) ||
          ((ts.isPropertyAssignment(p) || ts.isPropertySignature(p) || ts.isMethodSignature(p)) && p.name === node);
        const declarations = isMemberName ? undefined : checker.getSymbolAtLocation(node)?.declarations;
        if (declarations !== undefined && declarations.length > 0 && declarations.every(inLib)) found.add(`${node.text} in ${file.slice(root.length)}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return [...found].sort();
}

// A message for each global the generated files name, with the field kinds whose codecs name one (a
// proto2 required field throws an Error when unset, a 64-bit integer is written with String).
const globalsProto = `syntax = "proto2";
package g.v1;
import "google/api/annotations.proto";
message Promise { optional string id = 1; }
message AsyncIterable { optional string id = 1; }
message Iterable { optional string id = 1; }
message Buffer { optional string id = 1; }
message URL { optional string id = 1; }
message Record { optional string id = 1; }
message Error { required string id = 1; }
message String { optional string id = 1; optional int64 n = 2; map<int64, int64> m = 3; repeated int64 l = 4; }
message Object { optional string id = 1; }
message Uint8Array { optional string id = 1; optional bytes b = 2; }
service G {
  rpc Get(URL) returns (Promise) { option (google.api.http) = { get: "/p/{id}" }; }
  rpc Watch(Buffer) returns (stream AsyncIterable) { option (google.api.http) = { get: "/w/{id}" }; }
  rpc Put(Error) returns (String) { option (google.api.http) = { post: "/e" body: "*" }; }
  rpc Each(Record) returns (stream Iterable) { option (google.api.http) = { get: "/r/{id}" }; }
  rpc Bytes(Object) returns (Uint8Array) { option (google.api.http) = { get: "/o/{id}" }; }
}
`;

describe("globals (D118)", () => {
  // protoplugin's safeIdentifier escapes these in every name it gives (Object$), so no import takes them.
  const reserved = new Set(["globalThis", "Object", "Uint8Array"]);
  const notReserved = (found: string) => !reserved.has(found.split(" ")[0] as string);

  test("the files of a proto whose messages are named like globals name every other global as globalThis's", () => {
    const out = generate({ "g/v1/g.proto": globalsProto }, parameter);
    expect(bareGlobals(out).filter(notReserved)).toEqual([]);
  }, 60_000);

  test("so do a2a.proto's (the task runtime and the one-call server too)", () => {
    const a2a = generate({ "a2a.proto": readFileSync(join(projectRoot, "vendor/a2a/current/a2a.proto"), "utf8") }, parameter);
    expect([...a2a.keys()]).toEqual(expect.arrayContaining(["a2a_tasks.ts", "a2a_server.ts", "a2a_client.ts", "a2a_grpc.ts", "a2a_handler.ts", "a2a_methods.ts", "a2a_codec.ts"]));
    expect(bareGlobals(a2a).filter(notReserved)).toEqual([]);
  }, 60_000);

  test("so do the golden fixtures' and the codec property tests' (every field kind)", () => {
    const fixtureDir = join(projectRoot, "proto/fixtures");
    const fixtures = Object.fromEntries(
      readdirSync(fixtureDir, { recursive: true, encoding: "utf8" })
        .filter((p) => p.endsWith(".proto"))
        .map((p) => [`fixtures/${p.split(sep).join("/")}`, readFileSync(join(fixtureDir, p), "utf8")]),
    );
    expect(bareGlobals(generate({ ...fixtures, ...codecFixtures }, parameter)).filter(notReserved)).toEqual([]);
  }, 60_000);

  test("the scan finds a bare global", () => {
    expect(bareGlobals(new Map([["x.ts", "export const p: Promise<void> = globalThis.Promise.resolve();\nexport const o = Object.keys({});\n"]]))).toEqual(["Object in x.ts", "Promise in x.ts"]);
  });

  test("they type-check under tsc --strict beside protoc-gen-es's output", () => {
    const files = { "g/v1/g.proto": globalsProto };
    expect(typeCheck(files, generate(files, parameter))).toEqual({ status: 0, output: "" });
  }, 60_000);
});
