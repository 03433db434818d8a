// The @a2a-js/sdk 1.x streaming handler (see fixture.mjs): the benchmarks'
// directly implemented A2ARequestHandler (bench/lib/a2a-js-handler.mjs) with
// the streaming capability on its card and a sendMessageStream that yields a
// working Task then N artifact chunks, or (text "idle") the Task and then
// waits. The SDK gives a handler no abort signal, so an idle handler cannot
// learn that its client left: it waits for release() (the bench's "release"
// command, standing for the agent's next event) and its finally block runs
// after that. The events' values (workingTask, chunkUpdate), the counts and
// release() are shared with the full-stack executor (./a2a-js-full.mjs).
import { TaskState } from "@a2a-js/sdk";
import { EchoRequestHandler, withStreaming } from "../lib/a2a-js-handler.mjs";
import { artifactId, chunkText, contextId, parseText, taskId } from "./fixture.mjs";

export const counts = { opened: 0, closed: 0 };
export const onCount = { fn: () => {} };

let releaseAll;
let released = new Promise((r) => (releaseAll = r));
export function release() {
  releaseAll();
  released = new Promise((r) => (releaseAll = r));
}
/** Resolves on the next release(). */
export const nextRelease = () => released;

/** The working Task every stream starts with (the SDK's Task shape). */
export const workingTask = () => ({
  id: taskId,
  contextId,
  status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
  artifacts: [],
  history: [],
  metadata: undefined,
});

/** Artifact-update chunk `i` of `n` (the SDK's TaskArtifactUpdateEvent shape). */
export const chunkUpdate = (i, n) => ({
  taskId,
  contextId,
  artifact: { artifactId, name: "", description: "", parts: [{ content: { $case: "text", value: chunkText(i) }, metadata: undefined, filename: "", mediaType: "" }], metadata: undefined, extensions: [] },
  append: i > 0,
  lastChunk: i === n - 1,
  metadata: undefined,
});

const task = () => ({ payload: { $case: "task", value: workingTask() } });

export class StreamRequestHandler extends EchoRequestHandler {
  async getAgentCard() {
    return withStreaming(await super.getAgentCard());
  }
  async *sendMessageStream(params) {
    const part = params.message?.parts[0];
    const what = parseText(part?.content?.$case === "text" ? part.content.value : "");
    if (what === "idle") {
      counts.opened++;
      try {
        yield task();
        await released;
      } finally {
        counts.closed++;
        onCount.fn();
      }
      return;
    }
    yield task();
    for (let i = 0; i < what; i++) yield { payload: { $case: "artifactUpdate", value: chunkUpdate(i, what) } };
  }
}
