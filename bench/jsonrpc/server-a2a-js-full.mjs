// Target "a2a-js-full": @a2a-js/sdk 1.x the way its users run an agent, the
// "full stack": the same express 5 + jsonRpcHandler mounting as "a2a-js",
// but over the SDK's DefaultRequestHandler with an InMemoryTaskStore and an
// AgentExecutor that publishes the echo task on the event bus
// (bench/lib/a2a-js-full.mjs), instead of a directly implemented
// A2ARequestHandler. Shows what the SDK's request handling (request context,
// event bus and queue, ResultManager, task store copies) costs on top of its
// binding. Its answer carries the user's message in the task's history (what
// the SDK adds; jsonrpc/fixture.mjs's expectedFullResponse).
import { createServer } from "node:http";
import express from "express";
import { jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { createFullStackHandler } from "../lib/a2a-js-full.mjs";

const { requestHandler } = await createFullStackHandler();

export function createBenchServer() {
  const app = express();
  app.use(jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  return createServer(app);
}
