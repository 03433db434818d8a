// Server child process of bench/streams.mjs: serves one target on 127.0.0.1
// (a free port) and answers the bench over IPC. Run with --expose-gc.
//   -> { ready: true, port }
//   <- { cmd: "cpu" }                 -> { cpu: process.cpuUsage() }
//   <- { cmd: "mem" }                 -> { heap, rss, external } (bytes, after global.gc() twice)
//   <- { cmd: "wait", closed, ms }    -> { opened, closed } once `closed` idle handlers ran
//                                        their finally block, or after `ms` ms (whichever first)
//   <- { cmd: "counts" }              -> { opened, closed }
//   <- { cmd: "snapshot", file }      -> { file } (after gc, v8.writeHeapSnapshot)
//   <- { cmd: "release" }             -> { released: true } (a2a-js, a2a-js-full: wake the idle
//                                        handlers / executors)
//   <- { cmd: "exit" }                -> { exit: true }, then exits
// Usage: node --expose-gc bench/streams/server.mjs <target>
//   target: ours-jsonrpc | ours-http-json | ours-grpc | a2a-js-jsonrpc | a2a-js-rest |
//           a2a-js-full-jsonrpc | a2a-js-full-rest | a2a-js-full-grpc | ceiling-sse |
//           ceiling-grpc (memory part only)
import { createServerCommands } from "../lib/server-commands.mjs";
import { createServer } from "node:http";

const target = process.argv[2];
let counts;
let onCount;
let release = () => {};
let close;
let port;

if (target.startsWith("ours-")) {
  ({ counts, onCount } = await import("./ours-handler.mjs"));
  const { handler } = await import("./ours-handler.mjs");
  if (target === "ours-grpc") {
    const grpc = await import("@grpc/grpc-js");
    const { addA2AServiceToServer } = await import("../.build/generated/a2a_grpc.js");
    const server = new grpc.Server();
    addA2AServiceToServer(server, handler);
    port = await new Promise((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    close = () => server.forceShutdown();
  } else {
    const { createA2AServiceJsonRpcListener } = await import("../.build/generated/a2a_jsonrpc.js");
    const { createA2AServiceHttpJsonListener } = await import("../.build/generated/a2a_http.js");
    const listener = target === "ours-jsonrpc" ? createA2AServiceJsonRpcListener(handler) : createA2AServiceHttpJsonListener(handler);
    ({ port, close } = await listen(createServer(listener)));
  }
} else if (target.startsWith("a2a-js-full-")) {
  // The SDK's full stack (DefaultRequestHandler, InMemoryTaskStore, the
  // streaming AgentExecutor of ./a2a-js-full.mjs), mounted like a2a-js-*.
  ({ counts, onCount, release } = await import("./a2a-js-handler.mjs"));
  const { createStreamFullStackHandler } = await import("./a2a-js-full.mjs");
  if (target === "a2a-js-full-grpc") {
    const grpc = await import("@grpc/grpc-js");
    const { A2AService, grpcService, UserBuilder } = await import("@a2a-js/sdk/server/grpc");
    const server = new grpc.Server();
    const requestHandler = await createStreamFullStackHandler({ grpc: true });
    server.addService(A2AService, grpcService({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
    port = await new Promise((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    close = () => server.forceShutdown();
  } else {
    const { default: express } = await import("express");
    const { jsonRpcHandler, restHandler, UserBuilder } = await import("@a2a-js/sdk/server/express");
    const app = express();
    const options = { requestHandler: await createStreamFullStackHandler(), userBuilder: UserBuilder.noAuthentication };
    if (target === "a2a-js-full-jsonrpc") app.use(jsonRpcHandler(options));
    else if (target === "a2a-js-full-rest") app.use(restHandler(options));
    else throw new Error(`unknown target ${target}`);
    ({ port, close } = await listen(createServer(app)));
  }
} else if (target.startsWith("a2a-js-")) {
  const mod = await import("./a2a-js-handler.mjs");
  ({ counts, onCount, release } = mod);
  const { default: express } = await import("express");
  const { jsonRpcHandler, restHandler, UserBuilder } = await import("@a2a-js/sdk/server/express");
  const app = express();
  const options = { requestHandler: new mod.StreamRequestHandler(), userBuilder: UserBuilder.noAuthentication };
  app.use(target === "a2a-js-jsonrpc" ? jsonRpcHandler(options) : restHandler(options));
  ({ port, close } = await listen(createServer(app)));
} else if (target === "ceiling-sse") {
  // The floor of an idle SSE stream on node:http: read the body, write the
  // headers and one data frame, hold the response until the client leaves.
  // (N-chunk streams: the same frames the others send, written with drain.)
  const { parseText, taskId, contextId, artifactId, chunkText } = await import("./fixture.mjs");
  counts = { opened: 0, closed: 0 };
  onCount = { fn: () => {} };
  const frame = (v) => `data: ${JSON.stringify(v)}\n\n`;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const what = parseText((body.params ?? body).message.parts[0].text);
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(frame({ task: { id: taskId, contextId, status: { state: "TASK_STATE_WORKING" } } }));
      if (what === "idle") {
        counts.opened++;
        res.once("close", () => {
          counts.closed++;
          onCount.fn();
        });
        return;
      }
      for (let i = 0; i < what; i++) {
        const u = { artifactUpdate: { taskId, contextId, artifact: { artifactId, parts: [{ text: chunkText(i) }] }, append: i > 0, lastChunk: i === what - 1 } };
        if (!res.write(frame(u))) await new Promise((r) => res.once("drain", r));
      }
      res.end();
    });
  });
  ({ port, close } = await listen(server));
} else if (target === "ceiling-grpc") {
  // The floor of an idle gRPC server stream on grpc-js: identity
  // (de)serializers, one message encoded at start-up written once, the call
  // held until the client cancels it. What grpc-js itself keeps per call.
  const grpc = await import("@grpc/grpc-js");
  const { create, toBinary } = await import("@bufbuild/protobuf");
  const { StreamResponseSchema, TaskState } = await import("../.build/generated/a2a_pb.js");
  const { taskId, contextId } = await import("./fixture.mjs");
  const first = Buffer.from(
    toBinary(StreamResponseSchema, create(StreamResponseSchema, { payload: { case: "task", value: { id: taskId, contextId, status: { state: TaskState.WORKING } } } })),
  );
  counts = { opened: 0, closed: 0 };
  onCount = { fn: () => {} };
  const identity = (bytes) => bytes;
  const definition = {
    sendStreamingMessage: {
      path: "/lf.a2a.v1.A2AService/SendStreamingMessage",
      requestStream: false,
      responseStream: true,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  };
  const server = new grpc.Server();
  server.addService(definition, {
    sendStreamingMessage(call) {
      counts.opened++;
      call.on("cancelled", () => {
        counts.closed++;
        onCount.fn();
      });
      call.write(first);
    },
  });
  port = await new Promise((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  close = () => server.forceShutdown();
} else {
  throw new Error(`unknown target ${target}`);
}

function listen(server) {
  server.keepAliveTimeout = 30_000;
  server.maxConnections = 100_000;
  return new Promise((resolve) =>
    server.listen({ port: 0, host: "127.0.0.1", backlog: 4096 }, () =>
      resolve({ port: server.address().port, close: () => (server.closeAllConnections(), server.close()) }),
    ),
  );
}

const commands = createServerCommands(counts, onCount);

process.on("message", async (msg) => {
  if (commands.handle(msg)) return;
  switch (msg?.cmd) {
    case "release":
      release();
      process.send({ released: true });
      break;
    case "exit":
      close();
      process.send({ exit: true }, () => process.exit(0));
      break;
  }
});
process.on("disconnect", () => process.exit(0));
process.send({ ready: true, port });
