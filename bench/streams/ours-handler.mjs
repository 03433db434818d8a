// The "ours" streaming handler (see fixture.mjs): sendStreamingMessage
// yields a working Task then N artifact chunks, or (text "idle") the Task and
// then waits for the call's signal. Counts idle handlers started and whose
// finally ran (read by bench/streams/server.mjs).
import { TaskState } from "../.build/generated/a2a_pb.js";
import { artifactId, chunkText, contextId, parseText, taskId } from "./fixture.mjs";

export const counts = { opened: 0, closed: 0 };
export const onCount = { fn: () => {} };

const task = { payload: { case: "task", value: { id: taskId, contextId, status: { state: TaskState.WORKING } } } };

function aborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

export const handler = {
  async *sendStreamingMessage(request, context) {
    const what = parseText(request.message?.parts[0]?.content.value);
    if (what === "idle") {
      counts.opened++;
      try {
        yield task;
        await aborted(context.signal);
      } finally {
        counts.closed++;
        onCount.fn();
      }
      return;
    }
    yield task;
    for (let i = 0; i < what; i++) {
      yield {
        payload: {
          case: "artifactUpdate",
          value: {
            taskId,
            contextId,
            artifact: { artifactId, parts: [{ content: { case: "text", value: chunkText(i) } }] },
            append: i > 0,
            lastChunk: i === what - 1,
          },
        },
      };
    }
  },
};
