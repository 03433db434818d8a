// Target "a2a-js": @a2a-js/sdk 1.x served as its README intends, the express
// jsonRpcHandler (content-type guard, express.json(), version check against
// the agent card, JsonRpcTransportHandler) over a directly implemented
// A2ARequestHandler. A default express 5 app on node:http.
import { createServer } from "node:http";
import express from "express";
import { jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { EchoRequestHandler } from "../lib/a2a-js-handler.mjs";

export function createBenchServer() {
  const app = express();
  app.use(jsonRpcHandler({ requestHandler: new EchoRequestHandler(), userBuilder: UserBuilder.noAuthentication }));
  return createServer(app);
}
