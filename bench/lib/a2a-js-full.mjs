// The @a2a-js/sdk 1.x "full stack" every a2a-js-full target serves: the
// SDK's DefaultRequestHandler (from "@a2a-js/sdk/server") with an
// InMemoryTaskStore and an AgentExecutor, the way the SDK's README and
// samples run an agent, in contrast to the "binding only" a2a-js targets
// (bench/lib/a2a-js-handler.mjs: the transport handlers over a directly
// implemented A2ARequestHandler). The agent is the same trivial one, doing
// its work through the event bus:
//
//   SendMessage  EchoAgentExecutor publishes the completed Task echoing the
//                message text (echoTask, the very value the binding-only
//                handler returns) and calls finished(); DefaultRequestHandler
//                then runs it through its ResultManager (which merges it with
//                the stored task of that id and prepends the user's message
//                to its history: the one difference of the answer, see
//                bench/lib/a2a-fixture.mjs's echoTaskWithHistoryJson) into
//                the InMemoryTaskStore, and answers with the stored result.
//   GetTask      answered from the InMemoryTaskStore, into which
//                createFullStackHandler() saves the stored task (storedTask)
//                before the server starts.
//
// Same card as the binding-only targets (plus, on request, the GRPC
// interface and the streaming capability). Every other method is the SDK's
// own. Used by {jsonrpc,http-json,grpc}/server-a2a-js-full.mjs and, with
// the streaming executor of bench/streams/a2a-js-full.mjs, by the streams
// benchmark.
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, ServerCallContext, UnauthenticatedUser } from "@a2a-js/sdk/server";
import { UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { agentCard, echoTask, storedTask, withGrpcInterface, withStreaming } from "./a2a-js-handler.mjs";

/** The AgentExecutor of SendMessage: publish the echo task, then finished(). */
export class EchoAgentExecutor {
  async execute(requestContext, eventBus) {
    eventBus.publish(AgentEvent.task(echoTask(requestContext.userMessage)));
    eventBus.finished();
  }
  async cancelTask() {
    throw new UnsupportedOperationError("cancelTask is not supported by the benchmark agent");
  }
}

/**
 * The ServerCallContext of every request the benchmarks send: no tenant and
 * the UnauthenticatedUser of UserBuilder.noAuthentication, so the task store
 * scope (tenant "", owner "unknown") is the requests' one.
 */
export const benchCallContext = () => new ServerCallContext({ user: new UnauthenticatedUser() });

/**
 * A DefaultRequestHandler over a fresh InMemoryTaskStore holding the stored
 * task, with the AgentExecutor `createExecutor(taskStore)` makes (default an
 * EchoAgentExecutor) and the benchmarks' card (with the GRPC interface if
 * `grpc`, capabilities.streaming if `streaming`). Resolves with
 * { requestHandler, taskStore, agentCard }.
 */
export async function createFullStackHandler({ createExecutor = () => new EchoAgentExecutor(), grpc = false, streaming = false } = {}) {
  let card = agentCard;
  if (grpc) card = withGrpcInterface(card);
  if (streaming) card = withStreaming(card);
  const taskStore = new InMemoryTaskStore();
  await taskStore.save(storedTask, benchCallContext());
  return { requestHandler: new DefaultRequestHandler(card, taskStore, createExecutor(taskStore)), taskStore, agentCard: card };
}
