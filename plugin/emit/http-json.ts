import type { DescFile } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { names } from "../names.js";
import { docLines, endpointFactory, localImport, printListener } from "./shared.js";

/**
 * The HTTP+JSON binding of each service: typed factories over the runtime's
 * core, fed with the method table and the google.api.http rules in
 * precedence order. A service without rules gets none.
 */
export function emitHttpJson(f: GeneratedFile, file: DescFile, services: readonly ServiceModel[], runtimeImport: string): void {
  const internal = names.internalRuntime(runtimeImport);
  for (const s of services.filter((service) => service.routes.length > 0)) {
    const serviceName = s.desc.typeName;
    const handler = localImport(f, names.handler(s.desc), names.handlerFile(file), true);
    const options = f.import(s.a2a === undefined ? "HttpJsonOptions" : "A2AHttpJsonOptions", internal, true);
    f.print(
      docLines(f, [
        `Serves ${serviceName} over HTTP+JSON with \`handler\`: the routes of its`,
        `google.api.http rules, as a transport-neutral core to run with`,
        `\`createNodeListener\` or \`createFetchHandler\`.`,
      ]),
    );
    f.print(f.export("function", names.httpJsonEndpoint(s.desc)), "(handler: ", handler, ", options: ", options, " = {}): ", f.import("Endpoint", internal, true), " {");
    f.print("  return ", f.import(endpointFactory(s, "createHttpJsonEndpoint", "createA2AHttpJsonEndpoint"), internal), "({");
    f.print("    ...options,");
    f.print("    methods: ", localImport(f, names.methodTable(s.desc), names.methodsFile(file)), ",");
    f.print("    rules: ", localImport(f, names.httpRules(s.desc), names.methodsFile(file)), ",");
    f.print("    required: ", localImport(f, names.requiredFields(s.desc), names.methodsFile(file)), ",");
    f.print("    handler,");
    f.print("  });");
    f.print("}");
    f.print();
    printListener(f, internal, {
      serviceName,
      binding: "HTTP+JSON",
      listener: names.httpJsonListener(s.desc),
      endpoint: names.httpJsonEndpoint(s.desc),
      handler,
      options,
    });
  }
}
