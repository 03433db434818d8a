#!/usr/bin/env node
// Unary SendMessage over gRPC on loopback, calls/s and p99 latency, for four
// grpc-js servers doing the same trivial work (a completed Task echoing the
// message text), measured in one run:
//
//   ours         the generated addA2AServiceToServer (generated definition
//                with its build-time codecs, generated/a2a_codec.ts, +
//                dist/runtime/grpc.js) on a grpc-js Server
//   a2a-js       @a2a-js/sdk 1.x's grpcService + A2AService definition over a
//                directly implemented A2ARequestHandler ("binding only")
//   a2a-js-full  @a2a-js/sdk 1.x as its users run an agent ("full stack"): the
//                same grpcService over its DefaultRequestHandler, an
//                InMemoryTaskStore and an AgentExecutor publishing the echo
//                task on the event bus (answers with the user's message in
//                the task's history, which the SDK adds); issue 5's goal,
//                ours >= 1.3x, is against this one
//   raw          a grpc-js Server with identity (de)serializers whose handler
//                answers with response bytes encoded once: the floor of
//                grpc-js
//
// The load comes from a lean HTTP/2 client (bench/lib/load-grpc.mjs, on
// node:http2, framing the gRPC messages itself) in its own child process,
// many concurrent streams over a few sessions; it reports its own CPU share
// so the table shows it is not the limit (a grpc-js client would saturate a
// core before the server does). Everything else is bench/lib/harness.mjs, as
// for bench/jsonrpc.mjs: each server in its own child process, a check of
// every target's exact answer (grpc-status 0, the expected message; byte for
// byte where both sides encode with protobuf-es) before, after the warm-up
// and at the end, runs alternating target by target, medians, server CPU per
// call, and runs disturbed by other load on the machine discarded and
// repeated.
//
// Environment: the knobs of bench/jsonrpc.mjs (BENCH_SECONDS, BENCH_RUNS,
// BENCH_WARMUP, BENCH_TARGETS=ours,a2a-js,a2a-js-full,raw, BENCH_PIN, BENCH_PROFILE,
// BENCH_OTHER_MAX, BENCH_RETRIES) except BENCH_CONNECTIONS/BENCH_PIPELINING,
// and:
//   BENCH_GRPC_SESSIONS=4   HTTP/2 connections
//   BENCH_GRPC_STREAMS=16   calls in flight per connection
//   BENCH_GRPC_DRIVER=node  the load driver: node (node:http2) or h2load
//                           (nghttp2's, in C: it does not share the cores with
//                           the server; bench/lib/load-h2load.mjs)
import { existsSync } from "node:fs";
import { connect } from "node:http2";
import { cpus } from "node:os";
import { join, relative } from "node:path";
import { isDeepStrictEqual } from "node:util";
import {
  benchDir,
  grpcDriver,
  load,
  loadSettings,
  measure,
  num,
  prepareOurs,
  printDriverNotes,
  printRatio,
  resultTable,
  root,
  startDriver,
  startServer,
  stopAll,
  summarize,
} from "./lib/harness.mjs";
import { grpcFrame } from "./lib/grpc-frame.mjs";
import { printTopCosts } from "./lib/profile-top.mjs";

const settings = loadSettings("ours,a2a-js,a2a-js-full,raw");
const { seconds, runs, warmup, targets, pin, profile, profileDir } = settings;
const sessions = Math.round(num("BENCH_GRPC_SESSIONS", 4));
const streams = Math.round(num("BENCH_GRPC_STREAMS", 16));

for (const t of targets) {
  if (!existsSync(join(benchDir, "grpc", `server-${t}.mjs`))) throw new Error(`unknown target ${t}`);
}

// Every target (raw included: its pre-encoded answer) and the fixture use the generated protobuf-es code.
prepareOurs("a2a_grpc.ts");
const { decodeResponse, expectedOf, metadata, path, requestBytes } = await import("./grpc/fixture.mjs");

/** The SDK's targets encode with ts-proto, so only the others must send protobuf-es's exact bytes. */
const tsProto = new Set(["a2a-js", "a2a-js-full"]);

const request = {
  path,
  method: "POST",
  headers: metadata,
  body: requestBytes.toString("base64"),
  driverOptions: { sessions, streams },
};

/** One call over node:http2: resolves with the response headers, the body bytes and the trailers. */
function call(origin) {
  return new Promise((resolve, reject) => {
    const session = connect(origin);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...metadata });
    let headers = {};
    let trailers = {};
    const chunks = [];
    stream.on("response", (h) => (headers = h));
    stream.on("trailers", (t) => (trailers = t));
    stream.on("data", (c) => chunks.push(c));
    stream.on("error", reject);
    stream.on("close", () => {
      session.close();
      resolve({ headers, body: Buffer.concat(chunks), trailers });
    });
    stream.end(grpcFrame(requestBytes));
  });
}

/**
 * Checks that `server` answers the call with :status 200, application/grpc,
 * grpc-status 0 and one uncompressed message that decodes to the expected
 * SendMessageResponse (grpc/fixture.mjs's expectedOf: a2a-js-full's carries
 * the history the SDK adds); protobuf-es targets (ours, raw) must also send
 * exactly the expected bytes. Throws otherwise: no error path is ever
 * benchmarked.
 */
async function verify(server) {
  const { json: expectedJson, bytes: expectedBytes } = expectedOf(server.target);
  const { headers, body, trailers } = await call(server.origin);
  const grpcStatus = trailers["grpc-status"] ?? headers["grpc-status"];
  const problems = [];
  if (headers[":status"] !== 200) problems.push(`:status ${headers[":status"]}`);
  if (!/^application\/grpc(\+proto)?(;|$)/.test(headers["content-type"] ?? "")) problems.push(`content-type ${headers["content-type"]}`);
  if (grpcStatus !== "0") problems.push(`grpc-status ${grpcStatus} (${trailers["grpc-message"] ?? headers["grpc-message"] ?? ""})`);
  const length = body.length >= 5 ? body.readUInt32BE(1) : -1;
  if (body.length < 5 || body[0] !== 0 || length !== body.length - 5) problems.push(`not one uncompressed gRPC message (${body.length} bytes)`);
  const message = body.subarray(5);
  let json;
  try {
    json = decodeResponse(message);
  } catch (err) {
    problems.push(`undecodable: ${err.message}`);
  }
  const identical = message.equals(expectedBytes);
  if (json !== undefined && !isDeepStrictEqual(json, expectedJson)) problems.push(`decodes to ${JSON.stringify(json)}`);
  if (!tsProto.has(server.target) && !identical) problems.push("bytes differ from protobuf-es's encoding");
  if (problems.length > 0) {
    throw new Error(
      `${server.target} does not answer SendMessage as expected (no benchmark of an error path): ${problems.join("; ")}\n` +
        `  got      ${message.toString("hex")}\n  expected ${expectedBytes.toString("hex")} = ${JSON.stringify(expectedJson)}`,
    );
  }
  return { bytes: message.length, identical };
}

// --- main ---

console.log(
  `gRPC unary SendMessage on loopback: ${targets.join(", ")}; ${runs} x ${seconds} s per target (after ${warmup} s warm-up), ` +
    `${sessions} HTTP/2 sessions x ${streams} streams in flight, ${grpcDriver().label} driver in its own process` +
    `${pin ? ", servers pinned to CPU 0 and the driver to CPU 1" : ""}; ${cpus().length} CPUs, Node ${process.versions.node}`,
);

const driver = startDriver(settings, grpcDriver().script);
const servers = [];
try {
  for (const t of targets) servers.push(await startServer(t, `grpc/server-${t}.mjs`, settings));
  for (const s of servers) {
    const { bytes, identical } = await verify(s);
    const history = s.target === "a2a-js-full" ? ", with the user's message in its history as the SDK adds it" : "";
    console.log(
      `  verified ${s.target}: 200 application/grpc, grpc-status 0, the expected SendMessageResponse${history} (${bytes} bytes` +
        `${identical ? ", byte-identical to protobuf-es's encoding" : ", same message, encoded differently"})`,
    );
    // What every OK call to it carries, for a driver that cannot read grpc-status (h2load).
    s.request = { ...request, driverOptions: { ...request.driverOptions, answerBytes: bytes } };
  }
  if (warmup > 0) {
    for (const s of servers) await load(driver, s, s.request, warmup, settings);
    for (const s of servers) await verify(s);
  }
  for (let i = 0; i < runs; i++) {
    console.log(`run ${i + 1}/${runs}`);
    for (const s of servers) await measure(driver, s, s.request, settings);
  }
  for (const s of servers) await verify(s);
} finally {
  await stopAll(servers, driver);
}

const results = servers.map((s) => summarize(s.target, s.runs));
const by = Object.fromEntries(results.map((r) => [r.target, r]));

console.log(
  `\nMedian of ${runs} runs x ${seconds} s per target (${sessions} sessions x ${streams} streams); ` +
    "server/driver CPU in % of one core; latency per call from the driver; bytes/response = gRPC DATA bytes:\n",
);
console.log(resultTable(results, { unit: "call", latencyDigits: 2 }));

console.log("");
const perCall = { unit: "call", unitName: "call" };
// Issue 5's 1.3x goal is against the SDK as its users run it (a2a-js-full); binding-only a2a-js runs at
// ~0.92x of the raw grpc-js floor, so ours/a2a-js is shown without a goal.
printRatio(by, "ours", "a2a-js-full", 1.3, "", perCall);
printRatio(by, "ours", "a2a-js", undefined, "", perCall);
printRatio(by, "ours", "raw", 0.85, "", perCall);
printRatio(by, "a2a-js", "raw", undefined, "", perCall);
printRatio(by, "a2a-js", "a2a-js-full", undefined, "", perCall);
printDriverNotes(results);
if (results.some((r) => r.n < runs)) console.log(`note: some targets kept fewer than ${runs} runs (failed runs are dropped): ${results.map((r) => `${r.target} ${r.n}`).join(", ")}`);
if (profile !== "") {
  const file = join(profileDir, `${profile}.cpuprofile`);
  console.log(`\n${profile} ran under --cpu-prof (its numbers above carry the profiler's overhead); profile: ${relative(root, file)}\n`);
  printTopCosts(file, { root, requests: servers.find((s) => s.target === profile)?.requests });
}
