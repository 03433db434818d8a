/**
 * The generated client (`a2a_client.ts`, and `createA2AServiceGrpcClient` in
 * `a2a_grpc.ts`) against this project's own server over real sockets, on
 * each binding: the task lifecycle through every method, the A2A error
 * classes the server throws arriving as the same classes, the tenant of the
 * card's interface, abort and deadline, and the choice of interface from
 * the Agent Card.
 */
import { jest } from "@jest/globals";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError, InvalidParamsError, isRpcError } from "protoc-gen-a2a/runtime";
import { createA2AServiceClient, createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient, type A2AServiceClient } from "../../generated/a2a_client.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { Role, TaskState, type StreamResponse, type Task } from "../../generated/a2a_pb.js";
import type { A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { BINDINGS, deferred, startAgent, type BindingName, type TestAgent } from "../support/task-clients.js";

jest.setTimeout(30_000);

/** What the test's executor does, by the message's text. */
const gates = new Map<string, Promise<void>>();
const executor: A2AServiceExecutor = async function* ({ message, signal }) {
  const part = message.parts[0]?.content;
  const text = part?.case === "text" ? part.value : "";
  const gate = gates.get(text);
  if (gate !== undefined) {
    yield { state: TaskState.WORKING, message: "waiting" };
    await Promise.race([gate, new Promise((resolve) => signal.addEventListener("abort", resolve))]);
    if (signal.aborted) return;
  }
  yield { artifact: { artifactId: "echo", parts: [{ content: { case: "text", value: text } }] } };
  yield { artifact: { artifactId: "echo", parts: [{ content: { case: "text", value: "!" } }] }, append: true, lastChunk: true };
};

let agent: TestAgent;
let origin: string;
let grpcAddress: string;

beforeAll(async () => {
  agent = await startAgent(executor, { push: { allow: ["127.0.0.0/8"] } });
  origin = new URL(agent.server.cardUrl).origin;
  const card = (await (await fetch(agent.server.cardUrl)).json()) as { supportedInterfaces: { protocolBinding: string; url: string }[] };
  grpcAddress = card.supportedInterfaces.find((i) => i.protocolBinding === "GRPC")!.url;
});

afterAll(async () => {
  await agent?.close();
});

const message = (text: string, extra: { taskId?: string; contextId?: string } = {}) => ({
  message: { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text" as const, value: text } }], ...extra },
});

function taskOf(answer: { payload: { case: string | undefined; value?: unknown } }): Task {
  if (answer.payload.case !== "task") throw new Error(`expected a task, got ${answer.payload.case}`);
  return answer.payload.value as Task;
}

const textsOf = (task: Task) => task.artifacts.map((a) => a.parts.map((p) => (p.content.case === "text" ? p.content.value : "")).join(""));

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

const kinds = (events: readonly StreamResponse[]) => events.map((e) => (e.payload.case === "statusUpdate" ? `status:${TaskState[e.payload.value.status?.state ?? 0]}` : e.payload.case));

describe.each(BINDINGS)("%s", (binding: BindingName) => {
  let client: A2AServiceClient;
  const clients: A2AServiceClient[] = [];
  const make = (options: { tenant?: string; headers?: Record<string, string> } = {}): A2AServiceClient => {
    const interfaceUrl = binding === "JSONRPC" ? `${origin}/a2a/jsonrpc` : binding === "HTTP+JSON" ? `${origin}/a2a/rest` : grpcAddress;
    const made =
      binding === "JSONRPC"
        ? createA2AServiceJsonRpcClient(interfaceUrl, options)
        : binding === "HTTP+JSON"
          ? createA2AServiceHttpJsonClient(interfaceUrl, options)
          : createA2AServiceGrpcClient(interfaceUrl, options);
    clients.push(made);
    return made;
  };

  beforeAll(() => {
    client = make();
  });
  afterAll(() => {
    for (const c of clients) c.close();
  });

  test("SendMessage blocks until the task is done and answers it", async () => {
    const task = taskOf(await client.sendMessage(message("hello")));
    expect(task.status?.state).toBe(TaskState.COMPLETED);
    expect(textsOf(task)).toEqual(["hello!"]);
    expect(task.history[0]?.parts[0]?.content.value).toBe("hello");
  });

  test("SendStreamingMessage yields the task, its chunks and its last status, then ends", async () => {
    const events = await collect(client.sendStreamingMessage(message("streamed")));
    expect(kinds(events)).toEqual(["task", "artifactUpdate", "artifactUpdate", "status:COMPLETED"]);
  });

  test("GetTask, ListTasks with paging and historyLength", async () => {
    const contextId = crypto.randomUUID();
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push(taskOf(await client.sendMessage(message(`list ${i}`, { contextId }))).id);
    const got = await client.getTask({ id: made[0]!, historyLength: 0 });
    expect(got.id).toBe(made[0]);
    expect(got.history).toEqual([]);
    const first = await client.listTasks({ contextId, pageSize: 2 });
    expect(first.tasks).toHaveLength(2);
    expect(first.totalSize).toBe(3);
    const second = await client.listTasks({ contextId, pageSize: 2, pageToken: first.nextPageToken });
    expect([...first.tasks, ...second.tasks].map((t) => t.id).sort()).toEqual([...made].sort());
    expect(second.nextPageToken).toBe("");
  });

  test("CancelTask stops a running task; a subscriber sees the snapshot, then CANCELED", async () => {
    const key = `gate ${binding} cancel`;
    const gate = deferred();
    gates.set(key, gate.promise);
    const started = taskOf(await client.sendMessage({ ...message(key), configuration: { returnImmediately: true } }));
    const other = make();
    const followed = collect(other.subscribeToTask({ id: started.id }));
    await new Promise((r) => setTimeout(r, 0));
    const canceled = await client.cancelTask({ id: started.id });
    expect(canceled.status?.state).toBe(TaskState.CANCELED);
    const events = await followed;
    expect(events[0]?.payload.case).toBe("task");
    expect(kinds(events).at(-1)).toBe("status:CANCELED");
    gate.resolve();
    await expect(client.cancelTask({ id: started.id })).rejects.toBeInstanceOf(TaskNotCancelableError);
  });

  test("errors arrive as the classes the server threw, with their ErrorInfo metadata", async () => {
    const missing = await client.getTask({ id: "no-such-task" }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(TaskNotFoundError);
    expect(missing).toMatchObject({ name: "TaskNotFoundError", reason: "TASK_NOT_FOUND", metadata: { taskId: "no-such-task" } });
    const done = taskOf(await client.sendMessage(message("finished")));
    await expect(collect(client.subscribeToTask({ id: done.id }))).rejects.toBeInstanceOf(UnsupportedOperationError);
    await expect(client.sendMessage(message("again", { taskId: done.id }))).rejects.toBeInstanceOf(UnsupportedOperationError);
    await expect(client.listTasks({ pageSize: 500 })).rejects.toBeInstanceOf(InvalidParamsError);
  });

  test("push config CRUD", async () => {
    const done = taskOf(await client.sendMessage(message("push")));
    const created = await client.createTaskPushNotificationConfig({ taskId: done.id, url: "http://127.0.0.1:9/hook", token: "t" });
    expect(created.id).not.toBe("");
    expect(await client.getTaskPushNotificationConfig({ taskId: done.id, id: created.id })).toMatchObject({ url: "http://127.0.0.1:9/hook", token: "t" });
    const listed = await client.listTaskPushNotificationConfigs({ taskId: done.id });
    expect(listed.configs.map((c) => c.id)).toEqual([created.id]);
    await client.deleteTaskPushNotificationConfig({ taskId: done.id, id: created.id });
    await client.deleteTaskPushNotificationConfig({ taskId: done.id, id: created.id });
    await expect(client.getTaskPushNotificationConfig({ taskId: done.id, id: created.id })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  test("a client's tenant goes with every request: its tasks are not another tenant's", async () => {
    const acme = make({ tenant: "acme" });
    const task = taskOf(await acme.sendMessage(message("tenant")));
    expect((await acme.getTask({ id: task.id })).id).toBe(task.id);
    await expect(client.getTask({ id: task.id })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  test("a caller's abort is CANCELLED and a deadline DEADLINE_EXCEEDED, on unary calls and streams", async () => {
    const key = `gate ${binding} abort`;
    const gate = deferred();
    gates.set(key, gate.promise);
    const aborted = new AbortController();
    const pending = client.sendMessage(message(key), { signal: aborted.signal });
    setTimeout(() => aborted.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: "CancelledError" });
    const stream = collect(client.sendStreamingMessage(message(key), { timeoutMs: 100 }));
    await expect(stream).rejects.toMatchObject({ name: "DeadlineExceededError" });
    gate.resolve();
  });
});

describe("from the Agent Card", () => {
  test("the card's first interface is used, or the first of the caller's preferred bindings", async () => {
    const first = await createA2AServiceClient(origin);
    expect(first.chosenInterface.protocolBinding).toBe(BINDINGS[0]);
    expect(first.card.name).toBe("Task Runtime Test Agent");
    for (const binding of BINDINGS) {
      const client = await createA2AServiceClient(agent.server.cardUrl, { bindings: [binding] });
      try {
        expect(client.chosenInterface.protocolBinding).toBe(binding);
        expect(taskOf(await client.sendMessage(message(`card ${binding}`))).status?.state).toBe(TaskState.COMPLETED);
      } finally {
        client.close();
      }
    }
    first.close();
  });

  test("a card fetched again is revalidated with its ETag", async () => {
    const seen: { status: number; ifNoneMatch: string | null }[] = [];
    const watching: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (new URL(String(input)).pathname.endsWith("agent-card.json")) seen.push({ status: response.status, ifNoneMatch: new Headers(init?.headers).get("if-none-match") });
      return response;
    };
    const url = `${origin}/.well-known/agent-card.json?etag-test`;
    (await createA2AServiceClient(url, { fetch: watching })).close();
    const again = await createA2AServiceClient(url, { fetch: watching });
    expect(again.card.name).toBe("Task Runtime Test Agent");
    again.close();
    expect(seen.map((s) => s.status)).toEqual([200, 304]);
    expect(seen[1]?.ifNoneMatch).toMatch(/^".+"$/);
  });

  test("an interface whose protocolVersion has a patch number (1.0.1) is used, and A2A-Version names 1.0 (spec 3.6: Major.Minor only)", async () => {
    const sent: (string | null)[] = [];
    const watching: typeof fetch = async (input, init) => {
      if (init?.method === "POST") sent.push(new Headers(init.headers).get("a2a-version"));
      return fetch(input, init);
    };
    const card = { name: "x", supportedInterfaces: [{ url: agent.server.jsonRpcUrl, protocolBinding: "JSONRPC", protocolVersion: "1.0.1" }] };
    const client = await createA2AServiceClient(card, { fetch: watching });
    try {
      expect(client.chosenInterface.protocolVersion).toBe("1.0.1");
      expect(taskOf(await client.sendMessage(message("patch version"))).status?.state).toBe(TaskState.COMPLETED);
      expect(sent).toEqual(["1.0"]);
    } finally {
      client.close();
    }
  });

  test("a card with no interface the client speaks is refused, naming what it offers", async () => {
    const card = { name: "x", supportedInterfaces: [{ url: "http://127.0.0.1:1/", protocolBinding: "SOAP", protocolVersion: "1.0" }, { url: "http://127.0.0.1:1/", protocolBinding: "JSONRPC", protocolVersion: "0.3" }] };
    const err = await createA2AServiceClient(card).catch((e: unknown) => e);
    expect(isRpcError(err)).toBe(true);
    expect((err as Error).message).toMatch(/no interface this client can use.*SOAP/);
  });

  test("an agent that cannot be reached is UNAVAILABLE", async () => {
    const client = createA2AServiceJsonRpcClient("http://127.0.0.1:1/a2a/jsonrpc");
    await expect(client.getTask({ id: "x" })).rejects.toMatchObject({ name: "UnavailableError" });
  });

  // The caller's own abort was UNAVAILABLE before the headers, and a bare AbortError while the body came (client hunt).
  test("a card fetch the caller aborts is CANCELLED, and one past its deadline DEADLINE_EXCEEDED, as a call's (D29)", async () => {
    // One server that never answers, one that sends the headers and half a card.
    const silent = createServer(() => undefined);
    const half = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"name":"x",');
    });
    const origin = async (server: ReturnType<typeof createServer>) => {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    };
    try {
      for (const url of [await origin(silent), await origin(half)]) {
        const aborting = new AbortController();
        setTimeout(() => aborting.abort(), 100);
        await expect(createA2AServiceClient(url, { signal: aborting.signal })).rejects.toMatchObject({ name: "CancelledError" });
        await expect(createA2AServiceClient(url, { signal: AbortSignal.timeout(100) })).rejects.toMatchObject({ name: "DeadlineExceededError" });
      }
    } finally {
      silent.closeAllConnections();
      half.closeAllConnections();
      await Promise.all([silent, half].map((server) => new Promise((resolve) => server.close(resolve))));
    }
  });
});
