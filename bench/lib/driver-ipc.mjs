// What the gRPC load-driver children (load-grpc.mjs, load-h2load.mjs) answer
// over IPC: each { run } message with { result } from `run`, a run that threw
// as one failed run (the harness discards it and prints `firstFailure`); and
// the harness going away ends the child, after `onDisconnect` let go of what
// a run under way holds.

/** Answers the harness's { run } messages with `run(msg.run)`. */
export function answerRuns(run, { onDisconnect } = {}) {
  process.on("message", async (msg) => {
    if (msg?.run === undefined) return;
    try {
      process.send({ result: await run(msg.run) });
    } catch (err) {
      process.send({
        result: { requests: 0, duration: 0, mean: 0, p50: 0, p99: 0, non2xx: 0, errors: 1, timeouts: 0, bytesPerRequest: 0, cpuMs: 0, wallMs: 1, firstFailure: String(err) },
      });
    }
  });
  process.on("disconnect", () => {
    onDisconnect?.();
    process.exit(0);
  });
}
