// Load-driver child process for gRPC unary calls: a lean HTTP/2 client on
// node:http2 that frames the gRPC message itself (no grpc-js client, which
// would saturate a core before the server does). It speaks the IPC protocol
// of bench/lib/load.mjs, so bench/lib/harness.mjs drives it the same way:
//   <- { run: { url, headers, body, sessions, streams, duration } }
//        url      http://127.0.0.1:<port>/<package.Service>/<Method>
//        headers  extra request headers (gRPC metadata), e.g. a2a-version
//        body     the serialized request message, base64 (the 5-byte gRPC
//                 prefix is added here)
//        sessions HTTP/2 connections; streams: calls in flight per session
//   -> { result: { requests, duration, p50, p99, mean, non2xx, errors,
//        timeouts, bytesPerRequest, cpuMs, wallMs, failedLabel, firstFailure } }
// A call counts when its stream has closed with :status 200 and grpc-status
// 0; any other ending counts in non2xx ("not OK") or errors, and the harness
// discards the run. Latency is per call, from request to stream close, in ms
// with µs resolution. cpuMs is this process's own CPU time over the run, so
// the harness can show the driver's share of a core.
import { connect, constants } from "node:http2";
import { createHistogram } from "node:perf_hooks";
import { answerRuns } from "./driver-ipc.mjs";
import { grpcFrame } from "./grpc-frame.mjs";

const { HTTP2_HEADER_METHOD, HTTP2_HEADER_PATH, HTTP2_HEADER_STATUS, HTTP2_HEADER_CONTENT_TYPE, HTTP2_HEADER_TE } = constants;

function open(origin) {
  return new Promise((resolve, reject) => {
    const session = connect(origin);
    session.once("connect", () => {
      session.off("error", reject);
      resolve(session);
    });
    session.once("error", reject);
  });
}

async function run({ url, headers: extra = {}, body, sessions: sessionCount = 4, streams = 16, duration }) {
  const { origin, pathname } = new URL(url);
  const frame = grpcFrame(Buffer.from(body, "base64"));
  const headers = {
    [HTTP2_HEADER_METHOD]: "POST",
    [HTTP2_HEADER_PATH]: pathname,
    [HTTP2_HEADER_CONTENT_TYPE]: "application/grpc",
    [HTTP2_HEADER_TE]: "trailers",
    ...extra,
  };
  const sessions = await Promise.all(Array.from({ length: sessionCount }, () => open(origin)));
  const histogram = createHistogram();
  let requests = 0;
  let notOk = 0;
  let errors = 0;
  let bytes = 0;
  let firstFailure;
  const fail = (what) => {
    firstFailure ??= what;
  };

  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + duration * 1000;

  // One loop per stream slot: a call, then the next as soon as it closes.
  const slot = (session) =>
    new Promise((done) => {
      const call = () => {
        if (performance.now() >= end) return done();
        const start = process.hrtime.bigint();
        let status = "";
        let grpcStatus;
        let received = 0;
        let failed = false;
        const stream = session.request(headers);
        stream.on("response", (h) => {
          status = h[HTTP2_HEADER_STATUS];
          grpcStatus = h["grpc-status"]; // trailers-only responses
        });
        stream.on("data", (chunk) => {
          received += chunk.length;
        });
        stream.on("trailers", (t) => {
          grpcStatus = t["grpc-status"];
        });
        stream.on("error", (err) => {
          failed = true;
          errors++;
          fail(err.message);
        });
        stream.on("close", () => {
          if (!failed) {
            if (status === 200 && grpcStatus === "0") {
              requests++;
              bytes += received;
              histogram.record(Number(process.hrtime.bigint() - start) || 1);
            } else {
              notOk++;
              fail(`:status ${status}, grpc-status ${grpcStatus}, rst ${stream.rstCode}`);
            }
          }
          call();
        });
        stream.end(frame);
      };
      call();
    });

  await Promise.all(sessions.flatMap((s) => Array.from({ length: streams }, () => slot(s))));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await Promise.all(sessions.map((s) => new Promise((r) => s.close(r))));
  const ms = (ns) => ns / 1e6;
  return {
    requests,
    duration: wallMs / 1000,
    mean: requests > 0 ? ms(histogram.mean) : 0,
    p50: requests > 0 ? ms(histogram.percentile(50)) : 0,
    p99: requests > 0 ? ms(histogram.percentile(99)) : 0,
    non2xx: notOk,
    errors,
    timeouts: 0,
    bytesPerRequest: requests > 0 ? bytes / requests : 0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs,
    failedLabel: "not OK (grpc-status != 0)",
    firstFailure,
  };
}

answerRuns(run);
