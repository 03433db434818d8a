/**
 * A2A 0.3 callers on the same agent (issue 18, D110, D111): the official
 * 0.3 client (`@a2a-js/sdk` 0.3.14, installed as `a2a-js-sdk-v03`) finds the
 * agent from its card and runs send, stream, get, cancel, resubscribe and
 * push config CRUD on JSON-RPC and HTTP+JSON against the reference agent's
 * executor served with `compat: { v0_3: true }`, while 1.0 clients (the
 * generated ones on all three bindings, and @a2a-js/sdk 1.3) keep working on
 * the same ports. Also: what a 0.3 caller gets for what 0.3 does not have,
 * and that with the option off a 0.3 call is still refused.
 */
import { ClientFactory, JsonRpcTransport, JsonRpcTransportFactory, RestTransport, RestTransportFactory, TaskNotCancelableError, TaskNotFoundError, type Client } from "a2a-js-sdk-v03/client";
import type { Message as Message03, Task as Task03, TaskStatusUpdateEvent as Status03 } from "a2a-js-sdk-v03";
import { ClientFactory as ClientFactory1, JsonRpcTransportFactory as JsonRpc1, RestTransportFactory as Rest1 } from "@a2a-js/sdk/client";
import { textOf } from "protoc-gen-a2a/runtime";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { echoWords } from "../../examples/reference-agent/agent.js";
import { bearerAuthenticate, referenceCard, referenceExtendedCard } from "../../examples/reference-agent/config.js";
import { createA2AServiceClient } from "../../generated/a2a_client.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { Role, TaskState } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { Receiver, deferred, type Deferred } from "../support/task-clients.js";

const TRANSPORTS = ["JSONRPC", "HTTP+JSON"] as const;

// The reference agent's executor; a message starting "hold" waits for the test (or a cancel) first.
const holds = new Map<string, Deferred>();
// Each message text the executor was run for.
const ran = new Set<string>();
const executor: A2AServiceExecutor = async function* (context) {
  const text = textOf(context.message);
  ran.add(text);
  if (text.startsWith("hold")) {
    const gate = deferred();
    holds.set(text, gate);
    yield { state: TaskState.WORKING };
    await Promise.race([gate.promise, new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }))]);
    if (context.signal.aborted) return;
  }
  yield* echoWords(context);
};

let server: AgentServer;
let origin: string;
const receiver = new Receiver();

beforeAll(async () => {
  await receiver.start();
  // The reference agent as main.ts serves it (its card, extended card and bearer rule), with the holding executor.
  const handler = { ...createA2AServiceTaskHandler(executor, { push: { allow: ["127.0.0.1"], backoffMs: 10 } }), getExtendedAgentCard: async () => referenceExtendedCard };
  server = await serveA2AService(handler, referenceCard, { port: 0, grpcPort: 0, drainMs: 200, authenticate: bearerAuthenticate("demo"), compat: { v0_3: true } });
  origin = new URL(server.cardUrl).origin;
});

afterAll(async () => {
  await server.close();
  await receiver.stop();
});

const client03 = (transport: (typeof TRANSPORTS)[number]): Promise<Client> =>
  new ClientFactory({ transports: [new JsonRpcTransportFactory(), new RestTransportFactory()], preferredTransports: [transport] }).createFromUrl(origin);

const userMessage = (text: string, extra: Partial<Message03> = {}): Message03 => ({
  kind: "message",
  messageId: crypto.randomUUID(),
  role: "user",
  parts: [{ kind: "text", text }],
  ...extra,
});

const artifactText = (task: Task03): string =>
  (task.artifacts ?? []).flatMap((a) => a.parts).map((p) => (p.kind === "text" ? p.text : "")).join("");

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

/** Waits for the executor of the "hold" message `text` to be holding, then releases it. */
async function release(text: string): Promise<void> {
  for (let i = 0; i < 500 && !holds.has(text); i++) await new Promise((r) => setImmediate(r));
  holds.get(text)!.resolve();
}

describe("the card, read by a 0.3 client", () => {
  it("carries 0.3's url, preferredTransport and additionalInterfaces beside 1.0's supportedInterfaces", async () => {
    const card = (await (await fetch(server.cardUrl)).json()) as Record<string, unknown>;
    expect(card.protocolVersion).toBe("0.3.0");
    expect(card.url).toBe(server.jsonRpcUrl);
    expect(card.preferredTransport).toBe("JSONRPC");
    expect(card.additionalInterfaces).toEqual([
      { url: server.jsonRpcUrl, transport: "JSONRPC" },
      { url: server.httpJsonUrl, transport: "HTTP+JSON" },
      { url: server.grpcAddress, transport: "GRPC" },
    ]);
    expect(card.supportsAuthenticatedExtendedCard).toBe(true);
    expect(card.supportedInterfaces).toEqual([
      { url: server.jsonRpcUrl, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: server.httpJsonUrl, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      { url: server.grpcAddress, protocolBinding: "GRPC", protocolVersion: "1.0" },
      { url: server.jsonRpcUrl, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
      { url: server.httpJsonUrl, protocolBinding: "HTTP+JSON", protocolVersion: "0.3" },
      { url: server.grpcAddress, protocolBinding: "GRPC", protocolVersion: "0.3" },
    ]);
  });

  it.each(TRANSPORTS)("leads the 0.3 client to the %s endpoint", async (transport) => {
    const client = await client03(transport);
    expect((client as unknown as { transport: object }).transport).toBeInstanceOf(transport === "JSONRPC" ? JsonRpcTransport : RestTransport);
  });
});

describe.each(TRANSPORTS)("a 0.3 client on %s", (transport) => {
  let client: Client;
  beforeAll(async () => {
    client = await client03(transport);
  });

  it("sends a message and gets the finished task in 0.3's shapes", async () => {
    const result = await client.sendMessage({ message: userMessage("hello old world"), configuration: { blocking: true } });
    expect(result.kind).toBe("task");
    const task = result as Task03;
    expect(task.status.state).toBe("completed");
    expect(artifactText(task)).toBe("hello old world");
    expect(task.history?.[0]?.role).toBe("user");
  });

  it("streams a message: the task first, artifact chunks, and a final status", async () => {
    const events = await collect(client.sendMessageStream({ message: userMessage("one two three") }));
    expect(events[0]?.kind).toBe("task");
    const kinds = events.map((e) => e.kind);
    expect(kinds.filter((k) => k === "artifact-update")).toHaveLength(3);
    const last = events[events.length - 1] as Status03;
    expect(last.kind).toBe("status-update");
    expect(last.status.state).toBe("completed");
    expect(last.final).toBe(true);
  });

  it("gets a task, with historyLength", async () => {
    const sent = (await client.sendMessage({ message: userMessage("get me"), configuration: { blocking: true } })) as Task03;
    const task = await client.getTask({ id: sent.id, historyLength: 1 });
    expect(task.id).toBe(sent.id);
    expect(task.contextId).toBe(sent.contextId);
    expect(task.status.state).toBe("completed");
    expect(task.history).toHaveLength(1);
    expect(artifactText(task)).toBe("get me");
  });

  it("cancels a running task", async () => {
    const text = `hold cancel ${transport}`;
    const sent = (await client.sendMessage({ message: userMessage(text), configuration: { blocking: false } })) as Task03;
    expect(["submitted", "working"]).toContain(sent.status.state);
    const canceled = await client.cancelTask({ id: sent.id });
    expect(canceled.status.state).toBe("canceled");
    expect((await client.getTask({ id: sent.id })).status.state).toBe("canceled");
  });

  it("resubscribes to a running task and follows it to its end", async () => {
    const text = `hold resubscribe ${transport}`;
    const sent = (await client.sendMessage({ message: userMessage(text), configuration: { blocking: false } })) as Task03;
    const stream = client.resubscribeTask({ id: sent.id })[Symbol.asyncIterator]();
    const first = await stream.next();
    expect(first.value).toMatchObject({ kind: "task", id: sent.id });
    await release(text);
    const rest: unknown[] = [];
    for (let r = await stream.next(); r.done !== true; r = await stream.next()) rest.push(r.value);
    expect(rest[rest.length - 1]).toMatchObject({ kind: "status-update", final: true, status: { state: "completed" } });
  });

  it("creates, gets, lists and deletes push configs", async () => {
    const text = `hold push ${transport}`;
    const sent = (await client.sendMessage({ message: userMessage(text), configuration: { blocking: false } })) as Task03;
    const url = receiver.url(`/push-${transport}`);
    const set = await client.setTaskPushNotificationConfig({
      taskId: sent.id,
      pushNotificationConfig: { id: "cfg-1", url, token: "tok", authentication: { schemes: ["Bearer"], credentials: "secret" } },
    });
    expect(set).toEqual({ taskId: sent.id, pushNotificationConfig: { id: "cfg-1", url, token: "tok", authentication: { schemes: ["Bearer"], credentials: "secret" } } });
    // 0.3.14 types this param as TaskIdParams, but reads (and over REST requires) pushNotificationConfigId.
    const which = { id: sent.id, pushNotificationConfigId: "cfg-1" };
    expect(await client.getTaskPushNotificationConfig(which)).toEqual(set);
    await client.setTaskPushNotificationConfig({ taskId: sent.id, pushNotificationConfig: { id: "cfg-2", url: receiver.url("/other") } });
    const listed = await client.listTaskPushNotificationConfig({ id: sent.id });
    expect(listed.map((c) => c.pushNotificationConfig.id).sort()).toEqual(["cfg-1", "cfg-2"]);
    await client.deleteTaskPushNotificationConfig({ id: sent.id, pushNotificationConfigId: "cfg-2" });
    expect((await client.listTaskPushNotificationConfig({ id: sent.id })).map((c) => c.pushNotificationConfig.id)).toEqual(["cfg-1"]);
    await release(text);
    await receiver.when("the last notification", () => receiver.on(`/push-${transport}`).some((r) => r.body.includes("COMPLETED") || r.body.includes("completed")));
  });

  it("is notified in 0.3's form (the task, application/json), while a 1.0 config on the same task gets StreamResponses", async () => {
    const text = `hold notify ${transport}`;
    const path03 = `/notify03-${transport}`;
    const path10 = `/notify10-${transport}`;
    // Registered with the message itself, as 0.3's MessageSendConfiguration.pushNotificationConfig.
    const sent = (await client.sendMessage({
      message: userMessage(text),
      configuration: { blocking: false, pushNotificationConfig: { url: receiver.url(path03), token: "tok", authentication: { schemes: ["Bearer"], credentials: "secret" } } },
    })) as Task03;
    const v1 = await fetch(`${server.httpJsonUrl}/tasks/${sent.id}/pushNotificationConfigs`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ taskId: sent.id, url: receiver.url(path10) }),
    });
    expect(v1.status).toBe(200);
    await release(text);
    const done = (path: string) => receiver.on(path).some((r) => r.body.includes("completed") || r.body.includes("TASK_STATE_COMPLETED"));
    await receiver.when("both receivers told of the end", () => done(path03) && done(path10));
    const tasks = receiver.on(path03).map((r) => JSON.parse(r.body) as Task03);
    const last = tasks.find((t) => t.status.state === "completed")!;
    expect(last).toMatchObject({ kind: "task", id: sent.id, contextId: sent.contextId, status: { state: "completed" } });
    expect(artifactText(last)).toBe(text);
    const first = receiver.on(path03)[0]!.headers;
    expect(first["content-type"]).toBe("application/json");
    expect(first["x-a2a-notification-token"]).toBe("tok");
    expect(first.authorization).toBe("Bearer secret");
    const events = receiver.on(path10).map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(events.every((e) => Object.keys(e).length === 1 && ["task", "statusUpdate", "artifactUpdate"].includes(Object.keys(e)[0]!))).toBe(true);
    expect(receiver.on(path10)[0]!.headers["content-type"]).toBe("application/a2a+json");
  });

  it("gets 0.3's typed errors: an unknown task, a finished task canceled", async () => {
    await expect(client.getTask({ id: "no-such-task" })).rejects.toBeInstanceOf(TaskNotFoundError);
    const done = (await client.sendMessage({ message: userMessage("finished"), configuration: { blocking: true } })) as Task03;
    await expect(client.cancelTask({ id: done.id })).rejects.toBeInstanceOf(TaskNotCancelableError);
  });
});

describe("the extended card, asked for by a 0.3 caller", () => {
  it("comes in 0.3's shape on JSON-RPC (agent/getAuthenticatedExtendedCard) and HTTP+JSON (GET /v1/card), for an authenticated caller", async () => {
    const auth = { authorization: "Bearer demo" };
    const rpc = await fetch(server.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "agent/getAuthenticatedExtendedCard" }) });
    const { result } = (await rpc.json()) as { result: Record<string, unknown> };
    expect(result).toMatchObject({ protocolVersion: "0.3.0", description: expect.stringContaining("(extended card)"), securitySchemes: { bearer: { type: "http", scheme: "Bearer" } } });
    expect(result).not.toHaveProperty("supportedInterfaces");
    const rest = await fetch(`${server.httpJsonUrl}/v1/card`, { headers: auth });
    expect(await rest.json()).toMatchObject({ protocolVersion: "0.3.0", securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: "Bearer" } } } });
    const anonymous = await fetch(`${server.httpJsonUrl}/v1/card`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: -31401 });
  });
});

describe("the extended card's interfaces (spec 3.1.11, 8.3.1; D17)", () => {
  it("lists the public card's interfaces, in 1.0 and 0.3 form, so a client that replaces its card with it still connects", async () => {
    const auth = { authorization: "Bearer demo" };
    const publicCard = (await (await fetch(server.cardUrl)).json()) as Record<string, unknown>;
    const call = async (method: string, headers: Record<string, string>) =>
      ((await (await fetch(server.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json", ...auth, ...headers }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: {} }) })).json()) as { result: Record<string, unknown> }).result;
    const v1 = await call("GetExtendedAgentCard", { "a2a-version": "1.0" });
    expect(v1.supportedInterfaces).toEqual(publicCard.supportedInterfaces);
    expect((v1.supportedInterfaces as unknown[]).length).toBeGreaterThan(0);
    const v03 = await call("agent/getAuthenticatedExtendedCard", {});
    expect([v03.url, v03.preferredTransport, v03.additionalInterfaces]).toEqual([publicCard.url, publicCard.preferredTransport, publicCard.additionalInterfaces]);
    // The official 0.3 client, from the extended card alone.
    const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory(), new RestTransportFactory()] }).createFromAgentCard(v03 as never);
    await expect(client.getTask({ id: "no-such-task" })).rejects.toBeInstanceOf(TaskNotFoundError);
  });
});

describe("what 0.3 does not have, and 1.0 names without A2A-Version", () => {
  const rpc = async (method: string, headers: Record<string, string> = {}) =>
    (await (await fetch(server.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: {} }) })).json()) as {
      error?: { code: number; message: string };
    };

  it("answers a 0.3 ListTasks on either binding with a method-not-found that says how to list", async () => {
    for (const method of ["tasks/list", "ListTasks"]) {
      const { error } = await rpc(method);
      expect(error?.code).toBe(-32601);
      expect(error?.message).toContain("send A2A-Version: 1.0 and call ListTasks");
    }
    const rest = await fetch(`${server.httpJsonUrl}/v1/tasks`);
    expect(rest.status).toBe(404);
    expect(((await rest.json()) as { code: number; message: string }).message).toContain("ListTasks has no A2A 0.3 counterpart");
  });

  it("tells a caller who sends a 1.0 method without A2A-Version to send it", async () => {
    const { error } = await rpc("GetTask");
    expect(error?.code).toBe(-32601);
    expect(error?.message).toContain("send A2A-Version: 1.0, or call tasks/get");
  });

  it("answers a body that is not JSON, or too large, as the 1.0 endpoint does", async () => {
    const post = (url: string, body: string) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(((await (await post(server.jsonRpcUrl!, "{nope")).json()) as { error: { code: number } }).error.code).toBe(-32700);
    const big = await post(server.jsonRpcUrl!, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: { pad: "x".repeat(5 << 20) } }));
    expect(big.status).toBe(413);
    const badPath = await fetch(`${server.httpJsonUrl}/v1/tasks/%E0%A4%A`);
    expect(badPath.status).toBe(400);
    expect(await badPath.json()).toMatchObject({ code: -32602 });
    const rest = await post(`${server.httpJsonUrl}/v1/message:send`, "{nope");
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({ code: -32700 });
    // A 1.0 validation error reaches a 0.3 REST caller as {code, message, data}: InvalidParams.
    const invalid = await post(`${server.httpJsonUrl}/v1/message:send`, JSON.stringify({ message: { role: "ROLE_USER" } }));
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ code: -32602, message: expect.stringContaining("messageId") });
  });

  // ProtoJSON accepts a field by its proto name too: the v0.3 proto's `Message request = 1 [json_name = "message"]`, and snake_case.
  it("reads a 0.3 REST message:send body by the proto's field names as well as its json_names", async () => {
    const send = async (body: unknown) => {
      const res = await fetch(`${server.httpJsonUrl}/v1/message:send`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      return { status: res.status, json: (await res.json()) as { task?: { id?: string }; msg?: unknown; code?: number; message?: string } };
    };
    const byProtoName = await send({ request: { message_id: "p1", role: "ROLE_USER", content: [{ text: "hello" }] } });
    expect(byProtoName.status).toBe(200);
    expect(byProtoName.json.code).toBeUndefined();
    const snake = await send({ message: { message_id: "p2", context_id: "ctx-snake", role: "ROLE_USER", content: [{ text: "hello" }] } });
    expect(snake.status).toBe(200);
    expect(JSON.stringify(snake.json)).toContain("ctx-snake");
  });

  // Found by the fuzz campaign run with compat on (FUZZ_COMPAT=1): each was an empty HTTP 500.
  it("answers a method named like an Object property, an id nested deep and params nested deep as a client's mistakes", async () => {
    const post = async (body: string) => {
      const res = await fetch(server.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json" }, body });
      return { status: res.status, json: (await res.json()) as { id?: unknown; error?: { code: number; message: string } } };
    };
    for (const method of ["toString", "hasOwnProperty", "constructor", "__proto__"]) {
      const r = await post(JSON.stringify({ jsonrpc: "2.0", id: 3, method, params: {} }));
      expect(r).toMatchObject({ status: 200, json: { id: 3, error: { code: -32601 } } });
    }
    const deepId = await post(`{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"x"},"id":${"[".repeat(20_000)}${"]".repeat(20_000)}}`);
    expect(deepId).toMatchObject({ status: 200, json: { id: null, error: { code: -32600 } } });
    const deep = `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`;
    const deepParams = await post(`{"jsonrpc":"2.0","id":4,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":${deep}}]}}}`);
    expect(deepParams.status).toBe(200);
    expect(deepParams.json).toMatchObject({ id: 4, error: { code: -32602 } });
    // The same as a notification: never answered, not even with an error (D13).
    const notification = await fetch(server.jsonRpcUrl!, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"jsonrpc":"2.0","method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":${deep}}]}}}`,
    });
    expect(notification.status).toBe(204);
    expect(await notification.text()).toBe("");
    const rest = await fetch(`${server.httpJsonUrl}/v1/message:send`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"message":{"messageId":"m","role":"user","parts":[{"kind":"data","data":${deep}}]}}`,
    });
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({ code: -32602 });
  });

  it("reads 0.3's REST paths with the 1.0 router's rules: ids with a colon or an encoded slash, verbs only where registered, the proto's task/ typo, a trailing slash as an empty value", async () => {
    const get = async (path: string, method = "GET") => {
      const res = await fetch(`${server.httpJsonUrl}/v1${path}`, { method, ...(method === "POST" ? { headers: { "content-type": "application/json" }, body: "{}" } : {}) });
      return { status: res.status, json: (await res.json()) as { code: number; message: string } };
    };
    // GetTask of ids that look like verbs or paths: TaskNotFound naming the id as sent, decoded once.
    for (const [path, id] of [
      ["/tasks/urn:x", "urn:x"],
      ["/tasks/a%2Fb", "a/b"],
      ["/task/plain", "plain"],
    ] as const) {
      const r = await get(path);
      expect(r).toMatchObject({ status: 404, json: { code: -32001 } });
      expect(r.json.message).toContain(id);
    }
    // A registered verb is never an id: GET of :cancel is no route (it was GetTask("x:cancel")), POST is the cancel.
    expect(await get("/tasks/x:cancel")).toMatchObject({ status: 404, json: { code: -32601 } });
    expect(await get("/tasks/x:cancel", "POST")).toMatchObject({ status: 404, json: { code: -32001 } });
    expect(await get("/task/x/pushNotificationConfigs/c/extra")).toMatchObject({ status: 404, json: { code: -32601 } });
    expect(await get("/message:send/", "POST")).toMatchObject({ status: 404, json: { code: -32601 } });
    // A trailing slash is an empty last value, as 0.3 always read it: config "" (the task's own, D110), not the list.
    const post = async (path: string, body: object) =>
      (await fetch(`${server.httpJsonUrl}/v1${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json() as Promise<Record<string, unknown>>;
    const task = await post("/message:send", { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", content: [{ text: "hi" }] }, configuration: { blocking: true } });
    const id = String((task.task as { id?: string } | undefined)?.id);
    await post(`/tasks/${id}/pushNotificationConfigs`, { pushNotificationConfig: { url: receiver.url("/trailing") } });
    const own = await get(`/tasks/${id}/pushNotificationConfigs/`);
    expect(own.status).toBe(200);
    expect(own.json).toMatchObject({ name: expect.stringContaining(id), pushNotificationConfig: { id } });
    // An id left empty before a verb or mid-path is "", as 0.3's paths were split: InvalidParams
    // naming the id, as JSON-RPC answers the same call, not 404 (D6). The REST message is the
    // translation's (1.0's HTTP rules cannot carry an empty id), JSON-RPC's the REQUIRED check's.
    const rpc03 = async (method: string, params: object) =>
      ((await (await fetch(server.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })).json()) as { error: { code: number; message: string } }).error;
    for (const [method, path, rpcMethod, params] of [
      ["POST", "/tasks/:cancel", "tasks/cancel", { id: "" }],
      ["GET", "/tasks/:subscribe", "tasks/resubscribe", { id: "" }],
      ["GET", "/tasks//pushNotificationConfigs", "tasks/pushNotificationConfig/list", { id: "" }],
      ["GET", "/tasks//pushNotificationConfigs/c1", "tasks/pushNotificationConfig/get", { id: "", pushNotificationConfigId: "c1" }],
    ] as const) {
      const rpcError = await rpc03(rpcMethod, params);
      expect(rpcError).toMatchObject({ code: -32602, message: expect.stringMatching(/id/i) });
      expect([path, await get(path, method)]).toEqual([path, { status: 400, json: { code: rpcError.code, message: expect.stringMatching(/needs (taskId|id)\b/) } }]);
    }
  });

  // Bug hunt: the compat layer read any body as JSON and sent it on as application/json, so a browser's
  // cross-origin "simple request" (text/plain, or no type; no A2A-Version, so 0.3) ran the agent.
  it("refuses a 0.3 body that is not typed JSON with 415, as 1.0 does, and runs nothing (D9)", async () => {
    const send = (text: string) => ({ message: { kind: "message", messageId: crypto.randomUUID(), role: "user", parts: [{ kind: "text", text }] }, configuration: { blocking: true } });
    const restSend = (text: string) => ({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", content: [{ text }] }, configuration: { blocking: true } });
    // text/plain as fetch types a string, and no Content-Type at all (bytes with no type).
    const bodies = (value: (kind: string) => object): [string, RequestInit][] => [
      ["text/plain", { body: JSON.stringify(value("text/plain")) }],
      ["no type", { body: new TextEncoder().encode(JSON.stringify(value("no type"))) }],
    ];
    for (const [kind, init] of bodies((kind) => ({ jsonrpc: "2.0", id: 1, method: "message/send", params: send(`simple rpc ${kind}`) }))) {
      const res = await fetch(server.jsonRpcUrl!, { method: "POST", ...init });
      expect([kind, res.status, res.headers.get("content-type")]).toEqual([kind, 415, "application/json"]);
      expect(await res.json()).toMatchObject({ id: null, error: { code: -32005 } });
    }
    // The same answer a 1.0 call gets.
    const v1 = await fetch(server.jsonRpcUrl!, { method: "POST", headers: { "a2a-version": "1.0" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: {} }) });
    expect(v1.status).toBe(415);
    expect(await v1.json()).toMatchObject({ id: null, error: { code: -32005 } });
    for (const [kind, init] of bodies((kind) => restSend(`simple rest ${kind}`))) {
      const res = await fetch(`${server.httpJsonUrl}/v1/message:send`, { method: "POST", ...init });
      expect([kind, res.status]).toEqual([kind, 415]);
      expect(await res.json()).toMatchObject({ code: -32005, message: expect.stringContaining("must be JSON") });
    }
    // The other 0.3 routes that take a body: cancel and push config set.
    const cancel = await fetch(`${server.httpJsonUrl}/v1/tasks/some-task:cancel`, { method: "POST", body: "{}" });
    expect(cancel.status).toBe(415);
    const setConfig = await fetch(`${server.httpJsonUrl}/v1/tasks/some-task/pushNotificationConfigs`, { method: "POST", body: JSON.stringify({ pushNotificationConfig: { url: receiver.url("/simple") } }) });
    expect(setConfig.status).toBe(415);
    for (const kind of ["text/plain", "no type"]) {
      expect(ran.has(`simple rpc ${kind}`)).toBe(false);
      expect(ran.has(`simple rest ${kind}`)).toBe(false);
    }
    // Typed JSON (any JSON type, D9) still runs; an empty REST body of any type is no fields, as for 1.0.
    const typed = await fetch(server.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/a2a+json; charset=utf-8" }, body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "message/send", params: send("typed rpc") }) });
    expect(((await typed.json()) as { result: { kind: string } }).result.kind).toBe("task");
    expect(ran.has("typed rpc")).toBe(true);
    const empty = await fetch(`${server.httpJsonUrl}/v1/message:send`, { method: "POST", headers: { "content-type": "text/plain" }, body: "" });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ code: -32602 });
  });

  // Bug hunt: params that are no object were read as {} (tasks/get answered "missing required field: id").
  it("answers 0.3 params that are an array, null or a string as 1.0 answers them", async () => {
    const call = async (method: string, params: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(server.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }) });
      return (await res.json()) as { id: unknown; result?: unknown; error?: { code: number; message: string } };
    };
    const auth = { authorization: "Bearer demo" };
    for (const [params, code, message] of [
      [["x"], -32602, "params must be an object of named parameters, not an array"],
      [null, -32600, "params must be an object"],
      ["x", -32600, "params must be an object"],
    ] as const) {
      const v03 = await call("tasks/get", params);
      const v1 = await call("GetTask", params, { "a2a-version": "1.0" });
      expect(v03).toMatchObject({ id: 7, error: { code, message } });
      expect(v03.error).toEqual(v1.error);
      const card = await call("agent/getAuthenticatedExtendedCard", params, auth);
      expect(card.result).toBeUndefined();
      expect(card).toMatchObject({ id: 7, error: { code, message } });
    }
    // No params at all is still an empty object, as for 1.0.
    expect(await call("agent/getAuthenticatedExtendedCard", undefined, auth)).toHaveProperty("result.name");
  });

  it("refuses a 0.3 batch, saying why", async () => {
    const res = await fetch(server.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id: "x" } }]) });
    expect(((await res.json()) as { error: { code: number; message: string } }).error).toMatchObject({ code: -32600, message: expect.stringContaining("batches are served to A2A 1.0 callers only") });
  });
});

describe("1.0 clients on the same ports", () => {
  const message = () => ({ messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text" as const, value: "still one oh" } }] });

  it("the generated client from the card, and the gRPC client, are served as 1.0", async () => {
    const client = await createA2AServiceClient(origin);
    const response = await client.sendMessage({ message: message() });
    expect(response.payload.case).toBe("task");
    client.close();
    const grpc = createA2AServiceGrpcClient(server.grpcAddress!);
    const viaGrpc = await grpc.sendMessage({ message: message() });
    expect(viaGrpc.payload.case === "task" && viaGrpc.payload.value.status?.state).toBe(TaskState.COMPLETED);
    grpc.close();
  });

  it.each(["JSONRPC", "HTTP+JSON"])("@a2a-js/sdk 1.3 picks the 1.0 %s interface and is answered in 1.0", async (binding) => {
    const client = await new ClientFactory1({ transports: [new JsonRpc1(), new Rest1()], preferredTransports: [binding] }).createFromUrl(origin);
    const result = await client.sendMessage({ message: { messageId: crypto.randomUUID(), role: 1, parts: [{ content: { $case: "text", value: "hi" }, metadata: undefined, filename: "", mediaType: "" }], contextId: "", taskId: "", extensions: [], referenceTaskIds: [], metadata: undefined }, tenant: "", configuration: undefined, metadata: undefined });
    expect(result).toHaveProperty("id");
  });
});

describe("with the option off", () => {
  it("a 0.3 call is still answered VersionNotSupported, and 0.3 names with the hint", async () => {
    const handler = createA2AServiceTaskHandler(executor);
    const plain = await serveA2AService(handler, referenceCard, { port: 0, grpcPort: false, drainMs: 100 });
    try {
      const card = (await (await fetch(plain.cardUrl)).json()) as Record<string, unknown>;
      expect(card.url).toBeUndefined();
      const res = await fetch(plain.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "message/send", params: {} }) });
      expect(((await res.json()) as { error: { code: number; message: string } }).error).toMatchObject({ code: -32601, message: expect.stringContaining("A2A 0.3's name for SendMessage") });
      const v = await fetch(plain.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }) });
      expect(((await v.json()) as { error: { code: number } }).error.code).toBe(-32009);
      const rest = await fetch(`${plain.httpJsonUrl}/v1/tasks/abc`);
      expect(rest.status).not.toBe(200);
    } finally {
      await plain.close();
    }
  });
});
