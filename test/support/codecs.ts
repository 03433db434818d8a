/**
 * The codecs the plugin emits, for tests that hold them to protobuf-es:
 * protoc-gen-es's `_pb.ts` and the plugin's `_codec.ts` for a request,
 * transpiled (ts.transpileModule, type-free: the golden test type-checks
 * emitted code) into a scratch folder inside the project and imported, and
 * every codec file's list registered with the runtime. The message
 * descriptors to test with are the generated schemas, the very objects the
 * emitted codecs are registered under.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { create, fromBinary, toBinary, type DescMessage } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, CodeGeneratorResponseSchema, type CodeGeneratorRequest } from "@bufbuild/protobuf/wkt";
import ts from "typescript";
import { registerCodecs, type GenCodec } from "../../runtime/core/codec/registry.js";
import { createRequest, projectRoot, runPlugin, scratchDir } from "./protos.js";

export interface EmittedCodecs {
  /** The generated schema of a message (throws for an unknown one). */
  message(typeName: string): DescMessage;
  /** Every emitted codec, by type name. */
  readonly codecs: ReadonlyMap<string, GenCodec>;
  /** The emitted source of each generated file, by name (`bc/v1/all_codec.ts`). */
  readonly sources: ReadonlyMap<string, string>;
  /** Removes the scratch folder the modules were loaded from (call it once the tests are done). */
  done(): void;
}

const protocGenEs = join(projectRoot, "node_modules/@bufbuild/protoc-gen-es/bin/protoc-gen-es");

/** Emits, loads and registers the codecs of inline protos. */
export function loadCodecs(files: Readonly<Record<string, string>>): Promise<EmittedCodecs> {
  return loadCodecsOf(createRequest(files, "target=ts,import_extension=js"));
}

/** Emits, loads and registers the codecs of a request's files to generate. */
export async function loadCodecsOf(request: CodeGeneratorRequest): Promise<EmittedCodecs> {
  const sources = new Map<string, string>();
  // protoc-gen-es for every file but the well-known types (as include_imports would).
  const pbRequest = create(CodeGeneratorRequestSchema, {
    ...request,
    fileToGenerate: request.protoFile.map((f) => f.name ?? "").filter((name) => !name.startsWith("google/protobuf/")),
  });
  const response = fromBinary(CodeGeneratorResponseSchema, execFileSync(process.execPath, [protocGenEs], { input: toBinary(CodeGeneratorRequestSchema, pbRequest), maxBuffer: 1 << 30 }));
  if (response.error !== undefined && response.error !== "") throw new Error(response.error);
  for (const file of response.file) sources.set(file.name ?? "", file.content ?? "");
  for (const [name, content] of runPlugin(request)) if (name.endsWith("_codec.ts")) sources.set(name, content);

  const { dir, done } = scratchDir("codecs");
  const compilerOptions = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true };
  for (const [name, content] of sources) {
    const dest = join(dir, name.replace(/\.ts$/, ".js"));
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, ts.transpileModule(content, { compilerOptions, fileName: name }).outputText);
  }
  const schemas = new Map<string, DescMessage>();
  const codecs = new Map<string, GenCodec>();
  for (const name of [...sources.keys()].sort()) {
    const module = (await import(pathToFileURL(join(dir, name.replace(/\.ts$/, ".js"))).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if (name.endsWith("_pb.ts") && isMessageDesc(value)) schemas.set(value.typeName, value);
      if (name.endsWith("_codec.ts") && Array.isArray(value)) registerCodecs(value as GenCodec[]);
      if (name.endsWith("_codec.ts") && isCodec(value)) codecs.set(value.schema.typeName, value);
    }
  }
  return {
    message(typeName) {
      const desc = schemas.get(typeName);
      if (desc === undefined) throw new Error(`no generated schema for ${typeName}`);
      return desc;
    },
    codecs,
    sources,
    done,
  };
}

function isMessageDesc(value: unknown): value is DescMessage {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "message";
}

function isCodec(value: unknown): value is GenCodec {
  return typeof value === "object" && value !== null && isMessageDesc((value as { schema?: unknown }).schema) && typeof (value as { write?: unknown }).write === "function";
}
