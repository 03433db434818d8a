import type { Schema } from "@bufbuild/protoplugin";
import { createEcmaScriptPlugin, type EcmaScriptPluginInit } from "./ecmascript-plugin.js";
import { emitClient } from "./emit/client.js";
import { emitCodec, emitCodecRegistration, planCodecs } from "./emit/codec.js";
import { emitGrpc } from "./emit/grpc.js";
import { emitHandler } from "./emit/handler.js";
import { emitHttpJson } from "./emit/http-json.js";
import { emitJsonRpc } from "./emit/jsonrpc.js";
import { emitServer } from "./emit/server.js";
import { emitTasks } from "./emit/tasks.js";
import { emitMethods } from "./emit/methods.js";
import { createFileModels } from "./model/service-model.js";
import { names } from "./names.js";
import { parseOptions, type Options } from "./options.js";
import { packageVersion } from "./package-root.js";

/** What protoc-gen-a2a is made of; test/plugin/protoplugin.test.ts also hands it to protoplugin's own createEcmaScriptPlugin. */
export const protocGenA2aInit: EcmaScriptPluginInit<Options> = {
  name: "protoc-gen-a2a",
  version: `v${packageVersion}`,
  parseOptions,
  generateTs,
};

/** protoc-gen-a2a: reads descriptors, builds the binding model, emits files beside protoc-gen-es's. */
export const protocGenA2a = createEcmaScriptPlugin(protocGenA2aInit);

function generateTs(schema: Schema<Options>): void {
  const runtime = schema.options.runtimeImport;
  const models = createFileModels(schema.files);
  // Message codecs, specialised at build time: one codec file per proto file with messages.
  const codecs = planCodecs(schema.files);
  for (const plan of codecs.files) {
    const codec = schema.generateFile(names.codecFile(plan.file));
    codec.preamble(plan.file);
    emitCodec(codec, codecs, plan, runtime);
  }
  // Every file is created so that keep_empty_files behaves as in protoc-gen-es;
  // protoplugin drops those that got nothing but a preamble.
  for (const model of models) {
    const handler = schema.generateFile(names.handlerFile(model.desc));
    const methods = schema.generateFile(names.methodsFile(model.desc));
    const jsonRpc = schema.generateFile(names.jsonRpcFile(model.desc));
    const httpJson = schema.generateFile(names.httpJsonFile(model.desc));
    const grpc = schema.generateFile(names.grpcFile(model.desc));
    const server = schema.generateFile(names.serverFile(model.desc));
    const tasks = schema.generateFile(names.tasksFile(model.desc));
    const client = schema.generateFile(names.clientFile(model.desc));
    for (const f of [handler, methods, jsonRpc, httpJson, grpc, server, tasks, client]) f.preamble(model.desc);
    if (model.services.length === 0) continue;
    emitHandler(handler, model.services, runtime);
    emitMethods(methods, model.services, runtime);
    emitCodecRegistration(methods, codecs, model.desc, model.services.flatMap((s) => s.methods.flatMap((m) => [m.input, m.output])), runtime);
    emitJsonRpc(jsonRpc, model.desc, model.services, runtime);
    emitHttpJson(httpJson, model.desc, model.services, runtime);
    if (schema.options.grpc) emitGrpc(grpc, model.desc, model.services, runtime, codecs);
    emitServer(server, model.desc, model.services, runtime, schema.options.grpc ? schema.options.importExtension : undefined);
    emitTasks(tasks, model.desc, model.services, runtime);
    emitClient(client, model.desc, model.services, runtime);
  }
}
