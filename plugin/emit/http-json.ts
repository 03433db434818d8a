import type { DescFile } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { names } from "../names.js";
import type { Renderer } from "./render.js";

/**
 * The HTTP+JSON binding of each service: typed factories over the runtime's
 * core, fed with the method table and the google.api.http rules in
 * precedence order.
 */
export function emitHttpJson(f: GeneratedFile, r: Renderer, file: DescFile, services: readonly ServiceModel[], runtimeImport: string): void {
  const local = (name: string, generatedFile: string, typeOnly = false) =>
    r.ref(f.import(name, names.importPath(generatedFile), typeOnly));
  const internal = names.internalRuntime(runtimeImport);
  const rt = (name: string, typeOnly = false) => r.ref(f.import(name, internal, typeOnly));
  r.print("http-json", {
    services: services
      .filter((s) => s.routes.length > 0)
      .map((s) => ({
        serviceName: s.desc.typeName,
        endpoint: r.ref(f.export("function", names.httpJsonEndpoint(s.desc))),
        endpointName: names.httpJsonEndpoint(s.desc),
        listener: r.ref(f.export("function", names.httpJsonListener(s.desc))),
        handler: local(names.handler(s.desc), names.handlerFile(file), true),
        methodTable: local(names.methodTable(s.desc), names.methodsFile(file)),
        httpRules: local(names.httpRules(s.desc), names.methodsFile(file)),
        requiredFields: local(names.requiredFields(s.desc), names.methodsFile(file)),
        options: rt(s.a2a === undefined ? "HttpJsonOptions" : "A2AHttpJsonOptions", true),
        coreOptions: s.a2a === undefined ? "options" : r.ref([f.import("withA2AProfile", internal), "(options)"]),
        endpointType: rt("Endpoint", true),
        createEndpoint: rt("createHttpJsonEndpoint"),
        nodeListener: rt("NodeListener", true),
        createNodeListener: rt("createNodeListener"),
      })),
  });
}
