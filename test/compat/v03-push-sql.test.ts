/**
 * D112 with a SQL store: a push config a 0.3 caller registers is notified in
 * 0.3's form (the whole task, `kind: "task"`, lower-case states) also when
 * the agent keeps its tasks in SQL, whose outbox (D74) renders the 1.0
 * StreamResponses: the store keeps the config's version with it, and the
 * outbox renders that config's rows as the task (before, they got the
 * StreamResponses). Its rows surviving a crash: test/tasks/push-outbox.test.ts.
 */
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { referenceCard } from "../../examples/reference-agent/config.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { Receiver } from "../support/task-clients.js";

const executor: A2AServiceExecutor = async function* () {
  yield { artifact: { artifactId: "out", parts: [{ content: { case: "text", value: "done" } }] } };
};

let server: AgentServer;
let handler: ReturnType<typeof createA2AServiceTaskHandler>;
const receiver = new Receiver();

beforeAll(async () => {
  await receiver.start();
  handler = createA2AServiceTaskHandler(executor, { store: "pglite:", push: { allow: ["127.0.0.1"], backoffMs: 10 } });
  server = await serveA2AService(handler, referenceCard, { port: 0, grpcPort: false, drainMs: 100, compat: { v0_3: true } });
}, 60_000);

afterAll(async () => {
  await server.close();
  await handler.close();
  await receiver.stop();
});

test("a 0.3 config registered with the message gets the task in 0.3's form, and nothing else", async () => {
  // A 0.3 message/send (no A2A-Version) with its push config, not blocking: the task is answered at once.
  const response = await fetch(server.jsonRpcUrl!, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: {
        message: { kind: "message", messageId: "m-sql-03", role: "user", parts: [{ kind: "text", text: "hello" }] },
        configuration: { blocking: true, pushNotificationConfig: { url: receiver.url("/v03"), token: "tok" } },
      },
    }),
  });
  const answer = (await response.json()) as { result?: { kind?: string; id?: string; status?: { state?: string } } };
  expect(answer.result).toMatchObject({ kind: "task", status: { state: "completed" } });
  await receiver.when("0.3's notification of the completed task", () => receiver.on("/v03").some((r) => r.body.includes('"completed"')));
  for (const r of receiver.on("/v03")) {
    const body = JSON.parse(r.body) as { kind?: string; id?: string; statusUpdate?: unknown };
    expect(body).toMatchObject({ kind: "task", id: answer.result!.id });
    expect(body.statusUpdate).toBeUndefined();
  }
});
