// The agent of the "ours-tasks" targets (bench/tasks.mjs): one executor on
// the task runtime, createA2AServiceTaskHandler (generated/a2a_tasks.ts over
// dist/runtime/a2a/tasks/) with its default in-memory task store and default
// options, the way an agent author writes it. It does the work the a2a-js
// full stack's executors do (bench/lib/a2a-js-full.mjs, bench/streams/
// a2a-js-full.mjs), with the same values:
//
//   any other text  the echo: one artifact "echo" whose one text part is the
//                   message's text, then return (the runtime ends the task
//                   COMPLETED): the same artifact the a2a-js EchoAgentExecutor's
//                   completed echo Task carries (bench/lib/a2a-fixture.mjs);
//   "stream <N>"    N chunks of artifact "stream" ("chunk 0" .. "chunk N-1",
//                   append from the second, lastChunk on the last), then
//                   return: the chunks of bench/streams' handlers;
//   "idle"          move the task to WORKING, then wait for release() (the
//                   bench's "release", at the very end), counting the
//                   executors started and finished.
//
// What differs from a2a-js-full's answers is the runtime's, not the agent's:
// the task id is minted (crypto.randomUUID, a new task per message, as for a
// real client; a2a-js-full's executor reuses `task-<messageId>`), the status
// carries a timestamp, the history holds the user's message with its taskId
// (a2a-js-full's has it without); a stream starts with the SUBMITTED Task
// and ends with the COMPLETED status update (N + 2 events; a2a-js-full's:
// the working Task and the N chunks, N + 1).
//
// Imports the generated code transpiled into bench/.build/generated/
// (prepareOurs in bench/lib/harness.mjs).
import { createA2AServiceTaskHandler } from "../.build/generated/a2a_tasks.js";
import { TaskState } from "../.build/generated/a2a_pb.js";
import { artifactId, chunkText, idleText } from "../streams/fixture.mjs";

/** Idle executors started, and whose finally block ran. */
export const counts = { opened: 0, closed: 0 };
export const onCount = { fn: () => {} };

let releaseAll;
let released = new Promise((r) => (releaseAll = r));
/** Wakes every idle executor (they then return: their tasks end COMPLETED). */
export function release() {
  releaseAll();
  released = new Promise((r) => (releaseAll = r));
}

const textOfFirstPart = (message) => {
  const part = message.parts[0];
  return part?.content.case === "text" ? part.content.value : "";
};

/** The executor of the unary targets: the echo artifact, then return (COMPLETED). */
export async function* echoExecutor({ message }) {
  yield { artifact: { artifactId: "echo", parts: [{ content: { case: "text", value: textOfFirstPart(message) } }] } };
}

const streamOf = /^stream (\d+)$/;

/** The executor of the streams targets: "stream <N>", "idle", or else the echo. */
export async function* streamExecutor(context) {
  const text = textOfFirstPart(context.message);
  if (text === idleText) {
    counts.opened++;
    try {
      yield { state: TaskState.WORKING };
      await released;
    } finally {
      counts.closed++;
      onCount.fn();
    }
    return;
  }
  const m = streamOf.exec(text);
  if (m === null) {
    yield* echoExecutor(context);
    return;
  }
  const n = Number(m[1]);
  for (let i = 0; i < n; i++) {
    yield { artifact: { artifactId, parts: [{ content: { case: "text", value: chunkText(i) } }] }, append: i > 0, lastChunk: i === n - 1 };
  }
}

/** The whole A2AService handler of the echo agent (default options: in-memory store, ...). */
export const createEchoAgent = () => createA2AServiceTaskHandler(echoExecutor);

/** The handler of the streams targets. */
export const createStreamAgent = () => createA2AServiceTaskHandler(streamExecutor);
