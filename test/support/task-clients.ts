/**
 * Shared by the task-runtime suites (test/tasks/*): an agent made of the
 * generated task handler and an executor the test controls, served on all
 * three bindings by serveA2AService, and the official @a2a-js/sdk clients
 * (one per binding and principal) to drive it. Plus the small tools those
 * suites need: deferreds the executor and the test share, polling with a
 * deadline, an SDK error classifier, a loopback push receiver, and raw
 * requests for what the SDK cannot express (a page of push configs over
 * HTTP+JSON, a gRPC stream that is not read).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect as http2Connect } from "node:http2";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Role, TaskState, type SendMessageRequest, type StreamResponse as SdkStreamResponse, type Task as SdkTask } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory, type Client } from "@a2a-js/sdk/client";
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc";
import * as sdkErrors from "@a2a-js/sdk/errors";
import { UnauthenticatedError, textOf, type A2ACallContext, type AuthRequest } from "protoc-gen-a2a/runtime";
import type { TaskHandlerOptions } from "protoc-gen-a2a/runtime/tasks";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { AgentCardSchema, StreamResponseSchema, SubscribeToTaskRequestSchema, TaskState as PbTaskState, type AgentCard } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor, type A2AServiceRequestContext, type A2AServiceTaskHandler } from "../../generated/a2a_tasks.js";

export const BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"] as const;
export type BindingName = (typeof BINDINGS)[number];

// ---------------------------------------------------------------- principals

export const PRINCIPALS = { alice: "alice-token", bob: "bob-token" } as const;
export type PrincipalName = keyof typeof PRINCIPALS | "anonymous";

/** Like examples/reference-agent/config.ts, for two callers: `Bearer alice-token` is "alice", `Bearer bob-token` "bob". */
export function principalsAuthenticate({ headers }: AuthRequest): { subject: string } | undefined {
  const auth = headers.get("authorization");
  if (auth === null) return undefined;
  for (const [subject, token] of Object.entries(PRINCIPALS)) if (auth === `Bearer ${token}`) return { subject };
  throw new UnauthenticatedError("the bearer token is not valid");
}

// ---------------------------------------------------------------- the agent

export const taskCard: AgentCard = create(AgentCardSchema, {
  name: "Task Runtime Test Agent",
  description: "Runs whatever executor the test gives it.",
  version: "1.0.0",
  capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: false },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "test", name: "Test", description: "test", tags: ["test"] }],
  securitySchemes: { bearer: { scheme: { case: "httpAuthSecurityScheme", value: { scheme: "Bearer" } } } },
});

/** An error the executor threw, as onError saw it. */
export interface ReportedError {
  readonly error: unknown;
  readonly taskId: string;
}

export interface TestAgent {
  readonly server: AgentServer;
  readonly handler: A2AServiceTaskHandler;
  /** What onError was called with. */
  readonly errors: ReportedError[];
  /** An SDK client for `binding`, as `who` (cached). */
  client(binding: BindingName, who?: PrincipalName): Promise<Client>;
  /** Another SDK client for `binding`, as `who`: its own transport and connections (closed with the agent). */
  newClient(binding: BindingName, who?: PrincipalName): Promise<Client>;
  close(): Promise<void>;
}

const factoryFor = (binding: BindingName, who: PrincipalName) =>
  new ClientFactory({
    transports: [new JsonRpcTransportFactory(), new RestTransportFactory(), new GrpcTransportFactory()],
    preferredTransports: [binding],
    clientConfig:
      who === "anonymous"
        ? {}
        : {
            interceptors: [
              {
                // Every call of this client carries the principal's bearer token.
                before: async (args) => {
                  const options = (args.options ??= {});
                  options.serviceParameters = { ...options.serviceParameters, authorization: `Bearer ${PRINCIPALS[who]}` };
                },
                after: async () => undefined,
              },
            ],
          },
  });

/** An SDK client of the agent served at `origin` (its card there), for `binding`, as `who`. */
export function clientAt(origin: string, binding: BindingName, who: PrincipalName = "anonymous"): Promise<Client> {
  return factoryFor(binding, who).createFromUrl(origin);
}

/** What a binding hands the task handler for a call of `subject` in `tenant`: for suites that call the handler directly. */
export function callContext(tenant: string, subject = "alice"): A2ACallContext {
  return {
    binding: "JSONRPC",
    headers: new Headers(),
    signal: new AbortController().signal,
    principal: { subject },
    protocolVersion: "1.0",
    requestedExtensions: [],
    activatedExtensions: new Set(),
    tenant,
  };
}

/** The grpc-js client inside an SDK client (maybe under a decorator), to close it. */
export function grpcClientOf(client: Client): grpc.Client | undefined {
  let transport = client.transport as unknown as { grpcClient?: grpc.Client; base?: unknown };
  for (let i = 0; i < 3 && transport !== undefined; i++) {
    if (transport.grpcClient !== undefined) return transport.grpcClient;
    transport = transport.base as typeof transport;
  }
  return undefined;
}

/**
 * The generated task handler around `executor`, served on all three
 * bindings on loopback (ephemeral ports) with the two-principal
 * authenticate (`serve.heartbeatMs`: the SSE heartbeat period). onError is recorded in `errors` unless the options give one.
 */
export async function startAgent(executor: A2AServiceExecutor, options: TaskHandlerOptions = {}, serve: { heartbeatMs?: number } = {}): Promise<TestAgent> {
  const errors: ReportedError[] = [];
  const handler = createA2AServiceTaskHandler(executor, { onError: (error, info) => errors.push({ error, taskId: info.taskId }), ...options });
  const server = await serveA2AService(handler, taskCard, { port: 0, grpcPort: 0, host: "127.0.0.1", authenticate: principalsAuthenticate, drainMs: 200, ...serve });
  const clients = new Map<string, Promise<Client>>();
  const extra: Promise<Client>[] = [];
  const origin = new URL(server.cardUrl).origin;
  return {
    server,
    handler,
    errors,
    client(binding, who = "anonymous") {
      const key = `${binding}/${who}`;
      let client = clients.get(key);
      if (client === undefined) {
        client = factoryFor(binding, who).createFromUrl(origin);
        clients.set(key, client);
      }
      return client;
    },
    newClient(binding, who = "anonymous") {
      const client = factoryFor(binding, who).createFromUrl(origin);
      extra.push(client);
      return client;
    },
    async close() {
      for (const c of [...clients.values(), ...extra]) grpcClientOf(await c)?.close();
      await server.close();
      await handler.close();
    },
  };
}

/** The binding after `binding` (JSON-RPC, HTTP+JSON, gRPC, round): a client of another binding on the same task. */
export const otherBinding = (binding: BindingName): BindingName => BINDINGS[(BINDINGS.indexOf(binding) + 1) % BINDINGS.length]!;

// ---------------------------------------------------------------- scripted executors

/**
 * One executor for a whole suite, dispatching on the message text: each test
 * registers its own behaviour with `add`, which returns the key to send as
 * the message's text. Every request context a behaviour ran with is kept.
 */
export class Scripts {
  readonly #behaviours = new Map<string, A2AServiceExecutor>();
  readonly #contexts = new Map<string, A2AServiceRequestContext[]>();
  #n = 0;

  add(name: string, behaviour: A2AServiceExecutor): string {
    const key = `${name}-${++this.#n}`;
    this.#behaviours.set(key, behaviour);
    return key;
  }

  /** The contexts the behaviour of `key` ran with, in order. */
  contexts(key: string): A2AServiceRequestContext[] {
    return this.#contexts.get(key) ?? [];
  }

  readonly executor: A2AServiceExecutor = (ctx) => {
    const key = textOf(ctx.message);
    const behaviour = this.#behaviours.get(key);
    if (behaviour === undefined) throw new Error(`no script for message "${key}"`);
    let seen = this.#contexts.get(key);
    if (seen === undefined) this.#contexts.set(key, (seen = []));
    seen.push(ctx);
    return behaviour(ctx);
  };
}

/** An artifact event: `text` as the one part of artifact `id`. */
export function chunk(text: string, id: string, flags: { append?: boolean; last?: boolean } = {}) {
  return { artifact: { artifactId: id, parts: [{ content: { case: "text" as const, value: text } }] }, append: flags.append ?? false, lastChunk: flags.last ?? false };
}

// ---------------------------------------------------------------- requests and events

let messageCounter = 0;

export const textPart = (text: string) => ({ content: { $case: "text" as const, value: text }, metadata: undefined, filename: "", mediaType: "text/plain" });

export interface SendOptions {
  contextId?: string;
  taskId?: string;
  returnImmediately?: boolean;
  historyLength?: number;
  tenant?: string;
  messageId?: string;
  push?: { url: string; id?: string; token?: string; scheme?: string; credentials?: string };
}

/** A user message with `text` as an SDK SendMessageRequest. */
export function send(text: string, o: SendOptions = {}): SendMessageRequest {
  return {
    tenant: o.tenant ?? "",
    message: {
      messageId: o.messageId ?? `m-${++messageCounter}`,
      contextId: o.contextId ?? "",
      taskId: o.taskId ?? "",
      role: Role.ROLE_USER,
      parts: [textPart(text)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: {
      acceptedOutputModes: ["text/plain"],
      taskPushNotificationConfig: o.push === undefined ? undefined : pushConfig("", o.push),
      returnImmediately: o.returnImmediately ?? false,
      historyLength: o.historyLength,
    },
    metadata: undefined,
  };
}

export function pushConfig(taskId: string, p: { url: string; id?: string; token?: string; scheme?: string; credentials?: string }, tenant = "") {
  return {
    tenant,
    id: p.id ?? "",
    taskId,
    url: p.url,
    token: p.token ?? "",
    authentication: p.scheme === undefined ? undefined : { scheme: p.scheme, credentials: p.credentials ?? "" },
  };
}

export const listParams = (
  f: { contextId?: string; status?: TaskState; pageSize?: number; pageToken?: string; includeArtifacts?: boolean; historyLength?: number; statusTimestampAfter?: string; tenant?: string } = {},
) => ({
  tenant: f.tenant ?? "",
  contextId: f.contextId ?? "",
  status: f.status ?? TaskState.TASK_STATE_UNSPECIFIED,
  pageSize: f.pageSize,
  pageToken: f.pageToken ?? "",
  historyLength: f.historyLength,
  statusTimestampAfter: f.statusTimestampAfter,
  includeArtifacts: f.includeArtifacts,
});

/** The Task of a SendMessage result (fails the test on a Message). */
export function asTask(result: unknown): SdkTask {
  if (result === null || typeof result !== "object" || !("status" in result) || "messageId" in result) {
    throw new Error(`expected a Task, got ${JSON.stringify(result)}`);
  }
  return result as SdkTask;
}

export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const events: T[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** An event as a short comparable label: `task:SUBMITTED`, `status:WORKING`, `artifact:<id>:<text>+`, `message:<text>`. */
export function label(event: SdkStreamResponse): string {
  const p = event.payload;
  switch (p?.$case) {
    case "task":
      return `task:${stateName(p.value.status?.state)}`;
    case "statusUpdate":
      return `status:${stateName(p.value.status?.state)}`;
    case "artifactUpdate":
      return `artifact:${p.value.artifact?.artifactId}:${textOfParts(p.value.artifact?.parts)}${p.value.append ? "+" : ""}${p.value.lastChunk ? "!" : ""}`;
    case "message":
      return `message:${textOfParts(p.value.parts)}`;
    default:
      return `?${JSON.stringify(event)}`;
  }
}

export function stateName(state: TaskState | undefined): string {
  return state === undefined ? "none" : (TaskState[state] ?? String(state)).replace(/^TASK_STATE_/, "");
}

export function textOfParts(parts: readonly { content?: { $case?: string; value?: unknown } | undefined }[] | undefined): string {
  return (parts ?? []).map((p) => (p.content?.$case === "text" ? String(p.content.value) : "")).join("");
}

/** A status or task timestamp in ms, whichever way the transport decoded it. */
export function timeMs(ts: unknown): number {
  if (ts instanceof Date) return ts.getTime();
  if (typeof ts === "string") return Date.parse(ts);
  throw new Error(`not a timestamp: ${JSON.stringify(ts)}`);
}

// ---------------------------------------------------------------- errors

const semanticClasses = {
  TaskNotFound: sdkErrors.TaskNotFoundError,
  TaskNotCancelable: sdkErrors.TaskNotCancelableError,
  PushNotificationNotSupported: sdkErrors.PushNotificationNotSupportedError,
  UnsupportedOperation: sdkErrors.UnsupportedOperationError,
  ContentTypeNotSupported: sdkErrors.ContentTypeNotSupportedError,
  InvalidAgentResponse: sdkErrors.InvalidAgentResponseError,
} as const;

/** Which A2A error an SDK error is, on `binding`: the SDK class for A2A errors, the binding's code for the generic ones. */
export function errorKind(binding: BindingName, raw: unknown): string {
  // The JSON-RPC transport throws an in-stream error as a plain Error with the typed one as its cause.
  const err = !(raw instanceof sdkErrors.A2AError) && raw instanceof Error && raw.cause instanceof sdkErrors.A2AError ? raw.cause : raw;
  for (const [name, cls] of Object.entries(semanticClasses)) if (err instanceof cls) return name;
  const e = err as { envelopeCode?: number; statusCode?: number; status?: number; code?: number };
  if (err instanceof sdkErrors.RequestMalformedError) return "InvalidParams";
  if (binding === "JSONRPC" && e.envelopeCode !== undefined) {
    // -31401 is this project's JSON-RPC code for Unauthenticated (D4: implementation-defined).
    return ({ [-32602]: "InvalidParams", [-32603]: "Internal", [-32600]: "InvalidRequest", [-31401]: "Unauthenticated" } as Record<number, string>)[e.envelopeCode] ?? `jsonrpc ${e.envelopeCode}`;
  }
  if (binding === "HTTP+JSON" && e.statusCode !== undefined) {
    return ({ 400: "InvalidParams", 401: "Unauthenticated", 404: "NotFound", 500: "Internal", 429: "ResourceExhausted" } as Record<number, string>)[e.statusCode] ?? `http ${e.statusCode}`;
  }
  const status = typeof e.status === "number" ? e.status : e.code;
  if (binding === "GRPC" && typeof status === "number") {
    return (
      ({ [grpc.status.INVALID_ARGUMENT]: "InvalidParams", [grpc.status.INTERNAL]: "Internal", [grpc.status.UNAUTHENTICATED]: "Unauthenticated", [grpc.status.RESOURCE_EXHAUSTED]: "ResourceExhausted" } as Record<
        number,
        string
      >)[status] ?? `grpc ${status}`
    );
  }
  return `unknown ${err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err)}`;
}

/** The SDK's own error, under the plain Error the JSON-RPC transport wraps an in-stream error in. */
function unwrap(raw: unknown): unknown {
  return !(raw instanceof sdkErrors.A2AError) && raw instanceof Error && raw.cause instanceof sdkErrors.A2AError ? raw.cause : raw;
}

/** The most specific @a2a-js/sdk error class `raw` is an instance of (its constructor's name when none). */
export function sdkClassOf(raw: unknown): string {
  const err = unwrap(raw);
  let found: string | undefined;
  for (const [name, cls] of Object.entries(sdkErrors)) {
    if (typeof cls !== "function" || !(err instanceof (cls as new () => unknown))) continue;
    if (found === undefined || (cls as { prototype: object }).prototype instanceof (sdkErrors as unknown as Record<string, new () => unknown>)[found]!) found = name;
  }
  return found ?? (err instanceof Error ? err.constructor.name : typeof err);
}

/** The JSON-RPC error code an SDK error carries, if any. */
export function jsonRpcCodeOf(raw: unknown): number | undefined {
  const err = unwrap(raw) as { envelopeCode?: unknown; code?: unknown };
  const code = err.envelopeCode ?? err.code;
  return typeof code === "number" ? code : undefined;
}

/** Resolves with the kind of the error `call` fails with; fails the test when it succeeds. */
export async function failure(binding: BindingName, call: () => Promise<unknown>): Promise<string> {
  let result: unknown;
  try {
    result = await call();
  } catch (err) {
    return errorKind(binding, err);
  }
  throw new Error(`expected an error, got ${JSON.stringify(result)}`);
}

/** The message of an SDK error (the typed cause's, on JSON-RPC in-stream errors). */
export function messageOf(raw: unknown): string {
  const err = !(raw instanceof sdkErrors.A2AError) && raw instanceof Error && raw.cause instanceof Error ? raw.cause : raw;
  return err instanceof Error ? err.message : String(err);
}

// ---------------------------------------------------------------- synchronisation

export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  readonly settled: boolean;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let settled = false;
  const promise = new Promise<T>((r) => (resolve = r));
  return {
    promise,
    resolve: (v) => {
      settled = true;
      resolve(v);
    },
    get settled() {
      return settled;
    },
  };
}

/** Polls `check` (every 10 ms) until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `promise`, or a rejection after `ms` naming `what`. */
export function within<T>(what: string, promise: Promise<T>, ms = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms))),
  ]);
}

export interface Followed {
  readonly events: SdkStreamResponse[];
  /** "ended", or the kind of the error the stream ended with. */
  readonly done: Promise<string>;
  /** Resolves once `n` events arrived (or the stream ended). */
  atLeast(n: number): Promise<void>;
}

/** A stream read in the background into `events`; `done` settles with "ended" or the error kind. */
export function follow(binding: BindingName, stream: AsyncIterable<SdkStreamResponse>): Followed {
  const events: SdkStreamResponse[] = [];
  const waiters: { n: number; wake: () => void }[] = [];
  const done = (async () => {
    try {
      for await (const e of stream) {
        events.push(e);
        for (const w of waiters.splice(0)) if (events.length >= w.n) w.wake();
        else waiters.push(w);
      }
      return "ended";
    } catch (err) {
      return errorKind(binding, err);
    } finally {
      for (const w of waiters.splice(0)) w.wake();
    }
  })();
  return {
    events,
    done,
    atLeast(n: number): Promise<void> {
      if (events.length >= n) return Promise.resolve();
      return new Promise((wake) => waiters.push({ n, wake }));
    },
  };
}

// ---------------------------------------------------------------- push receiver

export interface Received {
  readonly path: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

/**
 * A webhook receiver on 127.0.0.1: records every request; `answer` picks the status (200 by
 * default), or a promise of it to hold the request (waiters hear of the request before it is answered).
 */
export class Receiver {
  readonly received: Received[] = [];
  answer: (req: Received, attempt: number) => number | Promise<number> = () => 200;
  readonly #server: Server;
  #waiters: { check: () => boolean; wake: () => void }[] = [];

  constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const got: Received = { path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString() };
        this.received.push(got);
        const attempt = this.received.filter((r) => r.body === got.body && r.path === got.path).length;
        const status = this.answer(got, attempt);
        if (typeof status === "number") return this.#answer(res, status);
        this.#wake();
        void status.then((held) => this.#answer(res, held));
      });
    });
  }

  #answer(res: ServerResponse, status: number): void {
    res.statusCode = status;
    res.end();
    this.#wake();
  }

  #wake(): void {
    this.#waiters = this.#waiters.filter((w) => (w.check() ? (w.wake(), false) : true));
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}${path}`;
  }

  /** Resolves once `check` holds on what was received, or fails after `ms`. */
  when(what: string, check: () => boolean, ms = 5000): Promise<void> {
    if (check()) return Promise.resolve();
    return within(what, new Promise<void>((wake) => this.#waiters.push({ check, wake })), ms);
  }

  on(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

// ---------------------------------------------------------------- raw requests

export const V1 = { "a2a-version": "1.0" } as const;

/** A raw call's outcome: "ok" with the result, or the error kind spelled by the binding's code. */
export interface RawOutcome {
  readonly kind: string;
  readonly result?: unknown;
  readonly message?: string;
}

/** A unary HTTP+JSON call with fetch. */
export async function rawRest(server: AgentServer, method: "GET" | "POST", path: string, body?: object, headers: Record<string, string> = {}): Promise<RawOutcome> {
  const res = await fetch(`${server.httpJsonUrl}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...V1, ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as { error?: { code: number; status: string; message: string; details?: { reason?: string }[] } };
  if (res.ok) return { kind: "ok", result: json };
  const reason = json.error?.details?.find((d) => d.reason !== undefined)?.reason;
  if (reason === "TASK_NOT_FOUND") return { kind: "TaskNotFound", message: json.error?.message };
  const kinds: Record<number, string> = { 400: "InvalidParams", 500: "Internal" };
  return { kind: kinds[res.status] ?? `http ${res.status}`, message: json.error?.message };
}

/** What a stalled subscriber had been sent, read once it finally reads. */
export interface Drained {
  /** artifactUpdate events. */
  readonly chunks: number;
  /** A COMPLETED statusUpdate came. */
  readonly completed: boolean;
  /** The server ended the stream (with an error or not) before the deadline. */
  readonly ended: boolean;
  /** How it ended: "end", or the error (an error kind, a gRPC status name). */
  readonly how: string;
  /** The error's code: JSON-RPC code, or gRPC status. */
  readonly code?: number | undefined;
}

/**
 * A gRPC SubscribeToTask that does not read. Not through grpc-js, whose
 * client keeps taking a paused call's messages off the HTTP/2 stream into a
 * queue of its own (so the server never sees a slow reader): a bare HTTP/2
 * stream, paused, that gives no flow-control window back. `opened` resolves
 * when the server answered with its headers; `drain` starts reading at last
 * and resolves with what had been sent once the stream ends, or after `ms`.
 */
export function stalledGrpcSubscriber(server: AgentServer, taskId: string) {
  const session = http2Connect(`http://${server.grpcAddress!}`);
  session.on("error", () => undefined);
  const stream = session.request({
    ":method": "POST",
    ":path": "/lf.a2a.v1.A2AService/SubscribeToTask",
    "content-type": "application/grpc",
    te: "trailers",
    ...V1,
  });
  stream.on("error", () => undefined);
  const message = Buffer.from(toBinary(SubscribeToTaskRequestSchema, create(SubscribeToTaskRequestSchema, { id: taskId })));
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  stream.end(frame);
  stream.pause();
  const opened = new Promise<void>((resolve) => stream.once("response", () => resolve()));
  let how = "end";
  let code: number | undefined;
  const ended = new Promise<void>((resolve) => {
    stream.on("trailers", (trailers) => {
      code = Number(trailers["grpc-status"]);
      if (code !== grpc.status.OK) how = `grpc ${grpc.status[code]}`;
    });
    stream.on("close", () => resolve());
  });
  return {
    opened,
    drain: async (ms: number): Promise<Drained> => {
      let chunks = 0;
      let completed = false;
      let buffered = Buffer.alloc(0);
      stream.on("data", (data: Buffer) => {
        buffered = Buffer.concat([buffered, data]);
        while (buffered.length >= 5 && buffered.length >= 5 + buffered.readUInt32BE(1)) {
          const length = buffered.readUInt32BE(1);
          const event = fromBinary(StreamResponseSchema, buffered.subarray(5, 5 + length));
          buffered = buffered.subarray(5 + length);
          if (event.payload.case === "artifactUpdate") chunks++;
          if (event.payload.case === "statusUpdate" && event.payload.value.status?.state === PbTaskState.COMPLETED) completed = true;
        }
      });
      stream.resume();
      const done = await within("the stalled gRPC stream to end", ended, ms).then(
        () => true,
        () => false,
      );
      session.destroy();
      return { chunks, completed, ended: done, how, code };
    },
  };
}
