/**
 * The JSON bindings' two ways of sending (runtime/core/client/http.ts):
 * undici's `request` by default, and the `fetch` a client is given. Both
 * carry the same calls with the same answers, streams and errors, and the
 * default follows a redirect as fetch does.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { jest } from "@jest/globals";
import { TaskNotFoundError } from "protoc-gen-a2a/runtime";
import { createA2AServiceHttpJsonClient, createA2AServiceJsonRpcClient, type A2AServiceClient } from "../../generated/a2a_client.js";
import { Role, TaskState, type Task } from "../../generated/a2a_pb.js";
import type { A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { startAgent, type TestAgent } from "../support/task-clients.js";

jest.setTimeout(30_000);

const executor: A2AServiceExecutor = async function* ({ message }) {
  const part = message.parts[0]?.content;
  yield { artifact: { artifactId: "echo", parts: [{ content: { case: "text", value: part?.case === "text" ? part.value : "" } }] } };
};

let agent: TestAgent;
let origin: string;
/** Answers every request with a 307 to the same path on the agent. */
let redirector: Server;
let redirectOrigin: string;

beforeAll(async () => {
  agent = await startAgent(executor);
  origin = new URL(agent.server.cardUrl).origin;
  redirector = createServer((req, res) => {
    req.resume();
    res.writeHead(307, { location: `${origin}${req.url}` }).end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
  redirectOrigin = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => redirector?.close(resolve));
  await agent?.close();
});

const message = (text: string) => ({ message: { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text" as const, value: text } }] } });

async function exercise(client: A2AServiceClient): Promise<void> {
  const answer = await client.sendMessage(message("hello"));
  expect(answer.payload.case).toBe("task");
  const task = answer.payload.value as Task;
  expect(task.status?.state).toBe(TaskState.COMPLETED);
  expect(task.artifacts[0]?.parts[0]?.content.value).toBe("hello");
  const events = [];
  for await (const e of client.sendStreamingMessage(message("streamed"))) events.push(e.payload.case);
  expect(events[0]).toBe("task");
  expect(events.at(-1)).toBe("statusUpdate");
  await expect(client.getTask({ id: "no-such-task" })).rejects.toBeInstanceOf(TaskNotFoundError);
}

const bindings = [
  ["JSONRPC", (base: string, options: { fetch?: typeof fetch }) => createA2AServiceJsonRpcClient(`${base}/a2a/jsonrpc`, options)],
  ["HTTP+JSON", (base: string, options: { fetch?: typeof fetch }) => createA2AServiceHttpJsonClient(`${base}/a2a/rest`, options)],
] as const;

describe.each(bindings)("%s", (_binding, make) => {
  test("a client given a fetch sends every call through it", async () => {
    const urls: string[] = [];
    const counting: typeof fetch = (input, init) => {
      urls.push(String(input));
      return fetch(input, init);
    };
    await exercise(make(origin, { fetch: counting }));
    expect(urls).toHaveLength(3);
    for (const url of urls) expect(url.startsWith(origin)).toBe(true);
  });

  test("a redirect is followed, with its method and body, as fetch follows it", async () => {
    await exercise(make(redirectOrigin, {}));
    await exercise(make(redirectOrigin, { fetch }));
  });
});
