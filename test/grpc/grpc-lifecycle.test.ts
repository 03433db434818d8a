/**
 * Call lifecycle of the gRPC binding, with a real grpc-js client and server:
 * a client that cancels (server stream and unary) or whose deadline passes
 * aborts the handler's `context.signal` and ends its stream generator (its
 * `finally` runs); a client that stops reading stops the handler's stream
 * from being pulled (backpressure); and the stream rules (D15) and errors
 * after the first event reach the client as a gRPC status with details.
 *
 * Synchronisation is by promises the handler resolves (started, aborted,
 * finally), each awaited with a 1 s limit; the only polling is the
 * quiescence check of the backpressure test (as in
 * test/jsonrpc/backpressure.test.ts): "the producer stopped" cannot be
 * observed as an event.
 */
import net from "node:net";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import type { CallContext } from "protoc-gen-a2a/runtime";
import { A2AServiceGrpcDefinition, addA2AServiceToServer } from "../../generated/a2a_grpc.js";
import { createReportLog } from "../support/report-log.js";
import { TaskNotFoundError } from "../../runtime/a2a/errors.js";
import {
  GetTaskRequestSchema,
  Role,
  SendMessageRequestSchema,
  StreamResponseSchema,
  TaskState,
  type GetTaskRequest,
  type StreamResponse,
  type Task,
} from "../../generated/a2a_pb.js";
import { StatusSchema } from "../../runtime/gen/google/rpc/status_pb.js";
import { ErrorInfoSchema } from "../../runtime/gen/google/rpc/error_details_pb.js";

// ---------------------------------------------------------------- helpers

interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
  settled: boolean;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  const d: Deferred<T> = {
    promise,
    settled: false,
    resolve: (value) => {
      d.settled = true;
      resolve(value);
    },
  };
  return d;
}

/** `promise`, or a rejection naming `what` when it takes longer than `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `read()` gives the same value `times` polls in a row: the producer is idle. */
async function settled(read: () => number, times: number): Promise<number> {
  let last = -1;
  let same = 0;
  for (let i = 0; i < 200 && same < times; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const now = read();
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return last;
}

const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });

const taskEvent = (id = "t") => create(StreamResponseSchema, { payload: { case: "task", value: { id, contextId: "c", status: { state: TaskState.WORKING } } } });
const messageEvent = () =>
  create(StreamResponseSchema, { payload: { case: "message", value: { messageId: "m", role: Role.AGENT, parts: [{ content: { case: "text", value: "done" } }] } } });
const statusEvent = (state = TaskState.WORKING) =>
  create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId: "t", contextId: "c", status: { state } } } });

// ---------------------------------------------------------------- what the handler reports

/** One call's life as the handler saw it. */
interface Probe {
  readonly started: Deferred<void>;
  /** When the handler's context.signal aborted (Date.now()). */
  readonly abortedAt: Deferred<number>;
  /** The stream generator's (or unary handler's) finally ran. */
  readonly finished: Deferred<void>;
}

let probe: Probe;
const newProbe = (): Probe => (probe = { started: deferred(), abortedAt: deferred<number>(), finished: deferred() });

/** Marks the call started and watches its signal. */
function watch(context: CallContext): AbortSignal {
  const p = probe;
  const signal = context.signal;
  void aborted(signal).then(() => p.abortedAt.resolve(Date.now()));
  p.started.resolve();
  return signal;
}

type StreamImpl = (request: unknown, context: CallContext) => AsyncIterable<StreamResponse>;
type UnaryImpl = (request: GetTaskRequest, context: CallContext) => Promise<Task | Record<string, unknown>>;
let stream: StreamImpl = async function* () {};
let unary: UnaryImpl = async (request) => ({ id: request.id, contextId: "c" });

// ---------------------------------------------------------------- server and client

const server = new grpc.Server();
/** The server's reports of unexpected failures, checked where a handler throws on purpose (and kept off the test output). */
const failures = createReportLog();
addA2AServiceToServer(
  server,
  {
    sendStreamingMessage: (request, context) => stream(request, context),
    getTask: (request, context) => unary(request, context),
  },
  { logger: failures.logger },
);

const Client = grpc.makeGenericClientConstructor(A2AServiceGrpcDefinition, "A2AService");
type UnaryFn = (
  request: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, value?: Task) => void,
) => grpc.ClientUnaryCall;
let client: grpc.Client & {
  getTask: UnaryFn;
  sendStreamingMessage: (request: unknown, metadata: grpc.Metadata, options?: grpc.CallOptions) => grpc.ClientReadableStream<StreamResponse>;
};

let serverPort = 0;

beforeAll(async () => {
  serverPort = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  client = new Client(`127.0.0.1:${serverPort}`, grpc.credentials.createInsecure()) as unknown as typeof client;
});

afterAll(() => {
  client.close();
  server.forceShutdown();
});

beforeEach(() => {
  newProbe();
});

const md = () => {
  const m = new grpc.Metadata();
  m.set("a2a-version", "1.0");
  return m;
};

const sendRequest = () =>
  create(SendMessageRequestSchema, { message: { messageId: "m", role: 1, parts: [{ content: { case: "text", value: "go" } }] } });

function openStream(options: grpc.CallOptions = {}) {
  const call = client.sendStreamingMessage(sendRequest(), md(), options);
  const events: StreamResponse[] = [];
  const firstEvent = deferred<StreamResponse>();
  const status = deferred<grpc.StatusObject>();
  const error = deferred<grpc.ServiceError>();
  call.on("data", (e: StreamResponse) => {
    events.push(e);
    firstEvent.resolve(e);
  });
  call.on("error", (e: grpc.ServiceError) => error.resolve(e));
  call.on("status", (s: grpc.StatusObject) => status.resolve(s));
  return { call, events, firstEvent, status, error };
}

function getTask(options: grpc.CallOptions = {}) {
  const result = deferred<{ error: grpc.ServiceError | null; task?: Task | undefined }>();
  const call = client.getTask(create(GetTaskRequestSchema, { id: "t1" }), md(), options, (error, task) => result.resolve({ error, task }));
  return { call, result };
}

/** The google.rpc.Status in an error's grpc-status-details-bin. */
function statusDetails(error: grpc.ServiceError) {
  const bin = error.metadata.get("grpc-status-details-bin")[0];
  expect(bin).toBeInstanceOf(Buffer);
  const status = fromBinary(StatusSchema, bin as Buffer);
  const infos = status.details.map((d) => anyUnpack(d, ErrorInfoSchema)).filter((i) => i !== undefined);
  return { status, info: infos[0] };
}

// ================================================================ cancellation and deadlines

describe("a client that leaves ends the handler", () => {
  test("server stream cancelled by the client: the signal aborts within 1 s and the generator's finally runs", async () => {
    let yieldedAfterAbort = false;
    stream = async function* (_request, context) {
      const signal = watch(context);
      try {
        yield taskEvent();
        await aborted(signal);
        // Still asked for one more event: the runtime must drop it and end the generator.
        yieldedAfterAbort = true;
        yield statusEvent();
        yield statusEvent(TaskState.COMPLETED);
      } finally {
        probe.finished.resolve();
      }
    };
    const s = openStream();
    await within(s.firstEvent.promise, 1000, "the first event");
    const cancelledAt = Date.now();
    s.call.cancel();
    const abortedAt = await within(probe.abortedAt.promise, 1000, "the handler's abort");
    expect(abortedAt - cancelledAt).toBeLessThan(1000);
    await within(probe.finished.promise, 1000, "the generator's finally");
    const error = await within(s.error.promise, 1000, "the client's error");
    expect(error.code).toBe(grpc.status.CANCELLED);
    expect(yieldedAfterAbort).toBe(true);
    expect(s.events.map((e) => e.payload.case)).toEqual(["task"]);
  });

  test("server stream cancelled while the handler is parked at a yield (writes blocked): its finally runs", async () => {
    // A producer that never awaits anything but its consumer: when the client stops
    // reading, the generator sits at a `yield` and only return() can end it.
    // (1 MiB events: with 64 KiB ones the grpc-js client / node:http2 below the
    // runtime kept accepting data long after the client stopped reading, in bursts,
    // ~10 MB/s here, so the producer took seconds to stall.)
    const chunk = "y".repeat(1 << 20);
    let produced = 0;
    stream = async function* (_request, context) {
      watch(context);
      try {
        yield taskEvent();
        for (;;) {
          produced++;
          yield create(StreamResponseSchema, {
            payload: {
              case: "artifactUpdate",
              value: { taskId: "t", contextId: "c", artifact: { artifactId: `a-${produced}`, parts: [{ content: { case: "text", value: chunk } }] } },
            },
          });
        }
      } finally {
        probe.finished.resolve();
      }
    };
    const call = client.sendStreamingMessage(sendRequest(), md());
    const error = deferred<grpc.ServiceError>();
    call.on("error", (e: grpc.ServiceError) => error.resolve(e));
    // Not reading: the producer stalls once the buffers are full.
    await within(probe.started.promise, 1000, "the handler's start");
    const stalledAt = await settled(() => produced, 5);
    expect(stalledAt).toBeGreaterThan(0);
    expect(probe.finished.settled).toBe(false);
    call.cancel();
    await within(probe.abortedAt.promise, 1000, "the handler's abort");
    await within(probe.finished.promise, 1000, "the generator's finally");
    expect((await within(error.promise, 1000, "the client's error")).code).toBe(grpc.status.CANCELLED);
    // (No bound on `produced` here: below the runtime, the unread grpc-js client
    // connection still lets a trickle of data through now and then, see the note above.)
  }, 20_000);

  // The call is cancelled while its policy hook still runs: the handler must
  // not be started afterwards, or its generator would be left parked at its
  // first yield with no one to pull or return it.
  test("server stream cancelled during authentication: the handler is never started", async () => {
    const authStarted = deferred();
    const gate = deferred();
    // The server's own view of the cancel, so the test waits for it rather than for a while.
    const serverSawCancel = deferred();
    const onCancel: grpc.ServerInterceptor = (_method, call) =>
      new grpc.ServerInterceptingCall(call, {
        start: (next) => next(new grpc.ServerListenerBuilder().withOnCancel(() => serverSawCancel.resolve()).build()),
      });
    const gated = new grpc.Server({ interceptors: [onCancel] });
    addA2AServiceToServer(gated, { sendStreamingMessage: (request, context) => stream(request, context) }, {
      policy: {
        authenticate: async () => {
          authStarted.resolve();
          await gate.promise;
          return undefined;
        },
      },
    });
    stream = async function* (_request, context) {
      watch(context);
      try {
        yield taskEvent();
        await aborted(context.signal);
      } finally {
        probe.finished.resolve();
      }
    };
    const port = await new Promise<number>((resolve, reject) =>
      gated.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    const local = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as typeof client;
    try {
      const call = local.sendStreamingMessage(sendRequest(), md());
      const error = deferred<grpc.ServiceError>();
      call.on("error", (e: grpc.ServiceError) => error.resolve(e));
      await within(authStarted.promise, 1000, "the authentication hook");
      call.cancel();
      expect((await within(error.promise, 1000, "the client's error")).code).toBe(grpc.status.CANCELLED);
      await within(serverSawCancel.promise, 1000, "the server to see the cancel");
      gate.resolve();
      // What follows the hook is promise continuations only: they have all run by the next macrotask.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(probe.started.settled).toBe(false);
    } finally {
      local.close();
      gated.forceShutdown();
    }
  });

  test("server stream past its deadline: the signal aborts within 1 s of the deadline, the client sees DEADLINE_EXCEEDED", async () => {
    stream = async function* (_request, context) {
      const signal = watch(context);
      try {
        yield taskEvent();
        await aborted(signal);
      } finally {
        probe.finished.resolve();
      }
    };
    const deadline = Date.now() + 200;
    const s = openStream({ deadline });
    await within(s.firstEvent.promise, 1000, "the first event");
    const abortedAt = await within(probe.abortedAt.promise, 1500, "the handler's abort");
    // The server's deadline is the client's, carried as grpc-timeout from the moment it received the call.
    expect(abortedAt).toBeGreaterThanOrEqual(deadline - 50);
    expect(abortedAt - deadline).toBeLessThan(1000);
    await within(probe.finished.promise, 1000, "the generator's finally");
    const error = await within(s.error.promise, 1000, "the client's error");
    expect(error.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(s.events.map((e) => e.payload.case)).toEqual(["task"]);
  });

  test("unary call past its deadline: the signal aborts within 1 s of the deadline, the client sees DEADLINE_EXCEEDED", async () => {
    unary = async (request, context) => {
      const signal = watch(context);
      try {
        await aborted(signal);
        return { id: request.id, contextId: "late" };
      } finally {
        probe.finished.resolve();
      }
    };
    const deadline = Date.now() + 200;
    const { result } = getTask({ deadline });
    await within(probe.started.promise, 1000, "the handler's start");
    const abortedAt = await within(probe.abortedAt.promise, 1500, "the handler's abort");
    expect(abortedAt).toBeGreaterThanOrEqual(deadline - 50);
    expect(abortedAt - deadline).toBeLessThan(1000);
    await within(probe.finished.promise, 1000, "the handler's finally");
    const { error, task } = await within(result.promise, 1000, "the client's answer");
    expect(task).toBeUndefined();
    expect(error?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
  });

  test("unary call cancelled by the client: the handler's signal aborts within 1 s", async () => {
    unary = async (request, context) => {
      const signal = watch(context);
      try {
        await aborted(signal);
        return { id: request.id, contextId: "late" };
      } finally {
        probe.finished.resolve();
      }
    };
    const { call, result } = getTask();
    await within(probe.started.promise, 1000, "the handler's start");
    expect(probe.abortedAt.settled).toBe(false);
    const cancelledAt = Date.now();
    call.cancel();
    const abortedAt = await within(probe.abortedAt.promise, 1000, "the handler's abort");
    expect(abortedAt - cancelledAt).toBeLessThan(1000);
    await within(probe.finished.promise, 1000, "the handler's finally");
    const { error } = await within(result.promise, 1000, "the client's answer");
    expect(error?.code).toBe(grpc.status.CANCELLED);
  });

  test("a unary call that completes normally never aborts the signal", async () => {
    unary = async (request, context) => {
      watch(context);
      return { id: request.id, contextId: "c1" };
    };
    const { result } = getTask({ deadline: Date.now() + 300 });
    const { error, task } = await within(result.promise, 1000, "the client's answer");
    expect(error).toBeNull();
    expect(task).toMatchObject({ id: "t1", contextId: "c1" });
    // The deadline timer is cleared when the call is done: nothing fires after it.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(probe.abortedAt.settled).toBe(false);
  });
});

// ================================================================ backpressure

/**
 * A TCP relay between a client and the server whose server-to-client direction
 * can be held: while held it reads nothing more from the server's socket, so
 * the server's writes back up exactly as they do for a client that stops
 * reading.
 *
 * Why not just a grpc-js client that does not read: grpc-js (1.14, node:http2
 * underneath) keeps accepting DATA frames for a call whose stream nobody
 * reads, in bursts, until the whole response is in client memory. Checked with
 * plain grpc-js on both sides (a raw handler honouring write() === false and
 * 'drain', no runtime involved): 100 unread 1 MiB messages were all pulled
 * within 200 ms. So from the server's side such a client never stops reading,
 * and only a transport that stops can show whether the runtime waits.
 */
async function holdableRelay(target: number) {
  let held = false;
  const pipes: { upstream: net.Socket; downstream: net.Socket }[] = [];
  const relay = net.createServer((downstream) => {
    const upstream = net.connect(target, "127.0.0.1");
    const pipe = { upstream, downstream };
    pipes.push(pipe);
    downstream.on("data", (d: Buffer) => upstream.write(d));
    upstream.on("data", (d: Buffer) => {
      if (!downstream.write(d) || held) upstream.pause();
    });
    downstream.on("drain", () => {
      if (!held) upstream.resume();
    });
    const close = () => {
      upstream.destroy();
      downstream.destroy();
    };
    upstream.on("error", close).on("close", close);
    downstream.on("error", close).on("close", close);
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  return {
    port: (relay.address() as net.AddressInfo).port,
    hold() {
      held = true;
      for (const p of pipes) p.upstream.pause();
    },
    release() {
      held = false;
      for (const p of pipes) p.upstream.resume();
    },
    close() {
      for (const p of pipes) {
        p.upstream.destroy();
        p.downstream.destroy();
      }
      return new Promise<void>((resolve) => relay.close(() => resolve()));
    },
  };
}

describe("backpressure", () => {
  test("a client that stops reading stalls the handler; reading again delivers all 100 events in order", async () => {
    const total = 100;
    const chunk = "x".repeat(1 << 20); // ~1 MiB per event
    let pulled = 0;
    stream = async function* (_request, context) {
      watch(context);
      try {
        pulled = 1;
        yield taskEvent();
        for (let i = 1; i < total - 1; i++) {
          pulled = i + 1;
          yield create(StreamResponseSchema, {
            payload: {
              case: "artifactUpdate",
              value: { taskId: "t", contextId: "c", artifact: { artifactId: `a-${i}`, parts: [{ content: { case: "text", value: chunk } }] }, append: true },
            },
          });
        }
        pulled = total;
        yield statusEvent(TaskState.COMPLETED);
      } finally {
        probe.finished.resolve();
      }
    };
    const relay = await holdableRelay(serverPort);
    const slowClient = new Client(`127.0.0.1:${relay.port}`, grpc.credentials.createInsecure()) as unknown as typeof client;
    try {
      relay.hold();
      const call = slowClient.sendStreamingMessage(sendRequest(), md());
      const error = deferred<grpc.ServiceError>();
      call.on("error", (e: grpc.ServiceError) => error.resolve(e));
      await within(probe.started.promise, 1000, "the handler's start");
      const stalledAt = await settled(() => pulled, 5);
      expect(stalledAt).toBeGreaterThan(0);
      expect(stalledAt).toBeLessThan(50);
      expect(probe.finished.settled).toBe(false);

      relay.release();
      const received: string[] = [];
      for await (const e of call as AsyncIterable<StreamResponse>) {
        received.push(e.payload.case === "artifactUpdate" ? (e.payload.value.artifact?.artifactId ?? "?") : (e.payload.case ?? "?"));
      }
      expect(received).toEqual(["task", ...Array.from({ length: total - 2 }, (_, i) => `a-${i + 1}`), "statusUpdate"]);
      expect(pulled).toBe(total);
      await within(probe.finished.promise, 1000, "the generator's finally");
      expect(error.settled).toBe(false);
    } finally {
      slowClient.close();
      await relay.close();
    }
  }, 30_000);
});

// ================================================================ stream rules and errors (D15)

describe("stream rules and errors after the first event", () => {
  test("D15: a first event that is a statusUpdate is INTERNAL with ErrorInfo INVALID_AGENT_RESPONSE, and no event", async () => {
    stream = async function* (_request, context) {
      watch(context);
      try {
        yield statusEvent();
        yield taskEvent();
      } finally {
        probe.finished.resolve();
      }
    };
    const s = openStream();
    const error = await within(s.error.promise, 1000, "the client's error");
    expect(s.events).toEqual([]);
    expect(error.code).toBe(grpc.status.INTERNAL);
    const { status, info } = statusDetails(error);
    expect(status.code).toBe(grpc.status.INTERNAL);
    expect(status.message).toBe(error.details);
    expect(info).toMatchObject({ reason: "INVALID_AGENT_RESPONSE", domain: "a2a-protocol.org" });
    await within(probe.finished.promise, 1000, "the generator's finally");
  });

  test("D15: an event after a message ends the stream with INVALID_AGENT_RESPONSE after the message", async () => {
    stream = async function* () {
      yield create(StreamResponseSchema, { payload: { case: "message", value: { messageId: "r", contextId: "c", role: 2, parts: [{ content: { case: "text", value: "hi" } }] } } });
      yield statusEvent();
    };
    const s = openStream();
    const error = await within(s.error.promise, 1000, "the client's error");
    expect(s.events.map((e) => e.payload.case)).toEqual(["message"]);
    expect(error.code).toBe(grpc.status.INTERNAL);
    expect(statusDetails(error).info?.reason).toBe("INVALID_AGENT_RESPONSE");
  });

  test("an A2A error after the first event: the client gets the event, then the error's status with ErrorInfo", async () => {
    stream = async function* (_request, context) {
      watch(context);
      try {
        yield taskEvent("t-9");
        throw new TaskNotFoundError("task t-9 vanished", { metadata: { taskId: "t-9" } });
      } finally {
        probe.finished.resolve();
      }
    };
    const s = openStream();
    const error = await within(s.error.promise, 1000, "the client's error");
    expect(s.events).toHaveLength(1);
    expect(s.events[0]?.payload).toMatchObject({ case: "task", value: { id: "t-9", contextId: "c", status: { state: TaskState.WORKING } } });
    expect(error.code).toBe(grpc.status.NOT_FOUND);
    expect(error.details).toBe("task t-9 vanished");
    const { status, info } = statusDetails(error);
    expect(status).toMatchObject({ code: grpc.status.NOT_FOUND, message: "task t-9 vanished" });
    expect(info).toMatchObject({ reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { taskId: "t-9" } });
    await within(probe.finished.promise, 1000, "the generator's finally");
  });

  test("a plain Error after the first event: the event, then INTERNAL without the error's message; reported on the server", async () => {
    failures.reports.length = 0;
    stream = async function* () {
      yield taskEvent();
      throw new Error("db password=hunter2");
    };
    const s = openStream();
    const error = await within(s.error.promise, 1000, "the client's error");
    expect(s.events.map((e) => e.payload.case)).toEqual(["task"]);
    expect(error.code).toBe(grpc.status.INTERNAL);
    expect(error.details).toBe("Internal error");
    const { status, info } = statusDetails(error);
    expect(status).toMatchObject({ code: grpc.status.INTERNAL, message: "Internal error" });
    expect(info).toBeUndefined();
    expect(JSON.stringify(error)).not.toContain("hunter2");
    expect((error.metadata.get("grpc-status-details-bin")[0] as Buffer).toString("latin1")).not.toContain("hunter2");
    expect(failures.reports).toEqual([{ logged: "handler failed", binding: "GRPC", method: "SendStreamingMessage", message: "db password=hunter2" }]);
  });

  // As on JSON-RPC and HTTP+JSON (dispatch.openStream): D15 requires a stream to start
  // with a task or a message, so a handler stream with no event is Internal, not an empty OK.
  test("a stream that ends before its first event is INTERNAL, as on the other bindings, not an empty OK stream", async () => {
    stream = async function* () {};
    const s = openStream();
    const status = await within(s.status.promise, 1000, "the client's status");
    expect(s.events).toEqual([]);
    expect(status.code).toBe(grpc.status.INTERNAL);
    expect(status.details).toBe("the stream ended before its first event");
  });

  // D15 on gRPC, as on the HTTP bindings: the first event is a task or a message, and nothing follows a message.
  test("a stream that starts with a status update is INTERNAL with INVALID_AGENT_RESPONSE, nothing sent (D15)", async () => {
    stream = async function* () {
      yield statusEvent();
    };
    const s = openStream();
    const error = await within(s.error.promise, 1000, "the client's error");
    expect(s.events).toEqual([]);
    expect(error.code).toBe(grpc.status.INTERNAL);
    expect(error.details).toBe("the first event of a stream must be a task or a message, not statusUpdate");
    expect(statusDetails(error).info).toMatchObject({ reason: "INVALID_AGENT_RESPONSE", domain: "a2a-protocol.org" });
  });

  test("an event after a message: the message, then INTERNAL with INVALID_AGENT_RESPONSE, and the handler is ended (D15)", async () => {
    stream = async function* () {
      try {
        yield messageEvent();
        yield taskEvent();
        yield taskEvent("never sent");
      } finally {
        probe.finished.resolve();
      }
    };
    const s = openStream();
    const error = await within(s.error.promise, 1000, "the client's error");
    expect(s.events.map((e) => e.payload.case)).toEqual(["message"]);
    expect(error.code).toBe(grpc.status.INTERNAL);
    expect(error.details).toBe("the stream continued after a message (event 1 is task)");
    expect(statusDetails(error).info).toMatchObject({ reason: "INVALID_AGENT_RESPONSE" });
    await within(probe.finished.promise, 1000, "the generator's finally");
  });
});
