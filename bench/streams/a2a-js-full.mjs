// The @a2a-js/sdk 1.x "full stack" of the streams benchmark (targets
// a2a-js-full-jsonrpc, a2a-js-full-rest, a2a-js-full-grpc): the SDK's
// DefaultRequestHandler with an InMemoryTaskStore (bench/lib/a2a-js-full.mjs)
// and StreamAgentExecutor, an AgentExecutor that does through the event bus
// what the binding-only handler (./a2a-js-handler.mjs) yields, with the same
// values (workingTask, chunkUpdate):
//
//   "stream <N>"  publish the working Task, then the N artifact-update
//                 chunks, then finished();
//   "idle"        publish the working Task, then wait for the bench's
//                 "release" (like the binding-only handler: the SDK tells an
//                 executor nothing when the client leaves; its stream only
//                 ends once the executor publishes or returns), count the
//                 finally block, then finished().
//
// publish() is synchronous and the SDK's ExecutionEventQueue unbounded, so an
// N-chunk stream is queued at once; DefaultRequestHandler then takes each
// event through its ResultManager (load the task from the store, merge,
// save: a structuredClone of the whole task, its growing artifact included,
// both ways) before the transport writes it.
//
// Every stream of the benchmark has the fixture's task id ("task-stream").
// InMemoryTaskStore keeps a task forever and the ResultManager merges a new
// Task event with the stored one, so the first event of every stream after
// the first would carry the previous stream's N-part artifact. A real client's
// message creates a new task instead; to stand for that, the executor first
// saves the fresh working task over the stored one (one small save per
// stream). What the SDK still adds, inevitably: the first event (the task as
// loaded back from the store) has the user's message in its history.
import { AgentEvent } from "@a2a-js/sdk/server";
import { UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { createFullStackHandler } from "../lib/a2a-js-full.mjs";
import { chunkUpdate, counts, nextRelease, onCount, workingTask } from "./a2a-js-handler.mjs";
import { parseText } from "./fixture.mjs";

export class StreamAgentExecutor {
  #taskStore;
  constructor(taskStore) {
    this.#taskStore = taskStore;
  }
  async execute(requestContext, eventBus) {
    const part = requestContext.userMessage.parts[0];
    const what = parseText(part?.content?.$case === "text" ? part.content.value : "");
    // A fresh task for this stream (see above).
    await this.#taskStore.save(workingTask(), requestContext.context);
    if (what === "idle") {
      counts.opened++;
      try {
        eventBus.publish(AgentEvent.task(workingTask()));
        await nextRelease();
      } finally {
        counts.closed++;
        onCount.fn();
      }
      eventBus.finished();
      return;
    }
    eventBus.publish(AgentEvent.task(workingTask()));
    for (let i = 0; i < what; i++) eventBus.publish(AgentEvent.artifactUpdate(chunkUpdate(i, what)));
    eventBus.finished();
  }
  async cancelTask() {
    throw new UnsupportedOperationError("cancelTask is not supported by the benchmark agent");
  }
}

/** The full-stack DefaultRequestHandler of the streams targets (streaming card; the GRPC interface if `grpc`). */
export async function createStreamFullStackHandler({ grpc = false } = {}) {
  const { requestHandler } = await createFullStackHandler({ createExecutor: (taskStore) => new StreamAgentExecutor(taskStore), grpc, streaming: true });
  return requestHandler;
}
