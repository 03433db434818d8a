/**
 * The gRPC transport starts calls on grpc-js's Channel itself, below the
 * Client's interceptor layer (D36), so what that layer did for a call is the
 * transport's to do, and these tests hold it to grpc-js's own answers: a
 * unary call answered with two messages or none is UNIMPLEMENTED (gRPC's
 * status for a response cardinality violation), bytes that are not the
 * response message are INTERNAL, a stream is read one message at a time
 * (a reader that waits holds the server back: no buffer grows here), and a
 * reader that stops early, or aborts, cancels the call on the server.
 *
 * The server is node:http2 framing gRPC by hand (a 5-byte prefix per
 * message, grpc-status in trailers), so it can answer what no grpc-js
 * server would.
 */
import { execFile } from "node:child_process";
import { createServer, constants, type Http2Server, type ServerHttp2Stream } from "node:http2";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import type { AddressInfo } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { isRpcError } from "protoc-gen-a2a/runtime";
import { projectRoot } from "../support/protos.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { StreamResponseSchema, TaskSchema, TaskState } from "../../generated/a2a_pb.js";

const frame = (bytes: Uint8Array): Buffer => {
  const out = Buffer.alloc(5 + bytes.length);
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
};
const taskBytes = (id: string) => toBinary(TaskSchema, create(TaskSchema, { id, contextId: "c", status: { state: TaskState.COMPLETED } }));
const eventBytes = (i: number) => toBinary(StreamResponseSchema, create(StreamResponseSchema, { payload: { case: "task", value: { id: `t-${i}`, contextId: "c" } } }));

/** What the server does with one call: the response stream, already answered with 200 and content-type. */
let answer: (stream: ServerHttp2Stream) => void = (stream) => stream.close();

let server: Http2Server;
let address: string;
beforeAll(async () => {
  server = createServer();
  server.on("stream", (stream) => {
    stream.resume(); // the request is not looked at
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    answer(stream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** Ends the response with `status` in its trailers. */
const endWith = (stream: ServerHttp2Stream, status: number, message = "") => {
  stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": String(status), ...(message === "" ? {} : { "grpc-message": message }) }));
  stream.end();
};

async function failureOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    if (!isRpcError(err)) throw err;
    return { code: err.entry.grpcStatus, message: err.message };
  }
  throw new Error("the call succeeded; an error was expected");
}

let client: ReturnType<typeof createA2AServiceGrpcClient>;
beforeEach(() => {
  client = createA2AServiceGrpcClient(address);
});
afterEach(() => client.close());

describe("a unary answer that is not exactly one message", () => {
  test("two messages: UNIMPLEMENTED (gRPC's status for a response cardinality violation)", async () => {
    answer = (stream) => {
      stream.write(frame(taskBytes("a")));
      stream.write(frame(taskBytes("b")));
      endWith(stream, 0);
    };
    expect(await failureOf(client.getTask({ id: "a" }))).toEqual({ code: "UNIMPLEMENTED", message: "Too many responses received" });
  });

  test("none, with status OK: UNIMPLEMENTED", async () => {
    answer = (stream) => endWith(stream, 0);
    expect(await failureOf(client.getTask({ id: "a" }))).toEqual({ code: "UNIMPLEMENTED", message: "No message received" });
  });

  test("exactly one: the message", async () => {
    answer = (stream) => {
      stream.write(frame(taskBytes("one")));
      endWith(stream, 0);
    };
    expect(await client.getTask({ id: "one" })).toMatchObject({ id: "one", status: { state: TaskState.COMPLETED } });
  });
});

test("bytes that are not the response message are INTERNAL, unary and stream", async () => {
  // Field 1 (id, a string) announcing 100 bytes that never come.
  answer = (stream) => {
    stream.write(frame(Uint8Array.of(0x0a, 100, 0x41)));
    endWith(stream, 0);
  };
  expect(await failureOf(client.getTask({ id: "a" }))).toEqual({ code: "INTERNAL", message: expect.stringMatching(/^Response message parsing error: /) });
  const events: unknown[] = [];
  const failed = failureOf(
    (async () => {
      for await (const e of client.subscribeToTask({ id: "a" })) events.push(e);
    })(),
  );
  expect(await failed).toEqual({ code: "INTERNAL", message: expect.stringMatching(/^Response message parsing error: /) });
  expect(events).toEqual([]);
});

describe("streams", () => {
  /**
   * A server stream that writes events as fast as HTTP/2 lets it, until the
   * client cancels; it tells how many it wrote and whether it was cancelled.
   */
  function endlessStream() {
    const seen = { written: 0, cancelled: false, blocked: undefined as (() => void) | undefined };
    const blocked = new Promise<void>((resolve) => (seen.blocked = resolve));
    const cancelled = new Promise<void>((resolve) => {
      answer = (stream) => {
        stream.on("close", () => {
          seen.cancelled = stream.rstCode === constants.NGHTTP2_CANCEL;
          resolve();
        });
        const pump = () => {
          while (!stream.destroyed) {
            seen.written++;
            if (!stream.write(frame(eventBytes(seen.written)))) {
              seen.blocked?.();
              stream.once("drain", pump);
              return;
            }
          }
        };
        pump();
      };
    });
    return { seen, blocked, cancelled };
  }

  test("a reader that waits holds the server back, and one that stops early cancels the call", async () => {
    const { seen, blocked, cancelled } = endlessStream();
    const iterator = client.subscribeToTask({ id: "t" })[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ payload: { case: "task", value: { id: "t-1" } } });
    // The server runs into HTTP/2 flow control while the reader holds one event: the
    // transport asks grpc-js for the next message only when the reader does.
    await blocked;
    const writtenWhenBlocked = seen.written;
    // Each event is 13 bytes framed; the windows (connection and stream, 64 KiB by
    // default, grpc-js's own receive buffer) bound what the server got out.
    expect(writtenWhenBlocked).toBeLessThan(20_000);
    for (let i = 2; i <= 5; i++) expect((await iterator.next()).value).toMatchObject({ payload: { value: { id: `t-${i}` } } });
    await iterator.return!();
    await cancelled;
    expect(seen.cancelled).toBe(true);
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });

  test("a caller's abort mid-stream is CANCELLED, and the server sees the call cancelled", async () => {
    const { cancelled, seen } = endlessStream();
    const aborter = new AbortController();
    let got = 0;
    const failed = failureOf(
      (async () => {
        for await (const _ of client.subscribeToTask({ id: "t" }, { signal: aborter.signal })) {
          if (++got === 3) aborter.abort();
        }
      })(),
    );
    expect(await failed).toMatchObject({ code: "CANCELLED" });
    expect(got).toBe(3);
    await cancelled;
    expect(seen.cancelled).toBe(true);
  });

  test("a status after the messages ends the stream: every message, then the error", async () => {
    answer = (stream) => {
      for (let i = 1; i <= 3; i++) stream.write(frame(eventBytes(i)));
      endWith(stream, 5, "no such task");
    };
    const events: string[] = [];
    const failed = failureOf(
      (async () => {
        for await (const e of client.subscribeToTask({ id: "t" })) events.push(e.payload.case === "task" ? e.payload.value.id : "?");
      })(),
    );
    expect(await failed).toEqual({ code: "NOT_FOUND", message: "no such task" });
    expect(events).toEqual(["t-1", "t-2", "t-3"]);
  });
});

// grpc-js's own deadline timer for the wait could not be cancelled: an aborted wait held the process open for the rest of it (review).
test("an aborted wait for the channel (the follower's, D30) holds the process open no longer", async () => {
  const child = join(projectRoot, "test/client/children/aborted-wait.ts");
  const loader = pathToFileURL(join(projectRoot, "test/support/ts-loader.mjs")).href;
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", loader, child], { cwd: projectRoot, timeout: 30_000 });
  expect(Number(stdout.trim())).toBeLessThan(2000);
  // The child compiles the client's TypeScript as it loads: seconds on a busy machine.
}, 60_000);

test("maxMessageBytes that is no positive number is refused where the gRPC client is made, as the JSON clients refuse it", () => {
  for (const bad of [0, -1, Number.NaN]) {
    expect(() => createA2AServiceGrpcClient("127.0.0.1:1", { maxMessageBytes: bad })).toThrow(/maxMessageBytes must be a positive number of bytes/);
  }
});
