import type { DescFile } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { names } from "../names.js";
import type { Renderer } from "./render.js";

/**
 * One call serving an agent on every binding, for A2AService (recognised by
 * its full name) when it hands out an Agent Card: the public card, of that
 * type, is what the capability policy reads.
 */
export function emitServer(f: GeneratedFile, r: Renderer, file: DescFile, services: readonly ServiceModel[], runtimeImport: string): void {
  const local = (name: string, generatedFile: string, typeOnly = false) =>
    r.ref(f.import(name, names.importPath(generatedFile), typeOnly));
  const serverRuntime = names.serverRuntime(runtimeImport);
  r.print("server", {
    services: services.flatMap((s) => {
      const card = s.a2a?.card;
      if (card === undefined) return [];
      return [
        {
          serviceName: s.desc.typeName,
          serve: r.ref(f.export("function", names.serve(s.desc))),
          handler: local(names.handler(s.desc), names.handlerFile(file), true),
          cardInit: r.ref([f.import("MessageInitShape", "@bufbuild/protobuf", true), "<typeof ", f.importSchema(card, true), ">"]),
          cardSchema: r.ref(f.importSchema(card)),
          create: r.ref(f.runtime.create),
          toJson: r.ref(f.runtime.toJson),
          jsonObject: r.ref(f.runtime.JsonObject),
          options: r.ref(f.import("ServeOptions", serverRuntime, true)),
          agentServer: r.ref(f.import("AgentServer", serverRuntime, true)),
          serveAgent: r.ref(f.import("serveAgent", serverRuntime)),
          methods: local(names.methodTable(s.desc), names.methodsFile(file)),
          jsonRpcMethods: local(names.jsonRpcTable(s.desc), names.jsonRpcFile(file)),
          rules: local(names.httpRules(s.desc), names.methodsFile(file)),
          required: local(names.requiredFields(s.desc), names.methodsFile(file)),
          grpcDefinition: local(names.grpcDefinition(s.desc), names.grpcFile(file)),
          service: r.ref(f.importSchema(s.desc)),
        },
      ];
    }),
  });
}
