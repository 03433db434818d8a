/**
 * The JSON-RPC binding over real sockets: node:http server running the
 * generated listener, raw requests with fetch and node:http.
 *
 * Checklist: D5, D9, D13, D14, D16; Part B 3, 5.3, 7, 10.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { create } from "@bufbuild/protobuf";
import type { A2ACallContext } from "protoc-gen-a2a/runtime";
import { A2AServiceJsonRpcMethods, createA2AServiceJsonRpcListener } from "../../generated/a2a_jsonrpc.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { TaskNotCancelableError, TaskNotFoundError } from "../../runtime/a2a/errors.js";
import { Role, StreamResponseSchema, TaskSchema, TaskState, type StreamResponse, type Task } from "../../generated/a2a_pb.js";
import { createReportLog } from "../support/report-log.js";

// ---------------------------------------------------------------- helpers

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Rejects when `promise` has not settled after `ms`; never leaves a timer behind. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: unknown;
}

interface PostOptions {
  /** Header values; `undefined` removes a default header. */
  readonly headers?: Record<string, string | undefined>;
  readonly method?: string;
  readonly path?: string;
  readonly base?: string;
}

function buildHeaders(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const all: Record<string, string | undefined> = { "content-type": "application/json", "a2a-version": "1.0", ...extra };
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(all)) if (v !== undefined) out[k] = v;
  return out;
}

let base = "";

async function post(body: unknown, options: PostOptions = {}): Promise<Reply> {
  const method = options.method ?? "POST";
  const payload =
    method === "GET" || method === "HEAD"
      ? undefined
      : typeof body === "string" || body instanceof Uint8Array
        ? body
        : JSON.stringify(body);
  const res = await fetch((options.base ?? base) + (options.path ?? "/"), {
    method,
    headers: buildHeaders(options.headers),
    body: payload,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A request through node:http, for what fetch cannot do (chunked bodies, no keep-alive pooling). */
function rawPost(
  url: string,
  chunks: readonly (string | Buffer)[],
  headers: Record<string, string | undefined> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent: false, headers: buildHeaders(headers) }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

/** Reads an SSE body frame by frame (a frame ends with a blank line). */
class SseReader {
  private buffer = "";
  private readonly decoder = new TextDecoder();
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** The next raw frame without its trailing blank line, or undefined at the end of the stream. */
  async next(): Promise<string | undefined> {
    for (;;) {
      const end = this.buffer.indexOf("\n\n");
      if (end >= 0) {
        const frame = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        return frame;
      }
      const { value, done } = await this.reader.read();
      if (done) return this.buffer === "" ? undefined : this.buffer;
      this.buffer += this.decoder.decode(value, { stream: true });
    }
  }

  /** The next `data:` frame parsed as JSON, skipping comments (heartbeats). */
  async nextData(): Promise<unknown> {
    for (let frame = await this.next(); frame !== undefined; frame = await this.next()) {
      if (frame.startsWith(":")) continue;
      expect(frame.startsWith("data: ")).toBe(true);
      expect(frame.includes("\n")).toBe(false);
      return JSON.parse(frame.slice("data: ".length));
    }
    return undefined;
  }
}

/** All frames of a finished SSE body: the `data:` payloads (parsed) and the comment lines. */
function parseSse(text: string): { data: unknown[]; comments: string[] } {
  const data: unknown[] = [];
  const comments: string[] = [];
  expect(text.endsWith("\n\n")).toBe(true);
  for (const frame of text.split("\n\n").slice(0, -1)) {
    if (frame.startsWith(":")) comments.push(frame);
    else {
      expect(frame.startsWith("data: ")).toBe(true);
      expect(frame.includes("\n")).toBe(false);
      data.push(JSON.parse(frame.slice("data: ".length)));
    }
  }
  return { data, comments };
}

const errorInfo = (reason: string, metadata?: Record<string, string>) => ({
  "@type": "type.googleapis.com/google.rpc.ErrorInfo",
  reason,
  domain: "a2a-protocol.org",
  ...(metadata === undefined ? {} : { metadata }),
});

const rpcError = (id: unknown, code: number, message: string, data?: unknown[]) => ({
  jsonrpc: "2.0",
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});

const invalidRequest = (id: unknown, message: string) => rpcError(id, -32600, message);

// ---------------------------------------------------------------- handler

interface Call {
  readonly method: string;
  readonly request: unknown;
  readonly context: A2ACallContext;
}

/** What a blocking stream handler saw; `aborted` resolves with the time the signal fired. */
interface Probe {
  readonly started: Deferred<void>;
  readonly aborted: Deferred<number>;
  readonly finallyRan: Deferred<void>;
  readonly release: Deferred<void>;
}

function newProbe(): Probe {
  return { started: deferred(), aborted: deferred<number>(), finallyRan: deferred(), release: deferred() };
}

const calls: Call[] = [];
/** Holds the "held" SendMessage until resolved. */
let held: { promise: Promise<void>; release: () => void } = { promise: Promise.resolve(), release: () => undefined };
function holdSendMessage() {
  let release!: () => void;
  held = { promise: new Promise<void>((resolve) => (release = resolve)), release: () => release() };
  return held;
}
const probes = new Map<string, Probe>();

const storedTask = create(TaskSchema, { id: "t1", contextId: "c1", status: { state: TaskState.WORKING } });
const tasks = new Map<string, Task>([["t1", storedTask]]);

const taskJson = { id: "t1", contextId: "c1", status: { state: "TASK_STATE_WORKING" } };

function streamEvents(taskId: string): StreamResponse[] {
  return [
    create(StreamResponseSchema, {
      payload: { case: "task", value: { id: taskId, contextId: "c1", status: { state: TaskState.SUBMITTED } } },
    }),
    create(StreamResponseSchema, {
      payload: { case: "statusUpdate", value: { taskId, contextId: "c1", status: { state: TaskState.WORKING } } },
    }),
    create(StreamResponseSchema, {
      payload: {
        case: "artifactUpdate",
        value: { taskId, contextId: "c1", artifact: { artifactId: "a1", parts: [{ content: { case: "text", value: "out" } }] } },
      },
    }),
    create(StreamResponseSchema, {
      payload: { case: "statusUpdate", value: { taskId, contextId: "c1", status: { state: TaskState.COMPLETED } } },
    }),
  ];
}

const streamEventsJson = (taskId: string) => [
  { task: { id: taskId, contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" } } },
  { statusUpdate: { taskId, contextId: "c1", status: { state: "TASK_STATE_WORKING" } } },
  { artifactUpdate: { taskId, contextId: "c1", artifact: { artifactId: "a1", parts: [{ text: "out" }] } } },
  { statusUpdate: { taskId, contextId: "c1", status: { state: "TASK_STATE_COMPLETED" } } },
];

function waitForAbort(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

const handler: A2AServiceHandler = {
  async getTask(request, context) {
    calls.push({ method: "getTask", request, context });
    if (request.id === "leak") {
      const err = new Error("secret: password=hunter2");
      throw err;
    }
    const task = tasks.get(request.id);
    if (task === undefined) throw new TaskNotFoundError(undefined, { metadata: { taskId: request.id } });
    return task;
  },
  async sendMessage(request, context) {
    calls.push({ method: "sendMessage", request, context });
    // A call that takes long (an A2A blocking SendMessage on a long task), until the test lets it go.
    if (request.message?.messageId === "held") await held.promise;
    // An init shape, not a message.
    return {
      payload: {
        case: "task",
        value: { id: `task-${request.message?.messageId ?? ""}`, contextId: "c1", status: { state: TaskState.SUBMITTED } },
      },
    };
  },
  async listTasks(request, context) {
    calls.push({ method: "listTasks", request, context });
    return {};
  },
  async getExtendedAgentCard(request, context) {
    calls.push({ method: "getExtendedAgentCard", request, context });
    for (const uri of context.requestedExtensions) if (uri.startsWith("urn:act:")) context.activatedExtensions.add(uri);
    return { name: "Agent", version: "1" };
  },
  async *subscribeToTask(request, context) {
    calls.push({ method: "subscribeToTask", request, context });
    const task = tasks.get(request.id);
    if (task === undefined) throw new TaskNotFoundError(undefined, { metadata: { taskId: request.id } });
    yield create(StreamResponseSchema, { payload: { case: "task", value: task } });
  },
  async *sendStreamingMessage(request, context) {
    calls.push({ method: "sendStreamingMessage", request, context });
    for (const uri of context.requestedExtensions) if (uri.startsWith("urn:act:")) context.activatedExtensions.add(uri);
    const mode = request.message?.messageId ?? "";
    const events = streamEvents(`task-${mode}`);
    switch (mode) {
      case "a2a-before":
        throw new TaskNotCancelableError("cannot", { metadata: { taskId: "x" } });
      case "plain-before":
        throw new Error("secret-before");
      case "empty":
        return;
      case "plain-after":
        yield events[0]!;
        throw new Error("secret-after");
      case "a2a-after":
        yield events[0]!;
        throw new TaskNotCancelableError("cannot now", { metadata: { taskId: "task-a2a-after" } });
      case "unserializable":
        try {
          // A Struct value ProtoJSON cannot write (a Value with no kind).
          yield create(StreamResponseSchema, {
            payload: { case: "task", value: { ...events[0]!.payload.value, metadata: { a: undefined as never } } as Task },
          });
        } finally {
          probes.get(mode)?.finallyRan.resolve();
        }
        return;
      case "status-first":
        yield events[1]!;
        yield events[3]!;
        return;
      case "message-then-more":
        try {
          yield create(StreamResponseSchema, {
            payload: {
              case: "message",
              value: { messageId: "m1", role: Role.AGENT, parts: [{ content: { case: "text", value: "hi" } }] },
            },
          });
          yield events[0]!;
          yield events[3]!;
        } finally {
          probes.get(mode)?.finallyRan.resolve();
        }
        return;
      default:
        break;
    }
    const probe = probes.get(mode);
    if (probe === undefined) {
      for (const e of events) yield e;
      return;
    }
    if (mode === "leave-before-first") {
      // Its first event comes only once the client has left.
      try {
        probe.started.resolve();
        await waitForAbort(context.signal);
        probe.aborted.resolve(Date.now());
        yield events[0]!;
        yield events[3]!;
      } finally {
        probe.finallyRan.resolve();
      }
      return;
    }
    if (mode === "ignore-signal") {
      // A handler that never looks at its signal; only the test releases it.
      try {
        yield events[0]!;
        context.signal.addEventListener("abort", () => probe.aborted.resolve(Date.now()), { once: true });
        probe.started.resolve();
        await probe.release.promise;
        yield events[3]!;
      } finally {
        probe.finallyRan.resolve();
      }
      return;
    }
    try {
      yield events[0]!;
      probe.started.resolve();
      // Blocks until the client goes away or the test releases it.
      await Promise.race([waitForAbort(context.signal).then(() => probe.aborted.resolve(Date.now())), probe.release.promise]);
      yield events[1]!;
      yield events[3]!;
    } finally {
      probe.finallyRan.resolve();
    }
  },
};

// ---------------------------------------------------------------- servers

const servers: http.Server[] = [];

async function startServer(options: Parameters<typeof createA2AServiceJsonRpcListener>[1]): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(createA2AServiceJsonRpcListener(handler, options));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}` };
}

/**
 * What the base server's logger was told. The tests that throw on purpose
 * check their failure was reported there, with its method and request id
 * (and it stays out of the test output).
 */
const { logger, reports } = createReportLog();

/** The reports of the failure whose error said `text`. */
const reportsOf = (text: string) => reports.filter((r) => r.message === text);

beforeAll(async () => {
  ({ url: base } = await startServer({ heartbeatMs: 60, logger }));
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

beforeEach(() => {
  calls.length = 0;
  probes.clear();
});

const getTask = (id: unknown, params: unknown = { id: "t1" }) => ({ jsonrpc: "2.0", id, method: "GetTask", params });

// ---------------------------------------------------------------- D13 ids

describe("id echo (D13)", () => {
  test.each([0, "", -1, "x", 1.5, null])("id %p is echoed exactly", async (id) => {
    const r = await post(getTask(id));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual({ jsonrpc: "2.0", id, result: taskJson });
    expect(calls).toHaveLength(1);
  });

  test("id is echoed on an error too", async () => {
    const r = await post(getTask("e-1", { id: "nope" }));
    expect(r.json).toEqual(rpcError("e-1", -32001, "Task not found", [errorInfo("TASK_NOT_FOUND", { taskId: "nope" })]));
  });

  test.each([[{ a: 1 }], [true], [[1]]])("invalid id type %p -> -32600 with id null", async (id) => {
    const r = await post(getTask(id));
    expect(r.status).toBe(200);
    expect(r.json).toEqual(invalidRequest(null, "id must be a string, a number or null"));
    expect(calls).toHaveLength(0);
  });

  test("an id past double's range (1e400 reads as Infinity, written back as null) -> -32600, not an answer no call can be matched to", async () => {
    const r = await post(JSON.stringify(getTask("x")).replace('"id":"x"', '"id":1e400'));
    expect(r.status).toBe(200);
    expect(r.json).toEqual(invalidRequest(null, "id is a number too large to be sent back exactly; send it as a string"));
    expect(calls).toHaveLength(0);
  });

  test("an integer id past 2^53 (9007199254740993 reads as ...992) -> -32600, not an answer with another id", async () => {
    const r = await post(JSON.stringify(getTask("x")).replace('"id":"x"', '"id":9007199254740993'));
    expect(r.json).toEqual(invalidRequest(null, "id is a number too large to be sent back exactly; send it as a string"));
    expect(calls).toHaveLength(0);
    // The largest safe integer is sent back as it came.
    const safe = await post(JSON.stringify(getTask("x")).replace('"id":"x"', '"id":9007199254740991'));
    expect(safe.text).toContain('"id":9007199254740991');
  });
});

// ---------------------------------------------------------------- parse / framing

describe("parse errors (D13, Part B 10)", () => {
  test.each([
    ["invalid JSON", '{"jsonrpc":"2.0","id":1,'],
    ["empty body", ""],
    ["trailing garbage", '{"jsonrpc":"2.0","id":1,"method":"GetTask"} x'],
  ])("%s -> -32700, id null, HTTP 200", async (_, body) => {
    const r = await post(body);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual(rpcError(null, -32700, "the request body is not valid JSON"));
  });

  test("invalid UTF-8 -> -32700", async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}}'),
    ]);
    const r = await post(new Uint8Array(bytes));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual(rpcError(null, -32700, "the request body is not valid JSON"));
    expect(calls).toHaveLength(0);
  });
});

describe("invalid requests (D13)", () => {
  test.each([
    ["a number", "5"],
    ["a string", '"GetTask"'],
    ["null", "null"],
  ])("body %s -> -32600 id null", async (_, body) => {
    const r = await post(body);
    expect(r.status).toBe(200);
    expect(r.json).toEqual(invalidRequest(null, "a request must be a JSON object"));
  });

  test("jsonrpc missing -> -32600 with the id", async () => {
    const r = await post({ id: 7, method: "GetTask", params: { id: "t1" } });
    expect(r.json).toEqual(invalidRequest(7, 'jsonrpc must be "2.0"'));
  });

  test('jsonrpc "1.0" -> -32600 with the id', async () => {
    const r = await post({ jsonrpc: "1.0", id: "a", method: "GetTask", params: { id: "t1" } });
    expect(r.json).toEqual(invalidRequest("a", 'jsonrpc must be "2.0"'));
  });

  test.each([[1], [null], [["GetTask"]]])("method %p -> -32600 with the id", async (method) => {
    const r = await post({ jsonrpc: "2.0", id: 3, method, params: {} });
    expect(r.json).toEqual(invalidRequest(3, "method must be a string"));
  });

  test("method missing -> -32600", async () => {
    const r = await post({ jsonrpc: "2.0", id: 3 });
    expect(r.json).toEqual(invalidRequest(3, "method must be a string"));
  });

  test.each([["t1"], [5], [true], [null]])("params %p (not structured) -> -32600 with the id", async (params) => {
    const r = await post({ jsonrpc: "2.0", id: 4, method: "GetTask", params });
    expect(r.json).toEqual(invalidRequest(4, "params must be an object"));
    expect(calls).toHaveLength(0);
  });

  // JSON-RPC 2.0 allows by-position params; A2A's methods take named ones, so the params are what is wrong.
  test.each([[["t1"]], [[]]])("params by position %p -> -32602 with the id", async (params) => {
    const r = await post({ jsonrpc: "2.0", id: 4, method: "GetTask", params });
    expect(r.json).toEqual(rpcError(4, -32602, "params must be an object of named parameters, not an array"));
    expect(calls).toHaveLength(0);
  });

  test("an invalid request without id is still answered (with id null)", async () => {
    const r = await post({ jsonrpc: "2.0", method: 1 });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(invalidRequest(null, "method must be a string"));
  });
});

describe("methods and params (D13, Part B 10)", () => {
  test("unknown method -> -32601", async () => {
    const r = await post({ jsonrpc: "2.0", id: 1, method: "tasks/fetch", params: {} });
    expect(r.json).toEqual(rpcError(1, -32601, 'method "tasks/fetch" does not exist'));
  });

  // A 0.3 client's first call: the error says which 1.0 method to call instead (D5).
  test.each<[string, string]>([
    ["message/send", "SendMessage"],
    ["message/stream", "SendStreamingMessage"],
    ["tasks/get", "GetTask"],
    ["tasks/list", "ListTasks"],
    ["tasks/cancel", "CancelTask"],
    ["tasks/resubscribe", "SubscribeToTask"],
    ["tasks/pushNotificationConfig/set", "CreateTaskPushNotificationConfig"],
    ["tasks/pushNotificationConfig/get", "GetTaskPushNotificationConfig"],
    ["tasks/pushNotificationConfig/list", "ListTaskPushNotificationConfigs"],
    ["tasks/pushNotificationConfig/delete", "DeleteTaskPushNotificationConfig"],
    ["agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"],
  ])("0.3's %s -> -32601 naming %s", async (old, renamed) => {
    expect(A2AServiceJsonRpcMethods).toHaveProperty(renamed);
    const r = await post({ jsonrpc: "2.0", id: 1, method: old, params: {} });
    expect(r.json).toEqual(rpcError(1, -32601, `method "${old}" does not exist: it is A2A 0.3's name for ${renamed}; send A2A-Version: 1.0 and call ${renamed}`));
  });

  test("method names are case-sensitive", async () => {
    const r = await post({ jsonrpc: "2.0", id: 1, method: "getTask", params: { id: "t1" } });
    expect(r.json).toEqual(rpcError(1, -32601, 'method "getTask" does not exist'));
  });

  test("a method inherited from Object.prototype is not a method", async () => {
    const r = await post({ jsonrpc: "2.0", id: 1, method: "toString", params: {} });
    expect(r.json).toEqual(rpcError(1, -32601, 'method "toString" does not exist'));
  });

  test("missing params means {}: GetExtendedAgentCard reaches the handler", async () => {
    const r = await post({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard" });
    expect(r.status).toBe(200);
    // REQUIRED fields are written at their defaults (D11); capabilities is an unset message.
    expect(r.json).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: {
        name: "Agent",
        description: "",
        supportedInterfaces: [],
        version: "1",
        defaultInputModes: [],
        defaultOutputModes: [],
        skills: [],
      },
    });
    expect(calls.map((c) => c.method)).toEqual(["getExtendedAgentCard"]);
  });

  test("wrong field type -> -32602 naming the field (D10)", async () => {
    const r = await post(getTask(1, { id: "t1", historyLength: "abc" }));
    const reason = 'cannot decode field lf.a2a.v1.GetTaskRequest.history_length from JSON: expected number (int32), got "abc"';
    expect(r.json).toEqual(
      rpcError(1, -32602, `invalid params: invalid value for historyLength: ${reason}`, [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "historyLength", description: reason }],
        },
      ]),
    );
    expect(calls).toHaveLength(0);
  });

  test("a number for a string field -> -32602", async () => {
    const r = await post(getTask(1, { id: 5 }));
    const reason = "cannot decode field lf.a2a.v1.GetTaskRequest.id from JSON: expected string, got 5";
    expect(r.json).toEqual(rpcError(1, -32602, `invalid params: invalid value for id: ${reason}`, [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "id", description: reason }],
        },
      ]));
    expect(calls).toHaveLength(0);
  });

  test("an unknown enum name -> -32602 naming the field, not a silently unset field (D10)", async () => {
    const r = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: "m", role: "ROLE_ROBOT", parts: [{ text: "hi" }] } },
    });
    const reason = 'cannot decode enum lf.a2a.v1.Role from JSON: "ROLE_ROBOT"';
    expect(r.json).toEqual(
      rpcError(1, -32602, `invalid params: invalid value for message.role: ${reason}`, [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "message.role", description: reason }],
        },
      ]),
    );
    expect(calls).toHaveLength(0);
  });

  test("an unknown enum name in a filter is refused, not read as no filter (D10)", async () => {
    const r = await post({ jsonrpc: "2.0", id: 2, method: "ListTasks", params: { status: "TASK_STATE_BOGUS", unknownKey: 1 } });
    const reason = 'cannot decode enum lf.a2a.v1.TaskState from JSON: "TASK_STATE_BOGUS"';
    expect(r.json).toEqual(rpcError(2, -32602, `invalid params: invalid value for status: ${reason}`, [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "status", description: reason }],
        },
      ]));
    expect(calls).toHaveLength(0);
  });

  test("unknown fields nested in lists and messages are still ignored", async () => {
    const r = await post({
      jsonrpc: "2.0",
      id: 3,
      method: "SendMessage",
      params: { extra: true, message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi", bogus: 1 }], junk: {} } },
    });
    expect((r.json as { error?: unknown }).error).toBeUndefined();
    expect(calls).toHaveLength(1);
  });

  test("GetTask without id -> -32602 with a google.rpc.BadRequest (D11)", async () => {
    const r = await post(getTask(2, {}));
    expect(r.json).toEqual(
      rpcError(2, -32602, "missing required field: id", [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "id", description: "field is required" }],
        },
      ]),
    );
    expect(calls).toHaveLength(0);
  });

  test("SendMessage with an empty message -> one violation per field, camelCase paths", async () => {
    const r = await post({ jsonrpc: "2.0", id: 3, method: "SendMessage", params: { message: {} } });
    expect(r.json).toEqual(
      rpcError(3, -32602, "missing required fields: message.messageId, message.role, message.parts", [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [
            { field: "message.messageId", description: "field is required" },
            { field: "message.role", description: "field is required" },
            { field: "message.parts", description: "field is required" },
          ],
        },
      ]),
    );
  });

  test("SendMessage without message -> violation `message`", async () => {
    const r = await post({ jsonrpc: "2.0", id: 3, method: "SendMessage" });
    expect(r.json).toEqual(
      rpcError(3, -32602, "missing required field: message", [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "message", description: "field is required" }],
        },
      ]),
    );
  });

  test("unknown fields are ignored (spec 5.7)", async () => {
    const r = await post(getTask(1, { id: "t1", bogus: { deep: [1, 2] }, other: 1 }));
    expect(r.json).toEqual({ jsonrpc: "2.0", id: 1, result: taskJson });
  });

  test("SendMessage result from an init shape", async () => {
    const r = await post({
      jsonrpc: "2.0",
      id: 9,
      method: "SendMessage",
      params: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] } },
    });
    expect(r.json).toEqual({
      jsonrpc: "2.0",
      id: 9,
      result: { task: { id: "task-m1", contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" } } },
    });
  });

  test("ListTasks keeps REQUIRED fields at their defaults", async () => {
    const r = await post({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} });
    expect(r.json).toEqual({ jsonrpc: "2.0", id: 1, result: { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 } });
  });
});

// ---------------------------------------------------------------- errors (Part B 5.3)

describe("handler errors (D3, D4, Part B 5.3)", () => {
  test("TaskNotFoundError -> -32001 with ErrorInfo and metadata", async () => {
    const r = await post(getTask(1, { id: "zzz" }));
    expect(r.status).toBe(200);
    expect(r.json).toEqual(rpcError(1, -32001, "Task not found", [errorInfo("TASK_NOT_FOUND", { taskId: "zzz" })]));
  });

  test("a plain Error -> -32603 without its message or stack", async () => {
    const r = await post(getTask(1, { id: "leak" }));
    expect(r.status).toBe(200);
    expect(r.json).toEqual(rpcError(1, -32603, "Internal error"));
    expect(r.text).not.toContain("secret");
    expect(r.text).not.toContain("hunter2");
    expect(r.text).not.toMatch(/\bat\s|\.ts:\d+/);
    // Written on the server's side instead, with what to find it by.
    expect(reportsOf("secret: password=hunter2")).toEqual([{ logged: "handler failed", binding: "JSONRPC", method: "GetTask", requestId: "1", message: "secret: password=hunter2" }]);
  });

  test("a handler method left out -> UnsupportedOperation -32004 (D18)", async () => {
    const r = await post({ jsonrpc: "2.0", id: 1, method: "CancelTask", params: { id: "t1" } });
    expect(r.json).toEqual(
      rpcError(1, -32004, "CancelTask is not supported by this agent", [errorInfo("UNSUPPORTED_OPERATION")]),
    );
  });

  // D18: the push-config RPCs are gated by capabilities.pushNotifications, so a
  // handler without them answers as an agent without that capability does.
  test("a push-config method left out -> PushNotificationNotSupported -32003", async () => {
    const res = await post({ jsonrpc: "2.0", id: 1, method: "GetTaskPushNotificationConfig", params: { taskId: "t1", id: "p" } });
    expect(res.json).toEqual(
      rpcError(1, -32003, "GetTaskPushNotificationConfig is not supported by this agent", [errorInfo("PUSH_NOTIFICATION_NOT_SUPPORTED")]),
    );
  });

  test("a streaming method left out -> UnsupportedOperation as application/json, not SSE", async () => {
    const local = http.createServer(createA2AServiceJsonRpcListener({}));
    servers.push(local);
    await new Promise<void>((resolve) => local.listen(0, "127.0.0.1", resolve));
    const res = await post(
      { jsonrpc: "2.0", id: 1, method: "SubscribeToTask", params: { id: "t1" } },
      { base: `http://127.0.0.1:${(local.address() as AddressInfo).port}` },
    );
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.json).toEqual(rpcError(1, -32004, "SubscribeToTask is not supported by this agent", [errorInfo("UNSUPPORTED_OPERATION")]));
  });
});

// ---------------------------------------------------------------- notifications and batches

describe("notifications (D13)", () => {
  test("a notification gets 204 with an empty body, and the handler ran", async () => {
    const r = await post({
      jsonrpc: "2.0",
      method: "SendMessage",
      params: { message: { messageId: "n1", role: "ROLE_USER", parts: [{ text: "hi" }] } },
    });
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect(calls.map((c) => c.method)).toEqual(["sendMessage"]);
  });

  test("a notification's 204 does not wait for its call (alone, or in a batch whose requests are answered), and the call runs on", async () => {
    const gate = holdSendMessage();
    try {
      const notification = { jsonrpc: "2.0", method: "SendMessage", params: { message: { messageId: "held", role: "ROLE_USER", parts: [{ text: "hi" }] } } };
      const alone = await post(notification);
      expect([alone.status, alone.text]).toEqual([204, ""]);
      const batch = await post([getTask(1), notification]);
      expect([batch.status, batch.json]).toEqual([200, [{ jsonrpc: "2.0", id: 1, result: taskJson }]]);
      // Both calls are still held: nothing waited for them.
      expect(calls.filter((c) => c.method === "sendMessage")).toHaveLength(2);
    } finally {
      gate.release();
    }
  });

  test("a notification whose handler fails is still not answered", async () => {
    const r = await post({ jsonrpc: "2.0", method: "GetTask", params: { id: "missing" } });
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect(calls).toHaveLength(1);
  });

  test("a notification with invalid params is not answered", async () => {
    const r = await post({ jsonrpc: "2.0", method: "GetTask", params: {} });
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
  });

  // JSON-RPC 2.0 §4.2 lets params be an array: such a request without id is a notification too.
  test("a notification with params by position is not answered, alone or in a batch", async () => {
    const alone = await post({ jsonrpc: "2.0", method: "GetTask", params: ["t1"] });
    expect([alone.status, alone.text]).toEqual([204, ""]);
    const batch = await post([
      { jsonrpc: "2.0", method: "GetTask", params: ["t1"] },
      { jsonrpc: "2.0", method: "ListTasks", params: [] },
    ]);
    expect([batch.status, batch.text]).toEqual([204, ""]);
    expect(calls).toHaveLength(0);
  });

  // Params that are neither an object nor an array make no request at all: -32600, answered id or not, whatever the method.
  test.each(["GetTask", "NoSuchMethod"])("params that are a string are -32600, answered though there is no id (%s)", async (method) => {
    const r = await post({ jsonrpc: "2.0", method, params: "x" });
    expect(r.json).toEqual(invalidRequest(null, "params must be an object"));
  });

  test("an unknown method is -32601 whatever its params", async () => {
    const r = await post({ jsonrpc: "2.0", id: 1, method: "NoSuchMethod", params: [] });
    expect(r.json).toEqual(rpcError(1, -32601, 'method "NoSuchMethod" does not exist'));
  });

  // JSON-RPC 2.0 §4.1: "The Server MUST NOT reply to a Notification". A
  // well-formed request without id naming an unknown method is a notification.
  test("a notification for an unknown method is not answered", async () => {
    const r = await post({ jsonrpc: "2.0", method: "NoSuchMethod", params: {} });
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
  });
});

describe("batches (D13)", () => {
  test("mixed requests, notifications and invalid items are answered per element, in order", async () => {
    const r = await post([
      getTask(1),
      { jsonrpc: "2.0", method: "ListTasks", params: {} },
      getTask("two", { id: "zzz" }),
      42,
      { jsonrpc: "2.0", id: 3, method: "Nope" },
      { jsonrpc: "1.0", id: 4, method: "GetTask" },
      { jsonrpc: "2.0", id: 5, method: "GetTask", params: {} },
    ]);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual([
      { jsonrpc: "2.0", id: 1, result: taskJson },
      rpcError("two", -32001, "Task not found", [errorInfo("TASK_NOT_FOUND", { taskId: "zzz" })]),
      invalidRequest(null, "a request must be a JSON object"),
      rpcError(3, -32601, 'method "Nope" does not exist'),
      invalidRequest(4, 'jsonrpc must be "2.0"'),
      rpcError(5, -32602, "missing required field: id", [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "id", description: "field is required" }],
        },
      ]),
    ]);
    expect(calls.map((c) => c.method).sort()).toEqual(["getTask", "getTask", "listTasks"]);
  });

  test("an all-notification batch -> 204, every handler ran", async () => {
    const r = await post([
      { jsonrpc: "2.0", method: "ListTasks", params: {} },
      { jsonrpc: "2.0", method: "GetTask", params: { id: "t1" } },
    ]);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect(calls.map((c) => c.method).sort()).toEqual(["getTask", "listTasks"]);
  });

  test("an empty batch -> one -32600 with id null (not an array)", async () => {
    const r = await post([]);
    expect(r.status).toBe(200);
    expect(r.json).toEqual(invalidRequest(null, "an empty batch is not a request"));
  });

  test("a streaming method inside a batch -> -32600 for that element only", async () => {
    const r = await post([
      {
        jsonrpc: "2.0",
        id: "s",
        method: "SendStreamingMessage",
        params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] } },
      },
      getTask(2),
    ]);
    expect(r.json).toEqual([
      invalidRequest("s", "SendStreamingMessage streams its response and cannot be called in a batch"),
      { jsonrpc: "2.0", id: 2, result: taskJson },
    ]);
    expect(calls.map((c) => c.method)).toEqual(["getTask"]);
  });

  test("a batch over the bound (100, D31) -> one -32600 with id null, and nothing of it runs", async () => {
    const r = await post(Array.from({ length: 10_000 }, (_, i) => getTask(i)));
    expect(r.status).toBe(200);
    expect(r.json).toEqual(invalidRequest(null, "a batch may hold at most 100 requests; this one holds 10000"));
    expect(calls).toHaveLength(0);
  });

  test("a batch at the bound runs every element", async () => {
    const r = await post(Array.from({ length: 100 }, (_, i) => getTask(i)));
    expect((r.json as unknown[]).length).toBe(100);
    expect(calls).toHaveLength(100);
  });

  test("a batch of one invalid item is answered as an array", async () => {
    const r = await post([1]);
    expect(r.json).toEqual([invalidRequest(null, "a request must be a JSON object")]);
  });
});

// ---------------------------------------------------------------- HTTP level (D9)

describe("HTTP method and media type (D9, Part B 10)", () => {
  test.each(["GET", "PUT", "DELETE"])("%s -> 405 with Allow: POST and a JSON-RPC error body", async (method) => {
    const r = await post(getTask(1), { method });
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("POST");
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual(invalidRequest(null, "JSON-RPC requests are sent with POST"));
  });

  test.each(["text/plain", "application/x-www-form-urlencoded", "application/jsonx"])(
    "content-type %s -> 415 with a JSON-RPC error body",
    async (type) => {
      const r = await post(getTask(1), { headers: { "content-type": type } });
      expect(r.status).toBe(415);
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(r.json).toEqual(
        rpcError(null, -32005, "the request body must be application/json", [errorInfo("CONTENT_TYPE_NOT_SUPPORTED")]),
      );
      expect(calls).toHaveLength(0);
    },
  );

  test("a request without content-type -> 415", async () => {
    const res = await rawPost(base, [JSON.stringify(getTask(1))], { "content-type": undefined });
    expect(res.status).toBe(415);
    expect(JSON.parse(res.text)).toEqual(
      rpcError(null, -32005, "the request body must be application/json", [errorInfo("CONTENT_TYPE_NOT_SUPPORTED")]),
    );
  });

  test.each(["application/a2a+json", "application/json; charset=utf-8", "Application/JSON", "application/vnd.x+json"])(
    "content-type %s is accepted; the answer is application/json",
    async (type) => {
      const r = await post(getTask(1), { headers: { "content-type": type } });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(r.json).toEqual({ jsonrpc: "2.0", id: 1, result: taskJson });
    },
  );
});

// ---------------------------------------------------------------- body limit (D16)

describe("body limit (D16)", () => {
  let small = "";
  beforeAll(async () => {
    ({ url: small } = await startServer({ bodyLimit: 1024, heartbeatMs: 0 }));
  });

  const padded = (size: number) => {
    const json = JSON.stringify(getTask(1));
    return json + " ".repeat(size - Buffer.byteLength(json));
  };
  const tooLarge = (limit: number) => invalidRequest(null, `request body exceeds the limit of ${limit} bytes`);

  test("a body of exactly the limit passes", async () => {
    const r = await post(padded(1024), { base: small });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ jsonrpc: "2.0", id: 1, result: taskJson });
  });

  test("one byte over -> 413 with a JSON-RPC error body", async () => {
    const r = await post(padded(1025), { base: small });
    expect(r.status).toBe(413);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual(tooLarge(1024));
    expect(calls).toHaveLength(0);
  });

  test("a chunked body (no content-length) of exactly the limit passes", async () => {
    const body = padded(1024);
    const res = await rawPost(small, [body.slice(0, 500), body.slice(500)], { "transfer-encoding": "chunked" });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ jsonrpc: "2.0", id: 1, result: taskJson });
  });

  test("a chunked body one byte over -> 413", async () => {
    const body = padded(1025);
    const res = await rawPost(small, [body.slice(0, 600), body.slice(600)], { "transfer-encoding": "chunked" });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toEqual(tooLarge(1024));
  });

  test("the default limit is 4 MiB: 4 MiB + 1 byte -> 413", async () => {
    const r = await post(padded(4 * 1024 * 1024 + 1));
    expect(r.status).toBe(413);
    expect(r.json).toEqual(tooLarge(4 * 1024 * 1024));
  });

  test("the default limit is 4 MiB: exactly 4 MiB passes", async () => {
    const r = await post(padded(4 * 1024 * 1024));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ jsonrpc: "2.0", id: 1, result: taskJson });
  });
});

// ---------------------------------------------------------------- service parameters (D5, Part B 3)

describe("A2A-Version (D5, Part B 3, 4)", () => {
  const unsupported = (id: unknown, version: string) =>
    rpcError(id, -32009, `Protocol version ${version} is not supported. Supported: 1.0. Send A2A-Version: 1.0 with each request`, [errorInfo("VERSION_NOT_SUPPORTED")]);

  test("missing A2A-Version means 0.3 -> -32009 listing the supported versions", async () => {
    const r = await post(getTask(1), { headers: { "a2a-version": undefined } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(unsupported(1, "0.3"));
    expect(calls).toHaveLength(0);
  });

  test("empty A2A-Version means 0.3", async () => {
    const r = await post(getTask(1), { headers: { "a2a-version": "" } });
    expect(r.json).toEqual(unsupported(1, "0.3"));
  });

  test("A2A-Version: 0.5 is rejected", async () => {
    const r = await post(getTask(1), { headers: { "a2a-version": "0.5" } });
    expect(r.json).toEqual(unsupported(1, "0.5"));
  });

  test("A2A-Version: 1.0.3 is accepted (patch ignored) and the context says 1.0", async () => {
    const r = await post({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard" }, { headers: { "a2a-version": "1.0.3" } });
    expect(r.status).toBe(200);
    expect((r.json as { result?: unknown }).result).toBeDefined();
    expect(calls[0]?.context.protocolVersion).toBe("1.0");
  });

  test("?A2A-Version=1.0 in the URL is accepted when there is no header", async () => {
    const r = await post(getTask(1), { headers: { "a2a-version": undefined }, path: "/?A2A-Version=1.0" });
    expect(r.json).toEqual({ jsonrpc: "2.0", id: 1, result: taskJson });
  });

  test("the header wins over the query", async () => {
    const r = await post(getTask(1), { headers: { "a2a-version": "0.3" }, path: "/?A2A-Version=1.0" });
    expect(r.json).toEqual(unsupported(1, "0.3"));
  });

  test("a version error for a streaming method is a plain application/json error", async () => {
    const r = await post(
      {
        jsonrpc: "2.0",
        id: 1,
        method: "SendStreamingMessage",
        params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] } },
      },
      { headers: { "a2a-version": "2.0" } },
    );
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual(unsupported(1, "2.0"));
    expect(calls).toHaveLength(0);
  });

  test("in a batch every request gets the version error; notifications none", async () => {
    const r = await post([getTask(1), { jsonrpc: "2.0", method: "ListTasks" }, getTask(2)], {
      headers: { "a2a-version": "0.3" },
    });
    expect(r.json).toEqual([unsupported(1, "0.3"), unsupported(2, "0.3")]);
    expect(calls).toHaveLength(0);
  });
});

describe("A2A-Extensions and tenant (Part B 3)", () => {
  test("A2A-Extensions: `a, b ,a` reaches the handler as [a, b]", async () => {
    const r = await post({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard" }, { headers: { "a2a-extensions": "a, b ,a" } });
    expect(r.status).toBe(200);
    expect(calls[0]?.context.requestedExtensions).toEqual(["a", "b"]);
    expect(r.headers.get("a2a-extensions")).toBeNull();
  });

  test("activated extensions are echoed in the A2A-Extensions response header", async () => {
    const r = await post(
      { jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard" },
      { headers: { "a2a-extensions": "urn:act:one, urn:other,urn:act:two" } },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get("a2a-extensions")).toBe("urn:act:one, urn:act:two");
  });

  test("activated extensions are echoed on a notification's 204 too (those activated before the call first waits: the 204 does not wait for it)", async () => {
    const r = await post({ jsonrpc: "2.0", method: "GetExtendedAgentCard" }, { headers: { "a2a-extensions": "urn:act:n" } });
    expect(r.status).toBe(204);
    expect(r.headers.get("a2a-extensions")).toBe("urn:act:n");
  });

  test("params.tenant reaches context.tenant", async () => {
    await post({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard", params: { tenant: "acme" } });
    await post({ jsonrpc: "2.0", id: 2, method: "GetExtendedAgentCard", params: {} });
    expect(calls.map((c) => c.context.tenant)).toEqual(["acme", undefined]);
    expect(calls[0]?.context.binding).toBe("JSONRPC");
  });
});

// ---------------------------------------------------------------- SSE (D14, Part B 7)

const streamCall = (id: unknown, messageId: string) => ({
  jsonrpc: "2.0",
  id,
  method: "SendStreamingMessage",
  params: { message: { messageId, role: "ROLE_USER", parts: [{ text: "go" }] } },
});

describe("SSE (D14, Part B 7)", () => {
  test("a stream: SSE headers, one full envelope per data line, request id echoed", async () => {
    const r = await post(streamCall("s-1", "ok"));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    expect(r.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(r.headers.get("x-accel-buffering")).toBe("no");
    expect(parseSse(r.text).data).toEqual(streamEventsJson("task-ok").map((result) => ({ jsonrpc: "2.0", id: "s-1", result })));
  });

  test("id 0 is echoed in every event", async () => {
    const r = await post(streamCall(0, "ok"));
    const { data } = parseSse(r.text);
    expect(data).toHaveLength(4);
    for (const e of data) expect((e as { id: unknown }).id).toBe(0);
  });

  test("SubscribeToTask streams the task snapshot with id null", async () => {
    const r = await post({ jsonrpc: "2.0", id: null, method: "SubscribeToTask", params: { id: "t1" } });
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    expect(parseSse(r.text).data).toEqual([{ jsonrpc: "2.0", id: null, result: { task: taskJson } }]);
  });

  test("a streaming notification -> 204, the handler is not run", async () => {
    const r = await post({ jsonrpc: "2.0", method: "SubscribeToTask", params: { id: "t1" } });
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
  });

  test("an A2A error before the first event is a normal application/json error", async () => {
    const r = await post({ jsonrpc: "2.0", id: 5, method: "SubscribeToTask", params: { id: "gone" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual(rpcError(5, -32001, "Task not found", [errorInfo("TASK_NOT_FOUND", { taskId: "gone" })]));
  });

  test("invalid params on a streaming method is a normal application/json error", async () => {
    const r = await post({ jsonrpc: "2.0", id: 5, method: "SubscribeToTask", params: {} });
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual(
      rpcError(5, -32602, "missing required field: id", [
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "id", description: "field is required" }],
        },
      ]),
    );
  });

  test("a thrown A2AError before the first yield -> application/json, with extensions echoed", async () => {
    const r = await post(streamCall(6, "a2a-before"), { headers: { "a2a-extensions": "urn:act:x" } });
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("a2a-extensions")).toBe("urn:act:x");
    expect(r.json).toEqual(rpcError(6, -32002, "cannot", [errorInfo("TASK_NOT_CANCELABLE", { taskId: "x" })]));
  });

  test("a plain Error before the first yield -> -32603 without the message", async () => {
    const r = await post(streamCall(7, "plain-before"));
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual(rpcError(7, -32603, "Internal error"));
    expect(r.text).not.toContain("secret");
    expect(reportsOf("secret-before")).toEqual([{ logged: "handler failed", binding: "JSONRPC", method: "SendStreamingMessage", requestId: "7", message: "secret-before" }]);
  });

  test("a stream that ends before its first event -> -32603 application/json", async () => {
    const r = await post(streamCall(8, "empty"));
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual(rpcError(8, -32603, "the stream ended before its first event"));
  });

  test("an error after the first event -> one final data: error envelope, then close", async () => {
    const r = await post(streamCall(9, "plain-after"));
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    expect(parseSse(r.text).data).toEqual([
      { jsonrpc: "2.0", id: 9, result: streamEventsJson("task-plain-after")[0] },
      rpcError(9, -32603, "Internal error"),
    ]);
    expect(r.text).not.toContain("secret");
    expect(reportsOf("secret-after")).toEqual([{ logged: "handler failed", binding: "JSONRPC", method: "SendStreamingMessage", requestId: "9", message: "secret-after" }]);
  });

  test("an A2AError after the first event keeps its code and ErrorInfo; extensions echoed in the SSE headers", async () => {
    const r = await post(streamCall("e", "a2a-after"), { headers: { "a2a-extensions": "urn:act:s" } });
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    expect(r.headers.get("a2a-extensions")).toBe("urn:act:s");
    expect(parseSse(r.text).data).toEqual([
      { jsonrpc: "2.0", id: "e", result: streamEventsJson("task-a2a-after")[0] },
      rpcError("e", -32002, "cannot now", [errorInfo("TASK_NOT_CANCELABLE", { taskId: "task-a2a-after" })]),
    ]);
  });

  test("heartbeats `: keep-alive` are sent while the handler is quiet", async () => {
    const probe = newProbe();
    probes.set("hb", probe);
    const res = await fetch(base, { method: "POST", headers: buildHeaders(), body: JSON.stringify(streamCall(1, "hb")) });
    const sse = new SseReader(res.body!.getReader());
    expect(await sse.next()).toBe(`data: ${JSON.stringify({ jsonrpc: "2.0", id: 1, result: streamEventsJson("task-hb")[0] })}`);
    // The server's heartbeat is 60 ms; the handler sends nothing until released.
    expect(await within(sse.next(), 1000, "a heartbeat")).toBe(": keep-alive");
    expect(await within(sse.next(), 1000, "a second heartbeat")).toBe(": keep-alive");
    probe.release.resolve();
    const rest: unknown[] = [];
    for (let e = await sse.nextData(); e !== undefined; e = await sse.nextData()) rest.push(e);
    expect(rest).toEqual([streamEventsJson("task-hb")[1], streamEventsJson("task-hb")[3]].map((result) => ({ jsonrpc: "2.0", id: 1, result })));
    await within(probe.finallyRan.promise, 1000, "the generator's finally");
  });

  test("heartbeatMs 0 disables heartbeats", async () => {
    const { url } = await startServer({ heartbeatMs: 0 });
    const r = await post(streamCall(1, "ok"), { base: url });
    expect(parseSse(r.text).comments).toEqual([]);
  });
});

describe("client disconnect mid-stream (D14)", () => {
  /** A fresh server per test, so its connection count is only this test's. */
  async function isolated(): Promise<{ server: http.Server; url: string; closed: Promise<void> }> {
    const { server, url } = await startServer({ heartbeatMs: 20 });
    // Resolves when the socket that carried the (first) request is closed.
    const closed = new Promise<void>((resolve) => {
      server.once("request", (req: http.IncomingMessage) => {
        const socket: Socket = req.socket;
        if (socket.destroyed) resolve();
        else socket.once("close", () => resolve());
      });
    });
    return { server, url, closed };
  }

  const connections = (server: http.Server) =>
    new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

  test("aborting the fetch aborts the handler's signal and runs its finally", async () => {
    const { url, closed } = await isolated();
    const probe = newProbe();
    probes.set("block", probe);
    const client = new AbortController();
    const res = await fetch(url, {
      method: "POST",
      headers: buildHeaders(),
      body: JSON.stringify(streamCall(1, "block")),
      signal: client.signal,
    });
    const sse = new SseReader(res.body!.getReader());
    expect(await sse.nextData()).toEqual({ jsonrpc: "2.0", id: 1, result: streamEventsJson("task-block")[0] });
    await within(probe.started.promise, 1000, "the handler to block");
    const abortedAt = Date.now();
    client.abort();
    const seen = await within(probe.aborted.promise, 1000, "the handler's signal to abort");
    expect(seen - abortedAt).toBeLessThan(1000);
    await within(probe.finallyRan.promise, 1000, "the generator's finally");
    await within(closed, 1000, "the server socket to close");
    // undici may hold a second, idle pooled connection open, so the count is
    // not checked here; the node:http test below (agent: false) checks it.
  });

  test("destroying the socket aborts the handler's signal and runs its finally", async () => {
    const { server, url, closed } = await isolated();
    const probe = newProbe();
    probes.set("block", probe);
    const firstData = deferred<string>();
    const req = http.request(url, { method: "POST", agent: false, headers: buildHeaders() }, (res) => {
      expect(res.headers["content-type"]).toBe("text/event-stream");
      res.setEncoding("utf8");
      let buf = "";
      res.on("data", (chunk: string) => {
        buf += chunk;
        if (buf.includes("\n\n")) firstData.resolve(buf);
      });
      res.on("error", () => undefined);
    });
    req.on("error", () => undefined);
    req.end(JSON.stringify(streamCall("d", "block")));
    expect(await within(firstData.promise, 1000, "the first event")).toMatch(/^data: \{"jsonrpc":"2.0","id":"d","result":\{"task"/);
    await within(probe.started.promise, 1000, "the handler to block");
    const abortedAt = Date.now();
    req.destroy();
    const seen = await within(probe.aborted.promise, 1000, "the handler's signal to abort");
    expect(seen - abortedAt).toBeLessThan(1000);
    await within(probe.finallyRan.promise, 1000, "the generator's finally");
    await within(closed, 1000, "the server socket to close");
    expect(await connections(server)).toBe(0);
  });

  // The stream is answered only after the client left: the adapter must
  // still end the handler's generator, parked at its first yield.
  test("a client that leaves before the first event: the signal aborts and the generator's finally runs", async () => {
    const { server, url, closed } = await isolated();
    const probe = newProbe();
    probes.set("leave-before-first", probe);
    const req = http.request(url, { method: "POST", agent: false, headers: buildHeaders() });
    req.on("error", () => undefined);
    req.end(JSON.stringify(streamCall("l", "leave-before-first")));
    await within(probe.started.promise, 1000, "the handler to start");
    req.destroy();
    await within(probe.aborted.promise, 1000, "the handler's signal to abort");
    await within(probe.finallyRan.promise, 1000, "the generator's finally");
    await within(closed, 1000, "the server socket to close");
    expect(await connections(server)).toBe(0);
  });

  test("a disconnect during a unary call aborts its signal", async () => {
    const { url } = await isolated();
    const sawAbort = deferred<boolean>();
    const entered = deferred();
    const local = http.createServer(
      createA2AServiceJsonRpcListener({
        async getTask(_req, context) {
          entered.resolve();
          await waitForAbort(context.signal);
          sawAbort.resolve(true);
          return { id: "x" };
        },
      }),
    );
    servers.push(local);
    await new Promise<void>((resolve) => local.listen(0, "127.0.0.1", resolve));
    void url;
    const client = new AbortController();
    const pending = fetch(`http://127.0.0.1:${(local.address() as AddressInfo).port}`, {
      method: "POST",
      headers: buildHeaders(),
      body: JSON.stringify(getTask(1)),
      signal: client.signal,
    }).catch(() => undefined);
    await within(entered.promise, 1000, "the handler to start");
    client.abort();
    expect(await within(sawAbort.promise, 1000, "the unary handler's signal")).toBe(true);
    await pending;
  });

  // D14: after a disconnect the adapter must stop writing at once, not when
  // the handler's pending next() settles: a handler that does not watch its
  // signal would otherwise keep the heartbeat writing into the destroyed
  // response (and the timer alive) for as long as it blocks.
  test("no heartbeat is written after the client disconnected, even if the handler ignores its signal", async () => {
    const probe = newProbe();
    probes.set("ignore-signal", probe);
    const writeAfterClose = deferred<string>();
    const listener = createA2AServiceJsonRpcListener(handler, { heartbeatMs: 20 });
    const local = http.createServer((req, res) => {
      const write = res.write.bind(res) as (...args: unknown[]) => boolean;
      res.write = ((...args: unknown[]) => {
        if (res.destroyed) writeAfterClose.resolve(String(args[0]));
        return write(...args);
      }) as typeof res.write;
      listener(req, res);
    });
    servers.push(local);
    await new Promise<void>((resolve) => local.listen(0, "127.0.0.1", resolve));
    const client = new AbortController();
    try {
      const res = await fetch(`http://127.0.0.1:${(local.address() as AddressInfo).port}`, {
        method: "POST",
        headers: buildHeaders(),
        body: JSON.stringify(streamCall(1, "ignore-signal")),
        signal: client.signal,
      });
      await new SseReader(res.body!.getReader()).nextData();
      await within(probe.started.promise, 1000, "the handler to block");
      client.abort();
      await within(probe.aborted.promise, 1000, "the handler's signal to abort");
      // A negative check needs a bounded wait: 10 heartbeat periods.
      await expect(within(writeAfterClose.promise, 200, "a write after close")).rejects.toThrow(/timed out/);
    } finally {
      probe.release.resolve();
      await within(probe.finallyRan.promise, 1000, "the generator's finally");
    }
  });
});

describe("stream content checks", () => {
  // The first event is serialized before the SSE headers are written, so an
  // event ProtoJSON cannot write is a plain error response, and the handler's
  // generator is released (its finally runs), not an empty 200 stream.
  test("an event that cannot be serialized yields a -32603 error, not an empty stream", async () => {
    const probe = newProbe();
    probes.set("unserializable", probe);
    const r = await post(streamCall(11, "unserializable"));
    const expected = rpcError(11, -32603, "Internal error");
    expect(r.text).not.toBe("");
    if (r.headers.get("content-type") === "application/json") expect(r.json).toEqual(expected);
    else expect(parseSse(r.text).data).toEqual([expected]);
    await within(probe.finallyRan.promise, 1000, "the generator's finally");
  });

  // D15: the first event must be a task or a message, else InvalidAgentResponse.
  test("a stream whose first event is a statusUpdate -> InvalidAgentResponse -32006 (D15)", async () => {
    const r = await post(streamCall(12, "status-first"));
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.json).toEqual(
      rpcError(12, -32006, "the first event of a stream must be a task or a message, not statusUpdate", [
        errorInfo("INVALID_AGENT_RESPONSE"),
      ]),
    );
  });

  // D15: a message-only stream is that one message; anything after it ends the
  // stream with InvalidAgentResponse, and the handler is released.
  test("an event after a message -> one final InvalidAgentResponse event, then close (D15)", async () => {
    const probe = newProbe();
    probes.set("message-then-more", probe);
    const r = await post(streamCall(13, "message-then-more"));
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    expect(parseSse(r.text).data).toEqual([
      { jsonrpc: "2.0", id: 13, result: { message: { messageId: "m1", role: "ROLE_AGENT", parts: [{ text: "hi" }] } } },
      rpcError(13, -32006, "the stream continued after a message (event 1 is task)", [errorInfo("INVALID_AGENT_RESPONSE")]),
    ]);
    await within(probe.finallyRan.promise, 1000, "the generator's finally");
  });
});
