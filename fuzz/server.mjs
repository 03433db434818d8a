// The server child of the fuzz campaign and the soak (fuzz/fuzz.mjs,
// fuzz/soak.mjs): serveA2AService (generated/a2a_server.ts over the built
// runtime) with the reference agent's card and bearer-token rule, over an
// agent on the task runtime (createA2AServiceTaskHandler, in-memory store),
// JSON-RPC, HTTP+JSON and gRPC on free loopback ports. It runs in its own
// process (with --expose-gc) so that what would crash a server is seen here
// and counted: uncaughtException and unhandledRejection are caught and
// reported over IPC, as is every call of serveA2AService's onError (an
// unexpected handler failure) and of the task runtime's onError (an executor
// failure or a push failure).
//
// The agent (its executor), by the message's text:
//   "__ask"         the task asks for input (INPUT_REQUIRED): the harness's
//                   seed tasks, which fuzzed messages may continue;
//   "__soak <n>"    n artifact chunks, one per millisecond, then COMPLETED
//                   (the soak's streams); stops when its task is canceled;
//   anything else   one "echo" artifact of the text (at most 64 characters), then COMPLETED.
// A continued "__ask" task asks again unless the message says something, so
// a seed lives until a fuzzed message or CancelTask ends it.
//
// Push delivery sends nothing: its check refuses every host that is not an IP
// literal (so a fuzzed URL never makes a DNS query or leaves the machine)
// and then applies the real guard (createPushDelivery's check: loopback and
// private addresses refused); deliver() only counts.
//
// In soak mode each streaming call (SendStreamingMessage, SubscribeToTask)
// goes through a wrapper that records, by the request's key (the message id,
// or the task id), whether the call's signal was aborted (the abort event)
// and whether its stream ran to its end.
//
// IPC: -> { ready, httpPort, grpcPort, jsonRpcPath, httpJsonPath }
//      <- { cmd: "mem" }    -> { heap, raw, code } (heapUsed after global.gc() three times, less V8's compiled code: weigh())
//      <- { cmd: "snapshot", path } -> { path } (a heap snapshot after gc, written there)
//      <- { cmd: "counts" } -> { uncaught, unhandled, onError, executorErrors, samples, pushed, tasks, compat }
//      <- { cmd: "soak", keys, ms } -> { open, aborted, completed, failed, missing } once every
//                                       key's call the server saw ended (aborted, completed, or
//                                       failed) and no soak executor runs, or after ms
//      <- { cmd: "idle", ms } -> { running } once no "__soak" executor runs, or after ms
//      <- { cmd: "forget" } -> { forgotten } (the soak's records of calls are dropped)
//      <- { cmd: "exit" }   -> closes the server, exits
import { setTimeout as delay } from "node:timers/promises";
import { getHeapSnapshot, writeHeapSnapshot } from "node:v8";
import { isIP } from "node:net";
import { textOf } from "protoc-gen-a2a/runtime";
import { createInMemoryTaskStore, createPushDelivery } from "protoc-gen-a2a/runtime/tasks";
import { serveA2AService } from "./.build/generated/a2a_server.js";
import { createA2AServiceTaskHandler } from "./.build/generated/a2a_tasks.js";
import { TaskState } from "./.build/generated/a2a_pb.js";
import { bearerAuthenticate, referenceCard, referenceExtendedCard } from "./.build/examples/reference-agent/config.js";

const mode = process.argv[2] ?? "fuzz";
const counts = { uncaught: 0, unhandled: 0, onError: 0, executorErrors: 0, pushed: 0 };
const samples = [];
const sample = (kind, err, info) => {
  if (samples.length < 20) samples.push({ kind, error: String(err?.stack ?? err), info });
};
process.on("uncaughtException", (err) => {
  counts.uncaught++;
  sample("uncaughtException", err);
});
process.on("unhandledRejection", (err) => {
  counts.unhandled++;
  sample("unhandledRejection", err);
});

async function* executor({ message, task, signal }) {
  const text = textOf(message);
  if (text === "__ask" || (text === "" && task !== undefined && task.status?.state === TaskState.INPUT_REQUIRED)) {
    yield { state: TaskState.INPUT_REQUIRED, message: "Say something." };
    return;
  }
  const soak = /^__soak (\d+)/.exec(text);
  if (soak !== null) {
    const n = Math.min(Number(soak[1]), 10_000);
    running++;
    try {
      yield { state: TaskState.WORKING };
      for (let i = 0; i < n; i++) {
        await delay(1, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return;
        yield { artifact: { artifactId: "soak", parts: [{ content: { case: "text", value: `chunk ${i}` } }] }, append: i > 0, lastChunk: i === n - 1 };
      }
    } finally {
      running--;
      if (running === 0) {
        for (const w of idleWaiters.splice(0)) w();
        soakWaiter?.check();
      }
    }
    return;
  }
  yield { artifact: { artifactId: "echo", name: "echo", parts: [{ content: { case: "text", value: text.slice(0, 64) } }] } };
}

/** Soak executors running, and who waits for there to be none. */
let running = 0;
const idleWaiters = [];

const realPush = createPushDelivery();
const push = {
  async check(url) {
    let host;
    try {
      host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    } catch {
      host = "";
    }
    if (isIP(host) === 0) throw new Error(`${url}: the fuzz server resolves no host names`);
    return realPush.check(url);
  },
  deliver() {
    counts.pushed++;
  },
  forget: () => undefined,
  idle: async () => undefined,
  close: () => realPush.close(),
};

// A small store, so the warm-up fills it and the heap after it is the baseline.
const store = createInMemoryTaskStore({ maxTerminalTasks: 200, maxHistory: 20 });
const taskHandler = createA2AServiceTaskHandler(executor, {
  store,
  push,
  onError: (err, info) => {
    counts.executorErrors++;
    sample("executor", err, info);
  },
});

// Soak mode: each streaming call, by its key, and what its signal and stream did.
const calls = new Map();
let soakWaiter;
function wrapStream(method, keyOf) {
  return (request, context) => {
    const key = keyOf(request);
    // A signal the call gets already aborted (the client left before the handler ran) fires no event.
    const call = { aborted: context.signal.aborted, completed: false, failed: undefined };
    calls.set(key, call);
    context.signal.addEventListener("abort", () => {
      call.aborted = true;
      soakWaiter?.check();
    }, { once: true });
    const inner = method.call(taskHandler, request, context);
    return {
      async *[Symbol.asyncIterator]() {
        try {
          yield* inner;
          call.completed = true;
        } catch (err) {
          // An error answered to the client (SubscribeToTask on a task that finished meanwhile).
          call.failed = String(err?.message ?? err).replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "<id>");
          throw err;
        } finally {
          soakWaiter?.check();
        }
      },
    };
  };
}

const handler = {
  ...taskHandler,
  getExtendedAgentCard: async () => referenceExtendedCard,
  ...(mode === "soak"
    ? {
        sendStreamingMessage: wrapStream(taskHandler.sendStreamingMessage, (r) => r.message?.messageId ?? ""),
        subscribeToTask: wrapStream(taskHandler.subscribeToTask, (r) => `sub:${r.id}`),
      }
    : {}),
};

const server = await serveA2AService(handler, referenceCard, {
  port: 0,
  grpcPort: 0,
  authenticate: bearerAuthenticate("demo"),
  onError: (err, info) => {
    counts.onError++;
    sample("onError", err, info);
  },
  // Slow-client timeouts shorter than the defaults: the campaign's own per-request timeout is longer.
  timeouts: { headersMs: 5000, requestMs: 10_000, bodyMs: 5000, keepAliveMs: 5000 },
  ...(process.env.FUZZ_COMPAT === "1" ? { compat: { v0_3: true } } : {}),
});

function gc() {
  for (let i = 0; i < 3; i++) global.gc();
}

/**
 * The heap, weighed while the server is idle: `raw`, heapUsed after three
 * full collections and the heap snapshot's own, and `heap`, that less the objects a heap snapshot types
 * "code": V8's compiled code and what comes with it (machine code and its
 * deoptimization data and relocation info, bytecode, shared function infos,
 * scope infos, feedback vectors and cells, inline-cache handlers, allocation
 * sites, and the weak lists that tie them together; about 7 of 19 MB). A
 * campaign keeps compiling paths it reaches late, so that part grows over a
 * million requests by 0.5-0.8 MB, a different amount each run, and a diff of
 * snapshots by object id (FUZZ_HEAP_SNAPSHOTS) shows nothing else growing.
 * `heap` is what the server holds, and the 5% limit applies to it; the code
 * part is reported as `code` and has a bound of its own (report.mjs
 * weighInto), so code made per request would still be caught.
 *
 * `raw` is read the moment the snapshot is taken, so both come from one heap:
 * taking a snapshot changes the heap. On Node 22 (V8 12.4) the first one
 * computes each loaded script's line ends and keeps them on its Script
 * (arrays the snapshot types "code": 1.7 MB in all here, ~0.6 MB of them new),
 * and they stay (later snapshots add nothing); on Node 22 and 24 the
 * collections it runs first free 0.3-0.7 MB that three global.gc() leave.
 * With heapUsed read before the snapshot, the first weigh, the baseline, was
 * off by that: +6% on Node 22 from the snapshot alone (the same 0.7 MB after
 * 2,500 or 10,000 requests), -8% on Node 24 (test/fuzz/weigh.test.ts).
 */
async function weigh() {
  gc();
  // getHeapSnapshot() takes the snapshot before it returns (its stream only serializes it), so
  // heapUsed read right after is the heap the snapshot saw: see the comment above.
  const stream = getHeapSnapshot();
  const raw = process.memoryUsage().heapUsed;
  const code = await codeSize(stream);
  return { heap: raw - code, raw, code };
}

/** The self size of the objects a heap snapshot (read from its stream) types "code". */
async function codeSize(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  const snapshot = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const { node_fields: fields, node_types: [types] } = snapshot.snapshot.meta;
  const typeAt = fields.indexOf("type");
  const sizeAt = fields.indexOf("self_size");
  const codeType = types.indexOf("code");
  let code = 0;
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    if (snapshot.nodes[i + typeAt] === codeType) code += snapshot.nodes[i + sizeAt];
  }
  return code;
}

function soakState(keys) {
  const out = { open: [], aborted: 0, completed: 0, failed: 0, failures: {}, missing: [] };
  for (const key of keys) {
    const call = calls.get(key);
    if (call === undefined) out.missing.push(key);
    else if (call.aborted) out.aborted++;
    else if (call.completed) out.completed++;
    else if (call.failed !== undefined) {
      out.failed++;
      out.failures[call.failed] = (out.failures[call.failed] ?? 0) + 1;
    }
    else out.open.push(key);
  }
  return out;
}

// A harness that dies (killed, out of memory) takes its server child with it.
process.on("disconnect", () => process.exit(0));

process.on("message", async (msg) => {
  switch (msg?.cmd) {
    case "mem":
      process.send(await weigh());
      break;
    case "snapshot":
      // A heap snapshot (after gc) written to msg.path: FUZZ_HEAP_SNAPSHOTS, to diff baseline and end.
      gc();
      process.send({ path: writeHeapSnapshot(msg.path) });
      break;
    case "counts":
      process.send({ ...counts, samples, tasks: store.size, compat: process.env.FUZZ_COMPAT === "1" });
      break;
    case "soak": {
      // Answers once every key's call has ended (its signal aborted or its stream done), or after ms.
      // A key the server never saw is a stream cut before its request arrived: once every call
      // it did see has ended and no soak executor runs (the calls that started one took
      // 100 ms or more), no request of the soak is still on its way.
      const done = () => {
        const s = soakState(msg.keys);
        return s.open.length === 0 && running === 0 ? s : undefined;
      };
      const first = done();
      if (first !== undefined) {
        process.send(first);
        break;
      }
      const timer = setTimeout(() => {
        soakWaiter = undefined;
        process.send(soakState(msg.keys));
      }, msg.ms);
      soakWaiter = {
        check() {
          const s = done();
          if (s === undefined) return;
          clearTimeout(timer);
          soakWaiter = undefined;
          process.send(s);
        },
      };
      break;
    }
    case "idle": {
      // Answers once no soak executor runs (or after ms), with how many still do.
      const answer = () => process.send({ running });
      if (running === 0) answer();
      else {
        const timer = setTimeout(answer, msg.ms);
        idleWaiters.push(() => {
          clearTimeout(timer);
          answer();
        });
      }
      break;
    }
    case "forget":
      calls.clear();
      process.send({ forgotten: true });
      break;
    case "exit":
      await server.close();
      process.send({ exit: true }, () => process.exit(0));
      break;
  }
});

const grpcPort = Number(server.grpcAddress.split(":").pop());
process.send({ ready: true, httpPort: Number(new URL(server.cardUrl).port), grpcPort, jsonRpcPath: new URL(server.jsonRpcUrl).pathname, httpJsonPath: new URL(server.httpJsonUrl).pathname });
