/**
 * One agent instance in a process of its own, for test/tasks/multi-process.test.ts:
 * the generated task handler on the store $A2A_STORE names (D73), lease
 * $LEASE_MS, served on all three bindings on free loopback ports with the
 * two-principal authenticate of task-clients.ts, push to loopback allowed.
 * Run by `fork` with `--import test/support/ts-loader.mjs`.
 *
 * IPC: sends `{ origin, grpcAddress }` once listening; the executor, by the
 * message's text `<behaviour>:<key>`, sends `{ started: key, taskId }` at its
 * start and `{ aborted: key }` when its signal aborts. `{ go: key }` lets a
 * `chunks` run go on; "close" closes the server and exits.
 *   chunks  WORKING, waits for go, two chunks of artifact "out" ("a", "b"), then waits (for a cancel)
 *   hang    WORKING, one artifact "x", then never ends (the process is killed)
 *   ask     INPUT_REQUIRED at once
 *   hold    WORKING, waits for go, then INPUT_REQUIRED "more?" (the run holds the task until then: D79)
 *   echo    an artifact with the text, then COMPLETED
 */
import { textOf } from "protoc-gen-a2a/runtime";
import { serveA2AService } from "../../generated/a2a_server.js";
import { TaskState } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { principalsAuthenticate, taskCard } from "./task-clients.js";

const send = (message: object) => process.send?.(message);
if (process.send === undefined) throw new Error("store-agent.ts runs forked, with an IPC channel");

/** Per key, released by `{ go: key }`, whichever of the executor and the message comes first. */
const gates = new Map<string, { promise: Promise<void>; open: () => void }>();
function gate(key: string) {
  let found = gates.get(key);
  if (found === undefined) {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    gates.set(key, (found = { promise, open }));
  }
  return found;
}

const executor: A2AServiceExecutor = async function* ({ message, taskId, signal }) {
  const [behaviour = "", key = ""] = textOf(message).split(":");
  signal.addEventListener("abort", () => send({ aborted: key }));
  send({ started: key, taskId });
  switch (behaviour) {
    case "chunks":
      yield { state: TaskState.WORKING };
      await gate(key).promise;
      yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: "a" } }] } };
      yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: "b" } }] }, append: true };
      await new Promise((resolve) => signal.addEventListener("abort", resolve));
      return;
    case "hang":
      yield { state: TaskState.WORKING };
      yield { artifact: { artifactId: "x", parts: [{ content: { case: "text", value: "x" } }] } };
      await new Promise(() => undefined);
      return;
    case "ask":
      yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
      return;
    case "hold":
      yield { state: TaskState.WORKING };
      await gate(key).promise;
      yield { state: TaskState.INPUT_REQUIRED, message: "more?" };
      return;
    default:
      yield { artifact: { parts: [{ content: { case: "text", value: `echo ${key}` } }] } };
  }
};

const handler = createA2AServiceTaskHandler(executor, {
  store: process.env.A2A_STORE ?? "memory:",
  storeOptions: { leaseMs: Number(process.env.LEASE_MS ?? 30_000) },
  push: { allow: ["127.0.0.0/8"], backoffMs: 100, maxBackoffMs: 500, maxAttempts: 1000 },
  onError: () => undefined,
});
const server = await serveA2AService(handler, taskCard, { port: 0, grpcPort: 0, host: "127.0.0.1", authenticate: principalsAuthenticate, drainMs: 200 });
process.on("message", (m: unknown) => {
  if (m === "close") {
    void server.close().then(() => process.exit(0));
    return;
  }
  const key = (m as { go?: string }).go;
  if (key !== undefined) gate(key).open();
});
// The test went away without closing this process: go with it.
process.on("disconnect", () => process.exit(0));
send({ origin: new URL(server.cardUrl).origin, grpcAddress: server.grpcAddress });
