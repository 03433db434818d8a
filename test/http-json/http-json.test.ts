/**
 * The HTTP+JSON binding over real sockets: node:http servers running the
 * generated listener (and one hand-built endpoint), raw requests through
 * node:http (full control over headers and the raw path) and fetch.
 *
 * Checklist: D1, D2, D4, D5, D6, D7, D8, D9, D11, D12, D14, D15, D16;
 * Part B 1.1, 5, 7, 12.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { create, toJson, type DescMessage, type Message } from "@bufbuild/protobuf";
import { A2AError, createNodeListener, type A2ACallContext, type A2AErrorOptions } from "protoc-gen-a2a/runtime";
import { createHttpJsonEndpoint, withA2AProfile, type A2AHttpJsonOptions, type HttpRuleSpec } from "protoc-gen-a2a/runtime/internal";
import { createA2AServiceHttpJsonListener } from "../../generated/a2a_http.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { A2AServiceMethods, A2AServiceRequiredFields } from "../../generated/a2a_methods.js";
import {
  A2AErrorTable,
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  InternalError,
  InvalidAgentResponseError,
  InvalidParamsError,
  InvalidRequestError,
  MethodNotFoundError,
  ParseErrorError,
  PermissionDeniedError,
  PushNotificationNotSupportedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from "../../runtime/a2a/errors.js";
import { Role, StreamResponseSchema, TaskState, type StreamResponse } from "../../generated/a2a_pb.js";
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
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  readonly json: unknown;
}

interface RequestOptions {
  /** Header values; `undefined` removes a default header. */
  readonly headers?: Record<string, string | undefined>;
  /** A JSON value (stringified), a raw string, or chunks written one by one (chunked encoding). */
  readonly body?: unknown;
  readonly chunks?: readonly string[];
  readonly base?: string;
}

let base = "";

/**
 * One request through node:http with agent: false: the path goes on the
 * wire exactly as given, and only the headers named here are sent (no
 * default Accept). Sends `A2A-Version: 1.0`, and `Content-Type:
 * application/json` when there is a body, unless overridden.
 */
function request(method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const hasBody = options.body !== undefined || options.chunks !== undefined;
  const all: Record<string, string | undefined> = {
    "a2a-version": "1.0",
    ...(hasBody ? { "content-type": "application/json" } : {}),
    ...options.headers,
  };
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(all)) if (v !== undefined) headers[k] = v;
  const payload = options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  if (payload !== undefined) headers["content-length"] = String(Buffer.byteLength(payload));
  return new Promise((resolve, reject) => {
    const req = http.request((options.base ?? base) + path, { method, agent: false, headers }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => {
        const text = Buffer.concat(parts).toString("utf8");
        let json: unknown;
        try {
          json = text === "" ? undefined : JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    if (options.chunks !== undefined) for (const c of options.chunks) req.write(c);
    req.end(payload);
  });
}

/** Reads an SSE body frame by frame (a frame ends with a blank line). */
class SseReader {
  private buffer = "";
  constructor(private readonly res: http.IncomingMessage) {
    res.setEncoding("utf8");
  }

  private chunk(): Promise<string | undefined> {
    return new Promise((resolve) => {
      const onData = (c: string) => done(c);
      const onEnd = () => done(undefined);
      const done = (c: string | undefined) => {
        this.res.off("data", onData);
        this.res.off("end", onEnd);
        this.res.off("close", onEnd);
        this.res.pause();
        resolve(c);
      };
      this.res.on("data", onData);
      this.res.once("end", onEnd);
      this.res.once("close", onEnd);
      this.res.resume();
    });
  }

  /** The next raw frame without its trailing blank line, or undefined at the end of the stream. */
  async next(): Promise<string | undefined> {
    for (;;) {
      const end = this.buffer.indexOf("\n\n");
      if (end >= 0) {
        const frame = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        return frame;
      }
      const c = await this.chunk();
      if (c === undefined) return this.buffer === "" ? undefined : this.buffer;
      this.buffer += c;
    }
  }
}

/** Opens a streaming request and resolves once the response headers arrived. */
function openStream(
  method: string,
  path: string,
  options: { base: string; body?: unknown },
): Promise<{ req: http.ClientRequest; res: http.IncomingMessage; sse: SseReader }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { "a2a-version": "1.0" };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const req = http.request(options.base + path, { method, agent: false, headers }, (res) => {
      res.on("error", () => undefined);
      resolve({ req, res, sse: new SseReader(res) });
    });
    req.on("error", (err) => reject(err));
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

/** All frames of a finished SSE body: the `data:` payloads (parsed) and the comment lines. */
/** SSE frames: `data` payloads in order, `errors` the indexes of frames named `event: error`. */
function parseSse(text: string): { data: unknown[]; comments: string[]; errors?: number[] } {
  const data: unknown[] = [];
  const comments: string[] = [];
  const errors: number[] = [];
  expect(text.endsWith("\n\n")).toBe(true);
  for (const frame of text.split("\n\n").slice(0, -1)) {
    if (frame.startsWith(":")) comments.push(frame);
    else {
      const named = frame.startsWith("event: error\n");
      const line = named ? frame.slice("event: error\n".length) : frame;
      expect(line.startsWith("data: ")).toBe(true);
      expect(line.includes("\n")).toBe(false);
      if (named) errors.push(data.length);
      data.push(JSON.parse(line.slice("data: ".length)));
    }
  }
  return errors.length > 0 ? { data, comments, errors } : { data, comments };
}

const errorInfo = (reason: string, metadata?: Record<string, string>) => ({
  "@type": "type.googleapis.com/google.rpc.ErrorInfo",
  reason,
  domain: "a2a-protocol.org",
  ...(metadata === undefined ? {} : { metadata }),
});

const badRequestDetail = (violations: { field: string; description: string }[]) => ({
  "@type": "type.googleapis.com/google.rpc.BadRequest",
  fieldViolations: violations,
});

/** An AIP-193 error body (D2). */
const aip193 = (code: number, status: string, message: string, details: unknown[] = []) => ({
  error: { code, status, message, details },
});

const notFound = (method: string, path: string) => aip193(404, "NOT_FOUND", `no route for ${method} ${path}`);

const pathDisagrees = (field: string, where: "body" | "query", given: string, fromPath: string) =>
  aip193(
    400,
    "INVALID_ARGUMENT",
    `invalid params: invalid value for ${field}: the ${where} says ${JSON.stringify(given)} but the path says ${JSON.stringify(fromPath)}; the path decides, so they must agree`,
    [
      badRequestDetail([
        {
          field,
          description: `the ${where} says ${JSON.stringify(given)} but the path says ${JSON.stringify(fromPath)}; the path decides, so they must agree`,
        },
      ]),
    ],
  );

const sseHeaderExpectations = { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" };

// ---------------------------------------------------------------- handler

interface Call {
  readonly method: keyof typeof A2AServiceMethods;
  readonly request: Message;
  readonly context: A2ACallContext;
}

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
const probes = new Map<string, Probe>();

/** The one call the last request made, as ProtoJSON of its request message, with its context's tenant. */
function onlyCall(): { method: string; json: unknown; tenant: string | undefined } {
  expect(calls).toHaveLength(1);
  const call = calls[0]!;
  const input: DescMessage = A2AServiceMethods[call.method].input;
  return { method: call.method, json: toJson(input, call.request), tenant: call.context.tenant };
}

type ErrorClass = new (message?: string, options?: A2AErrorOptions) => A2AError;
const errorClasses: Record<string, ErrorClass> = {
  TaskNotFound: TaskNotFoundError,
  TaskNotCancelable: TaskNotCancelableError,
  PushNotificationNotSupported: PushNotificationNotSupportedError,
  UnsupportedOperation: UnsupportedOperationError,
  ContentTypeNotSupported: ContentTypeNotSupportedError,
  InvalidAgentResponse: InvalidAgentResponseError,
  ExtendedAgentCardNotConfigured: ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequired: ExtensionSupportRequiredError,
  VersionNotSupported: VersionNotSupportedError,
  ParseError: ParseErrorError,
  InvalidRequest: InvalidRequestError,
  MethodNotFound: MethodNotFoundError,
  InvalidParams: InvalidParamsError,
  Internal: InternalError,
  Unauthenticated: UnauthenticatedError,
  PermissionDenied: PermissionDeniedError,
};

function streamEvents(taskId: string): StreamResponse[] {
  return [
    create(StreamResponseSchema, {
      payload: { case: "task", value: { id: taskId, contextId: "c1", status: { state: TaskState.SUBMITTED } } },
    }),
    create(StreamResponseSchema, {
      payload: { case: "statusUpdate", value: { taskId, contextId: "c1", status: { state: TaskState.WORKING } } },
    }),
    create(StreamResponseSchema, {
      payload: { case: "statusUpdate", value: { taskId, contextId: "c1", status: { state: TaskState.COMPLETED } } },
    }),
  ];
}

const streamEventsJson = (taskId: string) => [
  { task: { id: taskId, contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" } } },
  { statusUpdate: { taskId, contextId: "c1", status: { state: "TASK_STATE_WORKING" } } },
  { statusUpdate: { taskId, contextId: "c1", status: { state: "TASK_STATE_COMPLETED" } } },
];

const taskJson = (id: string) => ({ id, contextId: "c1", status: { state: "TASK_STATE_WORKING" } });

function waitForAbort(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

/**
 * Left out on purpose: cancelTask (-> UnsupportedOperation),
 * getTaskPushNotificationConfig and listTaskPushNotificationConfigs
 * (-> PushNotificationNotSupported).
 */
const handler: A2AServiceHandler = {
  async getTask(request, context) {
    calls.push({ method: "getTask", request, context });
    if (request.id === "leak") throw new Error("secret");
    if (request.id === "minimal") return { id: "minimal", status: {} };
    if (request.id === "no-status") return { id: "no-status" };
    if (request.id.startsWith("err-")) {
      const name = request.id.slice(4);
      const cls = errorClasses[name];
      if (cls === undefined) throw new Error(`no error class ${name}`);
      throw new cls(undefined, name === "TaskNotFound" ? { metadata: { taskId: request.id } } : {});
    }
    return { id: request.id, contextId: "c1", status: { state: TaskState.WORKING } };
  },
  async listTasks(request, context) {
    calls.push({ method: "listTasks", request, context });
    return {};
  },
  async sendMessage(request, context) {
    calls.push({ method: "sendMessage", request, context });
    return {
      payload: {
        case: "task",
        value: { id: `task-${request.message?.messageId ?? ""}`, contextId: "c1", status: { state: TaskState.SUBMITTED } },
      },
    };
  },
  async createTaskPushNotificationConfig(request, context) {
    calls.push({ method: "createTaskPushNotificationConfig", request, context });
    return { taskId: request.taskId, id: "cfg-1", url: request.url };
  },
  async deleteTaskPushNotificationConfig(request, context) {
    calls.push({ method: "deleteTaskPushNotificationConfig", request, context });
    return {};
  },
  async getExtendedAgentCard(request, context) {
    calls.push({ method: "getExtendedAgentCard", request, context });
    throw new ExtendedAgentCardNotConfiguredError();
  },
  async *subscribeToTask(request, context) {
    calls.push({ method: "subscribeToTask", request, context });
    if (request.id === "missing") throw new TaskNotFoundError(undefined, { metadata: { taskId: request.id } });
    const probe = probes.get(request.id);
    const events = streamEvents(request.id);
    if (probe === undefined) {
      for (const e of events) yield e;
      return;
    }
    try {
      yield events[0]!;
      probe.started.resolve();
      await Promise.race([waitForAbort(context.signal).then(() => probe.aborted.resolve(Date.now())), probe.release.promise]);
      yield events[1]!;
      yield events[2]!;
    } finally {
      probe.finallyRan.resolve();
    }
  },
  async *sendStreamingMessage(request, context) {
    calls.push({ method: "sendStreamingMessage", request, context });
    const mode = request.message?.messageId ?? "";
    const events = streamEvents(`task-${mode}`);
    switch (mode) {
      case "a2a-before":
        throw new TaskNotCancelableError("cannot", { metadata: { taskId: "x" } });
      case "plain-before":
        throw new Error("secret-before");
      case "a2a-after":
        yield events[0]!;
        throw new TaskNotCancelableError("cannot now", { metadata: { taskId: "task-a2a-after" } });
      case "plain-after":
        yield events[0]!;
        throw new Error("secret-after");
      case "status-first":
        yield events[1]!;
        return;
      case "message-then-task":
        yield create(StreamResponseSchema, {
          payload: { case: "message", value: { messageId: "m1", role: Role.AGENT, parts: [{ content: { case: "text", value: "hi" } }] } },
        });
        yield events[0]!;
        return;
      default:
        break;
    }
    const probe = probes.get(mode);
    if (probe === undefined) {
      for (const e of events) yield e;
      return;
    }
    try {
      yield events[0]!;
      probe.started.resolve();
      await Promise.race([waitForAbort(context.signal).then(() => probe.aborted.resolve(Date.now())), probe.release.promise]);
      yield events[2]!;
    } finally {
      probe.finallyRan.resolve();
    }
  },
};

// ---------------------------------------------------------------- servers

const servers: http.Server[] = [];

async function listen(listener: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}` };
}

const startServer = (options: A2AHttpJsonOptions) => listen(createA2AServiceHttpJsonListener(handler, options));

/**
 * What the base server's logger was told: the tests that throw on purpose
 * check their failure was reported (and it stays out of the test output).
 */
const { logger, reports } = createReportLog();
const reportsOf = (text: string) => reports.filter((r) => r.message === text);

beforeAll(async () => {
  ({ url: base } = await startServer({ heartbeatMs: 0, logger }));
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

const userMessage = (messageId: string) => ({ messageId, role: "ROLE_USER", parts: [{ text: "hi" }] });
const sendBody = (messageId: string, extra: Record<string, unknown> = {}) => ({ message: userMessage(messageId), ...extra });

// ---------------------------------------------------------------- routing (D6, D8, Part B 1.1, 12)

describe("routing through the real A2A routes (D6, D8)", () => {
  test.each<[string, string, string, string, unknown, string | undefined]>([
    ["a literal beats {tenant}: /tasks/tasks is GetTask", "GET", "/tasks/tasks", "getTask", { id: "tasks" }, undefined],
    ["/tasks/extendedAgentCard is GetTask", "GET", "/tasks/extendedAgentCard", "getTask", { id: "extendedAgentCard" }, undefined],
    ["an id with ':' that is no registered verb", "GET", "/tasks/a:b", "getTask", { id: "a:b" }, undefined],
    ["an encoded ':' never splits a verb", "GET", "/tasks/a%3Asubscribe", "getTask", { id: "a:subscribe" }, undefined],
    ["an id ending in another route's verb, encoded", "GET", "/tasks/a%3Asend", "getTask", { id: "a:send" }, undefined],
    ["%2F in an id decodes to /", "GET", "/tasks/a%2Fb", "getTask", { id: "a/b" }, undefined],
    ["unicode id", "GET", "/tasks/%C3%A9t%C3%A9", "getTask", { id: "été" }, undefined],
    ["+ stays a literal plus in the path", "GET", "/tasks/a+b", "getTask", { id: "a+b" }, undefined],
    ["%20 is a space", "GET", "/tasks/a%20b", "getTask", { id: "a b" }, undefined],
    ["a trailing slash is dropped", "GET", "/tasks/t1/", "getTask", { id: "t1" }, undefined],
    ["tenant form of GetTask", "GET", "/acme/tasks/t1", "getTask", { tenant: "acme", id: "t1" }, "acme"],
    ["tenant named tasks: /tasks/tasks/t1", "GET", "/tasks/tasks/t1", "getTask", { tenant: "tasks", id: "t1" }, "tasks"],
    ["tenant form of ListTasks", "GET", "/acme/tasks", "listTasks", { tenant: "acme" }, "acme"],
    ["an encoded tenant", "GET", "/ac%2Fme/tasks/t1", "getTask", { tenant: "ac/me", id: "t1" }, "ac/me"],
    ["DELETE push config", "DELETE", "/tasks/t1/pushNotificationConfigs/c1", "deleteTaskPushNotificationConfig", { taskId: "t1", id: "c1" }, undefined],
    [
      "tenant form of DELETE push config",
      "DELETE",
      "/acme/tasks/t1/pushNotificationConfigs/c1",
      "deleteTaskPushNotificationConfig",
      { tenant: "acme", taskId: "t1", id: "c1" },
      "acme",
    ],
  ])("%s: %s %s", async (_, method, path, expectedMethod, expectedRequest, tenant) => {
    const r = await request(method, path);
    expect(r.status).toBe(200);
    expect(onlyCall()).toEqual({ method: expectedMethod, json: expectedRequest, tenant });
  });

  test.each<[string, string, unknown, string, unknown, string | undefined]>([
    ["GET", "/tasks/x:subscribe", undefined, "x", { id: "x" }, undefined],
    ["GET", "/tasks/a:b:subscribe", undefined, "a:b", { id: "a:b" }, undefined],
    ["GET", "/tasks/x:subscribe/", undefined, "x", { id: "x" }, undefined],
    ["POST", "/tasks/x:subscribe", "", "x", { id: "x" }, undefined],
    ["POST", "/tasks/x:subscribe", "{}", "x", { id: "x" }, undefined],
    ["POST", "/tasks/x:subscribe", " { } ", "x", { id: "x" }, undefined],
    ["GET", "/acme/tasks/x:subscribe", undefined, "x", { tenant: "acme", id: "x" }, "acme"],
    ["POST", "/acme/tasks/x:subscribe", "{}", "x", { tenant: "acme", id: "x" }, "acme"],
  ])("%s %s (body %p) -> SubscribeToTask SSE (D1)", async (method, path, body, id, expectedRequest, tenant) => {
    const r = await request(method, path, body === undefined ? {} : { body });
    expect(r.status).toBe(200);
    expect(r.headers).toMatchObject(sseHeaderExpectations);
    expect(parseSse(r.text)).toEqual({ data: streamEventsJson(id), comments: [] });
    expect(onlyCall()).toEqual({ method: "subscribeToTask", json: expectedRequest, tenant });
  });

  test("POST /tasks/x:subscribe with an empty body and no content-type -> SSE", async () => {
    const r = await request("POST", "/tasks/x:subscribe", { chunks: [], headers: { "content-type": undefined } });
    expect(r.status).toBe(200);
    expect(parseSse(r.text).data).toEqual(streamEventsJson("x"));
  });

  test.each([['{"id":"y"}'], ['{"id":"x"}'], ["[]"], ["not json"]])("POST /tasks/x:subscribe with body %s -> 400 (D1)", async (body) => {
    const r = await request("POST", "/tasks/x:subscribe", { body });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      aip193(400, "INVALID_ARGUMENT", "/tasks/{id=*}:subscribe takes its fields from the path; send an empty body or {}"),
    );
    expect(calls).toEqual([]);
  });

  // Bug hunt: a trailing slash was dropped, so `GET /tasks/` (what @a2a-js/sdk sends for GetTask
  // with an empty id) was ListTasks, and the SDK read the list as an empty Task. An id left empty
  // by a trailing slash or a verb is "": InvalidParams, as JSON-RPC answers (D6, D11).
  test.each([
    ["GET", "/tasks/", "id"],
    ["GET", "/acme/tasks/", "id"],
    ["GET", "/tasks/t1/pushNotificationConfigs/", "id"],
    ["DELETE", "/tasks/t1/pushNotificationConfigs/", "id"],
    ["POST", "/tasks/:cancel", "id"],
    ["GET", "/tasks/:subscribe", "id"],
    ["POST", "/tasks/:subscribe", "id"],
    // An empty segment mid-path, as a client building the path from an empty id sends it.
    ["GET", "/tasks//pushNotificationConfigs", "taskId"],
    ["GET", "/acme/tasks//pushNotificationConfigs", "taskId"],
    ["GET", "/tasks//pushNotificationConfigs/c1", "taskId"],
    ["DELETE", "/acme/tasks//pushNotificationConfigs/c1", "taskId"],
  ])("%s %s: the empty %s is InvalidParams, never the collection's route (D6, D11)", async (method, path, field) => {
    const r = await request(method, path, method === "POST" ? { body: {} } : {});
    expect(r.status).toBe(400);
    expect(r.json).toEqual(aip193(400, "INVALID_ARGUMENT", `missing required field: ${field}`, [badRequestDetail([{ field, description: "field is required" }])]));
    expect(calls).toEqual([]);
  });

  test("a trailing slash no route takes as an empty value is still dropped: POST /tasks/t1/pushNotificationConfigs/ creates", async () => {
    const r = await request("POST", "/tasks/t1/pushNotificationConfigs/", { body: { url: "https://example.com/hook" } });
    expect(r.status).toBe(200);
    expect(onlyCall().method).toBe("createTaskPushNotificationConfig");
  });

  test.each([
    ["an empty segment no route takes", "/tasks//x"],
    ["a leading empty segment no route takes", "//x"],
    ["an unknown path", "/nope"],
    ["an unknown nested path", "/tasks/t1/nope"],
    ["the bare root", "/"],
    ["an unregistered verb on a literal", "/message:nope"],
  ])("%s (GET %s) -> 404 with an AIP-193 body", async (_, path) => {
    const r = await request("GET", path);
    expect(r.status).toBe(404);
    expect(r.headers["content-type"]).toBe("application/a2a+json");
    expect(r.json).toEqual(notFound("GET", path));
    expect(calls).toEqual([]);
  });

  test.each([
    ["DELETE", "/message:send", "POST"],
    ["GET", "/message:send", "POST"],
    ["PUT", "/tasks/x", "GET"],
    ["POST", "/tasks/x", "GET"],
    ["GET", "/tasks/x:cancel", "POST"],
    ["PATCH", "/tasks/t1/pushNotificationConfigs/c1", "DELETE, GET"],
    ["DELETE", "/tasks/t1/pushNotificationConfigs", "GET, POST"],
  ])("%s %s -> 405 with Allow: %s", async (method, path, allow) => {
    const r = await request(method, path);
    expect(r.status).toBe(405);
    expect(r.headers["allow"]).toBe(allow);
    expect(r.json).toEqual(aip193(405, "UNIMPLEMENTED", `${method} is not allowed on ${path}; allowed: ${allow}`));
    expect(calls).toEqual([]);
  });

  test.each([
    ["/tasks/%zz", "id"],
    ["/tasks/%C3", "id"],
    ["/tasks/%zz:subscribe", "id"],
    ["/a%zz/tasks/t1", "tenant"],
  ])("malformed percent-encoding GET %s -> 400", async (path, field) => {
    const r = await request("GET", path);
    expect(r.status).toBe(400);
    expect(r.json).toEqual(aip193(400, "INVALID_ARGUMENT", `the value of "${field}" is not valid percent-encoded UTF-8`));
    expect(calls).toEqual([]);
  });

  test.each([
    ["a bad escape", "/tasks?contextId=%ZZ"],
    ["bytes that are not UTF-8", "/tasks?contextId=%FF"],
    ["a lone %", "/tasks?contextId=50%"],
  ])("the query by the path's rule (D8): %s -> 400, not a value the client never sent", async (_, path) => {
    const r = await request("GET", path);
    expect(r.status).toBe(400);
    expect(r.json).toEqual(aip193(400, "INVALID_ARGUMENT", "the query is not valid percent-encoded UTF-8"));
    expect(calls).toEqual([]);
  });
});

// ---------------------------------------------------------------- transcoding (D7)

describe("transcoding path + body + query (D7)", () => {
  test("SendMessage takes its fields from the body", async () => {
    const r = await request("POST", "/message:send", {
      body: { message: userMessage("m1"), configuration: { acceptedOutputModes: ["text/plain"], historyLength: 2 }, metadata: { k: "v" } },
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ task: { id: "task-m1", contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" } } });
    expect(onlyCall()).toEqual({
      method: "sendMessage",
      json: {
        message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] },
        configuration: { acceptedOutputModes: ["text/plain"], historyLength: 2 },
        metadata: { k: "v" },
      },
      tenant: undefined,
    });
  });

  test("tenant in the body on the default route is accepted", async () => {
    const r = await request("POST", "/message:send", { body: sendBody("m1", { tenant: "acme" }) });
    expect(r.status).toBe(200);
    expect(onlyCall()).toMatchObject({ json: { tenant: "acme" }, tenant: "acme" });
  });

  test("tenant in the body on the tenant route, equal to the path -> ok", async () => {
    const r = await request("POST", "/acme/message:send", { body: sendBody("m1", { tenant: "acme" }) });
    expect(r.status).toBe(200);
    expect(onlyCall()).toMatchObject({ json: { tenant: "acme" }, tenant: "acme" });
  });

  test("tenant in the body on the tenant route, different from the path -> 400 naming tenant", async () => {
    const r = await request("POST", "/acme/message:send", { body: sendBody("m1", { tenant: "other" }) });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(pathDisagrees("tenant", "body", "other", "acme"));
    expect(calls).toEqual([]);
  });

  test("a body field under its proto name that disagrees with the path -> 400", async () => {
    const r = await request("POST", "/tasks/t1/pushNotificationConfigs", { body: { task_id: "t2", url: "https://x" } });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(pathDisagrees("taskId", "body", "t2", "t1"));
  });

  test("a body field that agrees with the path -> ok", async () => {
    const r = await request("POST", "/tasks/t1/pushNotificationConfigs", { body: { taskId: "t1", url: "https://x" } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ taskId: "t1", id: "cfg-1", url: "https://x" });
  });

  test.each<[string, string, unknown]>([
    ["camelCase names", "contextId=c9&pageSize=5&pageToken=p&historyLength=3", { contextId: "c9", pageSize: 5, pageToken: "p", historyLength: 3 }],
    ["snake_case names", "context_id=c9&page_size=5&page_token=p&history_length=3", { contextId: "c9", pageSize: 5, pageToken: "p", historyLength: 3 }],
    ["enum by name", "status=TASK_STATE_WORKING", { status: "TASK_STATE_WORKING" }],
    ["enum by number", "status=2", { status: "TASK_STATE_WORKING" }],
    ["boolean true", "includeArtifacts=true", { includeArtifacts: true }],
    ["boolean false", "include_artifacts=false", { includeArtifacts: false }],
    ["RFC 3339 timestamp", "statusTimestampAfter=2025-11-09T10:30:00Z", { statusTimestampAfter: "2025-11-09T10:30:00Z" }],
    ["RFC 3339 timestamp with an offset", "statusTimestampAfter=2025-11-09T10:30:00%2B01:00", { statusTimestampAfter: "2025-11-09T09:30:00Z" }],
    ["RFC 3339 timestamp, snake_case name", "status_timestamp_after=2025-11-09T10:30:00.123Z", { statusTimestampAfter: "2025-11-09T10:30:00.123Z" }],
    ["unknown params are ignored", "foo=bar&contextId=c1&x.y=1", { contextId: "c1" }],
    ["tenant as a query param on the default route", "tenant=acme", { tenant: "acme" }],
    ["+ in a query value is a space (form encoding)", "pageToken=a+b%2Bc", { pageToken: "a b+c" }],
    ["A2A-Version in the query is a service parameter, not a field", "A2A-Version=1.0&contextId=c1", { contextId: "c1" }],
  ])("ListTasks query: %s", async (_, query, expected) => {
    const r = await request("GET", `/tasks?${query}`);
    expect(r.status).toBe(200);
    expect(onlyCall()).toMatchObject({ method: "listTasks", json: expected });
    expect(onlyCall().json).toEqual(expected);
  });

  test("statusTimestampAfter reaches the handler as a google.protobuf.Timestamp", async () => {
    const r = await request("GET", "/tasks?statusTimestampAfter=2025-11-09T10:30:00.5Z");
    expect(r.status).toBe(200);
    const ts = (calls[0]!.request as unknown as { statusTimestampAfter: { $typeName: string; seconds: bigint; nanos: number } }).statusTimestampAfter;
    expect(ts.$typeName).toBe("google.protobuf.Timestamp");
    expect(ts.seconds).toBe(BigInt(Date.UTC(2025, 10, 9, 10, 30, 0) / 1000));
    expect(ts.nanos).toBe(500_000_000);
  });

  test.each<[string, string, string]>([
    ["a boolean other than true/false", "includeArtifacts=yes", "includeArtifacts"],
    ["a singular param given twice", "contextId=a&contextId=b", "contextId"],
    ["one field named twice, by JSON and proto name", "pageSize=1&page_size=2", "pageSize"],
    ["a non-numeric integer", "pageSize=abc", "pageSize"],
    ["a bad timestamp", "statusTimestampAfter=yesterday", "statusTimestampAfter"],
    ["an unknown enum name", "status=TASK_STATE_NOPE", "status"],
  ])("ListTasks query: %s -> 400 INVALID_ARGUMENT naming the field", async (_, query, field) => {
    const r = await request("GET", `/tasks?${query}`);
    expect(r.status).toBe(400);
    const body = r.json as { error: { code: number; status: string; message: string; details: { "@type": string; fieldViolations: { field: string }[] }[] } };
    expect(body.error.code).toBe(400);
    expect(body.error.status).toBe("INVALID_ARGUMENT");
    expect(body.error.details).toHaveLength(1);
    expect(body.error.details[0]!["@type"]).toBe("type.googleapis.com/google.rpc.BadRequest");
    expect(body.error.details[0]!.fieldViolations.map((v) => v.field)).toEqual([field]);
    expect(calls).toEqual([]);
  });

  test("a boolean query value other than true/false is refused with the exact body", async () => {
    const r = await request("GET", "/tasks?includeArtifacts=yes");
    expect(r.json).toEqual(
      aip193(400, "INVALID_ARGUMENT", 'invalid params: invalid value for includeArtifacts: expected true or false, got "yes"', [
        badRequestDetail([{ field: "includeArtifacts", description: 'expected true or false, got "yes"' }]),
      ]),
    );
  });

  test("A2A-Version in the query is used when there is no header", async () => {
    const r = await request("GET", "/tasks/t1?A2A-Version=1.0", { headers: { "a2a-version": undefined } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(taskJson("t1"));
  });

  test("the header wins over the query A2A-Version", async () => {
    const r = await request("GET", "/tasks/t1?A2A-Version=0.5");
    expect(r.status).toBe(200);
  });

  test("with body \"*\" the query sets nothing (POST /message:send?tenant=acme)", async () => {
    const r = await request("POST", "/message:send?tenant=acme&metadata=x", { body: sendBody("m1") });
    expect(r.status).toBe(200);
    expect(onlyCall()).toEqual({
      method: "sendMessage",
      json: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] } },
      tenant: undefined,
    });
  });

  test.each<[string, string, string, string]>([
    ["id disagrees", "/tasks/t1?id=t2", "id", "t2"],
    ["tenant disagrees on the tenant route", "/acme/tasks/t1?tenant=other", "tenant", "other"],
    ["id disagrees under a repeated param", "/tasks/t1?id=t1&id=t2", "id", "t2"],
  ])("a query value for a path-bound field: %s -> 400", async (_, path, field, given) => {
    const r = await request("GET", path);
    expect(r.status).toBe(400);
    const fromPath = field === "id" ? "t1" : "acme";
    expect(r.json).toEqual(pathDisagrees(field, "query", given, fromPath));
    expect(calls).toEqual([]);
  });

  test.each<[string, unknown, string | undefined]>([
    ["/tasks/t1?id=t1", { id: "t1" }, undefined],
    ["/acme/tasks/t1?tenant=acme", { tenant: "acme", id: "t1" }, "acme"],
    ["/tasks/t1?tenant=acme&historyLength=4", { tenant: "acme", id: "t1", historyLength: 4 }, "acme"],
  ])("a query value that agrees with the path is fine: GET %s", async (path, expected, tenant) => {
    const r = await request("GET", path);
    expect(r.status).toBe(200);
    expect(onlyCall()).toEqual({ method: "getTask", json: expected, tenant });
  });
});

// ---------------------------------------------------------------- responses (D9, D11, D12)

describe("responses (D9, D11, D12)", () => {
  test.each<[string, string, string, unknown, unknown]>([
    ["GetTask", "GET", "/tasks/t1", undefined, taskJson("t1")],
    ["ListTasks", "GET", "/tasks", undefined, { tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 }],
    ["SendMessage", "POST", "/message:send", sendBody("m1"), { task: { id: "task-m1", contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" } } }],
    [
      "CreateTaskPushNotificationConfig",
      "POST",
      "/tasks/t1/pushNotificationConfigs",
      { url: "https://hook.example/x", token: "tok" },
      { taskId: "t1", id: "cfg-1", url: "https://hook.example/x" },
    ],
    ["DeleteTaskPushNotificationConfig", "DELETE", "/tasks/t1/pushNotificationConfigs/c1", undefined, {}],
  ])("%s answers 200 with the whole ProtoJSON body", async (_, method, path, body, expected) => {
    const r = await request(method, path, body === undefined ? {} : { body });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(expected);
  });

  test("REQUIRED fields are written at their default (Task.status.state)", async () => {
    const r = await request("GET", "/tasks/minimal");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ id: "minimal", status: { state: "TASK_STATE_UNSPECIFIED" } });
  });

  test("an unset REQUIRED message field stays absent (documented in required-fields.ts)", async () => {
    const r = await request("GET", "/tasks/no-status");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ id: "no-status" });
  });

  test.each<[string, string, Record<string, string | undefined>, unknown, string]>([
    ["Accept: application/a2a+json", "GET", { accept: "application/a2a+json" }, undefined, "application/a2a+json"],
    ["Accept: application/json", "GET", { accept: "application/json" }, undefined, "application/json"],
    ["Accept with parameters and q", "GET", { accept: "text/html, application/json;q=0.9" }, undefined, "application/json"],
    ["Accept lists both: a2a+json wins", "GET", { accept: "application/json, application/a2a+json" }, undefined, "application/a2a+json"],
    ["no Accept, request content-type application/json", "POST", {}, sendBody("m1"), "application/json"],
    ["no Accept, request content-type application/json; charset=utf-8", "POST", { "content-type": "application/json; charset=utf-8" }, sendBody("m1"), "application/json"],
    ["no Accept, request content-type application/a2a+json", "POST", { "content-type": "application/a2a+json" }, sendBody("m1"), "application/a2a+json"],
    ["Accept: */*", "GET", { accept: "*/*" }, undefined, "application/a2a+json"],
    ["nothing at all", "GET", {}, undefined, "application/a2a+json"],
    ["Accept beats the request content-type", "POST", { accept: "application/a2a+json" }, sendBody("m1"), "application/a2a+json"],
  ])("media type: %s", async (_, method, headers, body, expected) => {
    const path = method === "GET" ? "/tasks/t1" : "/message:send";
    const r = await request(method, path, body === undefined ? { headers } : { headers, body });
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe(expected);
  });

  test("error responses follow the same media type negotiation", async () => {
    const r = await request("GET", "/nope", { headers: { accept: "application/json" } });
    expect(r.status).toBe(404);
    expect(r.headers["content-type"]).toBe("application/json");
  });

  test.each([["text/plain"], ["application/x-www-form-urlencoded"], [undefined]])("a POST body with content-type %p -> 415 with an AIP-193 body", async (contentType) => {
    const r = await request("POST", "/message:send", { body: sendBody("m1"), headers: { "content-type": contentType } });
    expect(r.status).toBe(415);
    expect(r.headers["content-type"]).toBe("application/a2a+json");
    expect(r.json).toEqual(
      aip193(415, "INVALID_ARGUMENT", "the request body must be JSON (application/a2a+json or application/json)", [
        errorInfo("CONTENT_TYPE_NOT_SUPPORTED"),
      ]),
    );
    expect(calls).toEqual([]);
  });

  test("a +json request content-type is accepted", async () => {
    const r = await request("POST", "/message:send", { body: sendBody("m1"), headers: { "content-type": "application/vnd.example+json", accept: "application/json" } });
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe("application/json");
  });

  test.each([
    ["invalid JSON", '{"message":'],
    ["trailing garbage", "{} x"],
  ])("%s -> 400 ParseError", async (_, body) => {
    const r = await request("POST", "/message:send", { body });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(aip193(400, "INVALID_ARGUMENT", "the request body is not valid JSON"));
  });

  test("a JSON body that is not an object -> 400", async () => {
    const r = await request("POST", "/message:send", { body: "[1]" });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(aip193(400, "INVALID_ARGUMENT", "invalid params: the request body must be a JSON object"));
  });
});

// ---------------------------------------------------------------- errors (D2, D4, D5, D11, D18)

describe("errors (D2, D4)", () => {
  test.each(Object.keys(errorClasses))("%s thrown by the handler -> its HTTP status and AIP-193 body", async (name) => {
    const entry = A2AErrorTable[name as keyof typeof A2AErrorTable];
    const r = await request("GET", `/tasks/err-${name}`);
    expect(r.status).toBe(entry.httpStatus);
    expect(r.headers["content-type"]).toBe("application/a2a+json");
    const details =
      entry.domain === "" ? [] : [errorInfo(entry.reason, name === "TaskNotFound" ? { taskId: `err-${name}` } : undefined)];
    expect(r.json).toEqual(aip193(entry.httpStatus, entry.grpcStatus, entry.defaultMessage, details));
  });

  test.each<[string, number, string]>([
    ["TaskNotFound", 404, "NOT_FOUND"],
    ["TaskNotCancelable", 400, "FAILED_PRECONDITION"],
    ["PushNotificationNotSupported", 400, "FAILED_PRECONDITION"],
    ["UnsupportedOperation", 400, "FAILED_PRECONDITION"],
    ["ContentTypeNotSupported", 400, "INVALID_ARGUMENT"],
    ["InvalidAgentResponse", 500, "INTERNAL"],
    ["ExtendedAgentCardNotConfigured", 400, "FAILED_PRECONDITION"],
    ["ExtensionSupportRequired", 400, "FAILED_PRECONDITION"],
    ["VersionNotSupported", 400, "FAILED_PRECONDITION"],
    ["InvalidParams", 400, "INVALID_ARGUMENT"],
    ["Internal", 500, "INTERNAL"],
    ["Unauthenticated", 401, "UNAUTHENTICATED"],
    ["PermissionDenied", 403, "PERMISSION_DENIED"],
  ])("%s is HTTP %i / %s (Part B 5.2, D4)", async (name, status, grpcStatus) => {
    const r = await request("GET", `/tasks/err-${name}`);
    expect(r.status).toBe(status);
    expect((r.json as { error: { status: string } }).error.status).toBe(grpcStatus);
  });

  test("a plain Error -> 500 INTERNAL without its message", async () => {
    const r = await request("GET", "/tasks/leak");
    expect(r.status).toBe(500);
    expect(r.json).toEqual(aip193(500, "INTERNAL", "Internal error"));
    expect(r.text).not.toContain("secret");
    expect(reportsOf("secret")).toEqual([{ logged: "handler failed", binding: "HTTP+JSON", method: "GetTask", message: "secret" }]);
  });

  test("an error from the tenant route is the same", async () => {
    const r = await request("GET", "/acme/extendedAgentCard");
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      aip193(400, "FAILED_PRECONDITION", "The extended agent card is not configured", [errorInfo("EXTENDED_AGENT_CARD_NOT_CONFIGURED")]),
    );
  });

  test.each<[string, string, unknown]>([
    ["GetTaskPushNotificationConfig", "GET /tasks/t1/pushNotificationConfigs/c1", undefined],
    ["ListTaskPushNotificationConfigs", "GET /tasks/t1/pushNotificationConfigs", undefined],
    ["ListTaskPushNotificationConfigs (tenant)", "GET /acme/tasks/t1/pushNotificationConfigs", undefined],
  ])("left-out push method %s -> 400 PUSH_NOTIFICATION_NOT_SUPPORTED", async (name, route, body) => {
    const [method, path] = route.split(" ") as [string, string];
    const r = await request(method, path, body === undefined ? {} : { body });
    expect(r.status).toBe(400);
    const rpc = name.replace(" (tenant)", "");
    expect(r.json).toEqual(
      aip193(400, "FAILED_PRECONDITION", `${rpc} is not supported by this agent`, [errorInfo("PUSH_NOTIFICATION_NOT_SUPPORTED")]),
    );
  });

  test.each([
    ["POST", "/tasks/t1:cancel", {}],
    ["POST", "/acme/tasks/t1:cancel", {}],
    ["POST", "/message:stream", sendBody("m1")],
  ])("a left-out method (%s %s) -> 400 UNSUPPORTED_OPERATION", async (method, path, body) => {
    // The main handler has no cancelTask; this one has neither cancelTask nor sendStreamingMessage.
    const partial: A2AServiceHandler = { getTask: handler.getTask! };
    const { url } = await listen(createA2AServiceHttpJsonListener(partial));
    const r = await request(method, path, { body, base: url });
    const rpc = path.includes("cancel") ? "CancelTask" : "SendStreamingMessage";
    expect(r.status).toBe(400);
    expect(r.json).toEqual(aip193(400, "FAILED_PRECONDITION", `${rpc} is not supported by this agent`, [errorInfo("UNSUPPORTED_OPERATION")]));
  });

  test("the main handler's left-out cancelTask -> UNSUPPORTED_OPERATION", async () => {
    const r = await request("POST", "/tasks/t1:cancel", { body: {} });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(aip193(400, "FAILED_PRECONDITION", "CancelTask is not supported by this agent", [errorInfo("UNSUPPORTED_OPERATION")]));
  });

  test("a missing REQUIRED field -> 400 with a BadRequest naming it (D11)", async () => {
    const r = await request("POST", "/message:send", { body: {} });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      aip193(400, "INVALID_ARGUMENT", "missing required field: message", [
        badRequestDetail([{ field: "message", description: "field is required" }]),
      ]),
    );
    expect(calls).toEqual([]);
  });

  test("missing nested REQUIRED fields are all named, camelCase", async () => {
    const r = await request("POST", "/message:send", { body: { message: {} } });
    expect(r.status).toBe(400);
    const details = (r.json as { error: { details: { fieldViolations: { field: string }[] }[] } }).error.details;
    expect(details[0]!.fieldViolations.map((v) => v.field)).toEqual(["message.messageId", "message.role", "message.parts"]);
  });

  test("a value of the wrong type -> 400 naming the field (D10)", async () => {
    const r = await request("POST", "/message:send", { body: { message: { ...userMessage("m1"), role: 12.5 } } });
    expect(r.status).toBe(400);
    const body = r.json as { error: { status: string; details: { fieldViolations: { field: string }[] }[] } };
    expect(body.error.status).toBe("INVALID_ARGUMENT");
    expect(body.error.details[0]!.fieldViolations[0]!.field).toBe("message.role");
  });

  test.each<[string, Record<string, string | undefined>, string]>([
    ["missing header", { "a2a-version": undefined }, "0.3"],
    ["empty header", { "a2a-version": "" }, "0.3"],
    ["0.5", { "a2a-version": "0.5" }, "0.5"],
    ["2.0", { "a2a-version": "2.0" }, "2.0"],
  ])("A2A-Version %s -> 400 VersionNotSupported (D5)", async (_, headers, version) => {
    const r = await request("GET", "/tasks/t1", { headers });
    expect(r.status).toBe(400);
    expect(r.json).toEqual(
      aip193(400, "FAILED_PRECONDITION", `Protocol version ${version} is not supported. Supported: 1.0. Send A2A-Version: 1.0 with each request`, [errorInfo("VERSION_NOT_SUPPORTED")]),
    );
    expect(calls).toEqual([]);
  });

  test.each([["1.0"], ["1.0.2"], [" 1.0 "]])("A2A-Version %p is accepted", async (version) => {
    const r = await request("GET", "/tasks/t1", { headers: { "a2a-version": version } });
    expect(r.status).toBe(200);
    expect(onlyCall().method).toBe("getTask");
    expect(calls[0]!.context.protocolVersion).toBe("1.0");
    expect(calls[0]!.context.binding).toBe("HTTP+JSON");
  });
});

// ---------------------------------------------------------------- SSE (D14, D15, Part B 7)

describe("SSE (D14, D15)", () => {
  test("POST /message:stream: SSE headers, each data: a bare StreamResponse", async () => {
    const r = await request("POST", "/message:stream", { body: sendBody("ok") });
    expect(r.status).toBe(200);
    expect(r.headers).toMatchObject(sseHeaderExpectations);
    expect(r.text).toBe(streamEventsJson("task-ok").map((e) => `data: ${JSON.stringify(e)}\n\n`).join(""));
  });

  test("tenant form /acme/message:stream", async () => {
    const r = await request("POST", "/acme/message:stream", { body: sendBody("ok") });
    expect(r.status).toBe(200);
    expect(parseSse(r.text).data).toEqual(streamEventsJson("task-ok"));
    expect(onlyCall().tenant).toBe("acme");
  });

  test.each<[string, number, unknown]>([
    ["a2a-before", 400, aip193(400, "FAILED_PRECONDITION", "cannot", [errorInfo("TASK_NOT_CANCELABLE", { taskId: "x" })])],
    ["plain-before", 500, aip193(500, "INTERNAL", "Internal error")],
    [
      "status-first",
      500,
      undefined, // InvalidAgentResponse; message checked below
    ],
  ])("an error before the first event (%s) is a plain AIP-193 response", async (mode, status, body) => {
    const r = await request("POST", "/message:stream", { body: sendBody(mode) });
    expect(r.status).toBe(status);
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.text).not.toContain("secret");
    if (mode === "plain-before") expect(reportsOf("secret-before")).toEqual([{ logged: "handler failed", binding: "HTTP+JSON", method: "SendStreamingMessage", message: "secret-before" }]);
    if (body !== undefined) expect(r.json).toEqual(body);
    else {
      const err = (r.json as { error: { code: number; status: string; details: unknown[] } }).error;
      expect(err).toMatchObject({ code: 500, status: "INTERNAL", details: [errorInfo("INVALID_AGENT_RESPONSE")] });
    }
  });

  test("SubscribeToTask for a missing task -> plain 404", async () => {
    const r = await request("GET", "/tasks/missing:subscribe");
    expect(r.status).toBe(404);
    expect(r.headers["content-type"]).toBe("application/a2a+json");
    expect(r.json).toEqual(aip193(404, "NOT_FOUND", "Task not found", [errorInfo("TASK_NOT_FOUND", { taskId: "missing" })]));
  });

  test.each<[string, unknown]>([
    ["a2a-after", aip193(400, "FAILED_PRECONDITION", "cannot now", [errorInfo("TASK_NOT_CANCELABLE", { taskId: "task-a2a-after" })])],
    ["plain-after", aip193(500, "INTERNAL", "Internal error")],
  ])("an error after the first event (%s) is one last `event: error` frame with the AIP-193 body, then close", async (mode, errorBody) => {
    const r = await request("POST", "/message:stream", { body: sendBody(mode) });
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe("text/event-stream");
    expect(r.text).not.toContain("secret");
    expect(parseSse(r.text)).toEqual({ data: [streamEventsJson(`task-${mode}`)[0], errorBody], comments: [], errors: [1] });
    if (mode === "plain-after") expect(reportsOf("secret-after")).toEqual([{ logged: "handler failed", binding: "HTTP+JSON", method: "SendStreamingMessage", message: "secret-after" }]);
  });

  test("a message followed by more events ends with InvalidAgentResponse (D15)", async () => {
    const r = await request("POST", "/message:stream", { body: sendBody("message-then-task") });
    expect(r.status).toBe(200);
    const { data } = parseSse(r.text);
    expect(data).toHaveLength(2);
    expect(data[0]).toEqual({ message: { messageId: "m1", role: "ROLE_AGENT", parts: [{ text: "hi" }] } });
    expect(data[1]).toMatchObject({ error: { code: 500, status: "INTERNAL", details: [errorInfo("INVALID_AGENT_RESPONSE")] } });
  });

  test("heartbeats: a comment every heartbeatMs while the handler is quiet", async () => {
    const { url } = await startServer({ heartbeatMs: 20 });
    const probe = newProbe();
    probes.set("hb", probe);
    const { res, sse } = await openStream("POST", "/message:stream", { base: url, body: sendBody("hb") });
    expect(res.statusCode).toBe(200);
    expect(await within(sse.next(), 1000, "the first event")).toBe(`data: ${JSON.stringify(streamEventsJson("task-hb")[0])}`);
    await within(probe.started.promise, 1000, "the handler to block");
    expect(await within(sse.next(), 1000, "a heartbeat")).toBe(": keep-alive");
    probe.release.resolve();
    const rest: string[] = [];
    for (let f = await within(sse.next(), 1000, "the rest"); f !== undefined; f = await within(sse.next(), 1000, "the rest")) {
      if (f !== ": keep-alive") rest.push(f);
    }
    expect(rest).toEqual([`data: ${JSON.stringify(streamEventsJson("task-hb")[2])}`]);
    await within(probe.finallyRan.promise, 1000, "the generator's finally");
  });

  describe("client disconnect", () => {
    async function isolated(): Promise<{ server: http.Server; url: string; closed: Promise<void> }> {
      const { server, url } = await startServer({ heartbeatMs: 20 });
      const closed = new Promise<void>((resolve) => {
        server.once("request", (req: http.IncomingMessage) => {
          const socket: Socket = req.socket;
          if (socket.destroyed) resolve();
          else socket.once("close", () => resolve());
        });
      });
      return { server, url, closed };
    }

    test("destroying the socket mid SendStreamingMessage aborts the handler's signal and runs its finally", async () => {
      const { url, closed } = await isolated();
      const probe = newProbe();
      probes.set("block", probe);
      const { req, sse } = await openStream("POST", "/message:stream", { base: url, body: sendBody("block") });
      expect(await within(sse.next(), 1000, "the first event")).toBe(`data: ${JSON.stringify(streamEventsJson("task-block")[0])}`);
      await within(probe.started.promise, 1000, "the handler to block");
      const abortedAt = Date.now();
      req.destroy();
      const seen = await within(probe.aborted.promise, 1000, "the handler's signal to abort");
      expect(seen - abortedAt).toBeLessThan(1000);
      await within(probe.finallyRan.promise, 1000, "the generator's finally");
      await within(closed, 1000, "the server socket to close");
    });

    test("aborting a fetch of GET /tasks/x:subscribe aborts the handler's signal and runs its finally", async () => {
      const { url, closed } = await isolated();
      const probe = newProbe();
      probes.set("sub", probe);
      const client = new AbortController();
      const res = await fetch(`${url}/tasks/sub:subscribe`, { headers: { "a2a-version": "1.0" }, signal: client.signal });
      expect(res.headers.get("content-type")).toBe("text/event-stream");
      const reader = res.body!.getReader();
      let text = "";
      // Heartbeats (every 20 ms here) may come before or with the first event on a busy machine.
      while (!text.includes("data: ") || !text.endsWith("\n\n")) {
        const { value, done } = await within(reader.read(), 1000, "the first event");
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      expect(text.replaceAll(": keep-alive\n\n", "")).toBe(`data: ${JSON.stringify(streamEventsJson("sub")[0])}\n\n`);
      await within(probe.started.promise, 1000, "the handler to block");
      const abortedAt = Date.now();
      client.abort();
      const seen = await within(probe.aborted.promise, 1000, "the handler's signal to abort");
      expect(seen - abortedAt).toBeLessThan(1000);
      await within(probe.finallyRan.promise, 1000, "the generator's finally");
      await within(closed, 1000, "the server socket to close");
    });
  });
});

// ---------------------------------------------------------------- body limit (D16)

describe("body limit (D16)", () => {
  let small = "";
  beforeAll(async () => {
    ({ url: small } = await startServer({ bodyLimit: 1024, heartbeatMs: 0 }));
  });

  const padded = (size: number) => {
    const json = JSON.stringify(sendBody("m1"));
    return json + " ".repeat(size - Buffer.byteLength(json));
  };
  const tooLarge = aip193(413, "INVALID_ARGUMENT", "request body exceeds the limit of 1024 bytes");

  test("a body of exactly the limit passes", async () => {
    const r = await request("POST", "/message:send", { body: padded(1024), base: small });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ task: { id: "task-m1", contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" } } });
  });

  test("one byte over -> 413 with an AIP-193 body", async () => {
    const r = await request("POST", "/message:send", { body: padded(1025), base: small });
    expect(r.status).toBe(413);
    expect(r.json).toEqual(tooLarge);
    expect(calls).toEqual([]);
  });

  test("a chunked body of exactly the limit passes", async () => {
    const body = padded(1024);
    const r = await request("POST", "/message:send", { chunks: [body.slice(0, 500), body.slice(500)], base: small });
    expect(r.status).toBe(200);
  });

  test("a chunked body over the limit -> 413", async () => {
    const body = padded(1500);
    const r = await request("POST", "/message:send", { chunks: [body.slice(0, 600), body.slice(600)], base: small });
    expect(r.status).toBe(413);
    expect(r.json).toEqual(tooLarge);
    expect(calls).toEqual([]);
  });

  test("the POST twin of :subscribe is under the limit too", async () => {
    const r = await request("POST", "/tasks/x:subscribe", { body: "{}" + " ".repeat(1023), base: small });
    expect(r.status).toBe(413);
    expect(r.json).toEqual(tooLarge);
  });
});

// ---------------------------------------------------------------- basePath

describe("basePath option", () => {
  let mounted = "";
  beforeAll(async () => {
    ({ url: mounted } = await startServer({ basePath: "/a2a/rest", heartbeatMs: 0 }));
  });

  test.each<[string, string, unknown, string | undefined]>([
    ["/a2a/rest/tasks/t1", "getTask", { id: "t1" }, undefined],
    ["/a2a/rest/acme/tasks/t1", "getTask", { tenant: "acme", id: "t1" }, "acme"],
    ["/a2a/rest/tasks?pageSize=2", "listTasks", { pageSize: 2 }, undefined],
  ])("GET %s works", async (path, method, json, tenant) => {
    const r = await request("GET", path, { base: mounted });
    expect(r.status).toBe(200);
    expect(onlyCall()).toEqual({ method, json, tenant });
  });

  test.each([["/tasks/t1"], ["/a2a/restx/tasks/t1"], ["/a2a/rest"], ["/a2a"]])("GET %s -> 404 JSON", async (path) => {
    const r = await request("GET", path, { base: mounted });
    expect(r.status).toBe(404);
    expect(r.headers["content-type"]).toBe("application/a2a+json");
    expect(r.json).toEqual(notFound("GET", path));
    expect(calls).toEqual([]);
  });
});

// ---------------------------------------------------------------- multi-segment tenant

describe("a multi-segment tenant variable ({tenant=*/*})", () => {
  let multi = "";
  beforeAll(async () => {
    const rules: HttpRuleSpec[] = [
      {
        method: "getTask",
        httpMethod: "GET",
        path: "/{tenant=*/*}/tasks/{id}",
        body: "",
        responseBody: "",
        additional: true,
        derived: false,
        pathParams: [
          { variable: "tenant", field: ["tenant"] },
          { variable: "id", field: ["id"] },
        ],
        query: ["historyLength"],
      },
    ];
    const endpoint = createHttpJsonEndpoint({
      ...withA2AProfile({}),
      methods: A2AServiceMethods,
      rules,
      required: A2AServiceRequiredFields,
      handler,
      heartbeatMs: 0,
    });
    ({ url: multi } = await listen(createNodeListener(endpoint)));
  });

  test.each<[string, unknown]>([
    ["/org/team/tasks/x", { tenant: "org/team", id: "x" }],
    ["/org/team/tasks/x?historyLength=2", { tenant: "org/team", id: "x", historyLength: 2 }],
    ["/%C3%A9/team/tasks/x", { tenant: "é/team", id: "x" }],
    // http.proto: a multi-segment value keeps an encoded slash encoded.
    ["/org%2Fa/team/tasks/x", { tenant: "org%2Fa/team", id: "x" }],
  ])("GET %s", async (path, json) => {
    const r = await request("GET", path, { base: multi });
    expect(r.status).toBe(200);
    const { tenant } = json as { tenant: string };
    expect(onlyCall()).toEqual({ method: "getTask", json, tenant });
  });

  test.each([["/org/tasks/x"], ["/a/b/c/tasks/x"], ["/org//tasks/x"]])("GET %s -> 404", async (path) => {
    const r = await request("GET", path, { base: multi });
    expect(r.status).toBe(404);
    expect(r.json).toEqual(notFound("GET", path));
  });
});
