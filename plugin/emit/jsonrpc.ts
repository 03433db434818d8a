import type { DescFile } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { names } from "../names.js";
import type { Renderer } from "./render.js";

/**
 * The JSON-RPC binding of each service: a dispatch table keyed by JSON-RPC
 * method name (the RPC name) and typed factories over the runtime's core.
 */
export function emitJsonRpc(f: GeneratedFile, r: Renderer, file: DescFile, services: readonly ServiceModel[], runtimeImport: string): void {
  const local = (name: string, generatedFile: string, typeOnly = false) =>
    r.ref(f.import(name, names.importPath(generatedFile), typeOnly));
  const internal = names.internalRuntime(runtimeImport);
  const rt = (name: string, typeOnly = false) => r.ref(f.import(name, internal, typeOnly));
  r.print("jsonrpc", {
    services: services.map((s) => ({
      serviceName: s.desc.typeName,
      table: r.ref(f.export("const", names.jsonRpcTable(s.desc))),
      tableName: names.jsonRpcTable(s.desc),
      methodTable: local(names.methodTable(s.desc), names.methodsFile(file)),
      methods: s.methods.map((m) => ({ name: m.desc.name, localName: m.desc.localName })),
      endpoint: r.ref(f.export("function", names.jsonRpcEndpoint(s.desc))),
      endpointName: names.jsonRpcEndpoint(s.desc),
      listener: r.ref(f.export("function", names.jsonRpcListener(s.desc))),
      handler: local(names.handler(s.desc), names.handlerFile(file), true),
      requiredFields: local(names.requiredFields(s.desc), names.methodsFile(file)),
      options: rt(s.a2a === undefined ? "JsonRpcOptions" : "A2AJsonRpcOptions", true),
      coreOptions: s.a2a === undefined ? "options" : r.ref([f.import("withA2AProfile", internal), "(options)"]),
      endpointType: rt("Endpoint", true),
      createEndpoint: rt("createJsonRpcEndpoint"),
      nodeListener: rt("NodeListener", true),
      createNodeListener: rt("createNodeListener"),
    })),
  });
}
