/**
 * SSE backpressure (D14): a client that stops reading stops the handler's
 * stream from being pulled, instead of the server buffering everything the
 * handler can produce.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { createA2AServiceJsonRpcListener } from "../../generated/a2a_jsonrpc.js";
import { StreamResponseSchema, TaskState } from "../../generated/a2a_pb.js";

const total = 100;
const chunk = "x".repeat(1 << 20); // 1 MiB of text per event
let pulled = 0;

const handler: A2AServiceHandler = {
  async *sendStreamingMessage() {
    yield create(StreamResponseSchema, { payload: { case: "task", value: { id: "t", contextId: "c" } } });
    for (let i = 1; i < total; i++) {
      pulled = i;
      yield create(StreamResponseSchema, {
        payload: {
          case: "artifactUpdate",
          value: { taskId: "t", contextId: "c", artifact: { artifactId: "a", parts: [{ content: { case: "text", value: chunk } }] }, append: true },
        },
      });
    }
    pulled = total;
    yield create(StreamResponseSchema, {
      payload: { case: "statusUpdate", value: { taskId: "t", contextId: "c", status: { state: TaskState.COMPLETED } } },
    });
  },
};

const server = http.createServer(createA2AServiceJsonRpcListener(handler, { heartbeatMs: 0 }));
beforeAll(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)));
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Resolves once `read()` gives the same value `times` polls in a row: the producer is idle. */
async function settled(read: () => number, times: number): Promise<number> {
  let last = -1;
  let same = 0;
  for (let i = 0; i < 200 && same < times; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const now = read();
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return last;
}

test("a client that does not read stalls the stream; reading again delivers every event in order", async () => {
  const { port } = server.address() as AddressInfo;
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "SendStreamingMessage",
    params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "go" }] } },
  });
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request(
      { port, host: "127.0.0.1", method: "POST", path: "/", agent: false, headers: { "content-type": "application/json", "a2a-version": "1.0" } },
      resolve,
    );
    req.on("error", reject);
    req.end(body);
  });
  expect(res.headers["content-type"]).toBe("text/event-stream");
  // Not reading: the server may fill the socket buffers, then must wait.
  res.pause();
  const stalledAt = await settled(() => pulled, 5);
  expect(stalledAt).toBeGreaterThan(0);
  expect(stalledAt).toBeLessThan(32);

  // Read everything; the producer resumes and every event arrives once, in order.
  res.setEncoding("utf8");
  let text = "";
  res.on("data", (d: string) => (text += d));
  const ended = new Promise<void>((resolve) => res.on("end", () => resolve()));
  res.resume();
  await ended;
  const events = text.split("\n\n").filter((f) => f.startsWith("data: "));
  expect(events).toHaveLength(total + 1);
  expect(pulled).toBe(total);
  expect(events.filter((e) => e.includes('"artifactUpdate"'))).toHaveLength(total - 1);
  expect(events[total]).toContain('"TASK_STATE_COMPLETED"');
}, 20_000);
