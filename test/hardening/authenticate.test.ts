/**
 * The `authenticate` hook as an authorisation point (D18): it is told the
 * method (`AuthRequest.method`) and may refuse it. Checked over real sockets:
 * - a JSON-RPC batch shows the hook every method it calls, and each call
 *   runs under its own method's answer (the hook ran for the first call only,
 *   so a refused CancelTask went through behind an allowed GetTask);
 * - 0.3's gRPC service shows the hook 1.0's names, and its GetAgentCard gives
 *   the extended card only to a caller the hook lets have GetExtendedAgentCard;
 * - a hook that answers null (a lookup that found nobody) has an anonymous caller;
 * - a call whose client left while an asynchronous hook ran is not run;
 * - a refused caller's HTTP answer carries its status and challenge: HTTP+JSON
 *   and a JSON-RPC request of one call answer 401 with `WWW-Authenticate`
 *   (the error's challenge, else the card's schemes), 403 when forbidden, so
 *   the official SDK's credential refresh works on both (D13).
 */
import * as grpc from "@grpc/grpc-js";
import { createServer } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { create } from "@bufbuild/protobuf";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, createAuthenticatingFetchWithRetry } from "@a2a-js/sdk/client";
import { PermissionDeniedError, UnauthenticatedError, type AuthRequest } from "protoc-gen-a2a/runtime";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { v03GrpcDefinition } from "../../runtime/a2a/compat/v03-grpc.js";
import { GetAgentCardRequestSchema, Role as Role03, SendMessageRequestSchema as SendMessageRequest03Schema, TaskSubscriptionRequestSchema } from "../../runtime/gen/a2a/v0_3/a2a_pb.js";
import { TaskState } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler } from "../../generated/a2a_tasks.js";
import { createA2AServiceJsonRpcEndpoint, createA2AServiceJsonRpcListener } from "../../generated/a2a_jsonrpc.js";
import { createFetchHandler } from "protoc-gen-a2a/runtime";
import { echoWords } from "../../examples/reference-agent/agent.js";
import { bearerAuthenticate, referenceCard, referenceExtendedCard } from "../../examples/reference-agent/config.js";

/** What the hook was asked, in order. */
const asked: string[] = [];
/** Each hook call for a caller with `x-slow` waits for this, once the test says the hook started. */
let slow: { started: () => void; release: Promise<void> } | undefined;
let executorRuns = 0;

/** Alice may send and read, never cancel, and is no admin (no extended card); admin may; "nobody" is a lookup that found no one. */
async function authenticate({ headers, method }: AuthRequest) {
  asked.push(method);
  if (headers.get("x-slow") !== null && slow !== undefined) {
    slow.started();
    await slow.release;
  }
  const auth = headers.get("authorization");
  if (auth === "Bearer nobody") return null;
  if (auth === "Bearer expired") throw new UnauthenticatedError("the token expired", { challenge: 'Bearer error="invalid_token"' });
  if (auth === "Bearer admin") return { subject: "admin", method };
  if (auth !== "Bearer alice") throw new UnauthenticatedError("who are you?");
  if (method === "CancelTask" || method === "GetExtendedAgentCard") throw new PermissionDeniedError(`alice may not call ${method}`);
  return { subject: "alice" };
}

let server: AgentServer;
const tasks = createA2AServiceTaskHandler(async function* () {
  executorRuns++;
  yield { state: TaskState.INPUT_REQUIRED };
});
let handler: typeof tasks;
beforeAll(async () => {
  handler = Object.assign(Object.create(tasks) as typeof tasks, tasks, {
    // Says which method's principal it was given.
    getExtendedAgentCard: async (_request: unknown, context: { principal: unknown }) => ({
      name: "ADMIN CARD",
      description: `for ${(context.principal as { method?: string } | undefined)?.method}`,
      version: "1",
      capabilities: {},
      defaultInputModes: [],
      defaultOutputModes: [],
      skills: [],
    }),
  });
  server = await serveA2AService(
    handler,
    {
      name: "Guarded",
      description: "refuses by method",
      version: "1",
      capabilities: { streaming: true, extendedAgentCard: true },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      skills: [{ id: "s", name: "s", description: "s", tags: ["t"] }],
      securitySchemes: {
        bearer: { scheme: { case: "httpAuthSecurityScheme", value: { scheme: "Bearer" } } },
        sso: { scheme: { case: "openIdConnectSecurityScheme", value: { openIdConnectUrl: "https://id.example.com/.well-known/openid-configuration" } } },
        key: { scheme: { case: "apiKeySecurityScheme", value: { location: "header", name: "x-api-key" } } },
      },
    },
    { port: 0, grpcPort: 0, host: "127.0.0.1", authenticate, drainMs: 100, tracing: false, compat: { v0_3: true } },
  );
});
afterAll(() => server.close());

interface RpcAnswer {
  readonly id?: unknown;
  readonly result?: { readonly task?: { readonly id: string }; readonly status?: { readonly state: string }; readonly name?: string; readonly tasks?: readonly { readonly history?: readonly { readonly messageId: string }[] }[] };
  readonly error?: { readonly code: number };
}

async function rpc<T = RpcAnswer>(body: unknown, token = "alice", extra: Record<string, string> = {}, signal?: AbortSignal): Promise<T> {
  const r = await fetch(server.jsonRpcUrl!, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0", authorization: `Bearer ${token}`, ...extra },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  });
  return (await r.json()) as T;
}

const sendParams = (messageId: string) => ({ message: { messageId, role: "ROLE_USER", parts: [{ text: "x" }] } });

describe("JSON-RPC batches", () => {
  test("each method of a batch is shown to the hook, and a call it refuses alone is refused in the batch too", async () => {
    const sent = await rpc({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: sendParams("b-1") });
    const id = sent.result!.task!.id;
    asked.length = 0;
    const answers = await rpc<RpcAnswer[]>([
      { jsonrpc: "2.0", id: 10, method: "GetTask", params: { id } },
      { jsonrpc: "2.0", id: 11, method: "CancelTask", params: { id } },
      { jsonrpc: "2.0", id: 12, method: "GetExtendedAgentCard", params: {} },
      { jsonrpc: "2.0", id: 13, method: "GetTask", params: { id } },
    ]);
    expect([...asked].sort()).toEqual(["CancelTask", "GetExtendedAgentCard", "GetTask"]);
    expect(answers.map((a) => [a.id, a.error?.code ?? a.result?.status?.state])).toEqual([
      [10, "TASK_STATE_INPUT_REQUIRED"],
      [11, -31403],
      [12, -31403],
      [13, "TASK_STATE_INPUT_REQUIRED"],
    ]);
    // Still not canceled.
    expect((await rpc({ jsonrpc: "2.0", id: 2, method: "GetTask", params: { id } })).result?.status?.state).toBe("TASK_STATE_INPUT_REQUIRED");
  });

  test("an allowed caller's batch runs every call", async () => {
    const answers = await rpc<RpcAnswer[]>(
      [
        { jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard", params: {} },
        { jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: "nope" } },
      ],
      "admin",
    );
    expect(answers.map((a) => a.error?.code ?? a.result?.name)).toEqual(["ADMIN CARD", -32001]);
  });
});

describe("A2A 0.3's gRPC service", () => {
  let client: grpc.Client & Record<string, (request: unknown, metadata: grpc.Metadata, callback?: (err: grpc.ServiceError | null, answer: { name?: string }) => void) => grpc.ClientReadableStream<unknown>>;
  beforeAll(() => {
    const Client = grpc.makeGenericClientConstructor(v03GrpcDefinition, "A2AService");
    client = new Client(server.grpcAddress!, grpc.credentials.createInsecure()) as typeof client;
  });
  afterAll(() => client.close());
  const as = (token: string) => {
    const md = new grpc.Metadata();
    md.set("authorization", `Bearer ${token}`);
    return md;
  };
  const cardFor = (token: string) =>
    new Promise<string | undefined>((resolve, reject) => {
      client.getAgentCard!(create(GetAgentCardRequestSchema), as(token), (err, card) => (err === null ? resolve(card.name) : reject(err)));
    });
  const descriptionFor = (token: string) =>
    new Promise<string | undefined>((resolve, reject) => {
      client.getAgentCard!(create(GetAgentCardRequestSchema), as(token), (err, card) => (err === null ? resolve((card as { description?: string }).description) : reject(err)));
    });

  test("the hook is told 1.0's names (TaskSubscription is SubscribeToTask)", async () => {
    asked.length = 0;
    const code = await new Promise<number>((resolve) => {
      const call = client.taskSubscription!(create(TaskSubscriptionRequestSchema, { name: "tasks/nope" }), as("alice"));
      call.on("data", () => undefined);
      call.on("error", (err: grpc.ServiceError) => resolve(err.code));
    });
    expect(code).toBe(grpc.status.NOT_FOUND);
    expect(asked).toEqual(["SubscribeToTask"]);
  });

  test("GetAgentCard gives the extended card only to a caller the hook lets have GetExtendedAgentCard", async () => {
    asked.length = 0;
    expect(await cardFor("alice")).toBe("Guarded");
    expect(asked).toEqual(["GetAgentCard", "GetExtendedAgentCard"]);
    expect(await cardFor("admin")).toBe("ADMIN CARD");
    // The handler is given the principal the hook answered for GetExtendedAgentCard.
    expect(await descriptionFor("admin")).toBe("for GetExtendedAgentCard");
    expect(await cardFor("nobody")).toBe("Guarded");
  });
});

test("a hook that answers null has an anonymous caller: no extended card (D18)", async () => {
  expect((await rpc({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard", params: {} }, "nobody")).error?.code).toBe(-31401);
  expect((await rpc({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard", params: {} }, "admin")).result?.name).toBe("ADMIN CARD");
});

describe("a client that leaves while an asynchronous hook runs", () => {
  afterEach(() => {
    slow = undefined;
  });

  /** Holds the next slow hook call until the returned release is called; `started` settles once the hook runs. */
  function holdHook(): { started: Promise<void>; release: () => void } {
    let started!: () => void;
    let release!: () => void;
    const startedP = new Promise<void>((resolve) => (started = resolve));
    slow = { started, release: new Promise<void>((resolve) => (release = resolve)) };
    return { started: startedP, release };
  }

  /** Alice's tasks, found by the message that made them. */
  async function tasksWith(messageId: string): Promise<number> {
    const listed = await rpc({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} });
    return (listed.result?.tasks ?? []).filter((t) => t.history?.some((m) => m.messageId === messageId)).length;
  }

  test("JSON-RPC: the message is not run", async () => {
    // A server of the test's own, the same handler behind it, to see its side of the connection close.
    const own = createServer(createA2AServiceJsonRpcListener(handler, { policy: { authenticate } }));
    const accepted = new Promise<Socket>((resolve) => own.once("connection", resolve));
    await new Promise<void>((resolve) => own.listen(0, "127.0.0.1", resolve));
    try {
      const hold = holdHook();
      const before = executorRuns;
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendMessage", params: sendParams("left-1") });
      const client = connect((own.address() as AddressInfo).port, "127.0.0.1");
      client.on("error", () => undefined);
      client.write(
        `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nAuthorization: Bearer alice\r\nX-Slow: 1\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      const serverSide = await accepted;
      await hold.started;
      const seen = new Promise<void>((resolve) => serverSide.once("close", () => resolve()));
      client.destroy();
      await seen;
      hold.release();
      // Whatever the hook's answer set going has run by the time a call on the other server is answered.
      expect(await tasksWith("left-1")).toBe(0);
      expect(executorRuns).toBe(before);
    } finally {
      own.closeAllConnections();
      await new Promise((resolve) => own.close(resolve));
    }
  });

  test("JSON-RPC, pipelined: neither call runs once the connection closed while the hook ran (the second waited its turn, with no socket of its own)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered = 0;
    let bothIn!: () => void;
    const both = new Promise<void>((resolve) => (bothIn = resolve));
    const ran: string[] = [];
    const own = createServer(
      createA2AServiceJsonRpcListener(
        {
          async cancelTask(request) {
            ran.push(request.id);
            return { id: request.id, contextId: "c", status: { state: TaskState.CANCELED } };
          },
        },
        {
          policy: {
            authenticate: async () => {
              if (++entered === 2) bothIn();
              await gate;
              return { subject: "u" };
            },
          },
        },
      ),
    );
    const accepted = new Promise<Socket>((resolve) => own.once("connection", resolve));
    await new Promise<void>((resolve) => own.listen(0, "127.0.0.1", resolve));
    try {
      const call = (id: string) => {
        const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "CancelTask", params: { id } });
        return `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      };
      const client = connect((own.address() as AddressInfo).port, "127.0.0.1");
      client.on("error", () => undefined);
      client.write(call("first") + call("second"));
      const serverSide = await accepted;
      await both;
      const seen = new Promise<void>((resolve) => serverSide.once("close", () => resolve()));
      client.destroy();
      await seen;
      release();
      // What the hook's answers set going runs in microtasks: done before the next turn.
      await new Promise((resolve) => setImmediate(resolve));
      expect(ran).toEqual([]);
    } finally {
      own.closeAllConnections();
      await new Promise((resolve) => own.close(resolve));
    }
  });

  test("gRPC: a call past its deadline is not run", async () => {
    const hold = holdHook();
    const before = executorRuns;
    const Client = grpc.makeGenericClientConstructor(v03GrpcDefinition, "A2AService");
    const client = new Client(server.grpcAddress!, grpc.credentials.createInsecure()) as grpc.Client & Record<string, (r: unknown, md: grpc.Metadata, o: grpc.CallOptions, cb: (err: grpc.ServiceError | null) => void) => void>;
    const md = new grpc.Metadata();
    md.set("authorization", "Bearer alice");
    md.set("x-slow", "1");
    const deadline = Date.now() + 300;
    const code = new Promise<number | undefined>((resolve) =>
      client.sendMessage!(create(SendMessageRequest03Schema, { request: { messageId: "left-2", role: Role03.USER, content: [{ part: { case: "text", value: "x" } }] } }), md, { deadline }, (err) => resolve(err?.code)),
    );
    await hold.started;
    expect(await code).toBe(grpc.status.DEADLINE_EXCEEDED);
    client.close();
    // The server's deadline is its own (from grpc-timeout): wait until it has passed there too.
    // The server's deadline is its own, from grpc-timeout as the call reached it: a few ms after the client's.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline + 50 - Date.now())));
    hold.release();
    expect(await tasksWith("left-2")).toBe(0);
    expect(executorRuns).toBe(before);
  });
});

test("a notification runs once an asynchronous hook settles, though the platform aborts the request's signal once the 204 is out (Deno)", async () => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let ran!: (id: string) => void;
  const canceled = new Promise<string>((resolve) => (ran = resolve));
  const handle = createFetchHandler(
    createA2AServiceJsonRpcEndpoint(
      {
        async cancelTask(request) {
          ran(request.id);
          return { id: request.id, contextId: "c", status: { state: TaskState.CANCELED } };
        },
      },
      {
        policy: {
          authenticate: async () => {
            await gate;
            return { subject: "u" };
          },
        },
      },
    ),
  );
  const delivered = new AbortController();
  const answer = await handle(
    new Request("http://agent.test/a2a", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", method: "CancelTask", params: { id: "t1" } }),
      signal: delivered.signal,
    }),
  );
  expect(answer.status).toBe(204);
  delivered.abort();
  release();
  expect(await canceled).toBe("t1");
});

test("an asynchronous hook makes no abort signal per call (the client's leaving is read off the transport)", async () => {
  const agent = await serveA2AService(handler, referenceCard, { port: 0, grpcPort: false, host: "127.0.0.1", authenticate: async () => ({ subject: "u" }), tracing: false });
  const Original = globalThis.AbortController;
  let made = 0;
  globalThis.AbortController = class extends Original {
    constructor() {
      super();
      made++;
    }
  };
  try {
    for (let i = 0; i < 20; i++) {
      const r = await fetch(agent.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" }, body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "GetTask", params: { id: "nope" } }) });
      expect(r.status).toBe(200);
      await r.text();
    }
  } finally {
    globalThis.AbortController = Original;
    await agent.close();
  }
  expect(made).toBe(0);
});

describe("a refused caller's HTTP status and challenge", () => {
  const post = (body: unknown, token: string) =>
    fetch(server.jsonRpcUrl!, { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0", authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  const getCard = (token: string) => fetch(`${server.httpJsonUrl}/extendedAgentCard`, { headers: { "a2a-version": "1.0", authorization: `Bearer ${token}` } });

  test("HTTP+JSON: 401 with the card's challenges (Bearer, once for two schemes; none for an API key), or the error's own", async () => {
    const stranger = await getCard("who");
    expect(stranger.status).toBe(401);
    expect(stranger.headers.get("www-authenticate")).toBe("Bearer");
    const expired = await getCard("expired");
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    const forbidden = await getCard("alice");
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get("www-authenticate")).toBeNull();
  });

  test("JSON-RPC, one call: 401 or 403 with the same JSON-RPC body, and a 401's challenge", async () => {
    const call = { jsonrpc: "2.0", id: 7, method: "GetExtendedAgentCard", params: {} };
    const stranger = await post(call, "who");
    expect([stranger.status, stranger.headers.get("www-authenticate")]).toEqual([401, "Bearer"]);
    expect(await stranger.json()).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -31401, message: "who are you?" } });
    const forbidden = await post(call, "alice");
    expect([forbidden.status, forbidden.headers.get("www-authenticate")]).toEqual([403, null]);
    expect(await forbidden.json()).toMatchObject({ id: 7, error: { code: -31403 } });
    // A stream refused before its first event is answered the same way.
    const stream = await post({ jsonrpc: "2.0", id: 8, method: "SendStreamingMessage", params: sendParams("s-401") }, "expired");
    expect([stream.status, stream.headers.get("www-authenticate")]).toEqual([401, 'Bearer error="invalid_token"']);
  });

  test("JSON-RPC, a batch: 200, each call answered in it", async () => {
    const r = await post([{ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard", params: {} }], "who");
    expect(r.status).toBe(200);
    expect(((await r.json()) as RpcAnswer[])[0]?.error?.code).toBe(-31401);
  });

  describe("the official SDK's credential refresh (createAuthenticatingFetchWithRetry)", () => {
    let agent: AgentServer;
    beforeAll(async () => {
      const handler = { ...createA2AServiceTaskHandler(echoWords), getExtendedAgentCard: async () => referenceExtendedCard };
      agent = await serveA2AService(handler, referenceCard, { port: 0, grpcPort: false, host: "127.0.0.1", authenticate: bearerAuthenticate("demo") });
    });
    afterAll(() => agent.close());

    test.each(["JSONRPC", "HTTP+JSON"] as const)("%s: a stale token gets 401 with a Bearer challenge, is refreshed, and the call succeeds", async (binding) => {
      const seen: { status: number; challenge: string | null }[] = [];
      let token = "stale";
      const authFetch = createAuthenticatingFetchWithRetry(fetch, {
        headers: async () => ({ Authorization: `Bearer ${token}` }),
        shouldRetryWithHeaders: async (_request, response) => {
          seen.push({ status: response.status, challenge: response.headers.get("www-authenticate") });
          if (response.status !== 401 || token !== "stale") return undefined;
          token = "demo";
          return { Authorization: "Bearer demo" };
        },
      });
      const factory = new ClientFactory({
        transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch }), new RestTransportFactory({ fetchImpl: authFetch })],
        preferredTransports: [binding],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl: fetch }),
      });
      const client = await factory.createFromUrl(new URL(agent.cardUrl).origin);
      const card = await client.getAgentCard();
      expect(seen[0]).toEqual({ status: 401, challenge: "Bearer" });
      expect(card.description).toBe(referenceExtendedCard.description);
    });
  });
});
