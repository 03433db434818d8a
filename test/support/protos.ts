/**
 * Compiles proto sources with the real buf CLI and runs the plugin in-process
 * on the result, so tests can state a proto inline and assert on output.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { create, createFileRegistry, fromBinary, type DescMessage } from "@bufbuild/protobuf";
import {
  CodeGeneratorRequestSchema,
  FileDescriptorSetSchema,
  type CodeGeneratorRequest,
  type CodeGeneratorResponse,
} from "@bufbuild/protobuf/wkt";
import { protocGenA2a } from "../../plugin/plugin.js";

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const bufBin = join(projectRoot, "node_modules/.bin/buf");
const googleapis = join(projectRoot, "vendor/googleapis/google");

/** A scratch folder inside the project (so node_modules resolves from it); removed by `done()`. */
export function scratchDir(prefix: string): { dir: string; done: () => void } {
  const base = join(projectRoot, ".test-out");
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, `${prefix}-`));
  return { dir, done: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes `files` (path -> source) into a buf module with the googleapis protos beside them. */
export function writeModule(dir: string, files: Readonly<Record<string, string>>): void {
  cpSync(googleapis, join(dir, "google"), { recursive: true });
  writeFileSync(join(dir, "buf.yaml"), "version: v2\n");
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
}

/** Compiles `files` with `buf build` into a CodeGeneratorRequest for those files. */
export function createRequest(files: Readonly<Record<string, string>>, parameter = "target=ts"): CodeGeneratorRequest {
  const { dir, done } = scratchDir("build");
  try {
    writeModule(dir, files);
    execFileSync(bufBin, ["build", "-o", "image.binpb"], { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    const set = fromBinary(FileDescriptorSetSchema, readFileSync(join(dir, "image.binpb")));
    const fileToGenerate = Object.keys(files);
    return create(CodeGeneratorRequestSchema, {
      fileToGenerate,
      parameter,
      protoFile: set.file,
      sourceFileDescriptors: set.file.filter((f) => fileToGenerate.includes(f.name ?? "")),
    });
  } finally {
    done();
  }
}

/** Compiles `files` with `buf build`; returns a lookup of their message descriptors by full name (throws for an unknown one). */
export function compileMessages(files: Readonly<Record<string, string>>): (typeName: string) => DescMessage {
  const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: createRequest(files).protoFile }));
  return (typeName) => {
    const desc = registry.getMessage(typeName);
    if (desc === undefined) throw new Error(`no message ${typeName} in the compiled protos`);
    return desc;
  };
}

/** Runs the plugin in-process; returns generated file name -> content. Throws what the plugin throws. */
export function runPlugin(request: CodeGeneratorRequest): Map<string, string> {
  const response: CodeGeneratorResponse = protocGenA2a.run(request);
  if (response.error !== undefined && response.error !== "") throw new Error(response.error);
  return new Map(response.file.map((f) => [f.name, f.content]));
}

/** Compiles inline protos and runs the plugin on them. */
export function generate(files: Readonly<Record<string, string>>, parameter = "target=ts"): Map<string, string> {
  return runPlugin(createRequest(files, parameter));
}

/** Writes `files`, protoc-gen-es's output for them and `generated` into `dir`/gen. */
export function writeGenerated(dir: string, files: Readonly<Record<string, string>>, generated: ReadonlyMap<string, string>): void {
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
}
