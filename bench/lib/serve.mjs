// Child process that serves one benchmark target on 127.0.0.1 (a free port)
// and talks to the benchmark driver (bench/lib/harness.mjs) over IPC:
//   -> { ready: true, port, ...info }             once listening (info: what a
//                                                 startBenchServer() adds, e.g.
//                                                 the URLs of several bindings)
//   <- { cmd: "cpu" }   -> { cpu: process.cpuUsage() }
//   <- { cmd: "exit" }  -> { cpu, exit: true }, then exits (this also
//                          writes the CPU profile under --cpu-prof)
// Usage: node bench/lib/serve.mjs <module>
//   module: a file relative to bench/ that exports either createBenchServer(),
//   which returns an unstarted node:http server (e.g.
//   jsonrpc/server-ours.mjs), or startBenchServer(), which starts any other
//   server on 127.0.0.1 (a free port) and resolves with { port, close(),
//   info? } (e.g. grpc/server-ours.mjs, a grpc-js server; client/server.mjs,
//   every binding, whose URLs are its info)
const module = process.argv[2];
const exported = await import(new URL(`../${module}`, import.meta.url).href);
let close;
if (exported.startBenchServer !== undefined) {
  const started = await exported.startBenchServer();
  close = started.close;
  process.send({ ...started.info, ready: true, port: started.port });
} else {
  const server = exported.createBenchServer();
  server.keepAliveTimeout = 30_000;
  close = () => {
    server.closeAllConnections?.();
    server.close();
  };
  server.listen(0, "127.0.0.1", () => {
    process.send({ ready: true, port: server.address().port });
  });
}
process.on("message", (msg) => {
  if (msg?.cmd === "cpu") process.send({ cpu: process.cpuUsage() });
  else if (msg?.cmd === "exit") {
    const cpu = process.cpuUsage();
    close();
    process.send({ cpu, exit: true }, () => process.exit(0));
  }
});
process.on("disconnect", () => process.exit(0));
