import type { DescFile } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { names, propertyKey } from "../names.js";
import { docLines, endpointFactory, localImport, printListener } from "./shared.js";

/**
 * The JSON-RPC binding of each service: a dispatch table keyed by JSON-RPC
 * method name (the RPC name) and typed factories over the runtime's core.
 */
export function emitJsonRpc(f: GeneratedFile, file: DescFile, services: readonly ServiceModel[], runtimeImport: string): void {
  const internal = names.internalRuntime(runtimeImport);
  for (const s of services) {
    const serviceName = s.desc.typeName;
    const methodTable = localImport(f, names.methodTable(s.desc), names.methodsFile(file));
    const handler = localImport(f, names.handler(s.desc), names.handlerFile(file), true);
    const options = f.import(s.a2a === undefined ? "JsonRpcOptions" : "A2AJsonRpcOptions", internal, true);
    f.print(
      docLines(f, [
        `The JSON-RPC 2.0 dispatch table of ${serviceName}: each method name is`,
        `the RPC name.`,
      ]),
    );
    // Typed where it is declared, for builds with isolatedDeclarations.
    f.print(f.export("const", names.jsonRpcTable(s.desc)), ": {");
    for (const m of s.methods) f.print("  readonly ", propertyKey(m.desc.name), ": typeof ", methodTable, ".", m.localName, ";");
    f.print("} = {");
    for (const m of s.methods) f.print("  ", propertyKey(m.desc.name), ": ", methodTable, ".", m.localName, ",");
    f.print("};");
    f.print();
    f.print(
      docLines(f, [
        `Serves ${serviceName} over JSON-RPC 2.0 with \`handler\`: a transport-neutral`,
        `core, to run with \`createNodeListener\` or \`createFetchHandler\`.`,
      ]),
    );
    f.print(f.export("function", names.jsonRpcEndpoint(s.desc)), "(handler: ", handler, ", options: ", options, " = {}): ", f.import("Endpoint", internal, true), " {");
    f.print("  return ", f.import(endpointFactory(s, "createJsonRpcEndpoint", "createA2AJsonRpcEndpoint"), internal), "({");
    f.print("    ...options,");
    f.print("    methods: ", names.jsonRpcTable(s.desc), ",");
    f.print("    required: ", localImport(f, names.requiredFields(s.desc), names.methodsFile(file)), ",");
    f.print("    handler,");
    f.print("  });");
    f.print("}");
    f.print();
    printListener(f, internal, {
      serviceName,
      binding: "JSON-RPC 2.0",
      listener: names.jsonRpcListener(s.desc),
      endpoint: names.jsonRpcEndpoint(s.desc),
      handler,
      options,
    });
  }
}
