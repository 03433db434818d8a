/**
 * serveA2AService's `grpc` options on real sockets, with real clients: the
 * health service (Check, and a Watch that sees NOT_SERVING as soon as
 * close() starts draining; a call still running after the drain is answered
 * by the reference agent's task handler, closed after the drain, which aborts
 * its executor), reflection read by the buf CLI alone, the message-size limits,
 * and the error for reflection without a descriptor.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { create, toJson, type JsonObject } from "@bufbuild/protobuf";
import { service as healthServiceDefinition } from "grpc-health-check";
import { serveAgent, type AgentServer } from "protoc-gen-a2a/runtime/server";
import { A2AServiceGrpcDefinition, createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { A2AServiceJsonRpcMethods } from "../../generated/a2a_jsonrpc.js";
import { A2AServiceHttpRules, A2AServiceMethods, A2AServiceRequiredFields } from "../../generated/a2a_methods.js";
import { AgentCardSchema, GetTaskRequestSchema, ListTasksRequestSchema, Role, SendMessageRequestSchema, TaskState, type SendMessageResponse } from "../../generated/a2a_pb.js";
import { createInMemoryTaskStore, type TaskPage } from "protoc-gen-a2a/runtime/tasks";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createReferenceAgent } from "../../examples/reference-agent/handler.js";
import { referenceCard, referenceExtendedCard } from "../../examples/reference-agent/config.js";

const run = promisify(execFile);
const BUF = join(process.cwd(), "node_modules/.bin/buf");
const SERVICE = "lf.a2a.v1.A2AService";
// Above what reflection sends (a2a.proto and descriptor.proto are 12-13 KB each; a 4 KiB limit breaks it).
const SEND_LIMIT = 256 * 1024;

let server: AgentServer;
/** The main server's task store, to see its tasks from the test. */
const store = createInMemoryTaskStore();
beforeAll(async () => {
  server = await serveA2AService(createReferenceAgent(referenceExtendedCard, { store }), referenceCard, {
    port: 0,
    grpcPort: 0,
    drainMs: 300,
    grpc: { health: true, reflection: true, maxSendMessageBytes: SEND_LIMIT },
  });
});
let closed: Promise<void> | undefined;
afterAll(async () => {
  await (closed ?? server.close());
  store.close();
});

const target = () => server.grpcAddress as string;

const HealthClient = grpc.makeClientConstructor(healthServiceDefinition as unknown as grpc.ServiceDefinition, "Health");
type HealthClient = grpc.Client & {
  check(req: { service: string }, cb: (err: grpc.ServiceError | null, res: { status: string }) => void): void;
  watch(req: { service: string }): grpc.ClientReadableStream<{ status: string }>;
};
const healthClient = () => new HealthClient(target(), grpc.credentials.createInsecure()) as unknown as HealthClient;

function check(service: string): Promise<{ status?: string; code?: number }> {
  const client = healthClient();
  return new Promise((resolve) =>
    client.check({ service }, (err, res) => {
      client.close();
      resolve(err === null ? { status: res.status } : { code: err.code });
    }),
  );
}

const A2AClient = grpc.makeGenericClientConstructor(A2AServiceGrpcDefinition, "A2AService");
function sendMessage(text: string, contextId = "", historyLength?: number): Promise<{ code: number; details?: string; response?: SendMessageResponse }> {
  const client = new A2AClient(target(), grpc.credentials.createInsecure()) as unknown as grpc.Client & {
    sendMessage(req: unknown, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res?: SendMessageResponse) => void): void;
  };
  const md = new grpc.Metadata();
  md.set("a2a-version", "1.0");
  const request = create(SendMessageRequestSchema, {
    message: { messageId: `m-${text.length}`, contextId, role: Role.USER, parts: [{ content: { case: "text", value: text } }] },
    ...(historyLength === undefined ? {} : { configuration: { historyLength } }),
  });
  return new Promise((resolve) =>
    client.sendMessage(request, md, (err, res) => {
      client.close();
      resolve(err === null ? { code: grpc.status.OK, ...(res === undefined ? {} : { response: res }) } : { code: err.code, details: err.details });
    }),
  );
}

test("the health service answers SERVING for the server and for the A2A service", async () => {
  expect(await check("")).toEqual({ status: "SERVING" });
  expect(await check(SERVICE)).toEqual({ status: "SERVING" });
  expect(await check("no.such.Service")).toEqual({ code: grpc.status.NOT_FOUND });
});

test("reflection alone lets buf curl list the services, check health and call SendMessage", async () => {
  // From a folder with no buf.yaml, so the schema can only come from the server.
  const curl = (...args: string[]) => run(BUF, ["curl", "--protocol", "grpc", "--http2-prior-knowledge", "--reflect", ...args], { cwd: tmpdir(), timeout: 30_000 });
  const services = (await curl("--list-services", `http://${target()}`)).stdout.trim().split("\n");
  expect(services.sort()).toEqual(["grpc.health.v1.Health", SERVICE]);
  // Health is described too, so a reflecting client can probe it.
  expect(JSON.parse((await curl("--data", `{"service":"${SERVICE}"}`, `http://${target()}/grpc.health.v1.Health/Check`)).stdout)).toEqual({ status: "SERVING" });
  const body = JSON.stringify({ message: { messageId: "m-curl", role: "ROLE_USER", parts: [{ text: "via reflection" }] } });
  const { stdout } = await curl("--data", body, "-H", "a2a-version: 1.0", `http://${target()}/${SERVICE}/SendMessage`);
  const task = (JSON.parse(stdout) as { task: { status: { state: string }; artifacts: { parts: { text: string }[] }[] } }).task;
  expect(task.status.state).toBe("TASK_STATE_COMPLETED");
  expect(task.artifacts.flatMap((a) => a.parts.map((p) => p.text)).join("")).toContain("via reflection");
}, 60_000);

test("grpc.maxSendMessageBytes bounds responses: an answer over it is RESOURCE_EXHAUSTED, one under it is sent", async () => {
  const small = await sendMessage("short");
  expect(small.code).toBe(grpc.status.OK);
  // The reference agent echoes the text into the task (artifact and history): twice the limit.
  const big = await sendMessage("x".repeat(SEND_LIMIT));
  expect(big.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
});

test("requests over the default 4 MiB are RESOURCE_EXHAUSTED on serveA2AService too (D16)", async () => {
  // ListTasks answers an unknown contextId with a small empty page, whatever the request's size.
  const listTasks = (contextId: string) => {
    const client = new A2AClient(target(), grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      listTasks(req: unknown, md: grpc.Metadata, cb: (err: grpc.ServiceError | null) => void): void;
    };
    const md = new grpc.Metadata();
    md.set("a2a-version", "1.0");
    return new Promise<number>((resolve) =>
      client.listTasks(create(ListTasksRequestSchema, { contextId }), md, (err) => {
        client.close();
        resolve(err === null ? grpc.status.OK : err.code);
      }),
    );
  };
  expect(await listTasks("x".repeat(1024 * 1024))).toBe(grpc.status.OK);
  expect(await listTasks("x".repeat(4 * 1024 * 1024 + 1))).toBe(grpc.status.RESOURCE_EXHAUSTED);
});

test("grpc.tls serves gRPC over TLS: a client trusting the certificate is answered, a plaintext one is not", async () => {
  // A throwaway self-signed certificate for 127.0.0.1 (openssl comes with .ci/run's Debian packages).
  const dir = mkdtempSync(join(tmpdir(), "a2a-tls-"));
  try {
    await run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=localhost",
      "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")]);
    const cert = readFileSync(join(dir, "cert.pem"));
    const tls = await serveA2AService(createReferenceAgent(referenceExtendedCard), referenceCard, {
      port: 0,
      grpcPort: 0,
      drainMs: 100,
      grpc: { tls: { cert, key: readFileSync(join(dir, "key.pem")) } },
    });
    try {
      const call = (credentials: grpc.ChannelCredentials) => {
        const client = new A2AClient(tls.grpcAddress as string, credentials) as unknown as grpc.Client & {
          getTask(req: unknown, md: grpc.Metadata, options: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void): void;
        };
        const md = new grpc.Metadata();
        md.set("a2a-version", "1.0");
        return new Promise<number>((resolve) =>
          client.getTask(create(GetTaskRequestSchema, { id: "no-such-task" }), md, { deadline: Date.now() + 5000 }, (err) => {
            client.close();
            resolve(err === null ? grpc.status.OK : err.code);
          }),
        );
      };
      // Answered over TLS: the A2A error for an unknown task, not a transport failure.
      expect(await call(grpc.credentials.createSsl(cert))).toBe(grpc.status.NOT_FOUND);
      expect(await call(grpc.credentials.createInsecure())).toBe(grpc.status.UNAVAILABLE);
    } finally {
      await tls.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);

test("reflection without the service's descriptor is refused, naming what is missing", async () => {
  await expect(
    serveAgent(
      {
        handler: createReferenceAgent(referenceExtendedCard),
        card: toJson(AgentCardSchema, referenceCard) as JsonObject,
        methods: A2AServiceMethods,
        jsonRpcMethods: A2AServiceJsonRpcMethods,
        rules: A2AServiceHttpRules,
        required: A2AServiceRequiredFields,
        loadGrpcDefinition: () => Promise.resolve(A2AServiceGrpcDefinition),
      },
      { port: 0, grpcPort: 0, grpc: { reflection: true } },
    ),
  ).rejects.toThrow(/grpc\.reflection needs the service descriptor \(config\.service\)/);
});

test("grpc-js options of the wrong type are refused before anything listens, naming the key: a limit given as text would never hold", async () => {
  const free = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const serveWith = (serverOptions: Record<string, unknown>) =>
    serveA2AService(createReferenceAgent(referenceExtendedCard), referenceCard, { port: free, grpcPort: 0, grpc: { serverOptions } });
  await expect(serveWith({ "grpc.max_receive_message_length": "1mb" })).rejects.toThrow(
    new TypeError('serveAgent: grpc.serverOptions["grpc.max_receive_message_length"] must be a number, got "1mb"'),
  );
  await expect(serveWith({ interceptors: () => undefined })).rejects.toThrow(/grpc\.serverOptions\.interceptors must be a list/);
  await expect(serveWith({ "grpc.some_future_option": { nested: true } })).rejects.toThrow(/must be a number or a string/);
  // Nothing was left listening on the HTTP port.
  await new Promise<void>((resolve, reject) => {
    const again = createServer().once("error", reject).listen(free, "127.0.0.1", () => again.close(() => resolve()));
  });
  // A client's channel options are held to the same rule.
  expect(() => createA2AServiceGrpcClient("127.0.0.1:1", { channelOptions: { "grpc.keepalive_time_ms": "10s" } })).toThrow(
    new TypeError('channelOptions["grpc.keepalive_time_ms"] must be a number, got "10s"'),
  );
  // Strings stay strings where grpc-js takes them.
  createA2AServiceGrpcClient("127.0.0.1:1", { channelOptions: { "grpc.primary_user_agent": "tests/1", "grpc.keepalive_time_ms": 60_000 } }).close();
});

test("channelz is off on serveA2AService's gRPC port, as on the clients, unless grpc.serverOptions turns it on (D80)", async () => {
  // grpc-js's own channelz service, on a server of its own, lists the servers channelz records.
  const admin = new grpc.Server({ "grpc.enable_channelz": 0 });
  admin.addService(grpc.getChannelzServiceDefinition(), grpc.getChannelzHandlers());
  const adminPort = await new Promise<number>((resolve, reject) => admin.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))));
  const Channelz = grpc.makeClientConstructor(grpc.getChannelzServiceDefinition(), "Channelz");
  const channelz = new Channelz(`127.0.0.1:${adminPort}`, grpc.credentials.createInsecure(), { "grpc.enable_channelz": 0 }) as unknown as grpc.Client & {
    GetServers(req: { start_server_id: string }, cb: (err: grpc.ServiceError | null, res: { server: { listen_socket: { name: string }[] }[] }) => void): void;
  };
  const listed = () =>
    new Promise<string[]>((resolve, reject) =>
      channelz.GetServers({ start_server_id: "0" }, (err, res) => (err ? reject(err) : resolve(res.server.flatMap((s) => s.listen_socket.map((l) => l.name))))),
    );
  const on = await serveA2AService(createReferenceAgent(referenceExtendedCard), referenceCard, { port: 0, grpcPort: 0, grpc: { serverOptions: { "grpc.enable_channelz": 1 } } });
  try {
    const names = await listed();
    expect(names).toContain(on.grpcAddress);
    expect(names).not.toContain(target());
  } finally {
    channelz.close();
    await on.close();
    admin.forceShutdown();
  }
});

test("a gRPC port already in use fails serveA2AService and leaves its HTTP port free", async () => {
  const [grpcPort] = (server.grpcAddress as string).split(":").slice(-1).map(Number);
  const free = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  await expect(serveA2AService(createReferenceAgent(referenceExtendedCard), referenceCard, { port: free, grpcPort })).rejects.toThrow();
  // The HTTP server it had started is closed again: the port can be taken.
  await new Promise<void>((resolve, reject) => {
    const again = createServer().once("error", reject).listen(free, "127.0.0.1", () => again.close(() => resolve()));
  });
});

// Last: it closes the server.
test("close() turns health to NOT_SERVING for a watcher before the server drains; a call still running after the drain is answered by the task handler, closed then, which aborts its executor", async () => {
  // A blocking SendMessage whose task (40,000 words, a millisecond each) outlasts the drain by far;
  // its answer without the history (the message alone is past this server's send limit).
  const long = Array.from({ length: 40_000 }, (_, i) => `w${i}`).join(" ");
  const inFlight = sendMessage(long, "ctx-close", 0);
  // The in-memory store answers at once, with its own objects: the running task, changing in place.
  const ours = () => (store.list({ tenant: "", owner: "" }, { contextId: "ctx-close", state: TaskState.WORKING, statusAfterMs: undefined, pageSize: 1, pageToken: "" }) as TaskPage).tasks[0];
  const deadline = Date.now() + 10_000;
  while (ours()?.artifacts[0] === undefined) {
    if (Date.now() > deadline) throw new Error("the task never started echoing");
    await new Promise((r) => setTimeout(r, 2));
  }
  const task = ours()!;
  const client = healthClient();
  const statuses: string[] = [];
  const stream = client.watch({ service: SERVICE });
  let notify: () => void = () => undefined;
  stream.on("data", (m: { status: string }) => {
    statuses.push(m.status);
    notify();
  });
  stream.on("error", () => undefined);
  const watchEnded = new Promise<number>((resolve) => stream.on("status", (status: grpc.StatusObject) => resolve(status.code)));
  const next = (n: number) => new Promise<void>((resolve) => (statuses.length >= n ? resolve() : (notify = () => statuses.length >= n && resolve())));
  await next(1);
  const started = Date.now();
  const closing = (closed = server.close());
  await next(2);
  expect(statuses).toEqual(["SERVING", "NOT_SERVING"]);
  // The Watch, told NOT_SERVING, is ended by the server (OK), not cut at the drain's end (CANCELLED):
  // a Watch never ends by itself, and held every close() for its whole drain.
  expect(await watchEnded).toBe(grpc.status.OK);
  await closing;
  client.close();
  // The drain (300 ms) ran its course, as the SendMessage was in flight; then the
  // task handler, closed, answered the call with its task as it was (still WORKING), not a cut...
  expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  const answer = await inFlight;
  expect([answer.code, answer.response?.payload.case === "task" && answer.response.payload.value.status?.state]).toEqual([grpc.status.OK, TaskState.WORKING]);
  // ...and aborted the executor: the task stays as it was cut
  // (a window, as this is a negative: the agent would have echoed some 50 more words in it).
  const parts = task.artifacts[0]!.parts.length;
  await new Promise((r) => setTimeout(r, 50));
  expect(task.artifacts[0]!.parts.length).toBe(parts);
  expect(parts).toBeLessThan(40_000);
});
