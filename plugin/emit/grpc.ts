import type { DescFile } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { ServiceModel } from "../model/service-model.js";
import { names } from "../names.js";
import type { Renderer } from "./render.js";

/**
 * The gRPC binding of each service: the @grpc/grpc-js service definition,
 * (de)serialized with the runtime's compiled binary codec (protobuf-es's
 * wire format without building a message to write one, see
 * runtime/core/codec/binary-codec.ts), and a typed function that serves a handler on a
 * grpc.Server through the runtime.
 */
export function emitGrpc(f: GeneratedFile, r: Renderer, file: DescFile, services: readonly ServiceModel[], runtimeImport: string): void {
  const local = (name: string, generatedFile: string, typeOnly = false) =>
    r.ref(f.import(name, names.importPath(generatedFile), typeOnly));
  const grpcRuntime = names.grpcRuntime(runtimeImport);
  const encodeBuffer = r.ref(f.import("encodeBuffer", grpcRuntime));
  const decodeBinary = r.ref(f.import("decodeBinary", grpcRuntime));
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
        inputSchema: r.ref(f.importSchema(m.input)),
        output: r.ref(f.importShape(m.output)),
        outputSchema: r.ref(f.importSchema(m.output)),
        encodeBuffer,
        decodeBinary,
      })),
      add: r.ref(f.export("function", names.grpcAdd(s.desc))),
      server: r.ref(f.import("Server", "@grpc/grpc-js", true)),
      handler: local(names.handler(s.desc), names.handlerFile(file), true),
      options: r.ref(s.a2a === undefined ? f.import("GrpcOptions", grpcRuntime, true) : f.import("A2AGrpcOptions", names.internalRuntime(runtimeImport), true)),
      coreOptions: s.a2a === undefined ? "options" : r.ref([f.import("withA2AProfile", names.internalRuntime(runtimeImport)), "(options)"]),
      addGrpcService: r.ref(f.import("addGrpcService", grpcRuntime)),
      methodTable: local(names.methodTable(s.desc), names.methodsFile(file)),
      requiredFields: local(names.requiredFields(s.desc), names.methodsFile(file)),
    })),
  });
}
