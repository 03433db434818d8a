// The "protoc-gen-a2a/runtime/grpc" entry: everything that loads @grpc/grpc-js,
// apart from the main entry so JSON-only agents never load it.
export * from "./core/grpc/binding.js";
export * from "./core/grpc/server.js";
/** The generated definition's (de)serializers: protobuf binary of a message or its init shape. */
export { decodeBinary, encodeBinary } from "./core/codec/binary-codec.js";
