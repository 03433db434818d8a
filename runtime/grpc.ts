// The "protoc-gen-a2a/runtime/grpc" entry: everything that loads @grpc/grpc-js,
// apart from the main entry so JSON-only agents never load it.
export * from "./core/grpc/binding.js";
export * from "./core/grpc/server.js";
/**
 * The generated definitions' (de)serializers, with the codecs emitted beside
 * them; and protobuf binary by descriptor (a registered codec, else protobuf-es).
 */
export { decodeBinary, deserializeMessage, encodeBinary, serializeMessage } from "./core/codec/binary-codec.js";
/** The gRPC client of a method table (generated `create<Service>GrpcClient`). */
export { createGrpcClient } from "./core/client/grpc.js";
export type { GrpcClientOptions } from "./core/client/grpc.js";
