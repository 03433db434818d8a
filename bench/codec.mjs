#!/usr/bin/env node
// The gRPC binding's protobuf binary codec in-process, per message, against
// the two codecs a gRPC A2A server could use instead, measured in one run:
//
//   ours         deserializeMessage / serializeMessage (dist/runtime/grpc.js)
//                with the codecs emitted at build time (generated/a2a_codec.ts):
//                what the generated A2AServiceGrpcDefinition serializes with,
//                encoding the init shape the bench handler returns
//   protobuf-es  fromBinary / toBinary(create(...)) on the same values
//   ts-proto     @a2a-js/sdk 1.x's generated A2AService definition
//                (requestDeserialize / responseSerialize), encoding its own
//                message object for the same answer
//
// on bench/grpc.mjs's call: the SendMessageRequest it sends and the
// SendMessageResponse (the echo Task) it expects. Every codec's result is
// checked first: decodes give the request (ours: deeply equal to
// protobuf-es's message, prototypes included; ts-proto: the same text),
// encodes give protobuf-es's exact bytes (ts-proto's happen to be identical).
// Timing: batches of BENCH_CODEC_ITERATIONS operations, codecs interleaved
// batch by batch, median batch as ns/op, and ratios to ts-proto and
// protobuf-es from the same run.
//
// Environment:
//   BENCH_CODEC_ITERATIONS=20000   operations per timed batch
//   BENCH_CODEC_BATCHES=31         timed batches per codec and operation
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { A2AService } from "@a2a-js/sdk/server/grpc";
import { benchDir, fmt, median, prepareOurs, root, table } from "./lib/harness.mjs";

const int = (name, fallback) => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer`);
  return n;
};
const iterations = int("BENCH_CODEC_ITERATIONS", 20000);
const batches = int("BENCH_CODEC_BATCHES", 31);

prepareOurs("a2a_grpc.ts");
const imp = (p) => import(pathToFileURL(p).href);
const { deserializeMessage, serializeMessage } = await imp(join(root, "dist/runtime/grpc.js"));
const { SendMessageRequestSchema, SendMessageResponseSchema } = await imp(join(benchDir, ".build/generated/a2a_pb.js"));
const { SendMessageRequestCodec, SendMessageResponseCodec } = await imp(join(benchDir, ".build/generated/a2a_codec.js"));
const { requestBytes, expectedBytes } = await imp(join(benchDir, "grpc/fixture.mjs"));
const { handler } = await imp(join(benchDir, "lib/ours-handler.mjs"));

const tsProto = A2AService.sendMessage;
const request = fromBinary(SendMessageRequestSchema, requestBytes);
const answer = await handler.sendMessage(request);
const tsAnswer = tsProto.responseDeserialize(expectedBytes);

const same = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)) === 0;
const checks = [
  ["ours decode", isDeepStrictEqual(deserializeMessage(SendMessageRequestCodec, requestBytes), request)],
  ["ts-proto decode", tsProto.requestDeserialize(requestBytes).message?.parts?.[0]?.content?.value === request.message?.parts[0]?.content.value],
  ["ours encode", same(serializeMessage(SendMessageResponseCodec, answer), expectedBytes)],
  ["protobuf-es encode", same(toBinary(SendMessageResponseSchema, create(SendMessageResponseSchema, answer)), expectedBytes)],
  ["ts-proto encode", same(tsProto.responseSerialize(tsAnswer), expectedBytes)],
];
for (const [what, ok] of checks) if (!ok) throw new Error(`${what} does not give the expected result`);

let sink;
const operations = [
  {
    name: `decode SendMessageRequest (${requestBytes.length} bytes)`,
    codecs: {
      ours: () => (sink = deserializeMessage(SendMessageRequestCodec, requestBytes)),
      "protobuf-es": () => (sink = fromBinary(SendMessageRequestSchema, requestBytes)),
      "ts-proto": () => (sink = tsProto.requestDeserialize(requestBytes)),
    },
  },
  {
    name: `encode SendMessageResponse (${expectedBytes.length} bytes)`,
    codecs: {
      ours: () => (sink = serializeMessage(SendMessageResponseCodec, answer)),
      "protobuf-es": () => (sink = toBinary(SendMessageResponseSchema, create(SendMessageResponseSchema, answer))),
      "ts-proto": () => (sink = tsProto.responseSerialize(tsAnswer)),
    },
  },
];

function batch(fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - start) / iterations;
}

console.log(`protobuf binary codecs in-process: ${batches} batches x ${iterations} operations per codec, interleaved; Node ${process.versions.node}`);
const rows = [];
for (const op of operations) {
  const names = Object.keys(op.codecs);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) for (let i = 0; i < 5; i++) batch(op.codecs[n]);
  for (let b = 0; b < batches; b++) for (const n of names) times[n].push(batch(op.codecs[n]));
  const ns = Object.fromEntries(names.map((n) => [n, median(times[n])]));
  rows.push([op.name, fmt(ns.ours, 0), fmt(ns["protobuf-es"], 0), fmt(ns["ts-proto"], 0), `${fmt(ns["ts-proto"] / ns.ours, 2)}x`, `${fmt(ns["protobuf-es"] / ns.ours, 2)}x`]);
}
if (sink === undefined) throw new Error("nothing ran");
console.log();
console.log(table([["operation", "ours ns/op", "protobuf-es ns/op", "ts-proto ns/op", "ours speed / ts-proto", "ours speed / protobuf-es"], ...rows]));
