import type { DescFile } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { globals, names } from "../names.js";
import { docLines, localImport } from "./shared.js";
import { importSchema } from "./type-imports.js";

/**
 * One call serving an agent on every binding, for A2AService (recognised by
 * its full name, D21) when it hands out an Agent Card: the public card, of
 * that type, is what the capability policy reads.
 */
/**
 * `grpcImportExtension` is protoplugin's `import_extension` when `_grpc.ts` is
 * emitted, undefined with `grpc=false`. The gRPC definition is imported when
 * gRPC is served, not when the server module loads, so an agent with
 * `grpcPort: false` never loads @grpc/grpc-js (D43).
 */
export function emitServer(f: GeneratedFile, file: DescFile, services: readonly ServiceModel[], runtimeImport: string, grpcImportExtension: "none" | "js" | "ts" | undefined): void {
  const serverRuntime = names.serverRuntime(runtimeImport);
  for (const s of services) {
    const card = s.a2a?.card;
    if (card === undefined) continue;
    const cardSchema = importSchema(f, card);
    f.print(
      docLines(f, [
        `Serves an agent on every binding of ${s.desc.typeName}: JSON-RPC and HTTP+JSON`,
        `on one HTTP server (by default \`/a2a/jsonrpc\` and \`/a2a/rest\`), gRPC on its`,
        `own port, and \`card\` at /.well-known/agent-card.json with its`,
        `\`supportedInterfaces\` filled from what is mounted. The card's capabilities`,
        `and required extensions are enforced identically on all three.`,
      ]),
    );
    f.print(
      f.export("function", names.serve(s.desc)),
      "(handler: ",
      localImport(f, names.handler(s.desc), names.handlerFile(file), true),
      ", card: ",
      [f.import("MessageInitShape", "@bufbuild/protobuf", true), "<typeof ", importSchema(f, card, true), ">"],
      ", options: ",
      f.import("ServeOptions", serverRuntime, true),
      " = {}): ",
      globals.Promise,
      "<",
      f.import("AgentServer", serverRuntime, true),
      "> {",
    );
    f.print("  return ", f.import("serveAgent", serverRuntime), "(");
    f.print("    {");
    f.print("      handler,");
    f.print("      card: ", f.runtime.toJson, "(", cardSchema, ", ", f.runtime.create, "(", cardSchema, ", card)) as ", f.runtime.JsonObject, ",");
    f.print("      methods: ", localImport(f, names.methodTable(s.desc), names.methodsFile(file)), ",");
    f.print("      jsonRpcMethods: ", localImport(f, names.jsonRpcTable(s.desc), names.jsonRpcFile(file)), ",");
    f.print("      rules: ", localImport(f, names.httpRules(s.desc), names.methodsFile(file)), ",");
    f.print("      required: ", localImport(f, names.requiredFields(s.desc), names.methodsFile(file)), ",");
    if (grpcImportExtension !== undefined) {
      // The sibling _grpc file, addressed as protoplugin addresses every relative import.
      const grpcModule = `./${names.grpcFile(file).split("/").pop()?.replace(/\.ts$/, grpcImportExtension === "none" ? "" : `.${grpcImportExtension}`)}`;
      f.print("      loadGrpcDefinition: () => import(", f.string(grpcModule), ").then((m) => m.", names.grpcDefinition(s.desc), "),");
    }
    f.print("      service: ", importSchema(f, s.desc), ",");
    f.print("    },");
    f.print("    options,");
    f.print("  );");
    f.print("}");
    f.print();
  }
}
