/**
 * The names generated code writes (D118): the globals it uses are meant whatever a proto names
 * its messages, and an RPC named like a member the runtime gives a client (close), a promise's
 * then or `__proto__` is served and called under its escaped name.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join, sep } from "node:path";
import ts from "typescript";
import { codecFixtures } from "../support/codec-fixtures.js";
import { generate, projectRoot, scratchDir, writeGenerated } from "../support/protos.js";

const parameter = "target=ts,import_extension=js";

/** Writes `files` and protoc-gen-es's output for them, adds `generated`, and runs tsc --strict on it all. */
function typeCheck(files: Readonly<Record<string, string>>, generated: ReadonlyMap<string, string>): { status: number | null; output: string } {
  const { dir, done } = scratchDir("names");
  try {
    writeGenerated(dir, files, generated);
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

// RPCs named like what the runtime gives a client (close), what makes an object a promise's (then),
// and what an object literal takes for its prototype (__proto__), beside one named as nothing is.
const membersProto = `syntax = "proto3";
package cl.v1;
import "google/api/annotations.proto";
message Req { string id = 1; }
message Res { string id = 1; }
service Sessions {
  rpc Close(Req) returns (Res) { option (google.api.http) = { post: "/close" body: "*" }; }
  rpc Then(Req) returns (Res) { option (google.api.http) = { post: "/then" body: "*" }; }
  rpc __proto__(Req) returns (Res) { option (google.api.http) = { post: "/proto" body: "*" }; }
  rpc Get(Req) returns (Res) { option (google.api.http) = { get: "/get/{id}" }; }
}
`;

/**
 * Serves the service on every binding with a handler of the escaped names, calls each RPC with each
 * generated client, and prints what happened as JSON.
 */
const membersRun = `
import http from "node:http";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import type { SessionsHandler } from "./gen/cl/v1/cl_handler.js";
import { createSessionsJsonRpcListener, SessionsJsonRpcMethods } from "./gen/cl/v1/cl_jsonrpc.js";
import { createSessionsHttpJsonListener } from "./gen/cl/v1/cl_http.js";
import { addSessionsToServer, createSessionsGrpcClient } from "./gen/cl/v1/cl_grpc.js";
import { createSessionsJsonRpcClient, createSessionsHttpJsonClient } from "./gen/cl/v1/cl_client.js";
import { SessionsMethods } from "./gen/cl/v1/cl_methods.js";

const answer = (rpc: string) => async (r: { id: string }) => ({ id: rpc + ":" + r.id });
const handler: SessionsHandler = { close$: answer("Close"), then$: answer("Then"), __proto__$: answer("__proto__"), get: answer("Get") };
const out: Record<string, unknown> = { methods: Object.keys(SessionsMethods), jsonRpcMethods: Object.keys(SessionsJsonRpcMethods) };
const listen = async (listener: http.RequestListener) => {
  const server = http.createServer(listener);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: "http://127.0.0.1:" + (server.address() as AddressInfo).port };
};
const rpc = await listen(createSessionsJsonRpcListener(handler));
const rest = await listen(createSessionsHttpJsonListener(handler));
const gs = new grpc.Server();
addSessionsToServer(gs, handler);
const port = await new Promise<number>((res, rej) => gs.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))));
const clients = { jsonrpc: createSessionsJsonRpcClient(rpc.url), http: createSessionsHttpJsonClient(rest.url), grpc: createSessionsGrpcClient("127.0.0.1:" + port) };
for (const [binding, c] of Object.entries(clients)) {
  const answers = [await c.close$({ id: "a" }), await c.then$({ id: "b" }), await c.__proto__$({ id: "c" }), await c.get({ id: "d" })].map((r) => r.id);
  // A client is no promise's: an async function returning it resolves to it.
  const returned = (await (async () => c)()) === c;
  c.close();
  // A call after close() finds the gRPC channel closed.
  const afterClose = binding === "grpc" ? await c.get({ id: "e" }).then(() => "answered", (e: Error) => e.name) : "-";
  out[binding] = { answers, returned, afterClose };
}
const raw = await fetch(rpc.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "__proto__", params: { id: "f" } }) });
out["raw __proto__"] = ((await raw.json()) as { result?: unknown }).result;
rpc.server.close();
rest.server.close();
gs.forceShutdown();
console.log(JSON.stringify(out));
`;

describe("RPCs named like a client's members (D118)", () => {
  const files = { "cl/v1/cl.proto": membersProto };
  let out: Map<string, string>;
  beforeAll(() => {
    out = generate(files, parameter);
  }, 30_000);

  test("take a $ in the handler, the method table and the clients; the JSON-RPC methods and gRPC paths keep the proto's names", () => {
    const methods = out.get("cl/v1/cl_methods.ts") as string;
    expect([...methods.matchAll(/^ {2}(\S+): \{$/gm)].map((m) => m[1])).toEqual(["close$", "then$", "__proto__$", "get"]);
    expect([...methods.matchAll(/^ {4}localName: "(\S+)",$/gm)].map((m) => m[1])).toEqual(["close$", "then$", "__proto__$", "get"]);
    expect([...methods.matchAll(/^ {4}method: "(\S+)",$/gm)].map((m) => m[1]).sort()).toEqual(["__proto__$", "close$", "get", "then$"]);
    expect([...methods.matchAll(/^ {4}grpcPath: "(\S+)",$/gm)].map((m) => m[1])).toEqual(["/cl.v1.Sessions/Close", "/cl.v1.Sessions/Then", "/cl.v1.Sessions/__proto__", "/cl.v1.Sessions/Get"]);
    expect(out.get("cl/v1/cl_handler.ts")).toMatch(/^ {2}close\$\?\(request: Req/m);
    const client = out.get("cl/v1/cl_client.ts") as string;
    expect([...client.matchAll(/^ {2}(\w+\$?)\(/gm)].map((m) => m[1])).toEqual(["close$", "then$", "__proto__$", "get", "close"]);
    // A quoted "__proto__" key would set the table's prototype too.
    expect(out.get("cl/v1/cl_jsonrpc.ts")).toMatch(/^ {2}\["__proto__"\]: SessionsMethods\.__proto__\$,$/m);
  });

  test("are served and called on every binding, and close() and await reach the client's own", () => {
    const { dir, done } = scratchDir("members");
    try {
      writeGenerated(dir, files, out);
      writeFileSync(join(dir, "run.ts"), membersRun);
      const run = spawnSync(process.execPath, ["--import", join(projectRoot, "test/support/ts-loader.mjs"), "run.ts"], { cwd: dir, encoding: "utf8", timeout: 30_000 });
      expect(run.stderr.split("\n").filter((l) => l !== "" && !l.includes("ExperimentalWarning") && !l.includes("--trace-warnings"))).toEqual([]);
      const answers = ["Close:a", "Then:b", "__proto__:c", "Get:d"];
      expect(JSON.parse(run.stdout)).toEqual({
        methods: ["close$", "then$", "__proto__$", "get"],
        jsonRpcMethods: ["Close", "Then", "__proto__", "Get"],
        jsonrpc: { answers, returned: true, afterClose: "-" },
        http: { answers, returned: true, afterClose: "-" },
        grpc: { answers, returned: true, afterClose: "UnavailableError" },
        "raw __proto__": { id: "__proto__:f" },
      });
      expect(run.status).toBe(0);
    } finally {
      done();
    }
  }, 60_000);

  test("type-check under tsc --strict", () => {
    expect(typeCheck(files, out)).toEqual({ status: 0, output: "" });
  }, 60_000);

  test("a message named __proto__ (in no package) keeps its entry in the REQUIRED-fields table", () => {
    const proto = `syntax = "proto3";
import "google/api/field_behavior.proto";
message __proto__ { string id = 1 [(google.api.field_behavior) = REQUIRED]; }
service P { rpc Get(__proto__) returns (__proto__); }
`;
    expect(generate({ "p.proto": proto }, parameter).get("p_methods.ts")).toMatch(/^ {2}\["__proto__"\]: \{ required: \["id"\], nested: \[\] \},$/m);
  }, 30_000);
});
