// Child process that serves one benchmark target on 127.0.0.1 (a free port)
// and talks to the benchmark driver (bench/lib/harness.mjs) over IPC:
//   -> { ready: true, port }                      once listening
//   <- { cmd: "cpu" }   -> { cpu: process.cpuUsage() }
//   <- { cmd: "exit" }  -> { cpu, exit: true }, then exits (this also
//                          writes the CPU profile under --cpu-prof)
// Usage: node bench/lib/serve.mjs <module>
//   module: a file relative to bench/ that exports createBenchServer(), which
//   returns an unstarted node:http server, e.g. jsonrpc/server-ours.mjs
const module = process.argv[2];
const { createBenchServer } = await import(new URL(`../${module}`, import.meta.url).href);
const server = createBenchServer();
server.keepAliveTimeout = 30_000;
server.listen(0, "127.0.0.1", () => {
  process.send({ ready: true, port: server.address().port });
});
process.on("message", (msg) => {
  if (msg?.cmd === "cpu") process.send({ cpu: process.cpuUsage() });
  else if (msg?.cmd === "exit") {
    const cpu = process.cpuUsage();
    server.closeAllConnections?.();
    server.close();
    process.send({ cpu, exit: true }, () => process.exit(0));
  }
});
process.on("disconnect", () => process.exit(0));
