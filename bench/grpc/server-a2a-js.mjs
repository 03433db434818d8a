// Target "a2a-js": @a2a-js/sdk 1.x's gRPC service (grpcService over its
// generated A2AService definition, ts-proto codecs), as its README serves it,
// on a grpc-js Server, over the directly implemented A2ARequestHandler of the
// other bindings (bench/lib/a2a-js-handler.mjs). Its agent card gains a GRPC
// interface: the SDK checks a2a-version against the card's interfaces for
// the binding on every call.
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { A2AService, grpcService, UserBuilder } from "@a2a-js/sdk/server/grpc";
import { EchoRequestHandler, withGrpcInterface } from "../lib/a2a-js-handler.mjs";
import { listen } from "./listen.mjs";

class GrpcEchoRequestHandler extends EchoRequestHandler {
  #card;
  async getAgentCard() {
    this.#card ??= withGrpcInterface(await super.getAgentCard());
    return this.#card;
  }
}

export function startBenchServer() {
  const server = new Server();
  server.addService(A2AService, grpcService({ requestHandler: new GrpcEchoRequestHandler(), userBuilder: UserBuilder.noAuthentication }));
  return listen(server, ServerCredentials);
}
