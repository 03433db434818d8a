import type { DescFile, DescMessage } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { names } from "../names.js";
import type { CodecPlan } from "./codec-plan.js";
import type { Renderer } from "./render.js";

/**
 * The gRPC binding of each service: the @grpc/grpc-js service definition,
 * (de)serialized with the message codecs emitted at build time
 * (`<file>_codec.ts`, plugin/emit/codec.ts: protobuf-es's wire format
 * without building a message to write one), and a typed function that
 * serves a handler on a grpc.Server through the runtime.
 */
export function emitGrpc(f: GeneratedFile, r: Renderer, file: DescFile, services: readonly ServiceModel[], runtimeImport: string, codecs: CodecPlan): void {
  const local = (name: string, generatedFile: string, typeOnly = false) =>
    r.ref(f.import(name, names.importPath(generatedFile), typeOnly));
  const grpcRuntime = names.grpcRuntime(runtimeImport);
  const serialize = r.ref(f.import("serializeMessage", grpcRuntime));
  const deserialize = r.ref(f.import("deserializeMessage", grpcRuntime));
  const codec = (message: DescMessage) => {
    const home = codecs.homeOf(message, codecs.planOf(file));
    return r.ref(f.import(codecs.namesOf(message, home, f).codec, names.importPath(names.codecFile(home.file))));
  };
  r.print("grpc", {
    services: services.map((s) => ({
      serviceName: s.desc.typeName,
      definition: r.ref(f.export("const", names.grpcDefinition(s.desc))),
      definitionName: names.grpcDefinition(s.desc),
      serviceDefinition: r.ref(f.import("ServiceDefinition", "@grpc/grpc-js", true)),
      methods: s.methods.map((m) => ({
        jsDoc: r.ref(f.jsDoc(m.desc, "  ")),
        localName: m.desc.localName,
        path: r.ref(f.string(m.grpcPath)),
        name: r.ref(f.string(m.desc.name)),
        responseStream: String(m.kind === "server_streaming"),
        input: r.ref(f.importShape(m.input)),
        inputCodec: codec(m.input),
        output: r.ref(f.importShape(m.output)),
        outputCodec: codec(m.output),
        serialize,
        deserialize,
      })),
      add: r.ref(f.export("function", names.grpcAdd(s.desc))),
      server: r.ref(f.import("Server", "@grpc/grpc-js", true)),
      handler: local(names.handler(s.desc), names.handlerFile(file), true),
      options: r.ref(f.import("GrpcOptions", grpcRuntime, true)),
      addGrpcService: r.ref(f.import("addGrpcService", grpcRuntime)),
      methodTable: local(names.methodTable(s.desc), names.methodsFile(file)),
      errorTable: local(names.errorTable(), names.errorsFile(file)),
      requiredFields: local(names.requiredFields(s.desc), names.methodsFile(file)),
    })),
  });
}
