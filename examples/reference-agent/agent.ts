/**
 * The reference agent's logic, and nothing else: it echoes the text of a
 * message back as an artifact, word by word, and asks for text when a
 * message has none. Tasks, streams, cancel, listing and push notifications
 * are the generated task handler's (see handler.ts).
 */
import { setTimeout as delay } from "node:timers/promises";
import { textOf } from "protoc-gen-a2a/runtime";
import type { A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { TaskState } from "../../generated/a2a_pb.js";

export const echoWords: A2AServiceExecutor = async function* ({ message, signal }) {
  const words = textOf(message).split(/\s+/).filter(Boolean);
  if (words.length === 0) {
    yield { state: TaskState.INPUT_REQUIRED, message: "Send me some text to echo." };
    return;
  }
  yield { state: TaskState.WORKING };
  for (const [i, word] of words.entries()) {
    // Where a real agent awaits its model: a millisecond per word, given up on cancel.
    await delay(1, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) return;
    const last = i === words.length - 1;
    yield { artifact: { artifactId: "echo", name: "echo", parts: [{ content: { case: "text", value: i === 0 ? word : ` ${word}` } }] }, append: i > 0, lastChunk: last };
  }
};
