/**
 * Forward compatibility (issue 15; spec 5.7; D29): the generated client
 * talking to an agent on a newer a2a.proto, one that sends fields and enum
 * values this client's proto does not have. Raw servers answer bytes the
 * test writes by hand: a node:http server for JSON-RPC and HTTP+JSON, and a
 * grpc-js server whose handlers write protobuf binary tag by tag. Unary
 * calls and streams, on every binding, must not fail, and must answer what
 * protobuf-es's semantics make of the unknown parts:
 *
 * - an unknown field is skipped (JSON) or kept aside in `$unknown`
 *   (binary, as protobuf-es keeps it), the known fields read as sent;
 * - an enum value given by a name the proto does not have (JSON only) is
 *   skipped, leaving the field at its default (0, UNSPECIFIED), while one
 *   given by number (JSON or binary) is kept as that number: proto3 enums
 *   are open;
 * - a oneof member the proto does not have (a new kind of Part, a new
 *   StreamResponse payload) leaves the oneof unset: the message is still
 *   read, and a stream still yields it and goes on;
 * - an error with an unknown detail type, or unknown fields in its
 *   ErrorInfo, is still the class its ErrorInfo names.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import * as grpc from "@grpc/grpc-js";
import { TaskNotFoundError, isRpcError } from "protoc-gen-a2a/runtime";
import { createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient, type A2AServiceClient } from "../../generated/a2a_client.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import type { Message, Part, SendMessageResponse, StreamResponse, Task } from "../../generated/a2a_pb.js";
import { ErrorInfoSchema } from "../../runtime/gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../runtime/gen/google/rpc/status_pb.js";
import { BINDINGS, type BindingName } from "../support/task-clients.js";
import { jsonAnswer, jsonRpcResult, startRawGrpc, startRawHttp, type RawAnswer, type RawGrpcAnswer, type RawGrpcServer, type RawHttpServer, type RawRequest } from "../support/raw-servers.js";

// ---------------------------------------------------------------- what a newer agent sends, as JSON

/** A Task from a newer proto, as ProtoJSON. */
const futureTaskJson = {
  id: "task-1",
  contextId: "ctx-1",
  // A state this proto does not have, by name, and a field TaskStatus does not have.
  status: { state: "TASK_STATE_PAUSED", timestamp: "2026-01-01T00:00:00Z", pausedUntil: "2026-02-01T00:00:00Z" },
  artifacts: [{ artifactId: "a", parts: [{ text: "out" }], provenance: { model: "m" } }],
  // A role this proto does not have, by number; a Part of a kind it does not have.
  history: [{ messageId: "m-1", role: 9, parts: [{ text: "hi" }, { hologram: { frames: 3 } }], futureFlag: true }],
  priority: "PRIORITY_HIGH",
  labels: ["x", "y"],
};

/** A stream from a newer agent: the task, an event of a kind this proto does not have, a status of a state it does not have, a chunk, the end. */
const futureEventsJson = [
  { task: futureTaskJson },
  { progressUpdate: { taskId: "task-1", percent: 50 } },
  { statusUpdate: { taskId: "task-1", contextId: "ctx-1", status: { state: "TASK_STATE_PAUSED" }, reason: "waiting for a human" } },
  { artifactUpdate: { taskId: "task-1", contextId: "ctx-1", artifact: { artifactId: "a", parts: [{ text: "more" }] }, append: true, lastChunk: true, chunkIndex: 2 } },
  { statusUpdate: { taskId: "task-1", contextId: "ctx-1", status: { state: "TASK_STATE_COMPLETED" } } },
];

/** SSE as a newer server may frame it: comments, `id` and `retry` fields, CRLF line ends. */
const sseFrames = (data: readonly unknown[]) => [": a comment\r\nretry: 1000\r\n\r\n", ...data.map((d, i) => `id: ${i}\r\nevent: message\r\ndata: ${JSON.stringify(d)}\r\n\r\n`)];

// ---------------------------------------------------------------- the same, as protobuf binary written by hand

const LD = WireType.LengthDelimited;

/** A Task from a newer proto: state 42 and role 9 (numbers this proto has no name for), unknown fields at three depths. */
function futureTaskBytes(): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, LD).string("task-1");
  w.tag(2, LD).string("ctx-1");
  w.tag(3, LD).fork();
  {
    w.tag(1, WireType.Varint).int32(42);
    w.tag(3, LD).fork().tag(1, WireType.Varint).int64(1767225600n).join();
    w.tag(15, LD).string("paused until February");
  }
  w.join();
  w.tag(4, LD).fork();
  {
    w.tag(1, LD).string("a");
    w.tag(4, LD).fork().tag(1, LD).string("out").join();
    w.tag(20, WireType.Varint).uint32(1);
  }
  w.join();
  w.tag(5, LD).fork();
  {
    w.tag(1, LD).string("m-1");
    w.tag(4, WireType.Varint).int32(9);
    w.tag(5, LD).fork().tag(1, LD).string("hi").join();
    // A Part whose content is field 9, a member of the oneof this proto does not have.
    w.tag(5, LD).fork().tag(9, LD).fork().tag(1, WireType.Varint).int32(3).join().join();
  }
  w.join();
  // Unknown fields of every wire type.
  w.tag(99, WireType.Varint).uint64(5n);
  w.tag(100, LD).bytes(new Uint8Array([1, 2, 3]));
  w.tag(101, WireType.Bit32).fixed32(7);
  w.tag(102, WireType.Bit64).fixed64(8n);
  return w.finish();
}

/** The StreamResponses of futureEventsJson, in binary: a payload member 9 this proto does not have, state 42. */
function futureEventsBytes(): Uint8Array[] {
  const status = (state: number, extra: boolean) => {
    const w = new BinaryWriter().tag(3, LD).fork();
    w.tag(1, LD).string("task-1").tag(2, LD).string("ctx-1");
    w.tag(3, LD).fork().tag(1, WireType.Varint).int32(state).join();
    if (extra) w.tag(9, LD).string("waiting for a human");
    return w.join().finish();
  };
  const chunk = new BinaryWriter().tag(4, LD).fork();
  chunk.tag(1, LD).string("task-1").tag(2, LD).string("ctx-1");
  chunk.tag(3, LD).fork().tag(1, LD).string("a").tag(4, LD).fork().tag(1, LD).string("more").join().join();
  chunk.tag(4, WireType.Varint).bool(true).tag(5, WireType.Varint).bool(true).tag(7, WireType.Varint).uint32(2);
  return [
    new BinaryWriter().tag(1, LD).bytes(futureTaskBytes()).finish(),
    new BinaryWriter().tag(9, LD).fork().tag(1, LD).string("task-1").tag(2, WireType.Varint).int32(50).join().finish(),
    status(42, true),
    chunk.join().finish(),
    status(3, false),
  ];
}

/** SendMessage answered with a result of a kind this proto does not have (payload member 7). */
const futureSendJson = { futureResult: { id: "r-1" } };
const futureSendBytes = () => new BinaryWriter().tag(7, LD).fork().tag(1, LD).string("r-1").join().finish();

// ---------------------------------------------------------------- servers

let http: RawHttpServer;
let rawGrpc: RawGrpcServer;

/** What the raw HTTP server answers for `request`: the same future agent on JSON-RPC (/rpc) and HTTP+JSON (/rest). */
function answerHttp(request: RawRequest): RawAnswer {
  if (request.path === "/rpc") {
    const { id, method } = JSON.parse(request.body) as { id: number; method: string };
    const envelope = (result: unknown) => ({ jsonrpc: "2.0", id, result, _meta: { server: "newer" } });
    switch (method) {
      case "GetTask":
        return { headers: { "content-type": "application/json" }, body: JSON.stringify(envelope(futureTaskJson)) };
      case "SendMessage":
        return jsonRpcResult(request, futureSendJson);
      case "SendStreamingMessage":
        return { headers: { "content-type": "text/event-stream" }, chunks: sseFrames(futureEventsJson.map(envelope)) };
      default:
        return jsonAnswer({ jsonrpc: "2.0", id, error: futureNotFound.jsonRpc });
    }
  }
  if (request.path === "/rest/tasks/task-1") return jsonAnswer(futureTaskJson);
  if (request.path === "/rest/message:send") return jsonAnswer(futureSendJson);
  if (request.path === "/rest/message:stream") return { headers: { "content-type": "text/event-stream" }, chunks: sseFrames(futureEventsJson) };
  return { status: 404, ...jsonAnswer({ error: futureNotFound.http }) };
}

function answerGrpc(method: string): RawGrpcAnswer {
  switch (method) {
    case "GetTask":
      return { messages: [futureTaskBytes()] };
    case "SendMessage":
      return { messages: [futureSendBytes()] };
    case "SendStreamingMessage":
      return { messages: futureEventsBytes() };
    default:
      return { error: futureNotFound.grpc() };
  }
}

beforeAll(async () => {
  http = await startRawHttp(answerHttp);
  rawGrpc = await startRawGrpc(answerGrpc);
});

const clients: A2AServiceClient[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  rawGrpc?.close();
  await http?.close();
});

function clientFor(binding: BindingName): A2AServiceClient {
  const c =
    binding === "JSONRPC"
      ? createA2AServiceJsonRpcClient(`${http.origin}/rpc`)
      : binding === "HTTP+JSON"
        ? createA2AServiceHttpJsonClient(`${http.origin}/rest`)
        : createA2AServiceGrpcClient(rawGrpc.address);
  clients.push(c);
  return c;
}

// ---------------------------------------------------------------- what the client makes of it

const partsOf = (parts: readonly Part[]) => parts.map((p) => (p.content.case === undefined ? "(a kind of part this proto does not have)" : `${p.content.case}:${String(p.content.value)}`));

/** The known content of a task, as a plain object. */
const known = (task: Task) => ({
  id: task.id,
  contextId: task.contextId,
  state: task.status?.state,
  timestamp: task.status?.timestamp?.seconds,
  artifacts: task.artifacts.map((a) => ({ artifactId: a.artifactId, parts: partsOf(a.parts) })),
  history: task.history.map((m: Message) => ({ messageId: m.messageId, role: m.role, parts: partsOf(m.parts) })),
});

/** JSON loses an enum value given by an unknown name (it reads as 0); a number, in JSON or binary, is kept. */
const expectedTask = (binding: BindingName) => ({
  id: "task-1",
  contextId: "ctx-1",
  state: binding === "GRPC" ? 42 : 0,
  timestamp: 1767225600n,
  artifacts: [{ artifactId: "a", parts: ["text:out"] }],
  history: [{ messageId: "m-1", role: 9, parts: ["text:hi", "(a kind of part this proto does not have)"] }],
});

const eventSummary = (e: StreamResponse) => {
  switch (e.payload.case) {
    case "task":
      return { task: e.payload.value.id };
    case "statusUpdate":
      return { status: e.payload.value.status?.state };
    case "artifactUpdate":
      return { chunk: partsOf(e.payload.value.artifact?.parts ?? []), append: e.payload.value.append, lastChunk: e.payload.value.lastChunk };
    case "message":
      return { message: e.payload.value.messageId };
    default:
      return "(an event of a kind this proto does not have)";
  }
};

describe.each(BINDINGS)("a newer agent on %s", (binding) => {
  test("GetTask: the known fields as sent, unknown fields skipped, unknown enum values as protobuf-es reads them, a new kind of Part unset", async () => {
    const task = await clientFor(binding).getTask({ id: "task-1" });
    expect(known(task)).toEqual(expectedTask(binding));
    if (binding === "GRPC") {
      // Binary keeps what it does not know aside, as protobuf-es does, at every depth.
      expect(task.$unknown?.map((u) => [u.no, u.wireType])).toEqual([
        [99, WireType.Varint],
        [100, WireType.LengthDelimited],
        [101, WireType.Bit32],
        [102, WireType.Bit64],
      ]);
      expect(task.status?.$unknown?.map((u) => u.no)).toEqual([15]);
      expect(task.artifacts[0]?.$unknown?.map((u) => u.no)).toEqual([20]);
      expect(task.history[0]?.parts[1]?.$unknown?.map((u) => u.no)).toEqual([9]);
    } else {
      // JSON has nowhere to keep them.
      expect(task.$unknown).toBeUndefined();
    }
  });

  test("SendMessage answered with a kind of result this proto does not have: the response, its payload unset", async () => {
    const answer: SendMessageResponse = await clientFor(binding).sendMessage({ message: { messageId: "m", parts: [{ content: { case: "text", value: "x" } }] } });
    expect(answer.payload.case).toBeUndefined();
  });

  test("SendStreamingMessage: every event yielded in order, one of an unknown kind among them, and the stream goes on to its end", async () => {
    const events: StreamResponse[] = [];
    for await (const e of clientFor(binding).sendStreamingMessage({ message: { messageId: "m", parts: [{ content: { case: "text", value: "x" } }] } })) events.push(e);
    expect(events.map(eventSummary)).toEqual([
      { task: "task-1" },
      "(an event of a kind this proto does not have)",
      { status: binding === "GRPC" ? 42 : 0 },
      { chunk: ["text:more"], append: true, lastChunk: true },
      { status: 3 },
    ]);
    const first = events[0]?.payload;
    expect(first?.case === "task" ? known(first.value) : first).toEqual(expectedTask(binding));
  });

  test("an error with a detail type this client does not know and unknown ErrorInfo fields is still the class its ErrorInfo names", async () => {
    const err = await clientFor(binding)
      .cancelTask({ id: "gone" })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(TaskNotFoundError);
    expect(isRpcError(err) ? { message: err.message, metadata: err.metadata, details: err.details } : err).toEqual({ message: "task gone expired", metadata: { taskId: "gone" }, details: [] });
  });
});

// ---------------------------------------------------------------- the error of a newer agent

/** TaskNotFound as a newer agent sends it: a detail type first that this client cannot know, and a field ErrorInfo does not have. */
const futureNotFound = {
  jsonRpc: {
    code: -32001,
    message: "task gone expired",
    data: [
      { "@type": "type.googleapis.com/future.v1.RetryHint", afterMs: 5 },
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { taskId: "gone" }, severity: "LOW" },
    ],
    traceId: "abc",
  },
  http: {
    code: 404,
    status: "NOT_FOUND",
    message: "task gone expired",
    details: [
      { "@type": "type.googleapis.com/future.v1.RetryHint", afterMs: 5 },
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { taskId: "gone" }, severity: "LOW" },
    ],
    traceId: "abc",
  },
  grpc(): { code: grpc.status; details: string; metadata: grpc.Metadata } {
    const info = new BinaryWriter();
    info.raw(toBinary(ErrorInfoSchema, create(ErrorInfoSchema, { reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { taskId: "gone" } })));
    info.tag(9, LD).string("LOW");
    const status = create(StatusSchema, {
      code: grpc.status.NOT_FOUND,
      message: "task gone expired",
      details: [
        { typeUrl: "type.googleapis.com/future.v1.RetryHint", value: new BinaryWriter().tag(1, WireType.Varint).int32(5).finish() },
        { typeUrl: "type.googleapis.com/google.rpc.ErrorInfo", value: info.finish() },
      ],
    });
    const metadata = new grpc.Metadata();
    metadata.set("grpc-status-details-bin", Buffer.from(toBinary(StatusSchema, status)));
    return { code: grpc.status.NOT_FOUND, details: "task gone expired", metadata };
  },
};
