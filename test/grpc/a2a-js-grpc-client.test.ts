/**
 * Interop: the official A2A gRPC client (`@a2a-js/sdk` 1.3.0,
 * `@a2a-js/sdk/client/grpc`, GrpcTransportFactory behind the SDK's
 * ClientFactory) drives the generated gRPC service on a real grpc-js
 * server (insecure, 127.0.0.1:0).
 *
 * Three servers: the shared in-memory agent (test/support/a2a-agent.ts), a
 * handler that throws on demand (every one of the nine A2A error classes,
 * from each of the 11 methods, before and after the first stream event, a
 * plain Error, the D15 stream checks), and a handler with no methods (D18).
 * A fourth one runs with `versions.acceptMissing` to show that option (see
 * the D5 test for why the default is otherwise kept everywhere).
 *
 * Version negotiation: the SDK's gRPC transport itself puts no version in
 * the metadata, but the SDK `Client` wrapping it always adds
 * `A2A-Version: <interface protocolVersion>` as a service parameter
 * (multitransport-client withNormalizedHeaders), which the transport copies
 * into the call metadata (lowercased by grpc-js). So the SDK works as is
 * against the strict default (a missing version is 0.3 and refused); only a
 * caller that uses the bare transport sends no version.
 *
 * Every handler call is recorded with its metadata (through the CallContext),
 * so the tests can check that all 11 RPCs arrived with `a2a-version: 1.0`.
 *
 * The SDK decodes `google.rpc.ErrorInfo` from `grpc-status-details-bin` and
 * picks its error class by `reason`; it copies ErrorInfo.metadata onto
 * `err.metadata` (unlike its JSON-RPC path) and the gRPC status onto
 * `err.status`. The generic errors (Internal, InvalidParams) carry no
 * ErrorInfo (D3), so on gRPC the SDK reports them as its generic gRPC error
 * ("gRPC error for <method>: <code> <message>"), not as RequestMalformedError
 * as on JSON-RPC, where it classifies by the -32602 code. The tests assert
 * that, since it follows from D3 rather than from a wire disagreement.
 *
 * Timestamps: the SDK's gRPC decoder gives Date.toISOString() text (with
 * milliseconds), so the shared sdkTask/sdkStatus are adapted locally.
 */
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toJson } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import {
  AgentCard as SdkAgentCardCodec,
  Role,
  TaskState,
  type AgentCard as SdkAgentCard,
  type Task as SdkTask,
} from "@a2a-js/sdk";
import { ClientFactory, ServiceParameters, withA2AExtensions, type Client } from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import * as sdkErrors from "@a2a-js/sdk/errors";
import * as sdkGrpcErrors from "@a2a-js/sdk/errors/grpc";
import type { A2AErrorOptions, CallContext } from "protoc-gen-a2a/runtime";
import type { A2AGrpcOptions } from "protoc-gen-a2a/runtime/internal";
import { addA2AServiceToServer } from "../../generated/a2a_grpc.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import * as ours from "../../runtime/a2a/errors.js";
import {
  AgentCardSchema,
  AgentSkillSchema,
  Role as PbRole,
  StreamResponseSchema,
  TaskState as PbTaskState,
  type AgentCard,
} from "../../generated/a2a_pb.js";
import { StatusSchema } from "../../runtime/gen/google/rpc/status_pb.js";
import { ErrorInfoSchema } from "../../runtime/gen/google/rpc/error_details_pb.js";
import {
  BASE_MS,
  collect,
  collectUntilError,
  createAgent,
  createFailingAgent,
  iso,
  listParams,
  payloadCases,
  rejectionOf,
  sdkArtifact,
  sdkTask as sdkJsonTask,
  sdkText,
  sdkUserMessage,
  send,
  textPart,
} from "../support/a2a-agent.js";
import { createReportLog } from "../support/report-log.js";
import { BadRequestSchema } from "../../runtime/gen/google/rpc/error_details_pb.js";

// The SDK's gRPC decoder (ts-proto) turns a Timestamp into Date.toISOString(),
// always with milliseconds, where its JSON path keeps the server's RFC 3339
// text ("...:01Z"). Same instant, different spelling: the shared helpers are
// adapted here rather than changed.
const sdkStatus = (state: TaskState, tick: number) => ({ state, message: undefined, timestamp: new Date(BASE_MS + tick * 1000).toISOString() });
const sdkTask = (fields: Parameters<typeof sdkJsonTask>[0]) => ({ ...sdkJsonTask(fields), status: sdkStatus(fields.state, fields.tick) });

// ---------------------------------------------------------------- call recording

interface Call {
  readonly server: string;
  readonly method: string;
  readonly version: string | null;
  readonly extensions: string | null;
}

const calls: Call[] = [];

/** `handler` with every method recording its call (and its metadata, via the context) first. */
function recording(server: string, handler: A2AServiceHandler): A2AServiceHandler {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(handler)) {
    if (typeof fn !== "function") continue;
    wrapped[name] = (request: unknown, context: CallContext) => {
      calls.push({ server, method: name, version: context.headers.get("a2a-version"), extensions: context.headers.get("a2a-extensions") });
      return (fn as (r: unknown, c: CallContext) => unknown).call(handler, request, context);
    };
  }
  return wrapped as A2AServiceHandler;
}

// ---------------------------------------------------------------- cards

const skill = { id: "echo", name: "Echo", description: "Echoes the text it is sent", tags: ["echo"] };

/** A card with one GRPC interface; grpc-js takes the target in host:port form. */
function cardFor(target: string, name = "Generated gRPC Test Agent"): AgentCard {
  return create(AgentCardSchema, {
    name,
    description: "An in-memory agent behind the generated gRPC binding",
    supportedInterfaces: [{ url: target, protocolBinding: "GRPC", protocolVersion: "1.0" }],
    version: "1.0.0",
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [skill],
  });
}

const EXTENDED_NAME = "Generated gRPC Test Agent (extended)";

function extendedCardFor(target: string): AgentCard {
  const card = cardFor(target, EXTENDED_NAME);
  card.skills.push(
    create(AgentSkillSchema, { id: "audit", name: "Audit", description: "Reports on every task (authenticated callers only)", tags: ["admin"] }),
  );
  return card;
}

const sdkCard = (card: AgentCard): SdkAgentCard => SdkAgentCardCodec.fromJSON(toJson(AgentCardSchema, card));

// ---------------------------------------------------------------- servers and clients

const servers: grpc.Server[] = [];
const clients: Client[] = [];
let mainTarget = "";
const agent = createAgent(() => extendedCardFor(mainTarget));
const failing = createFailingAgent();
/** What the failing server reported of its unexpected failures (a plain Error), checked below and kept off the test output. */
const { logger, reports: reported } = createReportLog();
const factory = new ClientFactory({ transports: [new GrpcTransportFactory()] });
let client: Client;
let failingClient: Client;
let emptyClient: Client;
let lenientClient: Client;

async function serve(name: string, handler: A2AServiceHandler, options?: A2AGrpcOptions): Promise<string> {
  const server = new grpc.Server();
  addA2AServiceToServer(server, recording(name, handler), options);
  servers.push(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return `127.0.0.1:${port}`;
}

async function clientFor(card: AgentCard): Promise<Client> {
  const c = await factory.createFromAgentCard(sdkCard(card));
  clients.push(c);
  return c;
}

beforeAll(async () => {
  mainTarget = await serve("main", agent.handler);
  const failingTarget = await serve("failing", failing.handler, { logger });
  // A handler with no methods at all: the runtime answers every call itself (D18).
  const emptyTarget = await serve("empty", {});
  // Only for the D5 test: a caller using the bare transport sends no version.
  const lenientTarget = await serve("lenient", agent.handler, { versions: { supported: ["1.0"], acceptMissing: true } });
  client = await clientFor(cardFor(mainTarget));
  failingClient = await clientFor(cardFor(failingTarget));
  emptyClient = await clientFor(cardFor(emptyTarget));
  lenientClient = await clientFor(cardFor(lenientTarget));
});

afterAll(() => {
  // The SDK has no close(); its transport keeps the grpc-js client in `grpcClient`.
  for (const c of clients) (c.transport as unknown as { grpcClient?: grpc.Client }).grpcClient?.close();
  for (const s of servers) s.forceShutdown();
});

beforeEach(() => {
  agent.reset();
  failing.set(undefined);
});

const mainCalls = () => calls.filter((c) => c.server === "main");

// ================================================================ happy path, all 11 methods

describe("the official @a2a-js/sdk gRPC client against the generated gRPC server", () => {
  test("selects the GRPC 1.0 interface from the card", () => {
    expect(client.transport.protocolName).toBe("GRPC");
    expect(client.protocolVersion).toBe("1.0");
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
    expect(agent.seen).toEqual([{ method: "SendMessage", binding: "GRPC", protocolVersion: "1.0", requestedExtensions: [], tenant: undefined }]);
    expect(mainCalls().at(-1)).toEqual({ server: "main", method: "sendMessage", version: "1.0", extensions: null });
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
    const err = await rejectionOf(client.sendMessage(send("m-h2", "again", { taskId: "task-m-h" })));
    expect(err instanceof sdkErrors.UnsupportedOperationError).toBe(true);
    expect(err).toMatchObject({ message: "Task task-m-h is in a terminal state", status: grpc.status.FAILED_PRECONDITION, metadata: { taskId: "task-m-h" } });
  });

  test("SendStreamingMessage: task first, then status and artifact updates, then completed", async () => {
    const events = await collect(client.sendMessageStream(send("m-s", "stream me")));
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
    expect(mainCalls().at(-1)).toMatchObject({ method: "sendStreamingMessage", version: "1.0" });
  });

  test("GetTask: the streamed task is stored completed with the whole artifact; an unknown id is TaskNotFound", async () => {
    await collect(client.sendMessageStream(send("m-g", "keep me")));
    expect(await client.getTask({ tenant: "", id: "task-m-g" })).toEqual(
      sdkTask({
        id: "task-m-g",
        contextId: "ctx-m-g",
        state: TaskState.TASK_STATE_COMPLETED,
        tick: 3,
        artifacts: [sdkArtifact("answer", "answer", ["You said: ", "keep me"])],
        history: [sdkUserMessage("m-g", "keep me", "task-m-g", "ctx-m-g")],
      }),
    );
    expect((await client.getTask({ tenant: "", id: "task-m-g", historyLength: 0 })).history).toEqual([]);

    const err = await rejectionOf(client.getTask({ tenant: "", id: "nope" }));
    expect(err instanceof sdkErrors.TaskNotFoundError).toBe(true);
    expect(err).toMatchObject({ message: "Task nope was not found", status: grpc.status.NOT_FOUND, metadata: { taskId: "nope" } });
  });

  test("ListTasks: filters, newest first, pagination, artifacts only when asked; a bad pageSize is RequestMalformed", async () => {
    await client.sendMessage(send("m-a", "a", { contextId: "ctx-list-1" })); // COMPLETED at tick 1
    await client.sendMessage(send("m-b", "b", { contextId: "ctx-list-1", returnImmediately: true })); // WORKING at tick 2
    await client.sendMessage(send("m-c", "c", { contextId: "ctx-list-2" })); // COMPLETED at tick 3
    const historyOf = (id: string, text: string, contextId: string) => [sdkUserMessage(id, text, `task-${id}`, contextId)];
    const a = sdkTask({ id: "task-m-a", contextId: "ctx-list-1", state: TaskState.TASK_STATE_COMPLETED, tick: 1, history: historyOf("m-a", "a", "ctx-list-1") });
    const b = sdkTask({ id: "task-m-b", contextId: "ctx-list-1", state: TaskState.TASK_STATE_WORKING, tick: 2, history: historyOf("m-b", "b", "ctx-list-1") });
    const c = sdkTask({ id: "task-m-c", contextId: "ctx-list-2", state: TaskState.TASK_STATE_COMPLETED, tick: 3, history: historyOf("m-c", "c", "ctx-list-2") });

    expect(await client.listTasks(listParams({ contextId: "ctx-list-1" }))).toEqual({ tasks: [b, a], nextPageToken: "", pageSize: 50, totalSize: 2 });
    expect(await client.listTasks(listParams({ status: TaskState.TASK_STATE_COMPLETED }))).toEqual({ tasks: [c, a], nextPageToken: "", pageSize: 50, totalSize: 2 });
    expect(await client.listTasks(listParams({ pageSize: 1 }))).toEqual({ tasks: [c], nextPageToken: "1", pageSize: 1, totalSize: 3 });
    expect(await client.listTasks(listParams({ pageSize: 2, pageToken: "1" }))).toEqual({ tasks: [b, a], nextPageToken: "", pageSize: 2, totalSize: 3 });
    expect(await client.listTasks(listParams({ statusTimestampAfter: iso(2) }))).toEqual({ tasks: [c, b], nextPageToken: "", pageSize: 50, totalSize: 2 });
    const withArtifacts = await client.listTasks(listParams({ contextId: "ctx-list-2", includeArtifacts: true }));
    expect(withArtifacts.tasks.map((t) => t.artifacts)).toEqual([[sdkArtifact("echo", "echo", ["echo: c"])]]);

    // InvalidParams is a generic error (no ErrorInfo, D3): see the D11 test for how the SDK takes it.
    const err = await rejectionOf(client.listTasks(listParams({ pageSize: 500 })));
    expect(sdkGrpcErrors.isGrpcError(err)).toBe(true);
    expect(err).toMatchObject({ message: "gRPC error for listTasks: 3 pageSize must be between 1 and 100", status: grpc.status.INVALID_ARGUMENT });
  });

  test("CancelTask: a working task is canceled; canceling it again is TaskNotCancelable", async () => {
    await client.sendMessage(send("m-x", "long job", { returnImmediately: true }));
    expect(await client.cancelTask({ tenant: "", id: "task-m-x", metadata: { reason: "user" } })).toEqual(
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
    expect(err).toMatchObject({ message: "Task task-m-x is CANCELED and cannot be canceled", status: grpc.status.FAILED_PRECONDITION });
  });

  test("SubscribeToTask: the current task, then its updates until completed; a terminal task is UnsupportedOperation", async () => {
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
    const { events: none, error } = await collectUntilError(client.resubscribeTask({ tenant: "", id: "task-m-r" }));
    expect(none).toEqual([]);
    expect(error instanceof sdkErrors.UnsupportedOperationError).toBe(true);
    expect(error).toMatchObject({ message: "Task task-m-r is in a terminal state", status: grpc.status.FAILED_PRECONDITION });
  });

  test("push notification configs: create, get, list, delete (idempotent)", async () => {
    await client.sendMessage(send("m-p", "notify me", { returnImmediately: true }));
    const cfg1 = {
      tenant: "",
      id: "cfg-1",
      taskId: "task-m-p",
      url: "https://hooks.example.com/a2a",
      token: "tok-1",
      authentication: { scheme: "Bearer", credentials: "s3cret" },
    };
    expect(await client.createTaskPushNotificationConfig({ ...cfg1, id: "" })).toEqual(cfg1);
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

    const gone = await rejectionOf(client.getTaskPushNotificationConfig({ tenant: "", taskId: "task-m-p", id: "cfg-1" }));
    expect(gone instanceof sdkErrors.TaskNotFoundError).toBe(true);
    expect(gone).toMatchObject({
      message: "Push notification config cfg-1 was not found for task task-m-p",
      metadata: { taskId: "task-m-p", configId: "cfg-1" },
    });
  });

  test("GetExtendedAgentCard: Client.getAgentCard() fetches and returns the extended card", async () => {
    const card: SdkAgentCard = await client.getAgentCard();
    expect(card.name).toBe(EXTENDED_NAME);
    expect(card.version).toBe("1.0.0");
    expect(card.skills.map((s) => s.id)).toEqual(["echo", "audit"]);
    expect(card.capabilities).toEqual({ streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true });
    expect(card.supportedInterfaces).toEqual([{ url: mainTarget, protocolBinding: "GRPC", tenant: "", protocolVersion: "1.0" }]);
    expect(mainCalls().at(-1)).toMatchObject({ method: "getExtendedAgentCard", version: "1.0" });
  });

  test("service parameters: A2A-Extensions travels as metadata into the CallContext", async () => {
    await client.sendMessage(send("m-e", "hi"), {
      serviceParameters: ServiceParameters.create(withA2AExtensions("urn:example:ext-a", "urn:example:ext-b")),
    });
    expect(agent.seen).toEqual([
      { method: "SendMessage", binding: "GRPC", protocolVersion: "1.0", requestedExtensions: ["urn:example:ext-a", "urn:example:ext-b"], tenant: undefined },
    ]);
  });

  test("a missing REQUIRED field is INVALID_ARGUMENT with a BadRequest, before the handler runs (D11)", async () => {
    const before = mainCalls().length;
    const err = await rejectionOf(client.getTask({ tenant: "", id: "" }));
    // InvalidParams is one of the generic errors, sent without ErrorInfo (D3). The SDK's
    // gRPC path picks its error class by ErrorInfo.reason only, so this is its generic
    // gRPC error, not RequestMalformedError (its JSON-RPC path maps -32602 by code).
    expect(sdkGrpcErrors.isGrpcError(err)).toBe(true);
    for (const c of errorCases) expect(err instanceof c.sdk).toBe(false);
    expect(err instanceof sdkErrors.RequestMalformedError).toBe(false);
    expect(err).toMatchObject({ message: "gRPC error for getTask: 3 missing required field: id", status: grpc.status.INVALID_ARGUMENT });
    const status = fromBinary(StatusSchema, (err as sdkGrpcErrors.GrpcA2AError).statusDetailsBin!);
    expect(status).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, message: "missing required field: id" });
    expect(status.details.map((d) => d.typeUrl)).toEqual(["type.googleapis.com/google.rpc.BadRequest"]);
    expect(anyUnpack(status.details[0]!, BadRequestSchema)?.fieldViolations).toMatchObject([{ field: "id" }]);
    expect(mainCalls().length).toBe(before);
  });

  test("an interface tenant goes into every request and reaches CallContext.tenant", async () => {
    const card = cardFor(mainTarget);
    card.supportedInterfaces[0]!.tenant = "acme";
    const tenantClient = await clientFor(card);
    await tenantClient.sendMessage(send("m-t", "hi"));
    expect((await tenantClient.getTask({ tenant: "", id: "task-m-t" })).id).toBe("task-m-t");
    expect((await tenantClient.getAgentCard()).name).toBe(EXTENDED_NAME);
    expect(agent.seen.map((s) => [s.method, s.tenant])).toEqual([
      ["SendMessage", "acme"],
      ["GetTask", "acme"],
      ["GetExtendedAgentCard", "acme"],
    ]);
  });

  // Runs last in this block: every method above went over the wire.
  test("all 11 RPCs reached the handler, each with a2a-version 1.0 in the metadata", () => {
    expect(new Set(mainCalls().map((c) => c.method))).toEqual(
      new Set([
        "sendMessage",
        "sendStreamingMessage",
        "getTask",
        "listTasks",
        "cancelTask",
        "subscribeToTask",
        "createTaskPushNotificationConfig",
        "getTaskPushNotificationConfig",
        "listTaskPushNotificationConfigs",
        "deleteTaskPushNotificationConfig",
        "getExtendedAgentCard",
      ]),
    );
    for (const c of mainCalls()) expect(c.version).toBe("1.0");
  });
});

// ================================================================ every A2A error through the SDK

type SdkErrorClass = new (options?: sdkErrors.A2AErrorOptions | string) => sdkErrors.A2AError;
type OurErrorClass = new (message?: string, options?: A2AErrorOptions) => Error;

interface ErrorCase {
  readonly name: string;
  readonly ours: OurErrorClass;
  readonly sdk: SdkErrorClass;
  readonly status: grpc.status;
  readonly reason: string;
  readonly defaultMessage: string;
}

const { FAILED_PRECONDITION, NOT_FOUND, INVALID_ARGUMENT, INTERNAL } = grpc.status;
const errorCases: readonly ErrorCase[] = [
  { name: "TaskNotFoundError", ours: ours.TaskNotFoundError, sdk: sdkErrors.TaskNotFoundError, status: NOT_FOUND, reason: "TASK_NOT_FOUND", defaultMessage: "Task not found" },
  { name: "TaskNotCancelableError", ours: ours.TaskNotCancelableError, sdk: sdkErrors.TaskNotCancelableError, status: FAILED_PRECONDITION, reason: "TASK_NOT_CANCELABLE", defaultMessage: "Task cannot be canceled" },
  { name: "PushNotificationNotSupportedError", ours: ours.PushNotificationNotSupportedError, sdk: sdkErrors.PushNotificationNotSupportedError, status: FAILED_PRECONDITION, reason: "PUSH_NOTIFICATION_NOT_SUPPORTED", defaultMessage: "Push notifications are not supported" },
  { name: "UnsupportedOperationError", ours: ours.UnsupportedOperationError, sdk: sdkErrors.UnsupportedOperationError, status: FAILED_PRECONDITION, reason: "UNSUPPORTED_OPERATION", defaultMessage: "This operation is not supported" },
  { name: "ContentTypeNotSupportedError", ours: ours.ContentTypeNotSupportedError, sdk: sdkErrors.ContentTypeNotSupportedError, status: INVALID_ARGUMENT, reason: "CONTENT_TYPE_NOT_SUPPORTED", defaultMessage: "Content type not supported" },
  { name: "InvalidAgentResponseError", ours: ours.InvalidAgentResponseError, sdk: sdkErrors.InvalidAgentResponseError, status: INTERNAL, reason: "INVALID_AGENT_RESPONSE", defaultMessage: "The agent returned an invalid response" },
  { name: "ExtendedAgentCardNotConfiguredError", ours: ours.ExtendedAgentCardNotConfiguredError, sdk: sdkErrors.ExtendedAgentCardNotConfiguredError, status: FAILED_PRECONDITION, reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED", defaultMessage: "The extended agent card is not configured" },
  { name: "ExtensionSupportRequiredError", ours: ours.ExtensionSupportRequiredError, sdk: sdkErrors.ExtensionSupportRequiredError, status: FAILED_PRECONDITION, reason: "EXTENSION_SUPPORT_REQUIRED", defaultMessage: "A required extension was not requested" },
  { name: "VersionNotSupportedError", ours: ours.VersionNotSupportedError, sdk: sdkErrors.VersionNotSupportedError, status: FAILED_PRECONDITION, reason: "VERSION_NOT_SUPPORTED", defaultMessage: "Protocol version not supported" },
];

/** Each of the 11 methods, called through an SDK Client. */
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

/** The ErrorInfo the server put in grpc-status-details-bin, as the SDK kept it. */
function errorInfoOf(err: unknown) {
  const bin = (err as sdkGrpcErrors.GrpcA2AError).statusDetailsBin;
  expect(bin).toBeInstanceOf(Buffer);
  const status = fromBinary(StatusSchema, bin!);
  const infos = status.details.map((d) => anyUnpack(d, ErrorInfoSchema)).filter((i) => i !== undefined);
  expect(infos).toHaveLength(1);
  return { status, info: infos[0]! };
}

/** Asserts `err` is exactly the SDK's gRPC error for `c` (and no other A2A class). */
function expectSdkError(err: unknown, c: ErrorCase, message: string, metadata?: Record<string, string>) {
  expect(err instanceof c.sdk).toBe(true);
  expect(err instanceof sdkErrors.A2AError).toBe(true);
  for (const other of errorCases) if (other !== c) expect(err instanceof other.sdk).toBe(false);
  expect(sdkGrpcErrors.isGrpcError(err)).toBe(true);
  const e = err as sdkGrpcErrors.GrpcA2AError;
  expect(e.name).toBe(c.name);
  expect(e.reason).toBe(c.reason);
  expect(e.status).toBe(c.status);
  expect(e.message).toBe(message);
  expect(e.metadata).toEqual(metadata);
  const { status, info } = errorInfoOf(err);
  expect(status.code).toBe(c.status);
  expect(status.message).toBe(message);
  expect(info).toMatchObject({ reason: c.reason, domain: "a2a-protocol.org", metadata: metadata ?? {} });
}

const taskEventPb = () =>
  create(StreamResponseSchema, { payload: { case: "task", value: { id: "t-f", contextId: "c-f", status: { state: PbTaskState.WORKING } } } });

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
  ] as const)("after the first event of %s: the event arrives, then the typed error", async (method, open) => {
    failing.set(() => new c.ours(`${c.name} mid-stream in ${method}`, { metadata: { method } }), [taskEventPb()]);
    const { events, error } = await collectUntilError(open());
    expect(payloadCases(events)).toEqual(["task"]);
    expect(events[0]?.payload?.value).toMatchObject({ id: "t-f", contextId: "c-f", status: { state: TaskState.TASK_STATE_WORKING } });
    // Unlike its JSON-RPC SSE path, the SDK's gRPC stream throws the typed error itself.
    expectSdkError(error, c, `${c.name} mid-stream in ${method}`, { method });
  });
});

describe("other failures through the SDK", () => {
  test.each(failingCalls)("a plain Error in %s is INTERNAL without its message, and reported on the server", async (method, call) => {
    failing.set(() => new Error("db password=hunter2"));
    reported.length = 0;
    const err = await rejectionOf(call());
    expect(reported).toEqual([{ logged: "handler failed", binding: "GRPC", method, message: "db password=hunter2" }]);
    expect(sdkGrpcErrors.isGrpcError(err)).toBe(true);
    for (const c of errorCases) expect(err instanceof c.sdk).toBe(false);
    // The SDK knows no ErrorInfo reason INTERNAL, so it falls back to its generic gRPC error.
    // Internal is a generic error: no ErrorInfo (D3), so the SDK falls back to its generic gRPC error.
    const e = err as sdkGrpcErrors.GrpcA2AError;
    expect(e.status).toBe(grpc.status.INTERNAL);
    expect(e.message).toMatch(/^gRPC error for \w+: 13 Internal error$/);
    const status = fromBinary(StatusSchema, e.statusDetailsBin!);
    expect(status).toMatchObject({ code: grpc.status.INTERNAL, message: "Internal error", details: [] });
    expect(JSON.stringify(err)).not.toContain("hunter2");
    expect(e.statusDetailsBin!.toString("latin1")).not.toContain("hunter2");
    expect(String((e.cause as grpc.ServiceError | undefined)?.details)).not.toContain("hunter2");
  });

  test("a plain Error after the first event ends the stream with INTERNAL, the event first, and is reported on the server", async () => {
    failing.set(() => new Error("db password=hunter2"), [taskEventPb()]);
    reported.length = 0;
    const { events, error } = await collectUntilError(failingClient.sendMessageStream(send("m-f", "x")));
    expect(reported).toEqual([{ logged: "handler failed", binding: "GRPC", method: "SendStreamingMessage", message: "db password=hunter2" }]);
    expect(payloadCases(events)).toEqual(["task"]);
    expect(sdkGrpcErrors.isGrpcError(error)).toBe(true);
    expect(error).toMatchObject({ status: grpc.status.INTERNAL, message: "gRPC error for sendStreamingMessage: 13 Internal error" });
    expect(JSON.stringify(error)).not.toContain("hunter2");
  });

  test.each(callsOn(() => emptyClient))("D18: %s left out of the handler is the SDK's matching error", async (method, call) => {
    const err = await rejectionOf(call());
    const push = method.includes("PushNotificationConfig");
    const c = errorCases.find((e) => e.name === (push ? "PushNotificationNotSupportedError" : "UnsupportedOperationError"))!;
    expectSdkError(err, c, `${method} is not supported by this agent`);
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
    expect(error).toMatchObject({ status: grpc.status.INTERNAL, reason: "INVALID_AGENT_RESPONSE" });
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
    expect(error instanceof sdkErrors.InvalidAgentResponseError).toBe(true);
    expect(error).toMatchObject({ status: grpc.status.INTERNAL });
  });
});

// ================================================================ D5 version negotiation

describe("D5: A2A-Version in gRPC metadata", () => {
  const versionError = (requested: string) => ({
    message: `Protocol version ${requested} is not supported. Supported: 1.0. Send A2A-Version: 1.0 with each request`,
    reason: "VERSION_NOT_SUPPORTED",
    status: grpc.status.FAILED_PRECONDITION,
  });

  test("the strict default refuses a missing version (0.3), 0.3 and 2.0; 1.0.1 counts as 1.0", async () => {
    // The bare transport (no Client around it) sends only the service parameters it is given.
    const before = mainCalls().length;
    const missing = await rejectionOf(client.transport.getTask({ tenant: "", id: "x" }, { serviceParameters: {} }));
    expect(missing instanceof sdkErrors.VersionNotSupportedError).toBe(true);
    expect(missing).toMatchObject(versionError("0.3"));

    const old = await rejectionOf(client.transport.getTask({ tenant: "", id: "x" }, { serviceParameters: { "A2A-Version": "0.3" } }));
    expect(old instanceof sdkErrors.VersionNotSupportedError).toBe(true);
    expect(old).toMatchObject(versionError("0.3"));

    const streamed = await collectUntilError(client.transport.sendMessageStream(send("m-v", "x"), { serviceParameters: { "A2A-Version": "2.0" } }));
    expect(streamed.events).toEqual([]);
    expect(streamed.error instanceof sdkErrors.VersionNotSupportedError).toBe(true);
    expect(streamed.error).toMatchObject(versionError("2.0"));
    expect(mainCalls().length).toBe(before);

    const patch = await rejectionOf(client.transport.getTask({ tenant: "", id: "x" }, { serviceParameters: { "A2A-Version": "1.0.1" } }));
    expect(patch instanceof sdkErrors.TaskNotFoundError).toBe(true);
    expect(agent.seen.map((s) => s.protocolVersion)).toEqual(["1.0"]);
  });

  test("the SDK Client always sends its interface's version, so it needs no server option", async () => {
    // Even with no service parameters at all, Client adds A2A-Version 1.0.
    const before = calls.length;
    await expect(client.getTask({ tenant: "", id: "x" })).rejects.toBeInstanceOf(sdkErrors.TaskNotFoundError);
    expect(calls.slice(before)).toEqual([{ server: "main", method: "getTask", version: "1.0", extensions: null }]);
  });

  test("versions.acceptMissing: a bare transport call without a version is served as 1.0", async () => {
    const before = calls.length;
    const err = await rejectionOf(lenientClient.transport.getTask({ tenant: "", id: "x" }, { serviceParameters: {} }));
    expect(err instanceof sdkErrors.TaskNotFoundError).toBe(true);
    expect(calls.slice(before)).toEqual([{ server: "lenient", method: "getTask", version: null, extensions: null }]);
    expect(agent.seen.map((s) => s.protocolVersion)).toEqual(["1.0"]);
    // An explicit old version is still refused.
    const old = await rejectionOf(lenientClient.transport.getTask({ tenant: "", id: "x" }, { serviceParameters: { "A2A-Version": "0.3" } }));
    expect(old).toMatchObject(versionError("0.3"));
  });
});
