// Target "a2a-js-full": @a2a-js/sdk 1.x the way its users run an agent, the
// "full stack": the same express 5 + restHandler mounting as "a2a-js" (the
// router at the root), but over the SDK's DefaultRequestHandler with an
// InMemoryTaskStore and an AgentExecutor that publishes the echo task on the
// event bus (bench/lib/a2a-js-full.mjs), instead of a directly implemented
// A2ARequestHandler. GetTask is answered from the task store, into which the
// stored task is saved at start-up; SendMessage's answer carries the user's
// message in the task's history (what the SDK adds; http-json/fixture.mjs's
// expectedFull).
import { createServer } from "node:http";
import express from "express";
import { restHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { createFullStackHandler } from "../lib/a2a-js-full.mjs";

const { requestHandler } = await createFullStackHandler();

export function createBenchServer() {
  const app = express();
  app.use(restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  return createServer(app);
}
