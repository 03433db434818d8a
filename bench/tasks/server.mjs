// Server child process of bench/tasks.mjs's stream parts: the streaming
// agent on the task runtime (./agent.mjs's streamExecutor, default in-memory
// store) behind one generated node:http listener, on 127.0.0.1 (a free
// port). Speaks the IPC protocol of bench/streams/server.mjs, so the bench
// drives it and that file's targets the same way; run with --expose-gc.
//   -> { ready: true, port }
//   <- { cmd: "cpu" }                 -> { cpu: process.cpuUsage() }
//   <- { cmd: "mem" }                 -> { heap, rss, external } (bytes, after global.gc() twice)
//   <- { cmd: "counts" }              -> { opened, closed } (idle executors)
//   <- { cmd: "wait", closed, ms }    -> { opened, closed } once `closed` idle executors ended, or after ms
//   <- { cmd: "connections", max, ms } -> { connections } once the server holds at most `max`
//                                        sockets (polled every 5 ms), or after ms
//   <- { cmd: "snapshot", file }      -> { file } (after gc, v8.writeHeapSnapshot)
//   <- { cmd: "release" }             -> { released: true } (every idle executor returns)
//   <- { cmd: "exit" }                -> { exit: true }, then exits
// Usage: node --expose-gc bench/tasks/server.mjs <target>
//   target: ours-tasks-http-json (createA2AServiceHttpJsonListener) |
//           ours-tasks-jsonrpc (createA2AServiceJsonRpcListener)
import { createServer } from "node:http";
import { createServerCommands } from "../lib/server-commands.mjs";
import { counts, createStreamAgent, onCount, release } from "./agent.mjs";

const target = process.argv[2];
const handler = createStreamAgent();
let listener;
if (target === "ours-tasks-http-json") {
  const { createA2AServiceHttpJsonListener } = await import("../.build/generated/a2a_http.js");
  listener = createA2AServiceHttpJsonListener(handler);
} else if (target === "ours-tasks-jsonrpc") {
  const { createA2AServiceJsonRpcListener } = await import("../.build/generated/a2a_jsonrpc.js");
  listener = createA2AServiceJsonRpcListener(handler);
} else {
  throw new Error(`unknown target ${target}`);
}

const server = createServer(listener);
server.keepAliveTimeout = 30_000;
server.maxConnections = 100_000;
const port = await new Promise((resolve) => server.listen({ port: 0, host: "127.0.0.1", backlog: 4096 }, () => resolve(server.address().port)));

const commands = createServerCommands(counts, onCount);

const connections = () => new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

process.on("message", async (msg) => {
  if (commands.handle(msg)) return;
  switch (msg?.cmd) {
    case "connections": {
      const until = performance.now() + msg.ms;
      let n = await connections();
      while (n > msg.max && performance.now() < until) {
        await new Promise((r) => setTimeout(r, 5));
        n = await connections();
      }
      // One more turn of the event loop: what the last close started (aborts, unsubscribes) has run.
      await new Promise((r) => setImmediate(r));
      process.send({ connections: n });
      break;
    }
    case "release":
      release();
      process.send({ released: true });
      break;
    case "exit":
      await handler.close();
      server.closeAllConnections();
      server.close();
      process.send({ exit: true }, () => process.exit(0));
      break;
  }
});
process.on("disconnect", () => process.exit(0));
process.send({ ready: true, port });
