import { create, maximumEdition, minimumEdition, protoInt64 } from "@bufbuild/protobuf";
import { CodeGeneratorResponse_Feature, CodeGeneratorResponseSchema, type CodeGeneratorRequest } from "@bufbuild/protobuf/wkt";
import type { FileInfo, Plugin, Schema } from "@bufbuild/protoplugin";
import { createSchema, parseParameter, transpile } from "./protoplugin.js";

export interface EcmaScriptPluginInit<Options extends object> {
  readonly name: string;
  readonly version: string;
  readonly parseOptions: (raw: { key: string; value: string }[]) => Options;
  readonly generateTs: (schema: Schema<Options>, target: "ts") => void;
}

/**
 * protoplugin's createEcmaScriptPlugin for a plugin that has generateTs only (js and dts are
 * transpiled from its TypeScript, by protoplugin's transpile), without loading the TypeScript
 * compiler before a request asks for js or dts (see ./protoplugin.ts). The run is protoplugin
 * 2.17's, step for step, but two differences that change no output: each file is printed once
 * (protoplugin prints every file twice per run, once to keep for the transpiler), and one run's
 * js or dts target does not carry over to the plugin's later runs as it does in protoplugin.
 */
export function createEcmaScriptPlugin<Options extends object>(init: EcmaScriptPluginInit<Options>): Plugin {
  return {
    name: init.name,
    version: init.version,
    run(request: CodeGeneratorRequest) {
      const parameter = parseParameter(request.parameter, init.parseOptions);
      const schema = createSchema(
        request,
        parameter,
        init.name,
        parameter.parsed.elidePluginVersion ? undefined : init.version,
        minimumEdition,
        maximumEdition,
      );
      const ts = schema.targets.includes("ts");
      const js = schema.targets.includes("js");
      const dts = schema.targets.includes("dts");
      let files: FileInfo[] = [];
      if (ts || js || dts) {
        schema.prepareGenerate("ts");
        init.generateTs(schema, "ts");
        const tsFiles = schema.getFileInfo();
        if (ts) files = tsFiles;
        if (js || dts) files = [...files, ...transpile(tsFiles, js, dts, parameter.parsed.jsImportStyle)];
      }
      return create(CodeGeneratorResponseSchema, {
        supportedFeatures: protoInt64.parse(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL | CodeGeneratorResponse_Feature.SUPPORTS_EDITIONS),
        minimumEdition,
        maximumEdition,
        file: files.map((f) => ({ name: f.name, content: f.preamble === undefined ? f.content : `${f.preamble}\n${f.content}` })),
      });
    },
  };
}
