// Target "a2a-js": @a2a-js/sdk 1.x's HTTP+JSON (REST) transport served as its
// README intends, the express restHandler (content-type guard,
// express.json(), its express.Router routes incl. the /:tenant forms, version
// check against the agent card, RestTransportHandler, ts-proto
// fromJSON/toJSON) over a directly implemented A2ARequestHandler. A default
// express 5 app on node:http, the router mounted at the root so the paths
// are the same as ours.
//
// There is no "a2a-js-core" here: unlike JsonRpcTransportHandler, the SDK
// does not export its RestTransportHandler (it exists only inside the
// express bundle), so its REST transport cannot be run without express.
import { createServer } from "node:http";
import express from "express";
import { restHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { EchoRequestHandler } from "../lib/a2a-js-handler.mjs";

export function createBenchServer() {
  const app = express();
  app.use(restHandler({ requestHandler: new EchoRequestHandler(), userBuilder: UserBuilder.noAuthentication }));
  return createServer(app);
}
