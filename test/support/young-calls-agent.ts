/**
 * The measure of test/tasks/young-calls.test.ts, in a process of its own so
 * that its young generation has a size the test sets (V8 sizes it from the
 * machine's memory otherwise, and with a very small one calls in flight at a
 * scavenge are promoted however the runtime keeps them). Run by `fork` with
 * `--import test/support/ts-loader.mjs --expose-gc` and the semi-space
 * flags; sends `{ perCall }`: the bytes the old generation gained per call
 * over 6,000 SendMessages (32 in flight) made after a full collection, read
 * before any other full collection could take them back.
 */
import v8 from "node:v8";
import { create } from "@bufbuild/protobuf";
import { createInMemoryTaskStore } from "protoc-gen-a2a/runtime/tasks";
import { MessageSchema, Role, SendMessageRequestSchema } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { callContext } from "./task-clients.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined || process.send === undefined) throw new Error("young-calls-agent.ts runs forked, with --expose-gc");

const context = callContext("");

const echo: A2AServiceExecutor = async function* ({ message }) {
  yield { artifact: { parts: message.parts } };
};

/** What the old generation holds now (no collection is asked for). */
function oldGeneration(): number {
  return v8
    .getHeapSpaceStatistics()
    .filter((s) => s.space_name === "old_space" || s.space_name === "lo_space")
    .reduce((sum, s) => sum + s.space_used_size, 0);
}

/** `count` SendMessages, `inFlight` at a time, as a loaded server makes them. */
async function sendMany(handler: ReturnType<typeof createA2AServiceTaskHandler>, count: number, inFlight: number): Promise<void> {
  const request = create(SendMessageRequestSchema, {
    message: create(MessageSchema, { messageId: "m", role: Role.USER, parts: [{ content: { case: "text", value: "x".repeat(200) } }] }),
  });
  let sent = 0;
  const worker = async () => {
    while (sent < count) {
      sent++;
      const answer = await handler.sendMessage(request, context);
      if (answer.payload.case !== "task") throw new Error("expected a task");
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

// A store that keeps few finished tasks: what it keeps is not what is measured.
const store = createInMemoryTaskStore({ maxTerminalTasks: 20 });
const handler = createA2AServiceTaskHandler(echo, { store });
// Warm: compiled code and caches are not counted.
await sendMany(handler, 3000, 32);
// Everything the runtime holds for good (its collections' tables among it) is old from here on.
gc();
const before = oldGeneration();
const calls = 6000;
await sendMany(handler, calls, 32);
const perCall = (oldGeneration() - before) / calls;
await handler.close();
store.close();
process.send({ perCall }, () => process.disconnect());
