// The one call every gRPC target is benchmarked with, and the one answer
// every target must give: SendMessage (a2a-version 1.0) answered by a
// completed Task that echoes the message text in an artifact, both in
// protobuf binary as protobuf-es encodes them from the ProtoJSON fixture
// (bench/lib/a2a-fixture.mjs); for a2a-js-full the same Task with the user's
// message in its history, which the SDK's DefaultRequestHandler adds.
// Imports the generated code transpiled into bench/.build/generated/
// (prepareOurs in bench/lib/harness.mjs).
import { fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
import { SendMessageRequestSchema, SendMessageResponseSchema } from "../.build/generated/a2a_pb.js";
import { echoTaskJson, echoTaskWithHistoryJson, message } from "../lib/a2a-fixture.mjs";

export const path = "/lf.a2a.v1.A2AService/SendMessage";

/** gRPC metadata sent with every call. */
export const metadata = { "a2a-version": "1.0" };

/** The serialized SendMessageRequest (without the 5-byte gRPC prefix). */
export const requestBytes = Buffer.from(toBinary(SendMessageRequestSchema, fromJson(SendMessageRequestSchema, { message })));

/** The expected answer as ProtoJSON, and as protobuf-es serializes it (what "raw" sends). */
export const expectedJson = echoTaskJson(message);
export const expectedBytes = Buffer.from(toBinary(SendMessageResponseSchema, fromJson(SendMessageResponseSchema, expectedJson)));

/** What the a2a-js-full target must answer (expectedJson plus the history the SDK adds), and protobuf-es's bytes for it. */
export const expectedFullJson = echoTaskWithHistoryJson(message);
export const expectedFullBytes = Buffer.from(toBinary(SendMessageResponseSchema, fromJson(SendMessageResponseSchema, expectedFullJson)));

/** The answer `target` must give: { json, bytes }. */
export const expectedOf = (target) =>
  target === "a2a-js-full" ? { json: expectedFullJson, bytes: expectedFullBytes } : { json: expectedJson, bytes: expectedBytes };

/** A response message's bytes as ProtoJSON (throws if they do not parse as a SendMessageResponse). */
export const decodeResponse = (bytes) => toJson(SendMessageResponseSchema, fromBinary(SendMessageResponseSchema, bytes));
