/**
 * One list of scenarios run against every framework adapter over real
 * sockets: plain node:http, express 5, express 4, fastify, and Hono on
 * @hono/node-server (the fetch-style adapter).
 */
import { BODY_LIMIT, JSONRPC_PATH, REST_PATH, aborts, deferred, frameworks, within, type Running } from "./frameworks.js";

const errorInfo = (reason: string) => ({ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain: "a2a-protocol.org" });

function rpc(base: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(`${base}${JSONRPC_PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init,
  });
}

function rest(base: string, method: string, path: string, body?: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(`${base}${REST_PATH}${path}`, {
    method,
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    ...init,
  });
}

/** The `data:` payloads of a whole SSE body. */
function sseData(text: string): unknown[] {
  return text
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => JSON.parse(frame.slice("data: ".length)) as unknown);
}

const userMessage = { messageId: "m1", role: "ROLE_USER", parts: [{ text: "ping" }] };
/** What the streaming handler yields, as ProtoJSON: the task, then two status updates. */
const streamed = [
  { task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_SUBMITTED" } } },
  ...["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"].map((state) => ({ statusUpdate: { taskId: "t1", contextId: "c1", status: { state } } })),
];

type Scenario = readonly [string, (base: string) => Promise<void>];

let streamCount = 0;

/** Opens a stream, reads its first event, drops the connection, and waits for the handler's signal. */
async function disconnectAborts(open: (signal: AbortSignal, taskId: string) => Promise<Response>): Promise<void> {
  const taskId = `wait-${++streamCount}`;
  const seen = deferred();
  aborts.set(taskId, seen);
  const client = new AbortController();
  const res = await open(client.signal, taskId);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toContain(`"id":"${taskId}"`);
  client.abort();
  await within(seen.promise, 1000, "the handler's signal to abort");
  aborts.delete(taskId);
}

const scenarios: readonly Scenario[] = [
  [
    "JSON-RPC unary call",
    async (base) => {
      const res = await rpc(base, { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: userMessage } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(await res.json()).toEqual({
        jsonrpc: "2.0",
        id: 1,
        result: { message: { messageId: "re-m1", role: "ROLE_AGENT", parts: [{ text: "pong" }] } },
      });
    },
  ],
  [
    "JSON-RPC call with A2A-Version in the query",
    async (base) => {
      const res = await fetch(`${base}${JSONRPC_PATH}?A2A-Version=1.0`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: "t1" } }),
      });
      expect(await res.json()).toMatchObject({ id: 2, result: { id: "t1" } });
    },
  ],
  [
    "HTTP+JSON GET /tasks/{id} with a tenant",
    async (base) => {
      const res = await rest(base, "GET", "/acme/tasks/t1");
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ id: "t1", contextId: "ctx-acme", status: { state: "TASK_STATE_WORKING" } });
    },
  ],
  [
    "HTTP+JSON POST /message:send",
    async (base) => {
      const res = await rest(base, "POST", "/message:send", { message: userMessage });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ message: { messageId: "re-m1" } });
    },
  ],
  [
    "TaskNotFound on JSON-RPC: -32001 with ErrorInfo",
    async (base) => {
      const res = await rpc(base, { jsonrpc: "2.0", id: "a", method: "GetTask", params: { id: "nope" } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        jsonrpc: "2.0",
        id: "a",
        error: { code: -32001, message: "no task nope", data: [errorInfo("TASK_NOT_FOUND")] },
      });
    },
  ],
  [
    "TaskNotFound on HTTP+JSON: 404 AIP-193",
    async (base) => {
      const res = await rest(base, "GET", "/tasks/nope");
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/json/);
      expect(await res.json()).toEqual({
        error: { code: 404, status: "NOT_FOUND", message: "no task nope", details: [errorInfo("TASK_NOT_FOUND")] },
      });
    },
  ],
  [
    "JSON-RPC streaming: SSE events, then the stream closes",
    async (base) => {
      const res = await rpc(base, { jsonrpc: "2.0", id: 3, method: "SendStreamingMessage", params: { message: userMessage } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/event-stream");
      const events = sseData(await res.text());
      expect(events).toEqual(streamed.map((result) => ({ jsonrpc: "2.0", id: 3, result })));
    },
  ],
  [
    "HTTP+JSON streaming: SSE events, then the stream closes",
    async (base) => {
      const res = await rest(base, "POST", "/message:stream", { message: userMessage });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/event-stream");
      expect(sseData(await res.text())).toEqual(streamed);
    },
  ],
  [
    "a client disconnect mid-stream aborts the handler's signal within 1 s (JSON-RPC)",
    (base) =>
      disconnectAborts((signal, id) => rpc(base, { jsonrpc: "2.0", id: 4, method: "SubscribeToTask", params: { id } }, { signal })),
  ],
  [
    "a client disconnect mid-stream aborts the handler's signal within 1 s (HTTP+JSON)",
    (base) => disconnectAborts((signal, id) => rest(base, "GET", `/tasks/${id}:subscribe`, undefined, { signal })),
  ],
  [
    "a JSON-RPC body over the limit is 413 with a JSON-RPC error",
    async (base) => {
      const res = await rpc(base, { jsonrpc: "2.0", id: 5, method: "GetTask", params: { id: "x".repeat(BODY_LIMIT * 2) } });
      expect(res.status).toBe(413);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    },
  ],
  [
    "an HTTP+JSON body over the limit is 413 AIP-193",
    async (base) => {
      const res = await rest(base, "POST", "/message:send", { message: { ...userMessage, messageId: "x".repeat(BODY_LIMIT * 2) } });
      expect(res.status).toBe(413);
      expect(res.headers.get("content-type")).toMatch(/json/);
      expect(await res.json()).toMatchObject({ error: { code: 413 } });
    },
  ],
  [
    "an unknown route under the mount is a JSON 404, not the framework's page",
    async (base) => {
      const res = await rest(base, "GET", "/no/such/route");
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/json/);
      expect(await res.json()).toMatchObject({ error: { code: 404, status: "NOT_FOUND" } });
    },
  ],
  [
    "a wrong method on a route is a JSON 405 with Allow",
    async (base) => {
      const res = await rest(base, "DELETE", "/message:send");
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect(await res.json()).toMatchObject({ error: { code: 405 } });
    },
  ],
  [
    "a GET on the JSON-RPC endpoint is a JSON-RPC 405",
    async (base) => {
      const res = await fetch(`${base}${JSONRPC_PATH}`);
      expect(res.status).toBe(405);
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } });
    },
  ],
  [
    "a JSON-RPC body that is not JSON is a parse error from the core",
    async (base) => {
      const res = await rpc(base, "{not json");
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    },
  ],
  [
    "a non-JSON content type is the core's 415",
    async (base) => {
      const res = await rpc(base, "hello", { headers: { "content-type": "text/plain", "a2a-version": "1.0" } });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32005 } });
    },
  ],
];

describe.each(frameworks)("$name", (framework) => {
  let server: Running;
  beforeAll(async () => {
    server = await framework.start();
  });
  afterAll(() => server.close());

  test.each(scenarios)("%s", (_name, run) => run(server.base));
});
