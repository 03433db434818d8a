/**
 * Binding translation (examples/bridge): an agent served over gRPC only is
 * served over JSON-RPC and HTTP+JSON by handing its generated gRPC client
 * to serveA2AService. Driven over real sockets by @a2a-js/sdk's JSON-RPC
 * and REST clients and by the generated HTTP+JSON client: answers, streams
 * and errors come through; a caller who leaves cancels the upstream call;
 * the caller's requested extensions are asked of the upstream agent.
 */
import { jest } from "@jest/globals";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory, type Client } from "@a2a-js/sdk/client";
import { TaskNotFoundError } from "protoc-gen-a2a/runtime";
import { createA2AServiceHttpJsonClient } from "../../generated/a2a_client.js";
import { AgentCardSchema, Role, TaskState } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { serveBridge, type Bridge } from "../../examples/bridge/bridge.js";
import { asTask, collect, deferred, label, sdkClassOf, send, stateName, taskCard, textOfParts } from "../support/task-clients.js";

jest.setTimeout(30_000);

const gate = deferred();
const executor: A2AServiceExecutor = async function* ({ message }) {
  const part = message.parts[0]?.content;
  const text = part?.case === "text" ? part.value : "";
  if (text === "wait") {
    yield { state: TaskState.WORKING };
    await gate.promise;
  }
  for (const piece of ["one ", "two ", "three"]) yield { artifact: { artifactId: "a", parts: [{ content: { case: "text", value: piece } }] }, append: piece !== "one " };
};

const tasks = createA2AServiceTaskHandler(executor);
/** The upstream call of each stream, and whether its caller left. */
const streams: { aborted: Promise<void>; extensions: readonly string[] }[] = [];
const upstreamHandler: A2AServiceHandler = {
  ...tasks,
  sendStreamingMessage(request, context) {
    const aborted = new Promise<void>((resolve) => context.signal.addEventListener("abort", () => resolve()));
    streams.push({ aborted, extensions: context.requestedExtensions });
    return tasks.sendStreamingMessage(request, context);
  },
};

let upstream: AgentServer;
let bridge: Bridge;
let sdk: Record<"JSONRPC" | "HTTP+JSON", Client>;

beforeAll(async () => {
  upstream = await serveA2AService(upstreamHandler, taskCard, { host: "127.0.0.1", port: 0, grpcPort: 0, jsonRpcPath: false, httpJsonPath: false, drainMs: 100 });
  const card = fromJson(AgentCardSchema, (await (await fetch(upstream.cardUrl)).json()) as JsonValue, { ignoreUnknownFields: true });
  expect(card.supportedInterfaces.map((i) => i.protocolBinding)).toEqual(["GRPC"]);
  bridge = await serveBridge(upstream.grpcAddress!, card, { host: "127.0.0.1", port: 0 });
  const factory = (binding: string) => new ClientFactory({ transports: [new JsonRpcTransportFactory(), new RestTransportFactory()], preferredTransports: [binding] });
  const origin = new URL(bridge.server.cardUrl).origin;
  sdk = { JSONRPC: await factory("JSONRPC").createFromUrl(origin), "HTTP+JSON": await factory("HTTP+JSON").createFromUrl(origin) };
});

afterAll(async () => {
  gate.resolve();
  await bridge?.close();
  await upstream?.close();
  await tasks.close();
});

test("the bridge's card lists its own JSON bindings, not the upstream's gRPC", async () => {
  const card = (await (await fetch(bridge.server.cardUrl)).json()) as { name: string; supportedInterfaces: { protocolBinding: string }[] };
  expect(card.name).toBe(taskCard.name);
  expect(card.supportedInterfaces.map((i) => i.protocolBinding)).toEqual(["JSONRPC", "HTTP+JSON"]);
});

describe.each(["JSONRPC", "HTTP+JSON"] as const)("@a2a-js/sdk over %s", (binding) => {
  test("a message is answered by the upstream agent, its task readable through the bridge", async () => {
    const answer = await sdk[binding].sendMessage(send("hello"));
    const task = asTask(answer);
    expect(textOfParts(task.artifacts[0]?.parts)).toBe("one two three");
    expect(stateName((await sdk[binding].getTask({ id: task.id, historyLength: undefined, tenant: "" })).status?.state)).toBe("COMPLETED");
  });

  test("a stream streams through, event by event", async () => {
    const events = await collect(sdk[binding].sendMessageStream(send("stream")));
    expect(events.map(label)).toEqual(["task:SUBMITTED", "artifact:a:one ", "artifact:a:two +", "artifact:a:three+", "status:COMPLETED"]);
  });

  test("the upstream's errors arrive as the same errors", async () => {
    const err = await sdk[binding].getTask({ id: "no-such-task", historyLength: undefined, tenant: "" }).catch((e: unknown) => e);
    expect(sdkClassOf(err)).toMatch(/^(JsonRpc|Rest)TaskNotFoundError$/);
  });
});

test("the generated client through the bridge: same classes, and its extensions asked of the upstream", async () => {
  const client = createA2AServiceHttpJsonClient(`${new URL(bridge.server.cardUrl).origin}/a2a/rest`, { extensions: ["https://example.com/ext/a"] });
  await expect(client.getTask({ id: "no-such-task" })).rejects.toBeInstanceOf(TaskNotFoundError);
  const before = streams.length;
  const events = await collect(client.sendStreamingMessage({ message: { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text", value: "ext" } }] } }));
  expect(events.at(-1)?.payload.case).toBe("statusUpdate");
  expect(streams[before]?.extensions).toEqual(["https://example.com/ext/a"]);
});

test("a caller who leaves a stream cancels the upstream call", async () => {
  const before = streams.length;
  const controller = new AbortController();
  const client = createA2AServiceHttpJsonClient(`${new URL(bridge.server.cardUrl).origin}/a2a/rest`);
  const iterator = client.sendStreamingMessage({ message: { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text", value: "wait" } }] } }, { signal: controller.signal })[Symbol.asyncIterator]();
  expect((await iterator.next()).value?.payload.case).toBe("task");
  controller.abort();
  await expect(iterator.next()).rejects.toMatchObject({ name: "CancelledError" });
  await streams[before]!.aborted;
});

test("the bridge's main refuses to start on an upstream card it could not fetch (a 421 from the upstream's host guard), naming the status", async () => {
  const { createServer } = await import("node:http");
  const { spawn } = await import("node:child_process");
  const { join } = await import("node:path");
  const { projectRoot } = await import("../support/protos.js");
  const upstream = createServer((_req, res) => {
    res.statusCode = 421;
    res.end('{"error":{"message":"this agent does not answer to the host"}}');
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  let child: ReturnType<typeof spawn> | undefined;
  try {
    const port = (upstream.address() as { port: number }).port;
    child = spawn(process.execPath, ["--import", join(projectRoot, "test/support/ts-loader.mjs"), join(projectRoot, "examples/bridge/main.ts")], {
      env: { ...process.env, UPSTREAM_CARD: `http://127.0.0.1:${port}/.well-known/agent-card.json`, PORT: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    const exited = child;
    const code = await new Promise<number | null>((resolve) => exited.once("exit", resolve));
    expect(code).not.toBe(0);
    expect(stderr).toContain(`the upstream card at http://127.0.0.1:${port}/.well-known/agent-card.json answered HTTP 421`);
  } finally {
    // A bridge that started anyway would run on.
    child?.kill();
    await new Promise((resolve) => upstream.close(resolve));
  }
});
