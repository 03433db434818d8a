import type { DescFile, DescMessage } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { globals, names } from "../names.js";
import type { CodecPlan } from "./codec-plan.js";
import { coreOptions, docLines, localImport } from "./shared.js";
import { importShape } from "./type-imports.js";

/**
 * The gRPC binding of each service: the @grpc/grpc-js service definition,
 * (de)serialized with the message codecs emitted at build time
 * (`<file>_codec.ts`, plugin/emit/codec.ts: protobuf-es's wire format
 * without building a message to write one), and a typed function that
 * serves a handler on a grpc.Server through the runtime.
 */
export function emitGrpc(f: GeneratedFile, file: DescFile, services: readonly ServiceModel[], runtimeImport: string, codecs: CodecPlan): void {
  const grpcRuntime = names.grpcRuntime(runtimeImport);
  const internal = names.internalRuntime(runtimeImport);
  const serialize = f.import("serializeMessage", grpcRuntime);
  const deserialize = f.import("deserializeMessage", grpcRuntime);
  const codec = (message: DescMessage) => {
    const home = codecs.homeOf(message, codecs.planOf(file));
    return f.import(codecs.namesOf(message, home, f).codec, names.importPath(names.codecFile(home.file)));
  };
  for (const s of services) {
    const serviceName = s.desc.typeName;
    f.print(
      docLines(f, [
        `The @grpc/grpc-js service definition of ${serviceName}: full method`,
        `paths, messages in protobuf binary (the runtime's codec writes a message`,
        `or its init shape, and reads the message fromBinary would).`,
        ``,
        `@generated from service ${serviceName}`,
      ]),
    );
    // Annotated, not `as const satisfies`: the declaration emitter (target=dts) then keeps the
    // type's import; from `satisfies` it wrote the name without it.
    f.print(f.export("const", names.grpcDefinition(s.desc)), ": ", f.import("ServiceDefinition", "@grpc/grpc-js", true), " = {");
    for (const m of s.methods) {
      const input = importShape(f, m.input);
      const inputCodec = codec(m.input);
      const output = importShape(f, m.output);
      const outputCodec = codec(m.output);
      f.print(f.jsDoc(m.desc, "  "));
      f.print("  ", m.localName, ": {");
      f.print("    path: ", f.string(m.grpcPath), ",");
      f.print("    originalName: ", f.string(m.desc.name), ",");
      f.print("    requestStream: false,");
      f.print("    responseStream: ", String(m.kind === "server_streaming"), ",");
      f.print("    requestSerialize: (value: ", input, "): ", globals.Buffer, " => ", serialize, "(", inputCodec, ", value),");
      f.print("    requestDeserialize: (bytes: ", globals.Buffer, "): ", input, " => ", deserialize, "(", inputCodec, ", bytes),");
      f.print("    responseSerialize: (value: ", output, "): ", globals.Buffer, " => ", serialize, "(", outputCodec, ", value),");
      f.print("    responseDeserialize: (bytes: ", globals.Buffer, "): ", output, " => ", deserialize, "(", outputCodec, ", bytes),");
      f.print("  },");
    }
    f.print("};");
    f.print();
    f.print(
      docLines(f, [
        `Serves ${serviceName} on \`server\` with \`handler\`: metadata into the call`,
        `context, errors as google.rpc.Status in grpc-status-details-bin, client`,
        `cancellation and deadlines aborting the handler's signal.`,
      ]),
    );
    const options = s.a2a === undefined ? f.import("GrpcOptions", grpcRuntime, true) : f.import("A2AGrpcOptions", internal, true);
    f.print(
      f.export("function", names.grpcAdd(s.desc)),
      "(server: ",
      f.import("Server", "@grpc/grpc-js", true),
      ", handler: ",
      localImport(f, names.handler(s.desc), names.handlerFile(file), true),
      ", options: ",
      options,
      " = {}): void {",
    );
    f.print("  ", f.import("addGrpcService", grpcRuntime), "(server, {");
    f.print("    ...", coreOptions(f, s, internal), ",");
    f.print("    definition: ", names.grpcDefinition(s.desc), ",");
    f.print("    methods: ", localImport(f, names.methodTable(s.desc), names.methodsFile(file)), ",");
    f.print("    required: ", localImport(f, names.requiredFields(s.desc), names.methodsFile(file)), ",");
    f.print("    handler,");
    f.print("  });");
    f.print("}");
    f.print();
    const clientOptions = s.a2a === undefined ? f.import("GrpcClientOptions", grpcRuntime, true) : f.import("A2AClientOptions", internal, true);
    f.print(docLines(f, [`A client of ${serviceName} over gRPC at \`address\`: \`host:port\`, or a URL whose host and`, `port are dialled (https and grpcs with TLS, D28).`]));
    f.print(
      f.export("function", names.grpcClient(s.desc)),
      "(address: string, options: ",
      clientOptions,
      " = {}): ",
      localImport(f, names.client(s.desc), names.clientFile(file), true),
      " {",
    );
    f.print(
      "  return ",
      f.import("createGrpcClient", grpcRuntime),
      "({ methods: ",
      localImport(f, names.methodTable(s.desc), names.methodsFile(file)),
      " }, address, ",
      s.a2a === undefined ? "options" : [f.import("withA2AClientProfile", internal), "(options)"],
      ");",
    );
    f.print("}");
    f.print();
  }
}
