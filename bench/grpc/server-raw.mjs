// Target "raw": the floor of a grpc-js unary call. A ServiceDefinition for
// the same method path with identity (de)serializers, and a handler that
// answers every call with the response bytes encoded once at start-up: no
// protobuf decoding or encoding, no metadata, version or validation work.
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { expectedBytes, path } from "./fixture.mjs";
import { listen } from "./listen.mjs";

const identity = (bytes) => bytes;

export const RawDefinition = {
  sendMessage: {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  },
};

export function startBenchServer() {
  // Channelz off, as on the ours targets' createGrpcServer() (D80): a floor carries no cost they do not.
  const server = new Server({ "grpc.enable_channelz": 0 });
  server.addService(RawDefinition, {
    sendMessage(_call, callback) {
      callback(null, expectedBytes);
    },
  });
  return listen(server, ServerCredentials);
}
