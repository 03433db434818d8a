/**
 * Functional equivalence (issue 6, spec 5.1): the reference agent
 * (examples/reference-agent) served by `serveA2AService` on all three
 * bindings at once, driven by the official `@a2a-js/sdk` 1.3.0 clients.
 *
 * 1. One list of scenarios (`scenarios` below) covers every method of
 *    lf.a2a.v1.A2AService and every A2A error the reference agent can
 *    produce; each scenario runs once per binding (a JSON-RPC, a REST and a
 *    gRPC client, each built by ClientFactory from the served card with that
 *    binding preferred) and the outcomes must be identical. Outcomes are the
 *    SDK's returned objects (one type set for all transports) after a
 *    transport-independent normalization: generated ids (task-N, ctx-N,
 *    cfg-N) become symbolic ones in order of appearance, timestamps become
 *    "<timestamp>" (the gRPC decoder spells them with milliseconds, the JSON
 *    ones as the server wrote them), and the per-binding namespace of the
 *    ids the test picks itself is folded. Errors become { kind, sdkClass,
 *    reason (the wire ErrorInfo.reason), metadata, message }.
 *
 *    The one SDK-side difference normalized away: the generic errors
 *    (InvalidParams, Unauthenticated) carry no ErrorInfo (D3), and the SDK
 *    then picks a class per transport — JSON-RPC RequestMalformedError by
 *    the -32602 code, REST a plain A2AError, gRPC a plain error with
 *    `status` — so for them `kind` is read from the binding's own code and
 *    `sdkClass` is compared per binding against a table (genericClass).
 *
 * 2. Bad input per binding, with raw requests (fetch, grpc-js): unsupported
 *    and missing A2A-Version, an unknown extension, a required extension
 *    missing, capabilities off, missing and wrong credentials.
 *
 * 3. D17: the public card's caching headers, 304, supportedInterfaces; and
 *    close() draining open streams.
 */
import * as grpc from "@grpc/grpc-js";
import { clone, create, fromBinary, type JsonObject } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Role, TaskState, type StreamResponse as SdkStreamResponse, type SendMessageRequest } from "@a2a-js/sdk";
import {
  ClientFactory,
  JsonRpcTransportFactory,
  RestTransportFactory,
  ServiceParameters,
  type Client,
} from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import * as sdkErrors from "@a2a-js/sdk/errors";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { createReferenceAgent } from "../../examples/reference-agent/handler.js";
import { bearerAuthenticate, referenceCard, referenceExtendedCard } from "../../examples/reference-agent/config.js";
import { A2AErrorTable } from "../../runtime/a2a/errors.js";
import { A2AServiceGrpcDefinition } from "../../generated/a2a_grpc.js";
import {
  AgentCapabilitiesSchema,
  AgentCardSchema,
  AgentExtensionSchema,
  AgentInterfaceSchema,
  GetExtendedAgentCardRequestSchema,
  GetTaskRequestSchema,
  SendMessageRequestSchema,
  SubscribeToTaskRequestSchema,
  TaskPushNotificationConfigSchema,
  Role as PbRole,
  type AgentCard,
} from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { ErrorInfoSchema } from "../../runtime/gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../runtime/gen/google/rpc/status_pb.js";

const TOKEN = "equivalence-token";
const TENANT = "acme";
const REQUIRED_EXT = "urn:example:required-ext";
const UNKNOWN_EXT = "urn:example:never-heard-of-it";

const BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"] as const;
type BindingName = (typeof BINDINGS)[number];
/** Ids the test chooses itself are namespaced per binding, so the bindings' tasks never mix on the shared agent. */
const NS: Record<BindingName, string> = { JSONRPC: "nsjsonrpc", "HTTP+JSON": "nsrest", GRPC: "nsgrpc" };

// ---------------------------------------------------------------- servers

const servers: AgentServer[] = [];
const sdkClients: Client[] = [];

async function serve(card: AgentCard, options: { drainMs?: number } = {}): Promise<AgentServer> {
  // Readable ids (task-N, ctx-N, cfg-N), which the normalizer turns into symbolic ones.
  const prefix = { task: "task", context: "ctx", config: "cfg", message: "msg", artifact: "art" } as const;
  let next = 0;
  const server = await serveA2AService(createReferenceAgent(referenceExtendedCard, { newId: (kind) => `${prefix[kind]}-${++next}` }), card, {
    port: 0,
    grpcPort: 0,
    host: "127.0.0.1",
    authenticate: bearerAuthenticate(TOKEN),
    ...options,
  });
  servers.push(server);
  return server;
}

/** The reference card, changed by `edit`. */
function cardWith(edit: (card: AgentCard) => void): AgentCard {
  const card = clone(AgentCardSchema, referenceCard);
  edit(card);
  return card;
}

let main: AgentServer;
/** The same agent with a tenant declared on every interface of its card. */
let tenanted: AgentServer;
/** Its card requires an extension (spec 3.3.4). */
let requiring: AgentServer;
/** Its card has streaming and pushNotifications off (D18). */
let capless: AgentServer;

const factoryFor = (binding: BindingName) =>
  new ClientFactory({
    transports: [new JsonRpcTransportFactory(), new RestTransportFactory(), new GrpcTransportFactory()],
    preferredTransports: [binding],
  });

async function clientFor(server: AgentServer, binding: BindingName): Promise<Client> {
  const url = new URL(server.cardUrl);
  const client = await factoryFor(binding).createFromUrl(url.origin);
  sdkClients.push(client);
  return client;
}

/** The grpc-js client inside an SDK client (maybe under the tenant decorator), to close it. */
function grpcClientOf(client: Client): grpc.Client | undefined {
  let transport = client.transport as unknown as { grpcClient?: grpc.Client; base?: unknown };
  for (let i = 0; i < 3 && transport !== undefined; i++) {
    if (transport.grpcClient !== undefined) return transport.grpcClient;
    transport = transport.base as typeof transport;
  }
  return undefined;
}

const clients = {} as Record<BindingName, Client>;
const tenantClients = {} as Record<BindingName, Client>;

beforeAll(async () => {
  main = await serve(referenceCard);
  tenanted = await serve(
    cardWith((card) => {
      card.supportedInterfaces = BINDINGS.map((protocolBinding) => create(AgentInterfaceSchema, { protocolBinding, tenant: TENANT, protocolVersion: "1.0" }));
    }),
  );
  requiring = await serve(
    cardWith((card) => {
      card.capabilities!.extensions = [create(AgentExtensionSchema, { uri: REQUIRED_EXT, required: true, description: "must be asked for" })];
    }),
  );
  capless = await serve(
    cardWith((card) => {
      card.capabilities = create(AgentCapabilitiesSchema, { streaming: false, pushNotifications: false, extendedAgentCard: true });
    }),
  );
  for (const b of BINDINGS) {
    clients[b] = await clientFor(main, b);
    tenantClients[b] = await clientFor(tenanted, b);
  }
});

afterAll(async () => {
  for (const c of sdkClients) grpcClientOf(c)?.close();
  for (const c of rawGrpcClients) c.close();
  await Promise.all(servers.map((s) => s.close()));
});

// ---------------------------------------------------------------- SDK-side helpers

const textPart = (text: string) => ({ content: { $case: "text" as const, value: text }, metadata: undefined, filename: "", mediaType: "text/plain" });

function send(
  messageId: string,
  text: string,
  options: { contextId?: string; taskId?: string; returnImmediately?: boolean; historyLength?: number; tenant?: string } = {},
): SendMessageRequest {
  return {
    tenant: options.tenant ?? "",
    message: {
      messageId,
      contextId: options.contextId ?? "",
      taskId: options.taskId ?? "",
      role: Role.ROLE_USER,
      parts: [textPart(text)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: {
      acceptedOutputModes: ["text/plain"],
      taskPushNotificationConfig: undefined,
      returnImmediately: options.returnImmediately ?? false,
      historyLength: options.historyLength,
    },
    metadata: undefined,
  };
}

const listParams = (fields: { contextId?: string; status?: TaskState; pageSize?: number; pageToken?: string; includeArtifacts?: boolean } = {}) => ({
  tenant: "",
  contextId: fields.contextId ?? "",
  status: fields.status ?? TaskState.TASK_STATE_UNSPECIFIED,
  pageSize: fields.pageSize,
  pageToken: fields.pageToken ?? "",
  historyLength: undefined,
  statusTimestampAfter: undefined,
  includeArtifacts: fields.includeArtifacts,
});

const pushConfig = (taskId: string, id: string, url: string, tenant = "") => ({ tenant, id, taskId, url, token: "", authentication: undefined });

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const events: T[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const bearer = (token: string) => ({ serviceParameters: ServiceParameters.create((p) => (p["authorization"] = `Bearer ${token}`)) });

/** A long text: the agent echoes it one word per event loop turn, so the task stays WORKING long enough to be interrupted. */
const LONG_TEXT = Array.from({ length: 40_000 }, (_, i) => `w${i}`).join(" ");

/**
 * A task that stays WORKING: a streaming send of a long text, dropped after
 * its first artifact chunk. The reference agent stops working on a task
 * whose caller went away (its `signal.aborted` check), so the task is left
 * WORKING with a partial artifact. Resolves once the task has stopped
 * changing, so it can be compared.
 */
async function workingTask(client: Client, messageId: string, contextId?: string): Promise<string> {
  const controller = new AbortController();
  let taskId: string | undefined;
  try {
    for await (const event of client.sendMessageStream(send(messageId, LONG_TEXT, contextId === undefined ? {} : { contextId }), { signal: controller.signal })) {
      if (event.payload?.$case === "task") taskId = event.payload.value.id;
      if (event.payload?.$case === "artifactUpdate") break;
    }
  } catch {
    // the abort below may surface here on some transports
  } finally {
    controller.abort();
  }
  if (taskId === undefined) throw new Error("the stream gave no task");
  let last = -1;
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 30));
    const task = await client.getTask({ tenant: "", id: taskId, historyLength: 0 });
    if (task.status?.state !== TaskState.TASK_STATE_WORKING) throw new Error(`task ${taskId} finished (${task.status?.state}) before the caller went away`);
    const parts = task.artifacts[0]?.parts.length ?? 0;
    if (parts === last) return taskId;
    last = parts;
  }
  throw new Error(`task ${taskId} kept changing`);
}

// ---------------------------------------------------------------- normalization

/** SDK classes of the A2A-specific errors (and RequestMalformed), by name. */
const semanticClasses = {
  TaskNotFoundError: sdkErrors.TaskNotFoundError,
  TaskNotCancelableError: sdkErrors.TaskNotCancelableError,
  PushNotificationNotSupportedError: sdkErrors.PushNotificationNotSupportedError,
  UnsupportedOperationError: sdkErrors.UnsupportedOperationError,
  ContentTypeNotSupportedError: sdkErrors.ContentTypeNotSupportedError,
  InvalidAgentResponseError: sdkErrors.InvalidAgentResponseError,
  ExtendedAgentCardNotConfiguredError: sdkErrors.ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError: sdkErrors.ExtensionSupportRequiredError,
  VersionNotSupportedError: sdkErrors.VersionNotSupportedError,
  RequestMalformedError: sdkErrors.RequestMalformedError,
} as const;

function sdkClassOf(err: unknown): string {
  for (const [name, cls] of Object.entries(semanticClasses)) if (err instanceof cls) return name;
  if (err instanceof sdkErrors.A2AError) return "A2AError";
  return err instanceof Error ? err.constructor.name : typeof err;
}

type ErrorEntry = (typeof A2AErrorTable)[keyof typeof A2AErrorTable];
const entries = Object.values(A2AErrorTable) as ErrorEntry[];
const generic = entries.filter((e) => e.domain === "");

/** Which error of the table an SDK error is, read from the binding's own code when the SDK has no class for it. */
function kindOf(binding: BindingName, err: unknown): string {
  const cls = sdkClassOf(err);
  if (cls in semanticClasses && cls !== "RequestMalformedError") return cls.replace(/Error$/, "");
  const e = err as { envelopeCode?: number; statusCode?: number; status?: number };
  if (binding === "JSONRPC" && e.envelopeCode !== undefined) return generic.find((g) => g.jsonRpcCode === e.envelopeCode)?.name ?? `code ${e.envelopeCode}`;
  if (binding === "HTTP+JSON" && e.statusCode !== undefined) {
    // Every generic 400 the agent can produce is InvalidParams (parse errors never come from the SDK).
    if (e.statusCode === 400) return "InvalidParams";
    return generic.find((g) => g.httpStatus === e.statusCode)?.name ?? `http ${e.statusCode}`;
  }
  if (binding === "GRPC" && typeof e.status === "number") {
    if (e.status === grpc.status.INVALID_ARGUMENT) return "InvalidParams";
    return generic.find((g) => grpc.status[g.grpcStatus] === e.status)?.name ?? `grpc ${e.status}`;
  }
  return `unknown ${cls}`;
}

/** The SDK class each binding gives a generic error (no ErrorInfo, D3). */
const genericClass: Record<string, Record<BindingName, string>> = {
  InvalidParams: { JSONRPC: "RequestMalformedError", "HTTP+JSON": "A2AError", GRPC: "A2AError" },
  Unauthenticated: { JSONRPC: "A2AError", "HTTP+JSON": "A2AError", GRPC: "A2AError" },
};

/** ErrorInfo as it came over the wire: in `data` on JSON-RPC, decoded onto the error by the SDK elsewhere. */
function errorInfoOf(binding: BindingName, err: unknown): { reason: string | undefined; metadata: Record<string, string> | undefined } {
  if (binding === "JSONRPC") {
    const data = (err as { data?: unknown }).data;
    const info = Array.isArray(data)
      ? (data as { "@type"?: string; reason?: string; metadata?: Record<string, string> }[]).find((d) => d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo")
      : undefined;
    return { reason: info?.reason, metadata: info?.metadata };
  }
  const e = err as { reason?: string; metadata?: Record<string, string> };
  // The SDK's fallback class carries a reason of its own when the wire had no ErrorInfo.
  const known = entries.some((x) => x.domain !== "" && x.reason === e.reason);
  return { reason: known ? e.reason : undefined, metadata: known ? e.metadata : undefined };
}

/** Maps generated ids to symbolic ones in order of appearance, folds the per-binding namespace and timestamps. */
class Normalizer {
  private readonly ids = new Map<string, string>();
  private readonly counters = new Map<string, number>();

  text(s: string): string {
    return s.replace(/ns(jsonrpc|rest|grpc)/g, "ns").replace(/\b(task|ctx|cfg)-\d+\b/g, (id, kind: string) => {
      let symbolic = this.ids.get(id);
      if (symbolic === undefined) {
        const n = (this.counters.get(kind) ?? 0) + 1;
        this.counters.set(kind, n);
        this.ids.set(id, (symbolic = `${kind}#${n}`));
      }
      return symbolic;
    });
  }

  value(v: unknown, key?: string): unknown {
    if (typeof v === "string") {
      if (key === "timestamp") {
        expect(Number.isNaN(Date.parse(v))).toBe(false);
        return "<timestamp>";
      }
      return this.text(v);
    }
    if (v instanceof Date) return "<timestamp>";
    if (Array.isArray(v)) return v.map((x) => this.value(x));
    if (v !== null && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = this.value(x, k);
      return out;
    }
    return v;
  }

  error(binding: BindingName, raw: unknown) {
    // The JSON-RPC transport throws an in-stream error as a plain Error with the typed one as its cause.
    const err = !(raw instanceof sdkErrors.A2AError) && raw instanceof Error && raw.cause instanceof sdkErrors.A2AError ? raw.cause : raw;
    const kind = kindOf(binding, err);
    const sdkClass = sdkClassOf(err);
    const expectedClass = genericClass[kind]?.[binding] ?? `${kind}Error`;
    const { reason, metadata } = errorInfoOf(binding, err);
    // The gRPC transport prefixes the status of an error it has no class for.
    const message = (err instanceof Error ? err.message : String(err)).replace(/^gRPC error for \w+: \d+ /, "");
    return { kind, classAsExpected: sdkClass === expectedClass ? true : `${sdkClass} (expected ${expectedClass})`, reason, metadata: metadata === undefined ? undefined : this.value(metadata), message: this.text(message) };
  }
}

// ---------------------------------------------------------------- the scenarios

interface Ctx {
  readonly binding: BindingName;
  readonly client: Client;
  readonly tenantClient: Client;
  /** This binding's namespace for ids the test picks (contextIds, messageIds). */
  readonly ns: string;
  readonly norm: Normalizer;
}

interface Scenario {
  readonly name: string;
  /** Bindings the scenario runs on, when not all three (each exception is explained where it is made). */
  readonly only?: readonly BindingName[];
  /** Runs the scenario, returning what is compared across bindings (SDK objects, or `fail(err)` outcomes). */
  run(c: Ctx): Promise<unknown>;
  /** What the (identical) outcome must be, checked once on the normalized result. */
  check(outcome: unknown): void;
}

const OK = "ok";
/** The outcome of a call: its normalized result, or its normalized error. */
async function outcome(c: Ctx, call: () => Promise<unknown>): Promise<unknown> {
  try {
    return { [OK]: c.norm.value(await call()) };
  } catch (err) {
    return { error: c.norm.error(c.binding, err) };
  }
}

const errorOutcome = (kind: string, reason: string | undefined, message: string, metadata?: Record<string, string>) => ({
  error: { kind, classAsExpected: true, reason, metadata, message },
});

const task = (fields: { id: string; contextId: string; state: TaskState; artifacts?: unknown[]; history?: unknown[] }) => ({
  id: fields.id,
  contextId: fields.contextId,
  status: { state: fields.state, message: undefined, timestamp: "<timestamp>" },
  artifacts: fields.artifacts ?? [],
  history: fields.history ?? [],
  metadata: undefined,
});
const userMessage = (messageId: string, text: string, taskId: string, contextId: string) => ({
  messageId,
  contextId,
  taskId,
  role: Role.ROLE_USER,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const sdkPart = (text: string) => ({ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" });
const echo = (words: readonly string[]) => ({ artifactId: "echo", name: "echo", description: "", parts: words.map(sdkPart), metadata: undefined, extensions: [] });

/** A working task's artifact grows by timing; its parts are counted, not compared. */
function foldParts(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(foldParts);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = k === "parts" && Array.isArray(x) && x.length > 2 ? `${(x as unknown[]).length > 0 ? "some" : "no"} parts` : foldParts(x);
    return out;
  }
  return v;
}

const scenarios: readonly Scenario[] = [
  {
    name: "SendMessage (blocking): the completed task with the echoed artifact and the history",
    run: (c) => outcome(c, () => c.client.sendMessage(send(`${c.ns}-m1`, "hello equivalent world"))),
    check: (o) =>
      expect(o).toEqual({
        ok: task({
          id: "task#1",
          contextId: "ctx#1",
          state: TaskState.TASK_STATE_COMPLETED,
          artifacts: [echo(["hello", " equivalent", " world"])],
          history: [userMessage("ns-m1", "hello equivalent world", "task#1", "ctx#1")],
        }),
      }),
  },
  {
    name: "SendMessage (returnImmediately, historyLength 0): the task as it starts, without history",
    run: (c) => outcome(c, () => c.client.sendMessage(send(`${c.ns}-m2`, "later", { returnImmediately: true, historyLength: 0, contextId: `${c.ns}-ctx-ri` }))),
    check: (o) => expect(o).toEqual({ ok: task({ id: "task#1", contextId: "ns-ctx-ri", state: TaskState.TASK_STATE_WORKING }) }),
  },
  {
    name: "SendMessage continuing a finished task: UnsupportedOperation",
    run: async (c) => {
      const done = (await c.client.sendMessage(send(`${c.ns}-m3`, "done"))) as { id: string };
      return outcome(c, () => c.client.sendMessage(send(`${c.ns}-m4`, "more", { taskId: done.id })));
    },
    check: (o) => expect(o).toEqual(errorOutcome("UnsupportedOperation", "UNSUPPORTED_OPERATION", "task task#1 is finished and takes no more messages")),
  },
  {
    name: "SendMessage continuing an unknown task: TaskNotFound with its ErrorInfo metadata",
    run: (c) => outcome(c, () => c.client.sendMessage(send(`${c.ns}-m5`, "hi", { taskId: `${c.ns}-missing` }))),
    check: (o) => expect(o).toEqual(errorOutcome("TaskNotFound", "TASK_NOT_FOUND", "no task ns-missing", { taskId: "ns-missing" })),
  },
  {
    name: "SendMessage without a message: InvalidParams (REQUIRED field)",
    run: (c) => outcome(c, () => c.client.sendMessage({ ...send(`${c.ns}-m6`, "x"), message: undefined })),
    check: (o) => expect(o).toEqual(errorOutcome("InvalidParams", undefined, "missing required field: message")),
  },
  {
    name: "SendStreamingMessage: task, working, the artifact in chunks (append, lastChunk), completed",
    run: (c) => outcome(c, () => collect(c.client.sendMessageStream(send(`${c.ns}-s1`, "stream these four words")))),
    check: (o) => {
      const ids = { taskId: "task#1", contextId: "ctx#1" };
      const status = (state: TaskState) => ({ ...ids, status: { state, message: undefined, timestamp: "<timestamp>" }, metadata: undefined });
      const chunk = (text: string, append: boolean, lastChunk: boolean) => ({
        payload: { $case: "artifactUpdate", value: { ...ids, artifact: echo([text]), append, lastChunk, metadata: undefined } },
      });
      expect(o).toEqual({
        ok: [
          {
            payload: {
              $case: "task",
              value: task({ id: "task#1", contextId: "ctx#1", state: TaskState.TASK_STATE_SUBMITTED, history: [userMessage("ns-s1", "stream these four words", "task#1", "ctx#1")] }),
            },
          },
          { payload: { $case: "statusUpdate", value: status(TaskState.TASK_STATE_WORKING) } },
          chunk("stream", false, false),
          chunk(" these", true, false),
          chunk(" four", true, false),
          chunk(" words", true, true),
          { payload: { $case: "statusUpdate", value: status(TaskState.TASK_STATE_COMPLETED) } },
        ],
      });
    },
  },
  {
    name: "GetTask: the streamed task is stored completed with the whole artifact; historyLength 0 trims the history",
    run: async (c) => {
      const events = await collect(c.client.sendMessageStream(send(`${c.ns}-g1`, "keep me")));
      const first = events[0]?.payload;
      const id = first?.$case === "task" ? first.value.id : "";
      return [await outcome(c, () => c.client.getTask({ tenant: "", id })), await outcome(c, () => c.client.getTask({ tenant: "", id, historyLength: 0 }))];
    },
    check: (o) => {
      const full = task({
        id: "task#1",
        contextId: "ctx#1",
        state: TaskState.TASK_STATE_COMPLETED,
        artifacts: [echo(["keep", " me"])],
        history: [userMessage("ns-g1", "keep me", "task#1", "ctx#1")],
      });
      expect(o).toEqual([{ ok: full }, { ok: { ...full, history: [] } }]);
    },
  },
  {
    name: "GetTask of an unknown task: TaskNotFound",
    run: (c) => outcome(c, () => c.client.getTask({ tenant: "", id: `${c.ns}-nope` })),
    check: (o) => expect(o).toEqual(errorOutcome("TaskNotFound", "TASK_NOT_FOUND", "no task ns-nope", { taskId: "ns-nope" })),
  },
  {
    // Not on HTTP+JSON: the SDK sends GET {base}/tasks/ for an empty id, and the
    // router drops a trailing slash by design (runtime/core/http/router.ts), so that is
    // ListTasks; see the HTTP+JSON-only test after the scenarios.
    name: "GetTask without an id: InvalidParams",
    only: ["JSONRPC", "GRPC"],
    run: (c) => outcome(c, () => c.client.getTask({ tenant: "", id: "" })),
    check: (o) => expect(o).toEqual(errorOutcome("InvalidParams", undefined, "missing required field: id")),
  },
  {
    name: "ListTasks: filtered by context, newest first, paged, artifacts only when asked",
    run: async (c) => {
      const contextId = `${c.ns}-list`;
      // Normalized first, so the ids are numbered in creation order.
      const created = [(await outcome(c, () => c.client.sendMessage(send(`${c.ns}-l1`, "one", { contextId, historyLength: 0 })))) as { ok: { id: string } }];
      await new Promise((r) => setTimeout(r, 5));
      created.push((await outcome(c, () => c.client.sendMessage(send(`${c.ns}-l2`, "two", { contextId, historyLength: 0 })))) as { ok: { id: string } });
      expect(created.map((o) => o.ok.id)).toEqual(["task#1", "task#2"]);
      return [
        await outcome(c, () => c.client.listTasks(listParams({ contextId }))),
        await outcome(c, () => c.client.listTasks(listParams({ contextId, pageSize: 1 }))),
        await outcome(c, () => c.client.listTasks(listParams({ contextId, pageSize: 1, pageToken: "1", includeArtifacts: true }))),
        await outcome(c, () => c.client.listTasks(listParams({ contextId, status: TaskState.TASK_STATE_CANCELED }))),
      ];
    },
    check: (o) => {
      const one = task({ id: "task#1", contextId: "ns-list", state: TaskState.TASK_STATE_COMPLETED, history: [userMessage("ns-l1", "one", "task#1", "ns-list")] });
      const two = task({ id: "task#2", contextId: "ns-list", state: TaskState.TASK_STATE_COMPLETED, history: [userMessage("ns-l2", "two", "task#2", "ns-list")] });
      expect(o).toEqual([
        { ok: { tasks: [two, one], nextPageToken: "", pageSize: 50, totalSize: 2 } },
        { ok: { tasks: [two], nextPageToken: "1", pageSize: 1, totalSize: 2 } },
        { ok: { tasks: [{ ...one, artifacts: [echo(["one"])] }], nextPageToken: "", pageSize: 1, totalSize: 2 } },
        { ok: { tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 } },
      ]);
    },
  },
  {
    name: "ListTasks with pageSize out of range or a foreign pageToken: InvalidParams",
    run: async (c) => [
      await outcome(c, () => c.client.listTasks(listParams({ contextId: `${c.ns}-list`, pageSize: 500 }))),
      await outcome(c, () => c.client.listTasks(listParams({ contextId: `${c.ns}-list`, pageToken: "not-a-token" }))),
    ],
    check: (o) =>
      expect(o).toEqual([
        errorOutcome("InvalidParams", undefined, "pageSize must be between 1 and 100"),
        errorOutcome("InvalidParams", undefined, "pageToken is not one this agent gave out"),
      ]),
  },
  {
    name: "CancelTask: a working task is canceled; canceling it again is TaskNotCancelable",
    run: async (c) => {
      const id = await workingTask(c.client, `${c.ns}-c1`);
      return foldParts([
        await outcome(c, () => c.client.cancelTask({ tenant: "", id, metadata: undefined })),
        await outcome(c, () => c.client.cancelTask({ tenant: "", id, metadata: undefined })),
      ]);
    },
    check: (o) =>
      expect(o).toEqual([
        {
          ok: task({
            id: "task#1",
            contextId: "ctx#1",
            state: TaskState.TASK_STATE_CANCELED,
            artifacts: [{ ...echo([]), parts: "some parts" }],
            history: [userMessage("ns-c1", LONG_TEXT, "task#1", "ctx#1")],
          }),
        },
        errorOutcome("TaskNotCancelable", "TASK_NOT_CANCELABLE", "task task#1 is CANCELED and cannot be canceled", { taskId: "task#1" }),
      ]),
  },
  {
    name: "CancelTask of a completed task: TaskNotCancelable; of an unknown task: TaskNotFound",
    run: async (c) => {
      const done = (await c.client.sendMessage(send(`${c.ns}-c2`, "quick"))) as { id: string };
      return [
        await outcome(c, () => c.client.cancelTask({ tenant: "", id: done.id, metadata: undefined })),
        await outcome(c, () => c.client.cancelTask({ tenant: "", id: `${c.ns}-ghost`, metadata: undefined })),
      ];
    },
    check: (o) =>
      expect(o).toEqual([
        errorOutcome("TaskNotCancelable", "TASK_NOT_CANCELABLE", "task task#1 is COMPLETED and cannot be canceled", { taskId: "task#1" }),
        errorOutcome("TaskNotFound", "TASK_NOT_FOUND", "no task ns-ghost", { taskId: "ns-ghost" }),
      ]),
  },
  {
    name: "SubscribeToTask: a working task's snapshot, then its cancellation ends the stream",
    run: async (c) => {
      const id = await workingTask(c.client, `${c.ns}-r1`);
      const events: SdkStreamResponse[] = [];
      const stream = c.client.resubscribeTask({ tenant: "", id });
      const first = await stream.next();
      if (first.done !== true) events.push(first.value);
      await c.client.cancelTask({ tenant: "", id, metadata: undefined });
      for await (const event of { [Symbol.asyncIterator]: () => stream }) events.push(event);
      return foldParts(await outcome(c, async () => events));
    },
    check: (o) =>
      expect(o).toEqual({
        ok: [
          {
            payload: {
              $case: "task",
              value: {
                ...task({ id: "task#1", contextId: "ctx#1", state: TaskState.TASK_STATE_WORKING, artifacts: [{ ...echo([]), parts: "some parts" }] }),
                history: [userMessage("ns-r1", LONG_TEXT, "task#1", "ctx#1")],
              },
            },
          },
          {
            payload: {
              $case: "statusUpdate",
              value: { taskId: "task#1", contextId: "ctx#1", status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: "<timestamp>" }, metadata: undefined },
            },
          },
        ],
      }),
  },
  {
    name: "SubscribeToTask on a finished task: UnsupportedOperation; on an unknown task: TaskNotFound",
    run: async (c) => {
      const done = (await c.client.sendMessage(send(`${c.ns}-r2`, "over"))) as { id: string };
      return [
        await outcome(c, () => collect(c.client.resubscribeTask({ tenant: "", id: done.id }))),
        await outcome(c, () => collect(c.client.resubscribeTask({ tenant: "", id: `${c.ns}-ghost` }))),
      ];
    },
    check: (o) =>
      expect(o).toEqual([
        errorOutcome("UnsupportedOperation", "UNSUPPORTED_OPERATION", "task task#1 is finished; there is nothing to follow", { taskId: "task#1" }),
        errorOutcome("TaskNotFound", "TASK_NOT_FOUND", "no task ns-ghost", { taskId: "ns-ghost" }),
      ]),
  },
  {
    name: "Push notification config CRUD: create (server id and own id), get, list, delete twice, get the deleted one",
    run: async (c) => {
      const done = (await c.client.sendMessage(send(`${c.ns}-p1`, "push"))) as { id: string };
      const id = done.id;
      return [
        await outcome(c, () => c.client.createTaskPushNotificationConfig(pushConfig(id, "", "https://hooks.example.com/a"))),
        await outcome(c, () => c.client.createTaskPushNotificationConfig(pushConfig(id, "audit", "https://hooks.example.com/audit"))),
        await outcome(c, () => c.client.getTaskPushNotificationConfig({ tenant: "", taskId: id, id: "audit" })),
        await outcome(c, () => c.client.listTaskPushNotificationConfig({ tenant: "", taskId: id, pageSize: 0, pageToken: "" })),
        await outcome(c, () => c.client.deleteTaskPushNotificationConfig({ tenant: "", taskId: id, id: "audit" })),
        await outcome(c, () => c.client.deleteTaskPushNotificationConfig({ tenant: "", taskId: id, id: "audit" })),
        await outcome(c, () => c.client.getTaskPushNotificationConfig({ tenant: "", taskId: id, id: "audit" })),
        await outcome(c, () => c.client.listTaskPushNotificationConfig({ tenant: "", taskId: id, pageSize: 0, pageToken: "" })),
      ];
    },
    check: (o) => {
      const a = pushConfig("task#1", "cfg#1", "https://hooks.example.com/a");
      const audit = pushConfig("task#1", "audit", "https://hooks.example.com/audit");
      expect(o).toEqual([
        { ok: a },
        { ok: audit },
        { ok: audit },
        { ok: { configs: [a, audit], nextPageToken: "" } },
        { ok: undefined },
        { ok: undefined },
        errorOutcome("TaskNotFound", "TASK_NOT_FOUND", "task task#1 has no push config audit", { taskId: "task#1" }),
        { ok: { configs: [a], nextPageToken: "" } },
      ]);
    },
  },
  {
    name: "Push notification config of an unknown task: TaskNotFound on create, get, list and delete",
    run: async (c) => {
      const ghost = `${c.ns}-ghost`;
      return [
        await outcome(c, () => c.client.createTaskPushNotificationConfig(pushConfig(ghost, "", "https://hooks.example.com/x"))),
        await outcome(c, () => c.client.getTaskPushNotificationConfig({ tenant: "", taskId: ghost, id: "x" })),
        await outcome(c, () => c.client.listTaskPushNotificationConfig({ tenant: "", taskId: ghost, pageSize: 0, pageToken: "" })),
        await outcome(c, () => c.client.deleteTaskPushNotificationConfig({ tenant: "", taskId: ghost, id: "x" })),
      ];
    },
    check: (o) => expect(o).toEqual(Array.from({ length: 4 }, () => errorOutcome("TaskNotFound", "TASK_NOT_FOUND", "no task ns-ghost", { taskId: "ns-ghost" }))),
  },
  {
    name: "GetExtendedAgentCard: the extended card for the bearer token; Unauthenticated without it or with a wrong one",
    run: async (c) => [
      await outcome(c, () => c.client.getAgentCard(bearer(TOKEN))),
      await outcome(c, () => c.client.getAgentCard()),
      await outcome(c, () => c.client.getAgentCard(bearer("wrong"))),
    ],
    check: (o) => {
      const [card, anonymous, wrong] = o as [{ ok: { name: string; description: string; supportedInterfaces: unknown[] } }, unknown, unknown];
      expect(card.ok.name).toBe(referenceExtendedCard.name);
      expect(card.ok.description).toBe(referenceExtendedCard.description);
      // The extended card comes from the handler as is: no interfaces were declared on it.
      expect(card.ok.supportedInterfaces).toEqual([]);
      expect(anonymous).toEqual(errorOutcome("Unauthenticated", undefined, "the extended agent card requires an authenticated caller"));
      expect(wrong).toEqual(errorOutcome("Unauthenticated", undefined, "the bearer token is not valid"));
    },
  },
  {
    name: "Tenant passed in requests: it reaches the handler (stored on the push config) and the calls behave the same",
    run: async (c) => {
      const done = (await c.client.sendMessage(send(`${c.ns}-t1`, "tenant", { tenant: TENANT }))) as { id: string };
      return [
        await outcome(c, () => c.client.getTask({ tenant: TENANT, id: done.id, historyLength: 0 })),
        await outcome(c, () => c.client.createTaskPushNotificationConfig(pushConfig(done.id, "t", "https://hooks.example.com/t", TENANT))),
        await outcome(c, () => c.client.getTaskPushNotificationConfig({ tenant: TENANT, taskId: done.id, id: "t" })),
      ];
    },
    check: (o) =>
      expect(o).toEqual([
        { ok: task({ id: "task#1", contextId: "ctx#1", state: TaskState.TASK_STATE_COMPLETED, artifacts: [echo(["tenant"])] }) },
        { ok: pushConfig("task#1", "t", "https://hooks.example.com/t", TENANT) },
        { ok: pushConfig("task#1", "t", "https://hooks.example.com/t", TENANT) },
      ]),
  },
  {
    name: "Tenant declared on the card's interfaces: the SDK sends it on every call, streaming included",
    run: async (c) => {
      const events = await collect(c.tenantClient.sendMessageStream(send(`${c.ns}-t2`, "declared tenant")));
      const first = events[0]?.payload;
      const id = first?.$case === "task" ? first.value.id : "";
      return [
        events.length,
        await outcome(c, () => c.tenantClient.createTaskPushNotificationConfig(pushConfig(id, "", "https://hooks.example.com/d"))),
        await outcome(c, () => c.tenantClient.getTask({ tenant: "", id, historyLength: 0 })),
      ];
    },
    check: (o) =>
      expect(o).toEqual([
        5,
        { ok: pushConfig("task#1", "cfg#1", "https://hooks.example.com/d", TENANT) },
        { ok: task({ id: "task#1", contextId: "ctx#1", state: TaskState.TASK_STATE_COMPLETED, artifacts: [echo(["declared", " tenant"])] }) },
      ]),
  },
];

describe("functional equivalence: one scenario list over JSON-RPC, HTTP+JSON and gRPC (@a2a-js/sdk clients)", () => {
  test("each client uses the binding it was built for, from the served card", () => {
    for (const b of BINDINGS) {
      expect(clients[b].transport.protocolName).toBe(b);
      expect(tenantClients[b].transport.protocolName).toBe(b);
      expect(clients[b].protocolVersion).toBe("1.0");
    }
  });

  test.each(scenarios.map((s) => [s.name, s] as const))("%s", async (_name, scenario) => {
    const bindings = scenario.only ?? BINDINGS;
    const outcomes = new Map<BindingName, unknown>();
    for (const binding of bindings) {
      outcomes.set(binding, await scenario.run({ binding, client: clients[binding], tenantClient: tenantClients[binding], ns: NS[binding], norm: new Normalizer() }));
    }
    const [reference, ...others] = bindings;
    // Same results on every binding...
    for (const other of others) expect({ binding: other, outcome: outcomes.get(other) }).toEqual({ binding: other, outcome: outcomes.get(reference!) });
    // ...and the right ones.
    scenario.check(outcomes.get(reference!));
  });

  test("HTTP+JSON, GetTask without an id: the SDK's GET {base}/tasks/ is routed to ListTasks (trailing slash dropped), not InvalidParams", async () => {
    // The one place the bindings do not agree on a scenario. On JSON-RPC and
    // gRPC an empty id is InvalidParams (REQUIRED field). The SDK's REST
    // transport puts the empty id in the path, `/tasks/`; the router drops a
    // trailing slash by design, so this is `GET /tasks`, i.e. ListTasks, and
    // the SDK reads the ListTasksResponse as a Task with every field empty.
    const norm = new Normalizer();
    const result = await outcome({ binding: "HTTP+JSON", client: clients["HTTP+JSON"], tenantClient: tenantClients["HTTP+JSON"], ns: NS["HTTP+JSON"], norm }, () =>
      clients["HTTP+JSON"].getTask({ tenant: "", id: "" }),
    );
    expect(result).toEqual({ ok: { id: "", contextId: "", status: undefined, artifacts: [], history: [], metadata: undefined } });
    const res = await fetch(`${main.httpJsonUrl}/tasks/`, { headers: V1 });
    expect(res.status).toBe(200);
    expect(Object.keys((await res.json()) as object).sort()).toEqual(["nextPageToken", "pageSize", "tasks", "totalSize"]);
  });
});

// ---------------------------------------------------------------- raw requests for bad input

interface RawResult {
  /** The spec error's name as this binding spelled it, or "ok". */
  readonly outcome: string;
  /** ErrorInfo.reason when the error carried one. */
  readonly reason: string | undefined;
  /** HTTP status, or the gRPC status code. */
  readonly status: number;
  /** JSON-RPC error code. */
  readonly code?: number;
  /** The response's A2A-Extensions header / metadata. */
  readonly extensions: string | null;
  readonly message: string;
}

type Headers_ = Record<string, string>;
const V1 = { "a2a-version": "1.0" };

async function jsonRpc(server: AgentServer, method: string, params: JsonObject, headers: Headers_): Promise<RawResult> {
  const res = await fetch(server.jsonRpcUrl!, {
    method: "POST",
    headers: { "content-type": "application/json", accept: method.startsWith("SendStreaming") || method === "SubscribeToTask" ? "text/event-stream" : "application/json", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const text = await res.text();
  const extensions = res.headers.get("a2a-extensions");
  // A stream's first frame; a plain body otherwise.
  const json = (res.headers.get("content-type")?.startsWith("text/event-stream") ? JSON.parse(text.split("\n").find((l) => l.startsWith("data: "))!.slice(6)) : JSON.parse(text)) as {
    result?: unknown;
    error?: { code: number; message: string; data?: { "@type": string; reason?: string }[] };
  };
  if (json.error === undefined) return { outcome: "ok", reason: undefined, status: res.status, extensions, message: "" };
  const entry = entries.find((e) => e.jsonRpcCode === json.error!.code);
  const reason = json.error.data?.find((d) => d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo")?.reason;
  return { outcome: entry?.name ?? `code ${json.error.code}`, reason, status: res.status, code: json.error.code, extensions, message: json.error.message };
}

async function httpJson(server: AgentServer, method: "GET" | "POST", path: string, body: JsonObject | undefined, headers: Headers_): Promise<RawResult> {
  const res = await fetch(`${server.httpJsonUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  const extensions = res.headers.get("a2a-extensions");
  if (res.ok) return { outcome: "ok", reason: undefined, status: res.status, extensions, message: "" };
  const json = JSON.parse(text) as { error: { code: number; status: string; message: string; details: { "@type": string; reason?: string }[] } };
  const reason = json.error.details.find((d) => d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo")?.reason;
  const entry = entries.find((e) => e.httpStatus === res.status && e.grpcStatus === json.error.status && (e.domain === "" ? reason === undefined : e.reason === reason));
  return { outcome: entry?.name ?? `http ${res.status} ${json.error.status}`, reason, status: res.status, extensions, message: json.error.message };
}

const rawGrpcClients: grpc.Client[] = [];
const GenericA2AClient = grpc.makeGenericClientConstructor(A2AServiceGrpcDefinition as unknown as grpc.ServiceDefinition, "A2AService");
const rawGrpcOf = new Map<AgentServer, grpc.Client>();
function rawGrpc(server: AgentServer): grpc.Client {
  let client = rawGrpcOf.get(server);
  if (client === undefined) {
    client = new GenericA2AClient(server.grpcAddress!, grpc.credentials.createInsecure());
    rawGrpcOf.set(server, client);
    rawGrpcClients.push(client);
  }
  return client;
}

function grpcResult(err: grpc.ServiceError | null, extensions: string | null): RawResult {
  if (err === null) return { outcome: "ok", reason: undefined, status: grpc.status.OK, extensions, message: "" };
  const bin = err.metadata.get("grpc-status-details-bin")[0];
  let reason: string | undefined;
  if (bin !== undefined) {
    for (const detail of fromBinary(StatusSchema, bin as Buffer).details) {
      const info = anyUnpack(detail, ErrorInfoSchema);
      if (info !== undefined) reason = info.reason;
    }
  }
  const entry = entries.find((e) => grpc.status[e.grpcStatus] === err.code && (e.domain === "" ? reason === undefined : e.reason === reason));
  return { outcome: entry?.name ?? `grpc ${err.code}`, reason, status: err.code, extensions, message: err.details };
}

const metadataOf = (headers: Headers_) => {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(headers)) md.set(k, v);
  return md;
};

function grpcUnary(server: AgentServer, method: "getTask" | "getExtendedAgentCard" | "createTaskPushNotificationConfig" | "sendMessage", request: unknown, headers: Headers_): Promise<RawResult> {
  const client = rawGrpc(server) as unknown as Record<string, (req: unknown, md: grpc.Metadata, cb: (err: grpc.ServiceError | null) => void) => grpc.ClientUnaryCall>;
  return new Promise((resolve) => {
    let extensions: string | null = null;
    const call = client[method]!.call(client, request, metadataOf(headers), (err) => resolve(grpcResult(err, extensions)));
    call.on("metadata", (md: grpc.Metadata) => {
      const v = md.get("a2a-extensions")[0];
      if (v !== undefined) extensions = String(v);
    });
  });
}

function grpcStream(server: AgentServer, method: "sendStreamingMessage" | "subscribeToTask", request: unknown, headers: Headers_): Promise<RawResult> {
  const client = rawGrpc(server) as unknown as Record<string, (req: unknown, md: grpc.Metadata) => grpc.ClientReadableStream<unknown>>;
  return new Promise((resolve) => {
    const call = client[method]!.call(client, request, metadataOf(headers));
    call.on("data", () => undefined);
    call.on("error", (err: grpc.ServiceError) => resolve(grpcResult(err, null)));
    call.on("end", () => resolve(grpcResult(null, null)));
  });
}

/** One binding's raw calls, each with the given headers (A2A-Version included or not). */
interface RawBinding {
  sendMessage(server: AgentServer, headers: Headers_): Promise<RawResult>;
  sendStreamingMessage(server: AgentServer, headers: Headers_): Promise<RawResult>;
  subscribeToTask(server: AgentServer, id: string, headers: Headers_): Promise<RawResult>;
  getTask(server: AgentServer, id: string, headers: Headers_): Promise<RawResult>;
  createPushConfig(server: AgentServer, taskId: string, headers: Headers_): Promise<RawResult>;
  getExtendedAgentCard(server: AgentServer, headers: Headers_): Promise<RawResult>;
}

const messageJson = (text: string): JsonObject => ({ message: { messageId: `raw-${text}`, role: "ROLE_USER", parts: [{ text }] } });
const messagePb = (text: string) => create(SendMessageRequestSchema, { message: { messageId: `raw-${text}`, role: PbRole.USER, parts: [{ content: { case: "text", value: text } }] } });

const raw: Record<BindingName, RawBinding> = {
  JSONRPC: {
    sendMessage: (s, h) => jsonRpc(s, "SendMessage", messageJson("hi"), h),
    sendStreamingMessage: (s, h) => jsonRpc(s, "SendStreamingMessage", messageJson("hi"), h),
    subscribeToTask: (s, id, h) => jsonRpc(s, "SubscribeToTask", { id }, h),
    getTask: (s, id, h) => jsonRpc(s, "GetTask", { id }, h),
    createPushConfig: (s, taskId, h) => jsonRpc(s, "CreateTaskPushNotificationConfig", { taskId, url: "https://hooks.example.com/raw" }, h),
    getExtendedAgentCard: (s, h) => jsonRpc(s, "GetExtendedAgentCard", {}, h),
  },
  "HTTP+JSON": {
    sendMessage: (s, h) => httpJson(s, "POST", "/message:send", messageJson("hi"), h),
    sendStreamingMessage: (s, h) => httpJson(s, "POST", "/message:stream", messageJson("hi"), h),
    subscribeToTask: (s, id, h) => httpJson(s, "GET", `/tasks/${id}:subscribe`, undefined, h),
    getTask: (s, id, h) => httpJson(s, "GET", `/tasks/${id}`, undefined, h),
    createPushConfig: (s, taskId, h) => httpJson(s, "POST", `/tasks/${taskId}/pushNotificationConfigs`, { url: "https://hooks.example.com/raw" }, h),
    getExtendedAgentCard: (s, h) => httpJson(s, "GET", "/extendedAgentCard", undefined, h),
  },
  GRPC: {
    sendMessage: (s, h) => grpcUnary(s, "sendMessage", messagePb("hi"), h),
    sendStreamingMessage: (s, h) => grpcStream(s, "sendStreamingMessage", messagePb("hi"), h),
    subscribeToTask: (s, id, h) => grpcStream(s, "subscribeToTask", create(SubscribeToTaskRequestSchema, { id }), h),
    getTask: (s, id, h) => grpcUnary(s, "getTask", create(GetTaskRequestSchema, { id }), h),
    createPushConfig: (s, taskId, h) => grpcUnary(s, "createTaskPushNotificationConfig", create(TaskPushNotificationConfigSchema, { taskId, url: "https://hooks.example.com/raw" }), h),
    getExtendedAgentCard: (s, h) => grpcUnary(s, "getExtendedAgentCard", create(GetExtendedAgentCardRequestSchema, {}), h),
  },
};

/** How the spec error `name` is spelled on `binding`: JSON-RPC code, HTTP status, gRPC status; ErrorInfo only on A2A errors (D3). */
function expectSpecError(binding: BindingName, result: RawResult, name: keyof typeof A2AErrorTable) {
  const entry: ErrorEntry = A2AErrorTable[name];
  expect(result.outcome).toBe(entry.name);
  expect(result.reason).toBe(entry.domain === "" ? undefined : entry.reason);
  if (binding === "JSONRPC") expect(result.code).toBe(entry.jsonRpcCode);
  if (binding === "HTTP+JSON") expect(result.status).toBe(entry.httpStatus);
  if (binding === "GRPC") expect(result.status).toBe(grpc.status[entry.grpcStatus]);
}

describe.each(BINDINGS)("bad input on %s (raw requests)", (binding) => {
  const r = raw[binding];

  test("A2A-Version 0.5 and a missing A2A-Version are VersionNotSupported; 1.0 (and 1.0.3) is served", async () => {
    const unsupported = await r.getTask(main, "whatever", { "a2a-version": "0.5" });
    expectSpecError(binding, unsupported, "VersionNotSupported");
    expect(unsupported.message).toBe("Protocol version 0.5 is not supported. Supported: 1.0");
    // Spec 3.6.2: no version means 0.3.
    const missing = await r.getTask(main, "whatever", {});
    expectSpecError(binding, missing, "VersionNotSupported");
    expect(missing.message).toBe("Protocol version 0.3 is not supported. Supported: 1.0");
    // With a supported version, the same call reaches the agent (which knows no such task).
    expectSpecError(binding, await r.getTask(main, "whatever", { "a2a-version": "1.0.3" }), "TaskNotFound");
  });

  test("an unknown extension is ignored: the call succeeds and A2A-Extensions does not echo it", async () => {
    const result = await r.sendMessage(main, { ...V1, "a2a-extensions": UNKNOWN_EXT });
    expect(result.outcome).toBe("ok");
    expect(result.extensions).toBeNull();
  });

  test("a required extension not requested is ExtensionSupportRequired; requesting it is enough", async () => {
    const missing = await r.sendMessage(requiring, V1);
    expectSpecError(binding, missing, "ExtensionSupportRequired");
    expect(missing.message).toContain(REQUIRED_EXT);
    // Other extensions do not count.
    expectSpecError(binding, await r.sendMessage(requiring, { ...V1, "a2a-extensions": UNKNOWN_EXT }), "ExtensionSupportRequired");
    expect((await r.sendMessage(requiring, { ...V1, "a2a-extensions": `${UNKNOWN_EXT}, ${REQUIRED_EXT}` })).outcome).toBe("ok");
  });

  test("capabilities off: streaming is UnsupportedOperation, push notifications PushNotificationNotSupported", async () => {
    expectSpecError(binding, await r.sendStreamingMessage(capless, V1), "UnsupportedOperation");
    expectSpecError(binding, await r.subscribeToTask(capless, "any", V1), "UnsupportedOperation");
    expectSpecError(binding, await r.createPushConfig(capless, "any", V1), "PushNotificationNotSupported");
    // The rest of the agent works.
    expect((await r.sendMessage(capless, V1)).outcome).toBe("ok");
  });

  test("GetExtendedAgentCard: missing or wrong credentials are Unauthenticated (401 / UNAUTHENTICATED / -31401)", async () => {
    const missing = await r.getExtendedAgentCard(main, V1);
    expectSpecError(binding, missing, "Unauthenticated");
    const wrong = await r.getExtendedAgentCard(main, { ...V1, authorization: "Bearer not-the-token" });
    expectSpecError(binding, wrong, "Unauthenticated");
    // The authentication hook runs before anything is looked up: a wrong token fails any call.
    expectSpecError(binding, await r.getTask(main, "whatever", { ...V1, authorization: "Basic Zm9vOmJhcg==" }), "Unauthenticated");
    expect((await r.getExtendedAgentCard(main, { ...V1, authorization: `Bearer ${TOKEN}` })).outcome).toBe("ok");
  });
});

// ---------------------------------------------------------------- D17 and close()

describe("the public Agent Card (D17) and close()", () => {
  test("GET /.well-known/agent-card.json: ETag, Cache-Control max-age, Last-Modified; If-None-Match gives 304", async () => {
    const res = await fetch(main.cardUrl);
    expect(res.status).toBe(200);
    const etag = res.headers.get("etag");
    expect(etag).toMatch(/^"[^"]+"$/);
    expect(res.headers.get("cache-control")).toMatch(/max-age=\d+/);
    expect(Number.isNaN(Date.parse(res.headers.get("last-modified") ?? ""))).toBe(false);
    const card = (await res.json()) as JsonObject;
    expect(card).toEqual(main.card);

    const again = await fetch(main.cardUrl, { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(await again.text()).toBe("");
  });

  test("supportedInterfaces: JSONRPC, HTTP+JSON, GRPC in that order, at the mounted urls (gRPC as host:port)", async () => {
    const card = (await (await fetch(main.cardUrl)).json()) as { supportedInterfaces: unknown[] };
    expect(main.grpcAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(main.jsonRpcUrl).toBe(`${new URL(main.cardUrl).origin}/a2a/jsonrpc`);
    expect(main.httpJsonUrl).toBe(`${new URL(main.cardUrl).origin}/a2a/rest`);
    expect(card.supportedInterfaces).toEqual([
      { url: main.jsonRpcUrl, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: main.httpJsonUrl, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      { url: main.grpcAddress, protocolBinding: "GRPC", protocolVersion: "1.0" },
    ]);
    // A tenant declared on the card's interfaces is kept on the mounted ones.
    const tenantCard = (await (await fetch(tenanted.cardUrl)).json()) as { supportedInterfaces: { tenant?: string; url: string }[] };
    expect(tenantCard.supportedInterfaces.map((i) => [i.url, i.tenant])).toEqual([
      [tenanted.jsonRpcUrl, TENANT],
      [tenanted.httpJsonUrl, TENANT],
      [tenanted.grpcAddress, TENANT],
    ]);
  });

  test("close() resolves while SubscribeToTask streams are open on every binding, and the streams end", async () => {
    const server = await serve(referenceCard, { drainMs: 300 });
    servers.splice(servers.indexOf(server), 1);
    const local: Client[] = [];
    try {
      const streams: Promise<string>[] = [];
      for (const binding of BINDINGS) {
        const client = await clientFor(server, binding);
        local.push(client);
        const id = await workingTask(client, `drain-${NS[binding]}`);
        const stream = client.resubscribeTask({ tenant: "", id });
        const first = await stream.next();
        expect(first.done).toBe(false);
        streams.push(
          (async () => {
            try {
              for await (const _ of { [Symbol.asyncIterator]: () => stream }) void _;
              return "ended";
            } catch {
              return "ended with an error";
            }
          })(),
        );
      }
      const started = Date.now();
      await server.close();
      expect(Date.now() - started).toBeLessThan(3000);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const ends = await Promise.race([Promise.all(streams), new Promise<string>((r) => (timer = setTimeout(() => r("still open"), 3000)))]);
      clearTimeout(timer);
      expect(ends).not.toBe("still open");
      expect((ends as string[]).length).toBe(3);
    } finally {
      for (const c of local) grpcClientOf(c)?.close();
    }
  });
});
