/**
 * A gRPC stream reset before any status (D29): the generated gRPC client
 * calls it UNAVAILABLE, whatever the RST_STREAM code, so stream recovery
 * resumes it (nginx's grpc_read_timeout resets with INTERNAL_ERROR, which
 * grpc-js alone reports as INTERNAL; test/proxy/nginx.test.ts runs that
 * case in nginx). A status the server did send, INTERNAL included, stays
 * what it is. The server is a raw node:http2 one, so the test decides which
 * frames the client gets.
 */
import { createServer, constants as h2, type Http2Server, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { isRpcError } from "protoc-gen-a2a/runtime";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { Role, StreamResponseSchema, TaskState } from "../../generated/a2a_pb.js";

/** What the raw server does with each call. */
let answer: (stream: ServerHttp2Stream) => void;
let server: Http2Server;
let address: string;

beforeAll(async () => {
  server = createServer();
  server.on("stream", (stream) => {
    stream.on("error", () => undefined);
    // The request is read to its end first, as a server would before answering.
    stream.resume();
    stream.on("end", () => answer(stream));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** One length-prefixed gRPC message: a StreamResponse holding a WORKING task. */
function taskFrame(): Buffer {
  const bytes = toBinary(StreamResponseSchema, create(StreamResponseSchema, { payload: { case: "task", value: { id: "t1", contextId: "c1", status: { state: TaskState.WORKING } } } }));
  const frame = Buffer.alloc(5 + bytes.length);
  frame.writeUInt32BE(bytes.length, 1);
  frame.set(bytes, 5);
  return frame;
}

const request = { message: { messageId: "m1", role: Role.USER, parts: [{ content: { case: "text" as const, value: "hi" } }] } };

/** How a stream ends: its events and the gRPC status name of its error. */
async function streamOutcome(): Promise<{ events: number; status: string | undefined; message: string }> {
  const client = createA2AServiceGrpcClient(address);
  let events = 0;
  try {
    for await (const _ of client.sendStreamingMessage(request)) events++;
    return { events, status: undefined, message: "" };
  } catch (err) {
    return { events, status: isRpcError(err) ? err.entry.grpcStatus : `not an RpcError: ${String(err)}`, message: (err as Error).message };
  } finally {
    client.close();
  }
}

test.each([
  ["INTERNAL_ERROR, as nginx's read timeout", h2.NGHTTP2_INTERNAL_ERROR],
  ["PROTOCOL_ERROR", h2.NGHTTP2_PROTOCOL_ERROR],
  ["NO_ERROR with no status", h2.NGHTTP2_NO_ERROR],
])("a stream reset with %s after its first event is UNAVAILABLE", async (_, code) => {
  answer = (stream) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" });
    stream.write(taskFrame(), () => stream.close(code));
  };
  const outcome = await streamOutcome();
  expect(outcome).toMatchObject({ events: 1, status: "UNAVAILABLE" });
  expect(outcome.message).toMatch(/cut with no gRPC status|RST_STREAM/);
});

test("a unary call reset before any answer is UNAVAILABLE", async () => {
  answer = (stream) => stream.close(h2.NGHTTP2_INTERNAL_ERROR);
  const client = createA2AServiceGrpcClient(address);
  try {
    const err = await client.getTask({ id: "t1" }).then(() => undefined, (e: unknown) => e);
    expect(isRpcError(err) ? err.entry.grpcStatus : err).toBe("UNAVAILABLE");
  } finally {
    client.close();
  }
});

test("an INTERNAL status the server sent in trailers stays INTERNAL", async () => {
  answer = (stream) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "13", "grpc-message": "Internal error" }));
    stream.write(taskFrame(), () => stream.end());
  };
  expect(await streamOutcome()).toMatchObject({ events: 1, status: "INTERNAL" });
});
