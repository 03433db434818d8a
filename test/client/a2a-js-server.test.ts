/**
 * Interop (issue 15): the generated client (`a2a_client.ts`, and
 * `createA2AServiceGrpcClient` in `a2a_grpc.ts`) against @a2a-js/sdk 1.x's
 * own server stack, not ours: its DefaultRequestHandler over an
 * InMemoryTaskStore and an AgentExecutor of this test's, served by its
 * express `jsonRpcHandler` and `restHandler` and its grpc-js `grpcService`,
 * all three on loopback, with its `agentCardHandler` serving the card.
 *
 * Every method the SDK serves is called on every binding (send, a direct
 * message reply, stream, get with historyLength, list with paging, cancel,
 * subscribe, push config CRUD, the extended card), every A2A error the SDK
 * can be made to raise must arrive as this project's class with the SDK's
 * message, a tenant must separate tasks, and a client made from the SDK's
 * card must reach each binding.
 *
 * Where the SDK's server is not what the spec (v1.0.1) or this project's
 * server says, the client's behaviour is asserted as it is, with the reason.
 * Tolerated by the client (D29): Delete answered with HTTP 204 and JSON-RPC
 * `result: null` (read as google.protobuf.Empty), gRPC UNKNOWN for an
 * exception (read as Internal), validation errors with an ErrorInfo reason
 * A2A does not define, INVALID_PARAMS (classified by the JSON-RPC code or
 * status instead), and a card that is JSON.stringify of the SDK's objects
 * rather than ProtoJSON (read; what is not ProtoJSON is skipped). Not the
 * client's to paper over, asserted under "What the SDK's server does
 * differently": UnsupportedOperation where the spec says
 * InvalidAgentResponse, canceling a canceled task answering the task, and
 * an anonymous GetExtendedAgentCard answering the public card (the SDK has
 * no Unauthenticated error).
 */
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { jest } from "@jest/globals";
import express from "express";
import * as grpc from "@grpc/grpc-js";
import { Role as SdkRole, TaskState as SdkState, type AgentCard as SdkCard, type Message as SdkMessage, type Task as SdkTask } from "@a2a-js/sdk";
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  UnauthenticatedUser,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
  type User,
} from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, restHandler } from "@a2a-js/sdk/server/express";
import { A2AService, grpcService } from "@a2a-js/sdk/server/grpc";
import {
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  InternalError,
  InvalidParamsError,
  PushNotificationNotSupportedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  VersionNotSupportedError,
  isRpcError,
} from "protoc-gen-a2a/runtime";
import { createA2AServiceClient, createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient, type A2AServiceClient } from "../../generated/a2a_client.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { Role, TaskState, type Message, type SendMessageResponse, type StreamResponse, type Task } from "../../generated/a2a_pb.js";
import { BINDINGS, deferred, type BindingName, type Deferred } from "../support/task-clients.js";

jest.setTimeout(30_000);

const TOKEN = "sdk-token";
const REQUIRED_EXT = "urn:example:sdk-required";

// ---------------------------------------------------------------- the SDK's agent

const sdkText = (text: string) => ({ content: { $case: "text" as const, value: text }, metadata: undefined, filename: "", mediaType: "text/plain" });
const sdkTextOf = (message: SdkMessage): string => message.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const sdkAgentMessage = (text: string, taskId: string, contextId: string): SdkMessage => ({
  messageId: crypto.randomUUID(),
  contextId,
  taskId,
  role: SdkRole.ROLE_AGENT,
  parts: [sdkText(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const sdkStatus = (taskId: string, contextId: string, state: SdkState, message?: SdkMessage) =>
  AgentEvent.statusUpdate({ taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: undefined });
const sdkChunk = (taskId: string, contextId: string, text: string, append: boolean, lastChunk: boolean) =>
  AgentEvent.artifactUpdate({
    taskId,
    contextId,
    artifact: { artifactId: "echo", name: "echo", description: "", parts: [sdkText(text)], metadata: undefined, extensions: [] },
    append,
    lastChunk,
    metadata: undefined,
  });

/** A task the executor holds WORKING until it is canceled or released. */
interface Held {
  readonly contextId: string;
  /** Its cancelTask throws a plain Error instead of canceling. */
  readonly refuseCancel: boolean;
  readonly release: Deferred<"canceled" | "released">;
}

/**
 * The test's AgentExecutor, scripted by the first word of the message:
 * `reply` answers with a Message; `ask` ends the turn INPUT_REQUIRED;
 * `status-first` breaks the stream rule (a status before the task) and
 * `task-twice` breaks it after the first events (the task again);
 * `hold` and `hold-stubborn` stay WORKING until canceled or released (the
 * stubborn one's cancelTask throws). Anything else, or a held task once
 * released, echoes its text as an artifact in two chunks and completes.
 */
class ScriptedExecutor implements AgentExecutor {
  /** Held tasks by id. */
  readonly held = new Map<string, Held>();
  /** The id of a held task, by its message's text, once it is WORKING. */
  private readonly holding = new Map<string, Deferred<string>>();

  /** Resolves with the id of the task of `text` once it is held WORKING. */
  heldTask(text: string): Promise<string> {
    return this.holdingOf(text).promise;
  }

  release(taskId: string): void {
    this.held.get(taskId)?.release.resolve("released");
  }

  private holdingOf(text: string): Deferred<string> {
    let d = this.holding.get(text);
    if (d === undefined) this.holding.set(text, (d = deferred<string>()));
    return d;
  }

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const text = sdkTextOf(context.userMessage);
    const verb = text.split(" ")[0];
    const { taskId, contextId } = context;
    if (verb === "reply") {
      bus.publish(AgentEvent.message(sdkAgentMessage(`you said: ${text}`, "", contextId)));
      bus.finished();
      return;
    }
    if (verb === "status-first") {
      bus.publish(sdkStatus(taskId, contextId, SdkState.TASK_STATE_WORKING));
      bus.finished();
      return;
    }
    // Every turn starts with the task (the SDK's rule), a follow-up with the task so far.
    const task: SdkTask = context.task ?? {
      id: taskId,
      contextId,
      status: { state: SdkState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [context.userMessage],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    if (verb === "ask") {
      bus.publish(sdkStatus(taskId, contextId, SdkState.TASK_STATE_INPUT_REQUIRED, sdkAgentMessage("what else?", taskId, contextId)));
      bus.finished();
      return;
    }
    bus.publish(sdkStatus(taskId, contextId, SdkState.TASK_STATE_WORKING));
    if (verb === "task-twice") {
      // A second Task event in a running stream, which the SDK refuses mid-stream.
      bus.publish(AgentEvent.task(task));
      bus.finished();
      return;
    }
    if (verb === "hold" || verb === "hold-stubborn") {
      const held: Held = { contextId, refuseCancel: verb === "hold-stubborn", release: deferred() };
      this.held.set(taskId, held);
      this.holdingOf(text).resolve(taskId);
      const how = await held.release.promise;
      this.held.delete(taskId);
      if (how === "canceled") {
        bus.finished();
        return;
      }
    }
    bus.publish(sdkChunk(taskId, contextId, text, false, false));
    bus.publish(sdkChunk(taskId, contextId, "!", true, true));
    bus.publish(sdkStatus(taskId, contextId, SdkState.TASK_STATE_COMPLETED));
    bus.finished();
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const held = this.held.get(taskId);
    if (held === undefined) return;
    if (held.refuseCancel) throw new Error("this executor cannot stop");
    bus.publish(sdkStatus(taskId, held.contextId, SdkState.TASK_STATE_CANCELED));
    held.release.resolve("canceled");
  };
}

/** A bearer token is a named user; anything else is anonymous. */
class TokenUser implements User {
  get isAuthenticated(): boolean {
    return true;
  }
  get userName(): string {
    return "token-holder";
  }
}
const userOf = (authorization: string | undefined): Promise<User> =>
  Promise.resolve(authorization === `Bearer ${TOKEN}` ? new TokenUser() : new UnauthenticatedUser());

interface SdkAgent {
  readonly executor: ScriptedExecutor;
  readonly origin: string;
  readonly cardUrl: string;
  readonly jsonRpcUrl: string;
  readonly restUrl: string;
  readonly grpcAddress: string;
  /** A client of this project's for `binding`. */
  client(
    binding: BindingName,
    options?: { tenant?: string; extensions?: string[]; headers?: Record<string, string>; streamIdleTimeoutMs?: number; heartbeatTimeoutMs?: number },
  ): A2AServiceClient;
  close(): Promise<void>;
}

const baseCard = (capabilities: SdkCard["capabilities"]): SdkCard => ({
  name: "SDK Interop Agent",
  description: "@a2a-js/sdk's server with a scripted executor",
  supportedInterfaces: [],
  provider: undefined,
  version: "1.0.0",
  capabilities,
  // A security scheme is a oneof: the SDK's card handler writes it in its own (non-ProtoJSON) shape.
  securitySchemes: { bearer: { scheme: { $case: "httpAuthSecurityScheme", value: { description: "", scheme: "Bearer", bearerFormat: "" } } } },
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "echo", name: "Echo", description: "echoes", tags: ["echo"], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
  signatures: [],
});

/**
 * The SDK's server stack, as its README and samples set it up: one
 * DefaultRequestHandler behind the express JSON-RPC and REST handlers and
 * the grpc-js service, each binding listed on the card once its port is
 * known (the SDK checks A2A-Version against the card's interfaces).
 */
async function startSdkAgent(card: SdkCard, extendedCard?: SdkCard): Promise<SdkAgent> {
  const executor = new ScriptedExecutor();
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor, undefined, undefined, undefined, extendedCard, undefined, {
    validateInputModes: true,
  });
  const app = express();
  const expressUser = (req: express.Request) => userOf(req.header("authorization"));
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: requestHandler }));
  app.use("/a2a/jsonrpc", jsonRpcHandler({ requestHandler, userBuilder: expressUser }));
  app.use("/a2a/rest", restHandler({ requestHandler, userBuilder: expressUser }));
  const http: HttpServer = createServer(app);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  const grpcServer = new grpc.Server();
  grpcServer.addService(
    A2AService,
    grpcService({ requestHandler, userBuilder: (call) => userOf(call.metadata.get("authorization")[0]?.toString()) }),
  );
  const grpcPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => (err === null ? resolve(port) : reject(err))),
  );
  const grpcAddress = `127.0.0.1:${grpcPort}`;
  const jsonRpcUrl = `${origin}/a2a/jsonrpc`;
  const restUrl = `${origin}/a2a/rest`;
  // The handler holds the card by reference: the interfaces it checks versions against are these.
  card.supportedInterfaces = [
    { url: jsonRpcUrl, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    { url: restUrl, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" },
    { url: grpcAddress, protocolBinding: "GRPC", tenant: "", protocolVersion: "1.0" },
  ];

  const clients: A2AServiceClient[] = [];
  return {
    executor,
    origin,
    cardUrl: `${origin}/.well-known/agent-card.json`,
    jsonRpcUrl,
    restUrl,
    grpcAddress,
    client(binding, options = {}) {
      const made =
        binding === "JSONRPC"
          ? createA2AServiceJsonRpcClient(jsonRpcUrl, options)
          : binding === "HTTP+JSON"
            ? createA2AServiceHttpJsonClient(restUrl, options)
            : createA2AServiceGrpcClient(grpcAddress, options);
      clients.push(made);
      return made;
    },
    async close() {
      for (const c of clients) c.close();
      // Release whatever a failed test left held, so no executor outlives the suite.
      for (const id of [...executor.held.keys()]) executor.release(id);
      grpcServer.forceShutdown();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

let main: SdkAgent;
/** Streaming, push notifications off; the extended card promised but not configured; an extension required. */
let strict: SdkAgent;
const extendedCard = { ...baseCard({ streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true }), name: "SDK Interop Agent (extended)" };

// The SDK logs every error it answers with (console.error); the suite keeps that out of the output.
const consoleError = jest.spyOn(console, "error").mockImplementation(() => undefined);
const consoleWarn = jest.spyOn(console, "warn").mockImplementation(() => undefined);

beforeAll(async () => {
  main = await startSdkAgent(baseCard({ streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true }), extendedCard);
  strict = await startSdkAgent(
    baseCard({
      streaming: false,
      pushNotifications: false,
      extensions: [{ uri: REQUIRED_EXT, description: "must be asked for", required: true, params: undefined }],
      extendedAgentCard: true,
    }),
  );
});

afterAll(async () => {
  await main?.close();
  await strict?.close();
  consoleError.mockRestore();
  consoleWarn.mockRestore();
});

// ---------------------------------------------------------------- helpers

const message = (text: string, extra: { taskId?: string; contextId?: string; mediaType?: string } = {}) => ({
  message: {
    messageId: crypto.randomUUID(),
    role: Role.USER,
    parts: [{ content: { case: "text" as const, value: text }, mediaType: extra.mediaType ?? "text/plain" }],
    taskId: extra.taskId ?? "",
    contextId: extra.contextId ?? "",
  },
});

function taskOf(answer: SendMessageResponse): Task {
  if (answer.payload.case !== "task") throw new Error(`expected a task, got ${answer.payload.case}`);
  return answer.payload.value;
}

const textOf = (parts: readonly { content: { case: string | undefined; value?: unknown } }[]) => parts.map((p) => (p.content.case === "text" ? String(p.content.value) : "")).join("");
const historyTexts = (task: Task) => task.history.map((m: Message) => `${Role[m.role]}:${textOf(m.parts)}`);

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

const kinds = (events: readonly StreamResponse[]) =>
  events.map((e) => (e.payload.case === "statusUpdate" ? `status:${TaskState[e.payload.value.status?.state ?? 0]}` : String(e.payload.case)));

async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("the call succeeded; an error was expected");
}

/** The error as the caller sees it: its class (by name), reason and message. */
const seen = (err: unknown) => (isRpcError(err) ? { name: err.name, reason: err.reason, message: err.message } : { notAnRpcError: String(err) });

// ---------------------------------------------------------------- each binding

describe.each(BINDINGS)("the generated client on %s against @a2a-js/sdk's server", (binding) => {
  let client: A2AServiceClient;
  beforeAll(() => {
    client = main.client(binding);
  });

  test("SendMessage (blocking): the completed task, the chunks merged into one artifact, the history", async () => {
    const task = taskOf(await client.sendMessage(message("echo hello")));
    expect(task.status?.state).toBe(TaskState.COMPLETED);
    expect(task.artifacts.map((a) => [a.artifactId, textOf(a.parts)])).toEqual([["echo", "echo hello!"]]);
    expect(historyTexts(task)).toEqual(["USER:echo hello"]);
    expect(task.status?.timestamp?.seconds).toBeGreaterThan(0n);
  });

  test("SendMessage answered with a Message, not a task", async () => {
    const answer = await client.sendMessage(message("reply hi"));
    expect(answer.payload.case).toBe("message");
    const reply = answer.payload.value as Message;
    expect([Role[reply.role], textOf(reply.parts)]).toEqual(["AGENT", "you said: reply hi"]);
  });

  test("SendStreamingMessage: task, working, two chunks, completed", async () => {
    const events = await collect(client.sendStreamingMessage(message("echo streamed")));
    expect(kinds(events)).toEqual(["task", "status:WORKING", "artifactUpdate", "artifactUpdate", "status:COMPLETED"]);
    const chunks = events.flatMap((e) => (e.payload.case === "artifactUpdate" ? [e.payload.value] : []));
    expect(chunks.map((c) => [textOf(c.artifact?.parts ?? []), c.append, c.lastChunk])).toEqual([
      ["echo streamed", false, false],
      ["!", true, true],
    ]);
  });

  test("GetTask with historyLength; an unknown task is TaskNotFoundError", async () => {
    const first = taskOf(await client.sendMessage(message("ask once")));
    expect(first.status?.state).toBe(TaskState.INPUT_REQUIRED);
    const done = taskOf(await client.sendMessage(message("echo twice", { taskId: first.id })));
    expect(done.status?.state).toBe(TaskState.COMPLETED);
    expect(historyTexts(await client.getTask({ id: first.id }))).toEqual(["USER:ask once", "AGENT:what else?", "USER:echo twice"]);
    expect(historyTexts(await client.getTask({ id: first.id, historyLength: 1 }))).toEqual(["USER:echo twice"]);
    expect((await client.getTask({ id: first.id, historyLength: 0 })).history).toEqual([]);
    const missing = await rejectionOf(client.getTask({ id: "no-such-task" }));
    expect(missing).toBeInstanceOf(TaskNotFoundError);
    expect(seen(missing)).toEqual({ name: "TaskNotFoundError", reason: "TASK_NOT_FOUND", message: "Task not found: no-such-task" });
  });

  test("ListTasks: by context, paged by its token, with totalSize", async () => {
    const contextId = crypto.randomUUID();
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push(taskOf(await client.sendMessage(message(`echo list ${i}`, { contextId }))).id);
    const first = await client.listTasks({ contextId, pageSize: 2 });
    expect(first.tasks).toHaveLength(2);
    expect(first.totalSize).toBe(3);
    expect(first.nextPageToken).not.toBe("");
    const second = await client.listTasks({ contextId, pageSize: 2, pageToken: first.nextPageToken });
    expect(second.nextPageToken).toBe("");
    expect([...first.tasks, ...second.tasks].map((t) => t.id).sort()).toEqual([...made].sort());
    const completed = await client.listTasks({ contextId, status: TaskState.COMPLETED, includeArtifacts: true });
    expect(completed.tasks.map((t) => textOf(t.artifacts[0]?.parts ?? [])).sort()).toEqual(["echo list 0!", "echo list 1!", "echo list 2!"]);
  });

  test("CancelTask of a working task: CANCELED, and a subscriber sees the task, then CANCELED; a completed task is TaskNotCancelableError", async () => {
    const text = `hold ${binding} cancel`;
    const started = taskOf(await client.sendMessage({ ...message(text), configuration: { returnImmediately: true } }));
    expect(await main.executor.heldTask(text)).toBe(started.id);
    const subscription = client.subscribeToTask({ id: started.id })[Symbol.asyncIterator]();
    const snapshot = await subscription.next();
    expect(snapshot.done === true ? undefined : snapshot.value.payload.case).toBe("task");
    const canceled = await client.cancelTask({ id: started.id });
    expect(canceled.status?.state).toBe(TaskState.CANCELED);
    const rest = await collect({ [Symbol.asyncIterator]: () => subscription });
    expect(kinds(rest)).toEqual(["status:CANCELED"]);
    const done = taskOf(await client.sendMessage(message("echo finished")));
    const refused = await rejectionOf(client.cancelTask({ id: done.id }));
    expect(refused).toBeInstanceOf(TaskNotCancelableError);
    expect(seen(refused)).toEqual({ name: "TaskNotCancelableError", reason: "TASK_NOT_CANCELABLE", message: `Task not cancelable: ${done.id}` });
    await expect(client.cancelTask({ id: "no-such-task" })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  test("SubscribeToTask of a finished task is UnsupportedOperationError, of an unknown one TaskNotFoundError; continuing a finished task is UnsupportedOperationError", async () => {
    const done = taskOf(await client.sendMessage(message("echo over")));
    const terminal = await rejectionOf(collect(client.subscribeToTask({ id: done.id })));
    expect(terminal).toBeInstanceOf(UnsupportedOperationError);
    expect(seen(terminal)).toEqual({
      name: "UnsupportedOperationError",
      reason: "UNSUPPORTED_OPERATION",
      message: `Task ${done.id} is in a terminal state (${TaskState.COMPLETED}) and cannot be subscribed to.`,
    });
    await expect(collect(client.subscribeToTask({ id: "no-such-task" }))).rejects.toBeInstanceOf(TaskNotFoundError);
    const again = await rejectionOf(client.sendMessage(message("echo more", { taskId: done.id })));
    expect(again).toBeInstanceOf(UnsupportedOperationError);
  });

  test("push notification config CRUD (the SDK answers Delete with 204 on HTTP+JSON and result null on JSON-RPC)", async () => {
    const done = taskOf(await client.sendMessage(message("echo push")));
    const created = await client.createTaskPushNotificationConfig({ taskId: done.id, url: "https://hooks.example.com/a", token: "t" });
    expect(created.id).not.toBe("");
    expect(created).toMatchObject({ taskId: done.id, url: "https://hooks.example.com/a", token: "t" });
    const own = await client.createTaskPushNotificationConfig({ taskId: done.id, id: "mine", url: "https://hooks.example.com/b" });
    expect(own.id).toBe("mine");
    expect(await client.getTaskPushNotificationConfig({ taskId: done.id, id: "mine" })).toMatchObject({ id: "mine", url: "https://hooks.example.com/b" });
    expect((await client.listTaskPushNotificationConfigs({ taskId: done.id })).configs.map((c) => c.id).sort()).toEqual([created.id, "mine"].sort());
    expect(await client.deleteTaskPushNotificationConfig({ taskId: done.id, id: "mine" })).toEqual({ $typeName: "google.protobuf.Empty" });
    const gone = await rejectionOf(client.getTaskPushNotificationConfig({ taskId: done.id, id: "mine" }));
    expect(seen(gone)).toEqual({ name: "TaskNotFoundError", reason: "TASK_NOT_FOUND", message: `Push notification config with id 'mine' not found for task ${done.id}.` });
    expect((await client.listTaskPushNotificationConfigs({ taskId: done.id })).configs.map((c) => c.id)).toEqual([created.id]);
    await expect(client.createTaskPushNotificationConfig({ taskId: "no-such-task", url: "https://hooks.example.com/c" })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  test("GetExtendedAgentCard: the extended card for an authenticated caller", async () => {
    const authed = main.client(binding, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect((await authed.getExtendedAgentCard({})).name).toBe("SDK Interop Agent (extended)");
  });

  test("the validation errors of the SDK arrive as InvalidParamsError (it sends ErrorInfo reason INVALID_PARAMS, which A2A does not define)", async () => {
    const pageSize = await rejectionOf(client.listTasks({ pageSize: 500 }));
    expect(pageSize).toBeInstanceOf(InvalidParamsError);
    expect(seen(pageSize)).toEqual({ name: "InvalidParamsError", reason: "INVALID_PARAMS", message: "pageSize must be between 1 and 100" });
    const first = taskOf(await client.sendMessage(message("ask context")));
    const wrongContext = await rejectionOf(client.sendMessage(message("echo elsewhere", { taskId: first.id, contextId: "another-context" })));
    expect(wrongContext).toBeInstanceOf(InvalidParamsError);
    expect((wrongContext as Error).message).toBe(`contextId mismatch: message contextId 'another-context' does not match task '${first.id}' contextId '${first.contextId}'`);
  });

  test("ContentTypeNotSupportedError for a part of a media type the card does not accept", async () => {
    const refused = await rejectionOf(client.sendMessage(message("echo picture", { mediaType: "image/png" })));
    expect(refused).toBeInstanceOf(ContentTypeNotSupportedError);
    expect(seen(refused)).toEqual({
      name: "ContentTypeNotSupportedError",
      reason: "CONTENT_TYPE_NOT_SUPPORTED",
      message: "Media type 'image/png' is not supported. Supported media types: text/plain.",
    });
  });

  test("VersionNotSupportedError for an A2A-Version the card does not list", async () => {
    const old = main.client(binding, { headers: { "A2A-Version": "0.9" } });
    const refused = await rejectionOf(old.getTask({ id: "any" }));
    expect(refused).toBeInstanceOf(VersionNotSupportedError);
    expect(seen(refused)).toEqual({
      name: "VersionNotSupportedError",
      reason: "VERSION_NOT_SUPPORTED",
      message: "The requested A2A protocol version '0.9' is not supported. Supported versions: 1.0",
    });
  });

  test("an executor that throws on cancel: InternalError with the SDK's message (on gRPC the SDK says UNKNOWN, D29 reads it as Internal)", async () => {
    const text = `hold-stubborn ${binding}`;
    const started = taskOf(await client.sendMessage({ ...message(text), configuration: { returnImmediately: true } }));
    await main.executor.heldTask(text);
    const failed = await rejectionOf(client.cancelTask({ id: started.id }));
    main.executor.release(started.id);
    expect(failed).toBeInstanceOf(InternalError);
    expect(seen(failed)).toEqual({ name: "InternalError", reason: "INTERNAL", message: "this executor cannot stop" });
  });

  test("a stream the SDK breaks off after its first events: those events, then the error as its class", async () => {
    const events: StreamResponse[] = [];
    const err = await rejectionOf(
      (async () => {
        for await (const e of client.sendStreamingMessage(message("task-twice"))) events.push(e);
      })(),
    );
    expect(kinds(events)).toEqual(["task", "status:WORKING"]);
    expect(err).toBeInstanceOf(UnsupportedOperationError);
    expect(seen(err)).toEqual({ name: "UnsupportedOperationError", reason: "UNSUPPORTED_OPERATION", message: "Stream ordering violation: received task in task lifecycle stream." });
  });

  test("tenant: the client's tenant goes with every call and the SDK's store keeps tenants apart", async () => {
    // A tenant per binding: the three bindings share the one SDK server.
    const acme = main.client(binding, { tenant: `acme-${binding}` });
    const task = taskOf(await acme.sendMessage(message("echo tenant")));
    expect((await acme.getTask({ id: task.id })).id).toBe(task.id);
    const events = await collect(acme.sendStreamingMessage(message("echo tenant stream")));
    const streamed = events[0]?.payload.case === "task" ? events[0].payload.value.id : "no task";
    expect((await acme.getTask({ id: streamed })).status?.state).toBe(TaskState.COMPLETED);
    expect((await acme.listTasks({})).tasks.map((t) => t.id).sort()).toEqual([task.id, streamed].sort());
    await expect(client.getTask({ id: task.id })).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(main.client(binding, { tenant: "other" }).getTask({ id: task.id })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  test("the card's capabilities off: streaming is UnsupportedOperationError, push configs PushNotificationNotSupportedError", async () => {
    const off = strict.client(binding, { extensions: [REQUIRED_EXT] });
    const stream = await rejectionOf(collect(off.sendStreamingMessage(message("echo stream"))));
    expect(seen(stream)).toEqual({ name: "UnsupportedOperationError", reason: "UNSUPPORTED_OPERATION", message: "Streaming is not supported." });
    const done = taskOf(await off.sendMessage(message("echo push")));
    const push = await rejectionOf(off.createTaskPushNotificationConfig({ taskId: done.id, url: "https://hooks.example.com/x" }));
    expect(push).toBeInstanceOf(PushNotificationNotSupportedError);
    expect(seen(push)).toEqual({ name: "PushNotificationNotSupportedError", reason: "PUSH_NOTIFICATION_NOT_SUPPORTED", message: "Push Notification is not supported" });
  });

  test("a required extension not asked for is ExtensionSupportRequiredError; an extended card promised but not configured ExtendedAgentCardNotConfiguredError", async () => {
    const plain = strict.client(binding);
    const missing = await rejectionOf(plain.sendMessage(message("echo x")));
    expect(missing).toBeInstanceOf(ExtensionSupportRequiredError);
    expect(seen(missing)).toEqual({
      name: "ExtensionSupportRequiredError",
      reason: "EXTENSION_SUPPORT_REQUIRED",
      message: `Client must declare support for required extensions: ${REQUIRED_EXT}`,
    });
    const card = await rejectionOf(plain.getExtendedAgentCard({}));
    expect(card).toBeInstanceOf(ExtendedAgentCardNotConfiguredError);
    expect(seen(card)).toEqual({ name: "ExtendedAgentCardNotConfiguredError", reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED", message: "Extended Agent Card not configured" });
  });
});

// ---------------------------------------------------------------- no heartbeats

describe.each(["JSONRPC", "HTTP+JSON"] as const)("%s: the SDK's streams carry no heartbeat, so the default idle bound never arms (D30)", (binding) => {
  // The default bound (heartbeatTimeoutMs, 45 s) is shortened to 100 ms here, so a quiet of 400 ms is four bounds long.
  const QUIET_MS = 400;

  test("a task quiet for longer than heartbeatTimeoutMs: a plain stream gets every event, nothing is cut", async () => {
    const client = main.client(binding, { heartbeatTimeoutMs: 100 });
    const text = `hold ${binding} quiet`;
    const events = collect(client.sendStreamingMessage(message(text)));
    const taskId = await main.executor.heldTask(text);
    // The quiet itself is what is tested: the task is healthy, only silent.
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    main.executor.release(taskId);
    expect(kinds(await events)).toEqual(["task", "status:WORKING", "artifactUpdate", "artifactUpdate", "status:COMPLETED"]);
  });

  test("an explicit streamIdleTimeoutMs bounds the stream from its start, heartbeats or not: UNAVAILABLE", async () => {
    const client = main.client(binding, { streamIdleTimeoutMs: 100 });
    const text = `hold ${binding} cut`;
    const err = await rejectionOf(collect(client.sendStreamingMessage(message(text))));
    main.executor.release(await main.executor.heldTask(text));
    expect(isRpcError(err) ? [err.name, err.message] : err).toEqual(["UnavailableError", expect.stringContaining("(streamIdleTimeoutMs)")]);
  });
});

// ---------------------------------------------------------------- from the card

describe("a client made from the SDK's Agent Card", () => {
  test("reaches each binding the card lists, with the card read from the SDK's card handler", async () => {
    for (const binding of BINDINGS) {
      const client = await createA2AServiceClient(main.origin, { bindings: [binding] });
      try {
        expect(client.chosenInterface).toEqual({ url: binding === "GRPC" ? main.grpcAddress : binding === "JSONRPC" ? main.jsonRpcUrl : main.restUrl, protocolBinding: binding, protocolVersion: "1.0", tenant: "" });
        expect(client.card.name).toBe("SDK Interop Agent");
        expect(client.card.capabilities?.streaming).toBe(true);
        expect(taskOf(await client.sendMessage(message(`echo card ${binding}`))).status?.state).toBe(TaskState.COMPLETED);
        expect(kinds(await collect(client.sendStreamingMessage(message(`echo card stream ${binding}`)))).at(-1)).toBe("status:COMPLETED");
      } finally {
        client.close();
      }
    }
  });
});

// ---------------------------------------------------------------- deviations

describe("What the SDK's server does differently, and what the client makes of it", () => {
  test.each(BINDINGS)(
    "%s: a stream whose first event is a status (against the spec's rule) is UnsupportedOperationError: the SDK raises that, not InvalidAgentResponse",
    async (binding) => {
      // The spec (3.1.2, and D15 on our server) calls this InvalidAgentResponse;
      // the SDK's _advanceStreamPattern throws UnsupportedOperationError, with
      // that ErrorInfo, so the client can only report what it was told.
      const err = await rejectionOf(collect(main.client(binding).sendStreamingMessage(message("status-first"))));
      expect(seen(err)).toEqual({ name: "UnsupportedOperationError", reason: "UNSUPPORTED_OPERATION", message: "Received statusUpdate before initial 'Message'/'Task' event." });
    },
  );

  test.each(BINDINGS)("%s: canceling a canceled task answers the task again (the spec says TaskNotCancelable for a terminal task)", async (binding) => {
    const client = main.client(binding);
    const text = `hold ${binding} twice`;
    const started = taskOf(await client.sendMessage({ ...message(text), configuration: { returnImmediately: true } }));
    await main.executor.heldTask(text);
    expect((await client.cancelTask({ id: started.id })).status?.state).toBe(TaskState.CANCELED);
    expect((await client.cancelTask({ id: started.id })).status?.state).toBe(TaskState.CANCELED);
  });

  test.each(BINDINGS)("%s: GetExtendedAgentCard without credentials answers the public card (the SDK has no Unauthenticated error)", async (binding) => {
    expect((await main.client(binding).getExtendedAgentCard({})).name).toBe("SDK Interop Agent");
  });

  test("the SDK's card handler serves JSON.stringify of its own objects, not ProtoJSON: the client reads the card and skips the security scheme it cannot recognise", async () => {
    const raw = (await (await fetch(main.cardUrl)).json()) as { securitySchemes: Record<string, unknown> };
    // ProtoJSON would be { httpAuthSecurityScheme: { scheme: "Bearer" } }.
    expect(raw.securitySchemes.bearer).toEqual({ scheme: { $case: "httpAuthSecurityScheme", value: { description: "", scheme: "Bearer", bearerFormat: "" } } });
    const client = await createA2AServiceClient(main.cardUrl);
    client.close();
    expect(client.card.securitySchemes.bearer?.scheme.case).toBeUndefined();
    expect(client.card.skills.map((s) => s.id)).toEqual(["echo"]);
  });
});
