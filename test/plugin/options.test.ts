/**
 * Plugin options: our own (runtime_import) and the standard ones that
 * protoplugin parses for us, which must behave as they do in protoc-gen-es.
 * Where it matters, protoc-gen-es itself is run on the same request to show
 * both plugins agree.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, CodeGeneratorResponseSchema, type CodeGeneratorRequest } from "@bufbuild/protobuf/wkt";
import { parseOptions } from "../../plugin/options.js";
import { bufBin, createRequest, projectRoot, runPlugin, scratchDir, writeModule } from "../support/protos.js";

const version = (JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")) as { version: string }).version;

const common = `syntax = "proto3";
package demo.v1;
message Req { string id = 1; }
message Res { string id = 1; }
`;

const svc = `syntax = "proto3";
package demo.v1;
import "google/api/annotations.proto";
import "google/protobuf/empty.proto";
import "demo/v1/common.proto";

// Wrapper makes protoc-gen-es's svc_pb import common_pb too.
message Wrapper { Req req = 1; }

service Svc {
  rpc Get(Req) returns (Res) { option (google.api.http) = { get: "/x/{id}" }; }
  rpc Delete(Req) returns (google.protobuf.Empty) { option (google.api.http) = { delete: "/x/{id}" }; }
}
`;

const noService = `syntax = "proto3";
package demo.v1;
message Lonely { string id = 1; }
`;

const files = { "demo/v1/common.proto": common, "demo/v1/svc.proto": svc, "demo/v1/lonely.proto": noService };
const svcOnly = ["demo/v1/svc.proto"];

// One buf build; each test sets its own parameter (and files to generate).
const base = createRequest(files);
function request(parameter: string, fileToGenerate: readonly string[] = svcOnly): CodeGeneratorRequest {
  return create(CodeGeneratorRequestSchema, {
    fileToGenerate: [...fileToGenerate],
    parameter,
    protoFile: base.protoFile,
    sourceFileDescriptors: base.protoFile.filter((f) => fileToGenerate.includes(f.name ?? "")),
  });
}

/**
 * Runs a plugin as a process, the way buf runs it. Our plugin runs this way
 * whenever the target includes js or dts, the targets for which the bin loads
 * the TypeScript compiler on demand (plugin/protoplugin.ts). target=ts runs
 * stay in-process (faster).
 */
function spawnPlugin(bin: string, parameter: string, fileToGenerate: readonly string[]) {
  const result = spawnSync(process.execPath, [bin], { input: toBinary(CodeGeneratorRequestSchema, request(parameter, fileToGenerate)) });
  if (result.status !== 0) return { error: result.stderr.toString() };
  const response = fromBinary(CodeGeneratorResponseSchema, result.stdout);
  if (response.error) return { error: response.error };
  return { files: new Map(response.file.map((f) => [f.name, f.content])) };
}

/** True when the parameter's (last) target is exactly ts; protoplugin's default is js+dts. */
function tsOnly(parameter: string): boolean {
  const targets = parameter.split(",").filter((p) => p.startsWith("target="));
  return targets.at(-1) === "target=ts";
}

const a2aBin = join(projectRoot, "bin/protoc-gen-a2a.js");
const esBin = join(projectRoot, "node_modules/@bufbuild/protoc-gen-es/bin/protoc-gen-es");

const runs = new Map<string, Map<string, string>>();
function run(parameter: string, fileToGenerate: readonly string[] = svcOnly): Map<string, string> {
  const key = `${parameter} ${fileToGenerate.join(" ")}`;
  let files = runs.get(key);
  if (files === undefined) {
    if (tsOnly(parameter)) {
      files = runPlugin(request(parameter, fileToGenerate));
    } else {
      const result = spawnPlugin(a2aBin, parameter, fileToGenerate);
      if (result.files === undefined) throw new Error(`protoc-gen-a2a failed: ${result.error}`);
      files = result.files;
    }
    runs.set(key, files);
  }
  return files;
}

/** The error the plugin throws for a parameter (option errors are thrown before anything is generated). */
function thrown(parameter: string): Error {
  try {
    runPlugin(request(parameter));
  } catch (e) {
    return e as Error;
  }
  throw new Error(`expected parameter "${parameter}" to be rejected`);
}

/** Runs protoc-gen-es on the same request. */
function runProtocGenEs(parameter: string, fileToGenerate: readonly string[] = svcOnly): Map<string, string> {
  const { files, error } = spawnPlugin(esBin, parameter, fileToGenerate);
  if (files === undefined) throw new Error(`protoc-gen-es failed: ${error}`);
  return files;
}

/** Module specifiers of every import and require in a file. */
function specifiers(content: string): string[] {
  return [...content.matchAll(/(?:from |require\()"([^"]+)"/g)].map((m) => m[1] as string);
}

const validList =
  "Valid options: runtime_import=<module> (default protoc-gen-a2a/runtime), grpc=true|false (default true; false emits no _grpc.ts, for agents without @grpc/grpc-js); " +
  "and the standard ones: target, import_extension, js_import_style, keep_empty_files, ts_nocheck, elide_plugin_version, rewrite_imports, map_imports";

// ---------------------------------------------------------------------------
// Our options.
// ---------------------------------------------------------------------------

describe("unknown options", () => {
  test.each<[string, string]>([
    ["target=ts,foo=bar", `invalid option "foo=bar": unknown option "foo". ${validList}`],
    ["foo", `invalid option "foo": unknown option "foo". ${validList}`],
    // A typo of a standard option is ours to report: protoplugin passes it on.
    ["target=ts,keep_empty_file=true", `invalid option "keep_empty_file=true": unknown option "keep_empty_file". ${validList}`],
    ["runtimeImport=@my/rt", `invalid option "runtimeImport=@my/rt": unknown option "runtimeImport". ${validList}`],
    // protoplugin quotes every option it handed us, not only the bad one.
    ["runtime_import=@my/rt,foo=1", `invalid option "runtime_import=@my/rt,foo=1": unknown option "foo". ${validList}`],
    // Names an object has from its prototype are no options either.
    ["toString", `invalid option "toString": unknown option "toString". ${validList}`],
    ["__proto__=x", `invalid option "__proto__=x": unknown option "__proto__". ${validList}`],
  ])("%s", (parameter, message) => {
    expect(thrown(parameter).message).toBe(message);
  });

  test("parseOptions names the key and lists the valid options", () => {
    expect(() => parseOptions([{ key: "foo", value: "bar" }])).toThrow(new Error(`unknown option "foo". ${validList}`));
  });

  // The list claims to be the standard options; protoplugin 2.17 also accepts
  // map_imports (bootstrap_wkt is internal to protobuf-es, so it is fine to leave out).
  test("the listed standard options include every public one protoplugin accepts (map_imports)", () => {
    expect(() => run("target=ts,map_imports=x:y")).not.toThrow();
    expect(thrown("foo").message).toContain("map_imports");
  });

  test("buf generate prints the option error and fails", () => {
    const { dir, done } = scratchDir("options-e2e");
    try {
      writeModule(dir, files);
      writeFileSync(
        join(dir, "buf.gen.yaml"),
        [
          "version: v2",
          "plugins:",
          `  - local: ["node", ${JSON.stringify(join(projectRoot, "bin/protoc-gen-a2a.js"))}]`,
          "    out: gen",
          "    opt: [target=ts, foo=bar]",
          "",
        ].join("\n"),
      );
      const result = spawnSync(bufBin, ["generate", "--path", "demo/v1/svc.proto"], { cwd: dir, encoding: "utf8" });
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain(`protoc-gen-a2a: invalid option "foo=bar": unknown option "foo". ${validList}`);
    } finally {
      done();
    }
  });
});

describe("runtime_import", () => {
  test.each<[string, string]>([
    ["runtime_import=", 'invalid option "runtime_import=": runtime_import needs a module name, e.g. runtime_import=protoc-gen-a2a/runtime'],
    ["target=ts,runtime_import", 'invalid option "runtime_import": runtime_import needs a module name, e.g. runtime_import=protoc-gen-a2a/runtime'],
  ])("%s fails", (parameter, message) => {
    expect(thrown(parameter).message).toBe(message);
  });

  // A relative module is taken the way protoplugin takes every relative
  // import: relative to the output root, re-spelled from each generated file,
  // with the extension import_extension asks for. The entries for generated
  // code sit beside it (`./rt/index.js` -> `./rt/internal.js`, `./rt/grpc.js`),
  // as runtime/internal.ts and runtime/grpc.ts beside runtime/index.ts.
  test.each<[string, string, string]>([
    ["target=ts,runtime_import=./rt/index.js", "../../rt/internal", "../../rt/grpc"],
    ["target=ts,import_extension=js,runtime_import=./rt/index.js", "../../rt/internal.js", "../../rt/grpc.js"],
  ])("%s: a relative runtime_import is relative to the output root (%s from demo/v1/)", (parameter, spelled, grpc) => {
    const out = run(parameter);
    expect([...out.keys()]).toEqual(expect.arrayContaining(["demo/v1/svc_codec.ts"]));
    for (const [name, content] of out) {
      const rel = [...new Set(specifiers(content).filter((s) => s.includes("rt/")))];
      expect({ name, rel }).toEqual({ name, rel: [name.endsWith("_grpc.ts") ? grpc : spelled] });
    }
  });

  test.each<[string, string]>([
    ["target=ts", "protoc-gen-a2a/runtime"],
    ["target=ts,runtime_import=@my/rt", "@my/rt"],
    ["target=ts,runtime_import=@a/first,runtime_import=@b/last", "@b/last"],
  ])("%s imports the runtime from %s in every file", (parameter, runtime) => {
    const out = run(parameter);
    expect([...out.keys()]).toEqual(expect.arrayContaining(["demo/v1/svc_handler.ts", "demo/v1/svc_methods.ts"]));
    for (const [name, content] of out) {
      const runtimeImports = specifiers(content).filter((s) => !s.startsWith(".") && !s.startsWith("@bufbuild/") && !s.startsWith("@grpc/"));
      // Generated code imports the runtime's entry for it (codec files too); the gRPC file the gRPC entry instead.
      const expected = name.endsWith("_grpc.ts") ? `${runtime}/grpc` : `${runtime}/internal`;
      expect({ name, runtimeImports: [...new Set(runtimeImports)] }).toEqual({ name, runtimeImports: [expected] });
    }
    if (runtime !== "protoc-gen-a2a/runtime") {
      for (const content of out.values()) expect(content).not.toContain("protoc-gen-a2a/runtime");
    }
  });
});

// ---------------------------------------------------------------------------
// Standard options, as in protoc-gen-es.
// ---------------------------------------------------------------------------

describe("target", () => {
  /** The emitted files without extension, from the target=ts run: svc_handler, svc_methods, ... */
  const stems = () => [...run("target=ts").keys()].map((n) => n.replace(/\.ts$/, ""));

  test("target=ts emits one .ts per generated module, handler and methods among them", () => {
    const names = [...run("target=ts").keys()];
    expect(names.every((n) => n.endsWith(".ts") && !n.endsWith(".d.ts"))).toBe(true);
    expect(names).toEqual(expect.arrayContaining(["demo/v1/svc_handler.ts", "demo/v1/svc_methods.ts"]));
  });

  test.each<[string, string[]]>([
    ["target=js", [".js"]],
    ["target=dts", [".d.ts"]],
    ["target=js+dts", [".js", ".d.ts"]],
    ["target=ts+js+dts", [".ts", ".js", ".d.ts"]],
    // protoplugin's default target.
    ["", [".js", ".d.ts"]],
  ])("%s emits %j for each module target=ts emits", (parameter, extensions) => {
    const names = [...run(parameter).keys()].sort();
    expect(names).toEqual(stems().flatMap((s) => extensions.map((e) => s + e)).sort());
  });

  test.each(["target=ts", "target=js", "target=dts", "target=js+dts"])("%s: same extensions as protoc-gen-es", (parameter) => {
    const ext = (name: string) => name.replace(/^[^.]*/, "");
    const ours = new Set([...run(parameter).keys()].map(ext));
    const es = new Set([...runProtocGenEs(parameter).keys()].map(ext));
    expect(ours).toEqual(es);
  });

  test("target=js+dts: the .js has the values, the .d.ts the types", () => {
    const out = run("target=js+dts");
    const js = out.get("demo/v1/svc_methods.js") as string;
    const dts = out.get("demo/v1/svc_methods.d.ts") as string;
    expect(js).toContain("export const SvcMethods = {");
    expect(js).not.toContain("satisfies");
    expect(dts).toContain("export declare const SvcMethods: {");
    expect(out.get("demo/v1/svc_handler.d.ts")).toContain("export interface SvcHandler {");
  });
});

describe("import_extension", () => {
  test.each<[string, string]>([
    ["target=ts", ""],
    ["target=ts,import_extension=none", ""],
    ["target=ts,import_extension=js", ".js"],
    ["target=ts,import_extension=.js", ".js"],
    ["target=ts,import_extension=ts", ".ts"],
  ])("%s: relative imports end in %j", (parameter, ext) => {
    const out = run(parameter);
    const relative = (name: string) => [...new Set(specifiers(out.get(name) as string).filter((s) => s.startsWith(".")))].sort();
    expect(relative("demo/v1/svc_handler.ts")).toEqual([`./common_pb${ext}`]);
    // The method table also registers the codecs its services read and write.
    expect(relative("demo/v1/svc_methods.ts")).toEqual([`./common_pb${ext}`, `./svc_codec${ext}`]);
    // svc.proto is the only file to generate: common.proto's codecs are emitted in svc_codec.ts, with the well-known Empty's.
    expect(relative("demo/v1/svc_codec.ts")).toEqual([`./common_pb${ext}`, `./svc_pb${ext}`]);
    // Package imports never get an extension.
    const all = [...out.values()].flatMap(specifiers);
    expect(all).toContain("protoc-gen-a2a/runtime/internal");
    expect(all.filter((s) => !s.startsWith("."))).not.toContainEqual(expect.stringMatching(/\.(js|ts)$/));
  });

  test.each(["target=ts", "target=ts,import_extension=js", "target=ts,import_extension=ts"])(
    "%s: the import of common_pb is spelled as protoc-gen-es spells it",
    (parameter) => {
      const es = specifiers(runProtocGenEs(parameter).get("demo/v1/svc_pb.ts") as string).filter((s) => s.includes("common_pb"));
      const ours = specifiers(run(parameter).get("demo/v1/svc_methods.ts") as string).filter((s) => s.includes("common_pb"));
      expect(es.length).toBeGreaterThan(0);
      expect(new Set(ours)).toEqual(new Set(es));
    },
  );

  test("imports of the well-known Empty come from @bufbuild/protobuf/wkt", () => {
    const methods = run("target=ts,import_extension=js").get("demo/v1/svc_methods.ts") as string;
    expect(methods).toMatch(/import \{[^}]*\bEmptySchema\b[^}]*\} from "@bufbuild\/protobuf\/wkt";/);
  });
});

describe("js_import_style", () => {
  test("legacy_commonjs with target=js emits require() and exports", () => {
    const out = run("target=js,js_import_style=legacy_commonjs");
    expect([...out.keys()].every((n) => n.endsWith(".js"))).toBe(true);
    for (const [name, content] of out) {
      expect({ name, esm: /^(import|export) /m.test(content) }).toEqual({ name, esm: false });
    }
    const methods = out.get("demo/v1/svc_methods.js") as string;
    expect(methods).toContain('"use strict";\nObject.defineProperty(exports, "__esModule", { value: true });');
    expect(methods).toContain('const common_pb_1 = require("./common_pb");');
    expect(methods).toContain("input: common_pb_1.ReqSchema,");
    expect(methods).toContain("exports.SvcMethods = {");
    expect(methods).toContain("exports.SvcHttpRules = [");
    expect(methods).not.toMatch(/^import /m);
    expect(methods).not.toMatch(/^export /m);
    const jsonRpc = out.get("demo/v1/svc_jsonrpc.js") as string;
    expect(jsonRpc).toMatch(/require\("protoc-gen-a2a\/runtime\/internal"\)/);
    expect(jsonRpc).toContain("exports.createSvcJsonRpcEndpoint = ");
  });

  test("module (the default) with target=js emits import and export", () => {
    for (const parameter of ["target=js", "target=js,js_import_style=module"]) {
      const methods = run(parameter).get("demo/v1/svc_methods.js") as string;
      expect(methods).toMatch(/^import \{ [^}]*ReqSchema[^}]* \} from "\.\/common_pb";$/m);
      expect(methods).toContain("export const SvcMethods = {");
      expect(methods).not.toContain("require(");
      expect(methods).not.toContain("exports.");
    }
  });

  test("legacy_commonjs with import_extension=js requires ./common_pb.js, as protoc-gen-es does", () => {
    const parameter = "target=js,js_import_style=legacy_commonjs,import_extension=js";
    const ours = specifiers(run(parameter).get("demo/v1/svc_methods.js") as string).filter((s) => s.includes("common_pb"));
    const es = specifiers(runProtocGenEs(parameter).get("demo/v1/svc_pb.js") as string).filter((s) => s.includes("common_pb"));
    expect(ours).toEqual(["./common_pb.js"]);
    expect(es).toEqual(["./common_pb.js"]);
  });
});

describe("keep_empty_files", () => {
  const lonely = ["demo/v1/lonely.proto"];
  /** The files a proto with a service gets, renamed to lonely.proto's. */
  // The files the plugin creates for a proto, kept even when empty (svc has no
  // Agent Card RPC, so its svc_server.ts exists only when kept).
  const kept = () => [...run("target=ts,keep_empty_files=true").keys()].map((n) => n.replace("demo/v1/svc_", "demo/v1/lonely_")).sort();

  test.each(["target=ts", "target=ts,keep_empty_files=false", "target=ts,keep_empty_files=0"])(
    "a proto with no service, %s, emits only the codec of its messages",
    (parameter) => {
      expect([...run(parameter, lonely).keys()]).toEqual(["demo/v1/lonely_codec.ts"]);
    },
  );

  test.each(["target=ts,keep_empty_files=true", "target=ts,keep_empty_files=1"])(
    "a proto with no service, %s, emits every file a service would get",
    (parameter) => {
      const names = [...run(parameter, lonely).keys()].sort();
      expect(names).toEqual(kept());
      expect(names).toEqual(expect.arrayContaining(["demo/v1/lonely_handler.ts", "demo/v1/lonely_methods.ts"]));
    },
  );

  test("the kept files hold the preamble only (but the codec of its messages)", () => {
    const out = run("target=ts,keep_empty_files=true", lonely);
    expect(out.get("demo/v1/lonely_codec.ts")).toContain("export const LonelyCodec");
    out.delete("demo/v1/lonely_codec.ts");
    const preamble = [
      `// @generated by protoc-gen-a2a v${version} with parameter "target=ts,keep_empty_files=true"`,
      "// @generated from file demo/v1/lonely.proto (package demo.v1, syntax proto3)",
      "/* eslint-disable */",
      "",
      "",
    ].join("\n");
    for (const content of out.values()) expect(content).toBe(preamble);
  });

  test("a proto with a service is emitted either way, and the proto without one only when kept (but its codec)", () => {
    const both = ["demo/v1/svc.proto", "demo/v1/lonely.proto"];
    expect([...run("target=ts", both).keys()].filter((n) => n.includes("lonely"))).toEqual(["demo/v1/lonely_codec.ts"]);
    expect([...run("target=ts", both).keys()].sort()).toEqual([...run("target=ts").keys(), "demo/v1/lonely_codec.ts"].sort());
    expect([...run("target=ts,keep_empty_files=true", both).keys()].sort()).toEqual(
      [...new Set([...run("target=ts,keep_empty_files=true").keys(), ...kept()])].sort(),
    );
  });
});

describe("preamble options", () => {
  test.each<[string, string]>([
    ["target=ts", `// @generated by protoc-gen-a2a v${version} with parameter "target=ts"\n`],
    ["target=ts,elide_plugin_version=true", '// @generated by protoc-gen-a2a with parameter "target=ts,elide_plugin_version=true"\n'],
    ["target=ts,elide_plugin_version=false", `// @generated by protoc-gen-a2a v${version} with parameter "target=ts,elide_plugin_version=false"\n`],
  ])("%s", (parameter, firstLine) => {
    for (const [name, content] of run(parameter)) {
      expect({ name, first: content.startsWith(firstLine) }).toEqual({ name, first: true });
    }
  });

  test("elide_plugin_version removes the version from every file and nothing else", () => {
    const withVersion = run("target=ts");
    const elided = run("target=ts,elide_plugin_version=true");
    for (const [name, content] of withVersion) {
      const stripped = content.replace(` v${version} with parameter "target=ts"`, ' with parameter "target=ts,elide_plugin_version=true"');
      expect(elided.get(name)).toBe(stripped);
      expect(elided.get(name)).not.toContain(version);
    }
  });

  test("ts_nocheck=true adds // @ts-nocheck", () => {
    for (const content of run("target=ts,ts_nocheck=true").values()) {
      expect(content).toMatch(/^\/\/ @ts-nocheck$/m);
    }
    for (const content of run("target=ts").values()) {
      expect(content).not.toContain("@ts-nocheck");
    }
  });
});
