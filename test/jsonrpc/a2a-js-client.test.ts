/**
 * Interop: the official A2A client (`@a2a-js/sdk` 1.3.0, `@a2a-js/sdk/client`)
 * drives the generated JSON-RPC server over a real socket.
 *
 * The client discovers the agent from `/.well-known/agent-card.json` (served
 * by this test's own node:http handler, not by the runtime), picks the
 * JSONRPC interface (protocolVersion 1.0) and calls all 11 methods of
 * lf.a2a.v1.A2AService on a small in-memory agent (`/a2a/jsonrpc`). A second
 * endpoint (`/a2a/failing`) runs a handler that throws on demand, so each of
 * the nine A2A error classes, from each of the 11 methods, before and after
 * the first stream event, plus the Internal error and the D15 stream checks,
 * is seen through the SDK's error types. A third (`/a2a/empty`) has no
 * handler methods at all (D18).
 *
 * Every request and response also goes through a recording `fetchImpl`, so
 * the tests can check the wire (A2A-Version header, params, content types,
 * SSE frames and heartbeats) and that all 11 JSON-RPC methods were sent.
 *
 * Checklist: part 1 (the 11 RPCs), 2 (ProtoJSON: oneofs, bytes, Struct,
 * Timestamp), 5.2/5.3 (error table, ErrorInfo in `error.data`), 7
 * (streaming), 9 (card, interface selection, tenant), 10 (JSON-RPC); D3, D5,
 * D11, D13, D14, D15, D18.
 *
 * No disagreement between the SDK and the server was found. Two SDK
 * behaviours the tests work around are noted where they apply: a JSON-RPC
 * error inside an SSE stream is thrown as a plain Error with the typed error
 * as `cause`, and ErrorInfo.metadata stays in `data` (not `err.metadata`).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { create, toJson } from "@bufbuild/protobuf";
import {
  AgentCard as SdkAgentCardCodec,
  Role,
  TaskState,
  type AgentCard as SdkAgentCard,
  type Message as SdkMessage,
  type Task as SdkTask,
} from "@a2a-js/sdk";
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
  type Client,
} from "@a2a-js/sdk/client";
import * as sdkErrors from "@a2a-js/sdk/errors";
import type { A2AErrorOptions } from "protoc-gen-a2a/runtime";
import { createA2AServiceJsonRpcListener } from "../../generated/a2a_jsonrpc.js";
import * as ours from "../../runtime/a2a/errors.js";
import {
  AgentCardSchema,
  AgentSkillSchema,
  Role as PbRole,
  StreamResponseSchema,
  TaskState as PbTaskState,
  type AgentCard,
} from "../../generated/a2a_pb.js";
import {
  collect,
  collectUntilError,
  createAgent,
  createFailingAgent,
  iso,
  listParams,
  payloadCases,
  rejectionOf,
  sdkArtifact,
  sdkStatus,
  sdkTask,
  sdkText,
  sdkUserMessage,
  send,
  textPart,
} from "../support/a2a-agent.js";
import { createReportLog } from "../support/report-log.js";

// ---------------------------------------------------------------- wire recording

interface Exchange {
  readonly url: string;
  readonly method: string;
  readonly requestHeaders: Headers;
  /** The parsed JSON request body, or undefined (GET). */
  readonly requestBody: { readonly method?: string; readonly params?: unknown } | undefined;
  readonly status: number;
  readonly contentType: string | null;
  /** The whole response body, read from a clone while the SDK reads the original. */
  readonly responseText: Promise<string>;
}

const wire: Exchange[] = [];

/** `fetch`, recording every exchange the SDK makes. */
const recordingFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const body = init?.body;
  wire.push({
    url,
    method: init?.method ?? "GET",
    requestHeaders: new Headers(init?.headers),
    requestBody: typeof body === "string" ? (JSON.parse(body) as Exchange["requestBody"]) : undefined,
    status: res.status,
    contentType: res.headers.get("content-type"),
    responseText: res
      .clone()
      .text()
      .catch(() => ""),
  });
  return res;
};

/** The JSON-RPC exchanges with one endpoint path, in order. */
const rpcExchanges = (path: string) => wire.filter((e) => new URL(e.url).pathname === path && e.method === "POST");

// ---------------------------------------------------------------- cards

const skill = { id: "echo", name: "Echo", description: "Echoes the text it is sent", tags: ["echo"] };

function cardFor(url: string, name = "Generated JSON-RPC Test Agent"): AgentCard {
  return create(AgentCardSchema, {
    name,
    description: "An in-memory agent behind the generated JSON-RPC binding",
    supportedInterfaces: [{ url, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
    version: "1.0.0",
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [skill],
  });
}

const EXTENDED_NAME = "Generated JSON-RPC Test Agent (extended)";

function extendedCardFor(url: string): AgentCard {
  const card = cardFor(url, EXTENDED_NAME);
  card.skills.push(
    create(AgentSkillSchema, { id: "audit", name: "Audit", description: "Reports on every task (authenticated callers only)", tags: ["admin"] }),
  );
  return card;
}

// ---------------------------------------------------------------- server and clients

let base = "";
const servers: http.Server[] = [];
const agent = createAgent(() => extendedCardFor(`${base}/a2a/jsonrpc`));
const failing = createFailingAgent();
/** The failing endpoint's reports of its unexpected failures, checked below (and kept off the test output). */
const failures = createReportLog();
let client: Client;
let failingClient: Client;
let emptyClient: Client;
const factory = new ClientFactory({
  transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch })],
  cardResolver: new DefaultAgentCardResolver({ fetchImpl: recordingFetch }),
});

beforeAll(async () => {
  const main = createA2AServiceJsonRpcListener(agent.handler, { heartbeatMs: 10 });
  const broken = createA2AServiceJsonRpcListener(failing.handler, { heartbeatMs: 0, logger: failures.logger });
  // A handler with no methods at all: the runtime answers every call itself (D18).
  const empty = createA2AServiceJsonRpcListener({}, { heartbeatMs: 0 });
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/.well-known/agent-card.json" && req.method === "GET") {
      const body = JSON.stringify(toJson(AgentCardSchema, cardFor(`${base}/a2a/jsonrpc`)));
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    } else if (path === "/a2a/jsonrpc") {
      main(req, res);
    } else if (path === "/a2a/failing") {
      broken(req, res);
    } else if (path === "/a2a/empty") {
      empty(req, res);
    } else {
      res.writeHead(404, { "content-length": 0 });
      res.end();
    }
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  client = await factory.createFromUrl(base);
  failingClient = await factory.createFromAgentCard(
    SdkAgentCardCodec.fromJSON(toJson(AgentCardSchema, cardFor(`${base}/a2a/failing`))),
  );
  emptyClient = await factory.createFromAgentCard(SdkAgentCardCodec.fromJSON(toJson(AgentCardSchema, cardFor(`${base}/a2a/empty`))));
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

beforeEach(() => {
  agent.reset();
  failing.set(undefined);
});

// ================================================================ happy path, all 11 methods

describe("the official @a2a-js/sdk client against the generated JSON-RPC server", () => {
  test("discovers the agent card and selects the JSONRPC 1.0 interface", async () => {
    expect(client.transport.protocolName).toBe("JSONRPC");
    expect(client.protocolVersion).toBe("1.0");
    const discovery = wire.find((e) => new URL(e.url).pathname === "/.well-known/agent-card.json");
    expect(discovery?.status).toBe(200);
    // The SDK announces its version on discovery too.
    expect(discovery?.requestHeaders.get("a2a-version")).toBe("1.0");
  });

  test("SendMessage: a blocking send returns the completed task with its artifact and history", async () => {
    const result = await client.sendMessage(send("m-1", "hello"));
    expect(result).toEqual(
      sdkTask({
        id: "task-m-1",
        contextId: "ctx-m-1",
        state: TaskState.TASK_STATE_COMPLETED,
        tick: 1,
        artifacts: [sdkArtifact("echo", "echo", ["echo: hello"])],
        history: [sdkUserMessage("m-1", "hello", "task-m-1", "ctx-m-1")],
      }),
    );
    // What the SDK put on the wire (ProtoJSON; returnImmediately false is omitted), and what the handler saw.
    expect(rpcExchanges("/a2a/jsonrpc").at(-1)?.requestBody).toEqual({
      jsonrpc: "2.0",
      id: expect.any(Number),
      method: "SendMessage",
      params: {
        message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hello", mediaType: "text/plain" }] },
        configuration: { acceptedOutputModes: ["text/plain"] },
      },
    });
    expect(agent.seen).toEqual([{ method: "SendMessage", binding: "JSONRPC", protocolVersion: "1.0", requestedExtensions: [], tenant: undefined }]);
  });

  test("SendMessage: a direct Message reply comes back as the SDK's Message", async () => {
    const result = await client.sendMessage(send("m-ping", "ping", { contextId: "ctx-chat" }));
    expect(result).toEqual({
      messageId: "m-ping-reply",
      contextId: "ctx-chat",
      taskId: "",
      role: Role.ROLE_AGENT,
      parts: [sdkText("pong")],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    });
  });

  test("SendMessage: historyLength 0 leaves the history out; continuing a terminal task is UnsupportedOperation", async () => {
    const first = (await client.sendMessage(send("m-h", "first", { historyLength: 0 }))) as SdkTask;
    expect(first.id).toBe("task-m-h");
    expect(first.history).toEqual([]);
    expect(first.artifacts).toEqual([sdkArtifact("echo", "echo", ["echo: first"])]);

    const err = await rejectionOf(client.sendMessage(send("m-h2", "again", { taskId: "task-m-h" })));
    expect(err instanceof sdkErrors.UnsupportedOperationError).toBe(true);
    expect((err as Error).message).toBe("Task task-m-h is in a terminal state");
  });

  test("SendStreamingMessage: task first, then status and artifact updates, then completed", async () => {
    const events = await collect(client.sendMessageStream(send("m-s", "stream me")));
    expect(payloadCases(events)).toEqual(["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"]);
    expect(events).toEqual([
      {
        payload: {
          $case: "task",
          value: sdkTask({
            id: "task-m-s",
            contextId: "ctx-m-s",
            state: TaskState.TASK_STATE_SUBMITTED,
            tick: 1,
            history: [sdkUserMessage("m-s", "stream me", "task-m-s", "ctx-m-s")],
          }),
        },
      },
      {
        payload: {
          $case: "statusUpdate",
          value: { taskId: "task-m-s", contextId: "ctx-m-s", status: sdkStatus(TaskState.TASK_STATE_WORKING, 2), metadata: undefined },
        },
      },
      {
        payload: {
          $case: "artifactUpdate",
          value: {
            taskId: "task-m-s",
            contextId: "ctx-m-s",
            artifact: sdkArtifact("answer", "answer", ["You said: "]),
            append: false,
            lastChunk: false,
            metadata: undefined,
          },
        },
      },
      {
        payload: {
          $case: "artifactUpdate",
          value: {
            taskId: "task-m-s",
            contextId: "ctx-m-s",
            artifact: sdkArtifact("answer", "", ["stream me"]),
            append: true,
            lastChunk: true,
            metadata: undefined,
          },
        },
      },
      {
        payload: {
          $case: "statusUpdate",
          value: { taskId: "task-m-s", contextId: "ctx-m-s", status: sdkStatus(TaskState.TASK_STATE_COMPLETED, 3), metadata: undefined },
        },
      },
    ]);

    const exchange = rpcExchanges("/a2a/jsonrpc").at(-1);
    expect(exchange?.requestBody?.method).toBe("SendStreamingMessage");
    expect(exchange?.requestHeaders.get("accept")).toBe("text/event-stream");
    expect(exchange?.contentType).toBe("text/event-stream");
  });

  test("SendStreamingMessage: heartbeat comments between slow events are invisible to the SDK (D14)", async () => {
    const events = await collect(client.sendMessageStream(send("m-slow", "answer slowly")));
    expect(payloadCases(events)).toEqual(["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"]);
    const raw = await rpcExchanges("/a2a/jsonrpc").at(-1)!.responseText;
    const frames = raw.split("\n\n").filter((f) => f !== "");
    expect(frames.filter((f) => f.startsWith("data: "))).toHaveLength(5);
    expect(frames.filter((f) => f === ": keep-alive").length).toBeGreaterThan(0);
    for (const frame of frames) expect(frame === ": keep-alive" || frame.startsWith("data: ")).toBe(true);
  });

  test("GetTask: the streamed task is stored completed with the whole artifact", async () => {
    await collect(client.sendMessageStream(send("m-g", "keep me")));
    const task = await client.getTask({ tenant: "", id: "task-m-g" });
    expect(task).toEqual(
      sdkTask({
        id: "task-m-g",
        contextId: "ctx-m-g",
        state: TaskState.TASK_STATE_COMPLETED,
        tick: 3,
        artifacts: [sdkArtifact("answer", "answer", ["You said: ", "keep me"])],
        history: [sdkUserMessage("m-g", "keep me", "task-m-g", "ctx-m-g")],
      }),
    );
    const trimmed = await client.getTask({ tenant: "", id: "task-m-g", historyLength: 0 });
    expect(trimmed.history).toEqual([]);
  });

  test("GetTask: an unknown id is the SDK's TaskNotFoundError", async () => {
    const err = await rejectionOf(client.getTask({ tenant: "", id: "nope" }));
    expect(err instanceof sdkErrors.TaskNotFoundError).toBe(true);
    expect((err as Error).message).toBe("Task nope was not found");
  });

  test("ListTasks: filters, newest first, pagination, artifacts only when asked", async () => {
    await client.sendMessage(send("m-a", "a", { contextId: "ctx-list-1" })); // COMPLETED at tick 1
    await client.sendMessage(send("m-b", "b", { contextId: "ctx-list-1", returnImmediately: true })); // WORKING at tick 2
    await client.sendMessage(send("m-c", "c", { contextId: "ctx-list-2" })); // COMPLETED at tick 3
    const historyOf = (id: string, text: string, contextId: string) => [sdkUserMessage(id, text, `task-${id}`, contextId)];
    const a = sdkTask({ id: "task-m-a", contextId: "ctx-list-1", state: TaskState.TASK_STATE_COMPLETED, tick: 1, history: historyOf("m-a", "a", "ctx-list-1") });
    const b = sdkTask({ id: "task-m-b", contextId: "ctx-list-1", state: TaskState.TASK_STATE_WORKING, tick: 2, history: historyOf("m-b", "b", "ctx-list-1") });
    const c = sdkTask({ id: "task-m-c", contextId: "ctx-list-2", state: TaskState.TASK_STATE_COMPLETED, tick: 3, history: historyOf("m-c", "c", "ctx-list-2") });

    expect(await client.listTasks(listParams({ contextId: "ctx-list-1" }))).toEqual({ tasks: [b, a], nextPageToken: "", pageSize: 50, totalSize: 2 });
    expect(await client.listTasks(listParams({ status: TaskState.TASK_STATE_COMPLETED }))).toEqual({
      tasks: [c, a],
      nextPageToken: "",
      pageSize: 50,
      totalSize: 2,
    });
    expect(await client.listTasks(listParams({ pageSize: 1 }))).toEqual({ tasks: [c], nextPageToken: "1", pageSize: 1, totalSize: 3 });
    expect(await client.listTasks(listParams({ pageSize: 2, pageToken: "1" }))).toEqual({ tasks: [b, a], nextPageToken: "", pageSize: 2, totalSize: 3 });
    // statusTimestampAfter travels as an RFC 3339 string and is decoded as a Timestamp (inclusive).
    expect(await client.listTasks(listParams({ statusTimestampAfter: iso(2) }))).toEqual({ tasks: [c, b], nextPageToken: "", pageSize: 50, totalSize: 2 });
    const withArtifacts = await client.listTasks(listParams({ contextId: "ctx-list-2", includeArtifacts: true }));
    expect(withArtifacts.tasks.map((t) => t.artifacts)).toEqual([[sdkArtifact("echo", "echo", ["echo: c"])]]);

    // The last page's nextPageToken "" is on the wire, not just the SDK's default (D11).
    const lastPageCall = rpcExchanges("/a2a/jsonrpc").find((e) => (e.requestBody?.params as { pageToken?: unknown }).pageToken === "1");
    const lastPage = JSON.parse(await lastPageCall!.responseText) as { result: Record<string, unknown> };
    expect(lastPage.result).toMatchObject({ nextPageToken: "", pageSize: 2, totalSize: 3 });
  });

  test("ListTasks: a pageSize out of range is the SDK's RequestMalformedError (InvalidParams -32602)", async () => {
    const err = await rejectionOf(client.listTasks(listParams({ pageSize: 500 })));
    expect(err instanceof sdkErrors.RequestMalformedError).toBe(true);
    expect(err).toMatchObject({ envelopeCode: -32602, message: "pageSize must be between 1 and 100" });
  });

  test("CancelTask: a working task is canceled; canceling it again is TaskNotCancelable", async () => {
    await client.sendMessage(send("m-x", "long job", { returnImmediately: true }));
    const canceled = await client.cancelTask({ tenant: "", id: "task-m-x", metadata: { reason: "user" } });
    expect(canceled).toEqual(
      sdkTask({
        id: "task-m-x",
        contextId: "ctx-m-x",
        state: TaskState.TASK_STATE_CANCELED,
        tick: 2,
        history: [sdkUserMessage("m-x", "long job", "task-m-x", "ctx-m-x")],
      }),
    );
    const err = await rejectionOf(client.cancelTask({ tenant: "", id: "task-m-x", metadata: undefined }));
    expect(err instanceof sdkErrors.TaskNotCancelableError).toBe(true);
    expect((err as Error).message).toBe("Task task-m-x is CANCELED and cannot be canceled");
  });

  test("SubscribeToTask: the current task first, then the rest of its updates until completed", async () => {
    await client.sendMessage(send("m-r", "background", { returnImmediately: true })); // WORKING at tick 1
    const events = await collect(client.resubscribeTask({ tenant: "", id: "task-m-r" }));
    expect(events).toEqual([
      {
        payload: {
          $case: "task",
          value: sdkTask({
            id: "task-m-r",
            contextId: "ctx-m-r",
            state: TaskState.TASK_STATE_WORKING,
            tick: 1,
            history: [sdkUserMessage("m-r", "background", "task-m-r", "ctx-m-r")],
          }),
        },
      },
      {
        payload: {
          $case: "artifactUpdate",
          value: {
            taskId: "task-m-r",
            contextId: "ctx-m-r",
            artifact: sdkArtifact("resumed", "resumed", ["finished while you watched"]),
            append: false,
            lastChunk: true,
            metadata: undefined,
          },
        },
      },
      {
        payload: {
          $case: "statusUpdate",
          value: { taskId: "task-m-r", contextId: "ctx-m-r", status: sdkStatus(TaskState.TASK_STATE_COMPLETED, 2), metadata: undefined },
        },
      },
    ]);
    expect(rpcExchanges("/a2a/jsonrpc").at(-1)?.requestBody).toMatchObject({ method: "SubscribeToTask", params: { id: "task-m-r" } });

    // Now terminal: the spec's UnsupportedOperationError, sent before any event (a plain JSON-RPC error body).
    const { events: none, error } = await collectUntilError(client.resubscribeTask({ tenant: "", id: "task-m-r" }));
    expect(none).toEqual([]);
    expect(error instanceof sdkErrors.UnsupportedOperationError).toBe(true);
    expect(rpcExchanges("/a2a/jsonrpc").at(-1)?.contentType).toBe("application/json");
  });

  test("push notification configs: create, get, list, delete (idempotent)", async () => {
    await client.sendMessage(send("m-p", "notify me", { returnImmediately: true }));
    const created = await client.createTaskPushNotificationConfig({
      tenant: "",
      id: "",
      taskId: "task-m-p",
      url: "https://hooks.example.com/a2a",
      token: "tok-1",
      authentication: { scheme: "Bearer", credentials: "s3cret" },
    });
    const cfg1 = {
      tenant: "",
      id: "cfg-1",
      taskId: "task-m-p",
      url: "https://hooks.example.com/a2a",
      token: "tok-1",
      authentication: { scheme: "Bearer", credentials: "s3cret" },
    };
    expect(created).toEqual(cfg1);

    const audit = { tenant: "", id: "audit", taskId: "task-m-p", url: "https://audit.example.com/hook", token: "", authentication: undefined };
    expect(await client.createTaskPushNotificationConfig({ ...audit })).toEqual(audit);

    expect(await client.getTaskPushNotificationConfig({ tenant: "", taskId: "task-m-p", id: "cfg-1" })).toEqual(cfg1);
    expect(await client.listTaskPushNotificationConfig({ tenant: "", taskId: "task-m-p", pageSize: 0, pageToken: "" })).toEqual({
      configs: [cfg1, audit],
      nextPageToken: "",
    });

    await expect(client.deleteTaskPushNotificationConfig({ tenant: "", taskId: "task-m-p", id: "cfg-1" })).resolves.toBeUndefined();
    await expect(client.deleteTaskPushNotificationConfig({ tenant: "", taskId: "task-m-p", id: "cfg-1" })).resolves.toBeUndefined();
    expect(await client.listTaskPushNotificationConfig({ tenant: "", taskId: "task-m-p", pageSize: 0, pageToken: "" })).toEqual({
      configs: [audit],
      nextPageToken: "",
    });
    const deleteReply = JSON.parse(await rpcExchanges("/a2a/jsonrpc").at(-2)!.responseText) as unknown;
    expect(deleteReply).toMatchObject({ jsonrpc: "2.0", result: {} });

    const gone = await rejectionOf(client.getTaskPushNotificationConfig({ tenant: "", taskId: "task-m-p", id: "cfg-1" }));
    expect(gone instanceof sdkErrors.TaskNotFoundError).toBe(true);
    expect((gone as Error).message).toBe("Push notification config cfg-1 was not found for task task-m-p");

    const noTask = await rejectionOf(
      client.createTaskPushNotificationConfig({ tenant: "", id: "", taskId: "missing", url: "https://x.example", token: "", authentication: undefined }),
    );
    expect(noTask instanceof sdkErrors.TaskNotFoundError).toBe(true);
  });

  test("GetExtendedAgentCard: Client.getAgentCard() fetches and returns the extended card", async () => {
    const card: SdkAgentCard = await client.getAgentCard();
    expect(card.name).toBe(EXTENDED_NAME);
    expect(card.version).toBe("1.0.0");
    expect(card.skills.map((s) => s.id)).toEqual(["echo", "audit"]);
    expect(card.capabilities).toEqual({ streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true });
    expect(card.supportedInterfaces).toEqual([{ url: `${base}/a2a/jsonrpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }]);
    expect(rpcExchanges("/a2a/jsonrpc").at(-1)?.requestBody).toMatchObject({ method: "GetExtendedAgentCard", params: {} });
  });

  test("service parameters: A2A-Version and A2A-Extensions reach the handler's CallContext", async () => {
    await client.sendMessage(send("m-e", "hi"), {
      serviceParameters: ServiceParameters.create(withA2AExtensions("urn:example:ext-a", "urn:example:ext-b")),
    });
    expect(agent.seen).toEqual([
      { method: "SendMessage", binding: "JSONRPC", protocolVersion: "1.0", requestedExtensions: ["urn:example:ext-a", "urn:example:ext-b"], tenant: undefined },
    ]);
  });

  test("a missing REQUIRED field the SDK leaves out is InvalidParams with a BadRequest detail (D11)", async () => {
    // The SDK drops empty strings, so id "" goes out as params {} and the server must reject it.
    const err = await rejectionOf(client.getTask({ tenant: "", id: "" }));
    expect(err instanceof sdkErrors.RequestMalformedError).toBe(true);
    expect(err).toMatchObject({ envelopeCode: -32602, message: "missing required field: id" });
    expect((err as { data?: unknown }).data).toEqual([
      { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: "id", description: expect.any(String) }] },
    ]);
  });

  test("SendMessage: text, raw, url and data parts, metadata and references round-trip unchanged", async () => {
    const parts: SdkMessage["parts"] = [
      { content: { $case: "text", value: "see attached" }, metadata: { lang: "en" }, filename: "", mediaType: "text/plain" },
      { content: { $case: "raw", value: Buffer.from([0, 1, 2, 250, 255]) }, metadata: undefined, filename: "blob.bin", mediaType: "application/octet-stream" },
      { content: { $case: "url", value: "https://files.example.com/report.pdf" }, metadata: undefined, filename: "report.pdf", mediaType: "application/pdf" },
      {
        content: { $case: "data", value: { score: 0.5, tags: ["a", "b"], nested: { ok: true, none: null } } },
        metadata: undefined,
        filename: "",
        mediaType: "application/json",
      },
    ];
    const message: SdkMessage = {
      messageId: "m-parts",
      contextId: "",
      taskId: "",
      role: Role.ROLE_USER,
      parts,
      metadata: { trace: "abc", n: 3 },
      extensions: ["urn:example:ext-a"],
      referenceTaskIds: ["task-older"],
    };
    const result = (await client.sendMessage({ tenant: "", message, configuration: undefined, metadata: { origin: "test" } })) as SdkTask;
    expect(result.history).toEqual([{ ...message, taskId: "task-m-parts", contextId: "ctx-m-parts" }]);
    expect(result.artifacts).toEqual([sdkArtifact("echo", "echo", ["echo: see attached"])]);
  });

  test("an interface tenant goes into every request and reaches CallContext.tenant (spec 8.3.2)", async () => {
    const card = cardFor(`${base}/a2a/jsonrpc`);
    card.supportedInterfaces[0]!.tenant = "acme";
    const tenantClient = await factory.createFromAgentCard(SdkAgentCardCodec.fromJSON(toJson(AgentCardSchema, card)));
    await tenantClient.sendMessage(send("m-t", "hi"));
    expect((await tenantClient.getTask({ tenant: "", id: "task-m-t" })).id).toBe("task-m-t");
    expect((await tenantClient.getAgentCard()).name).toBe(EXTENDED_NAME);
    expect(agent.seen.map((s) => [s.method, s.tenant])).toEqual([
      ["SendMessage", "acme"],
      ["GetTask", "acme"],
      ["GetExtendedAgentCard", "acme"],
    ]);
    const sent = rpcExchanges("/a2a/jsonrpc")
      .slice(-3)
      .map((e) => (e.requestBody?.params as { tenant?: unknown } | undefined)?.tenant);
    expect(sent).toEqual(["acme", "acme", "acme"]);
  });

  // Runs last in this block: every method above went over the wire.
  test("all 11 JSON-RPC methods were sent, each with A2A-Version 1.0 and application/json, answered as JSON-RPC 2.0", async () => {
    const exchanges = rpcExchanges("/a2a/jsonrpc");
    expect(new Set(exchanges.map((e) => e.requestBody?.method))).toEqual(
      new Set([
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
      ]),
    );
    for (const e of exchanges) {
      expect(e.requestHeaders.get("a2a-version")).toBe("1.0");
      expect(e.requestHeaders.get("content-type")).toBe("application/json");
      expect(e.status).toBe(200);
      expect(["application/json", "text/event-stream"]).toContain(e.contentType);
    }
  });
});

// ================================================================ every A2A error through the SDK

type SdkErrorClass = new (options?: sdkErrors.A2AErrorOptions | string) => sdkErrors.A2AError;
type OurErrorClass = new (message?: string, options?: A2AErrorOptions) => Error;

interface ErrorCase {
  readonly name: string;
  readonly ours: OurErrorClass;
  readonly sdk: SdkErrorClass;
  readonly code: number;
  readonly reason: string;
  readonly defaultMessage: string;
}

const errorCases: readonly ErrorCase[] = [
  { name: "TaskNotFoundError", ours: ours.TaskNotFoundError, sdk: sdkErrors.TaskNotFoundError, code: -32001, reason: "TASK_NOT_FOUND", defaultMessage: "Task not found" },
  { name: "TaskNotCancelableError", ours: ours.TaskNotCancelableError, sdk: sdkErrors.TaskNotCancelableError, code: -32002, reason: "TASK_NOT_CANCELABLE", defaultMessage: "Task cannot be canceled" },
  { name: "PushNotificationNotSupportedError", ours: ours.PushNotificationNotSupportedError, sdk: sdkErrors.PushNotificationNotSupportedError, code: -32003, reason: "PUSH_NOTIFICATION_NOT_SUPPORTED", defaultMessage: "Push notifications are not supported" },
  { name: "UnsupportedOperationError", ours: ours.UnsupportedOperationError, sdk: sdkErrors.UnsupportedOperationError, code: -32004, reason: "UNSUPPORTED_OPERATION", defaultMessage: "This operation is not supported" },
  { name: "ContentTypeNotSupportedError", ours: ours.ContentTypeNotSupportedError, sdk: sdkErrors.ContentTypeNotSupportedError, code: -32005, reason: "CONTENT_TYPE_NOT_SUPPORTED", defaultMessage: "Content type not supported" },
  { name: "InvalidAgentResponseError", ours: ours.InvalidAgentResponseError, sdk: sdkErrors.InvalidAgentResponseError, code: -32006, reason: "INVALID_AGENT_RESPONSE", defaultMessage: "The agent returned an invalid response" },
  { name: "ExtendedAgentCardNotConfiguredError", ours: ours.ExtendedAgentCardNotConfiguredError, sdk: sdkErrors.ExtendedAgentCardNotConfiguredError, code: -32007, reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED", defaultMessage: "The extended agent card is not configured" },
  { name: "ExtensionSupportRequiredError", ours: ours.ExtensionSupportRequiredError, sdk: sdkErrors.ExtensionSupportRequiredError, code: -32008, reason: "EXTENSION_SUPPORT_REQUIRED", defaultMessage: "A required extension was not requested" },
  { name: "VersionNotSupportedError", ours: ours.VersionNotSupportedError, sdk: sdkErrors.VersionNotSupportedError, code: -32009, reason: "VERSION_NOT_SUPPORTED", defaultMessage: "Protocol version not supported" },
];

/** Each of the 11 methods, called through an SDK Client (the failing or the empty endpoint). */
const callsOn = (c: () => Client): readonly (readonly [string, () => Promise<unknown>])[] => [
  ["SendMessage", () => c().sendMessage(send("m-f", "x"))],
  ["SendStreamingMessage", () => collect(c().sendMessageStream(send("m-f", "x")))],
  ["GetTask", () => c().getTask({ tenant: "", id: "t-f" })],
  ["ListTasks", () => c().listTasks(listParams())],
  ["CancelTask", () => c().cancelTask({ tenant: "", id: "t-f", metadata: undefined })],
  ["SubscribeToTask", () => collect(c().resubscribeTask({ tenant: "", id: "t-f" }))],
  [
    "CreateTaskPushNotificationConfig",
    () => c().createTaskPushNotificationConfig({ tenant: "", id: "", taskId: "t-f", url: "https://h.example", token: "", authentication: undefined }),
  ],
  ["GetTaskPushNotificationConfig", () => c().getTaskPushNotificationConfig({ tenant: "", taskId: "t-f", id: "c" })],
  ["ListTaskPushNotificationConfigs", () => c().listTaskPushNotificationConfig({ tenant: "", taskId: "t-f", pageSize: 0, pageToken: "" })],
  ["DeleteTaskPushNotificationConfig", () => c().deleteTaskPushNotificationConfig({ tenant: "", taskId: "t-f", id: "c" })],
  ["GetExtendedAgentCard", () => c().getAgentCard()],
];
const failingCalls = callsOn(() => failingClient);

const errorInfo = (reason: string, metadata?: Record<string, string>) => ({
  "@type": "type.googleapis.com/google.rpc.ErrorInfo",
  reason,
  domain: "a2a-protocol.org",
  ...(metadata === undefined ? {} : { metadata }),
});

/** Asserts `err` is exactly the SDK's class for `c` (and no other A2A class), as a JSON-RPC error. */
function expectSdkError(err: unknown, c: ErrorCase, message: string, metadata?: Record<string, string>) {
  expect(err instanceof c.sdk).toBe(true);
  expect(err instanceof sdkErrors.A2AError).toBe(true);
  for (const other of errorCases) if (other !== c) expect(err instanceof other.sdk).toBe(false);
  expect(sdkErrors.isJsonRpcError(err)).toBe(true);
  const e = err as sdkErrors.JsonRpcA2AError;
  expect(e.name).toBe(c.name);
  expect(e.reason).toBe(c.reason);
  expect(e.envelopeCode).toBe(c.code);
  expect(e.message).toBe(message);
  // D3: ErrorInfo always travels in error.data. The SDK classifies JSON-RPC errors by
  // code alone and leaves `data` as it came, so ErrorInfo.metadata is checked there:
  // unlike its REST path (fromRestErrorBody), its JSON-RPC path (fromJsonRpcErrorResponse)
  // does not copy it onto `err.metadata`. An SDK gap, not a wire disagreement.
  expect(e.data).toEqual([errorInfo(c.reason, metadata)]);
}

describe.each(errorCases)("$name thrown by the handler", (c) => {
  test.each(failingCalls)("reaches the SDK client as its %s error", async (method, call) => {
    failing.set(() => new c.ours(`${c.name} raised in ${method}`, { metadata: { method } }));
    const err = await rejectionOf(call());
    expectSdkError(err, c, `${c.name} raised in ${method}`, { method });
  });

  test("without a message: the table's default message arrives verbatim", async () => {
    failing.set(() => new c.ours());
    const err = await rejectionOf(failingClient.getTask({ tenant: "", id: "t-f" }));
    expectSdkError(err, c, c.defaultMessage);
  });

  test.each([
    ["SendStreamingMessage", () => failingClient.sendMessageStream(send("m-f", "x"))],
    ["SubscribeToTask", () => failingClient.resubscribeTask({ tenant: "", id: "t-f" })],
  ] as const)("after the first event of %s: the event arrives, then the error", async (method, open) => {
    failing.set(
      () => new c.ours(`${c.name} mid-stream in ${method}`, { metadata: { method } }),
      [create(StreamResponseSchema, { payload: { case: "task", value: { id: "t-f", contextId: "c-f", status: { state: PbTaskState.WORKING } } } })],
    );
    const { events, error } = await collectUntilError(open());
    expect(payloadCases(events)).toEqual(["task"]);
    expect(events[0]?.payload?.value).toMatchObject({ id: "t-f", contextId: "c-f", status: { state: TaskState.TASK_STATE_WORKING } });
    // SDK behaviour: a JSON-RPC error inside an SSE stream is thrown as a plain Error whose
    // `cause` is the typed error (json_rpc_transport.ts _processSseEventData). Not a protocol
    // problem (the spec leaves mid-stream errors to the binding's error body, which we send),
    // so the typed error is checked on `cause`.
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(`(Code: ${c.code})`);
    expectSdkError((error as Error).cause, c, `${c.name} mid-stream in ${method}`, { method });

    // On the wire: one data event with the result, one with the error envelope, same id.
    const raw = await rpcExchanges("/a2a/failing").at(-1)!.responseText;
    const data = raw
      .split("\n\n")
      .filter((f) => f.startsWith("data: "))
      .map((f) => JSON.parse(f.slice(6)) as { id: unknown; result?: unknown; error?: { code: number } });
    expect(data).toHaveLength(2);
    expect(data[1]?.id).toBe(data[0]?.id);
    expect(data[1]?.error?.code).toBe(c.code);
  });
});

describe("other failures through the SDK", () => {
  test("an unexpected exception is -32603 Internal error without its message, for unary calls, and reported on the server", async () => {
    failing.set(() => new Error("db password=hunter2"));
    failures.reports.length = 0;
    const err = await rejectionOf(failingClient.getTask({ tenant: "", id: "t-f" }));
    expect(failures.reports).toEqual([{ logged: "handler failed", binding: "JSONRPC", method: "GetTask", requestId: expect.any(String), message: "db password=hunter2" }]);
    expect(err instanceof sdkErrors.JsonRpcTransportError).toBe(true);
    for (const c of errorCases) expect(err instanceof c.sdk).toBe(false);
    expect(err).toMatchObject({ envelopeCode: -32603, message: "Internal error" });
    expect(JSON.stringify(err)).not.toContain("hunter2");
    expect(await rpcExchanges("/a2a/failing").at(-1)!.responseText).not.toContain("hunter2");
  });

  test("an unexpected exception after the first event ends the stream with -32603, and is reported on the server", async () => {
    failures.reports.length = 0;
    failing.set(
      () => new Error("db password=hunter2"),
      [create(StreamResponseSchema, { payload: { case: "task", value: { id: "t-f", contextId: "c-f", status: { state: PbTaskState.WORKING } } } })],
    );
    const { events, error } = await collectUntilError(failingClient.sendMessageStream(send("m-f", "x")));
    expect(payloadCases(events)).toEqual(["task"]);
    const cause = (error as Error).cause;
    expect(cause instanceof sdkErrors.JsonRpcTransportError).toBe(true);
    expect(cause).toMatchObject({ envelopeCode: -32603, message: "Internal error" });
    expect(await rpcExchanges("/a2a/failing").at(-1)!.responseText).not.toContain("hunter2");
    expect(failures.reports).toEqual([{ logged: "handler failed", binding: "JSONRPC", method: "SendStreamingMessage", requestId: expect.any(String), message: "db password=hunter2" }]);
  });

  test.each(callsOn(() => emptyClient))("D18: %s left out of the handler is the SDK's matching error", async (method, call) => {
    const err = await rejectionOf(call());
    const push = method.includes("PushNotificationConfig");
    const c = errorCases.find((e) => e.name === (push ? "PushNotificationNotSupportedError" : "UnsupportedOperationError"))!;
    expectSdkError(err, c, `${method} is not supported by this agent`);
  });

  test("D5: the runtime refuses A2A-Version 0.3 and a missing version with VersionNotSupported; 1.0.1 counts as 1.0", async () => {
    // Client always sends its own version (withNormalizedHeaders), so these go through the transport underneath it.
    const versionError = (requested: string) => ({
      envelopeCode: -32009,
      message: `Protocol version ${requested} is not supported. Supported: 1.0. Send A2A-Version: 1.0 with each request`,
      reason: "VERSION_NOT_SUPPORTED",
    });
    const old = await rejectionOf(client.transport.getTask({ tenant: "", id: "x" }, { serviceParameters: { "A2A-Version": "0.3" } }));
    expect(old instanceof sdkErrors.VersionNotSupportedError).toBe(true);
    expect(old).toMatchObject(versionError("0.3"));

    const missing = await rejectionOf(client.transport.getTask({ tenant: "", id: "x" }, { serviceParameters: {} }));
    expect(rpcExchanges("/a2a/jsonrpc").at(-1)?.requestHeaders.has("a2a-version")).toBe(false);
    expect(missing instanceof sdkErrors.VersionNotSupportedError).toBe(true);
    expect(missing).toMatchObject(versionError("0.3"));

    const streamed = await collectUntilError(client.transport.sendMessageStream(send("m-v", "x"), { serviceParameters: { "A2A-Version": "2.0" } }));
    expect(streamed.events).toEqual([]);
    expect(streamed.error instanceof sdkErrors.VersionNotSupportedError).toBe(true);
    expect(streamed.error).toMatchObject(versionError("2.0"));
    expect(agent.seen).toEqual([]);

    const patch = await rejectionOf(client.transport.getTask({ tenant: "", id: "x" }, { serviceParameters: { "A2A-Version": "1.0.1" } }));
    expect(patch instanceof sdkErrors.TaskNotFoundError).toBe(true);
    expect(agent.seen.map((s) => s.protocolVersion)).toEqual(["1.0"]);
  });

  test("D15: a stream whose first event is a status update is InvalidAgentResponse, before any event", async () => {
    failing.set(undefined, [
      create(StreamResponseSchema, {
        payload: { case: "statusUpdate", value: { taskId: "t-f", contextId: "c-f", status: { state: PbTaskState.WORKING } } },
      }),
    ]);
    const { events, error } = await collectUntilError(failingClient.sendMessageStream(send("m-f", "x")));
    expect(events).toEqual([]);
    expect(error instanceof sdkErrors.InvalidAgentResponseError).toBe(true);
    expect(error).toMatchObject({ envelopeCode: -32006 });
    expect(rpcExchanges("/a2a/failing").at(-1)?.contentType).toBe("application/json");
  });

  test("D15: an event after a message ends the stream with InvalidAgentResponse", async () => {
    failing.set(undefined, [
      create(StreamResponseSchema, {
        payload: { case: "message", value: { messageId: "r-1", contextId: "c-f", role: PbRole.AGENT, parts: [textPart("done")] } },
      }),
      create(StreamResponseSchema, {
        payload: { case: "statusUpdate", value: { taskId: "t-f", contextId: "c-f", status: { state: PbTaskState.WORKING } } },
      }),
    ]);
    const { events, error } = await collectUntilError(failingClient.sendMessageStream(send("m-f", "x")));
    expect(payloadCases(events)).toEqual(["message"]);
    expect((error as Error).cause instanceof sdkErrors.InvalidAgentResponseError).toBe(true);
    expect((error as Error).cause).toMatchObject({ envelopeCode: -32006 });
  });
});
