/**
 * The source ends while the SSE write is blocked (client stopped reading at the last events):
 * D24 says a write whose client shows no progress for four heartbeat periods destroys the socket.
 * The writer that replaced corking (D44) first cleared that watch when the stream ended: the connection stayed for good (review).
 */
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import type { A2AServiceHandler } from "../../generated/a2a_handler.js";
import { createA2AServiceJsonRpcListener } from "../../generated/a2a_jsonrpc.js";
import { StreamResponseSchema } from "../../generated/a2a_pb.js";

const sockets: net.Socket[] = [];
const chunk = "x".repeat(8 * 1024);
let yielded = 0;
let endedBlocked = false;

const handler: A2AServiceHandler = {
  async *sendStreamingMessage() {
    yield create(StreamResponseSchema, { payload: { case: "task", value: { id: "t", contextId: "c" } } });
    for (;;) {
      yielded++;
      yield create(StreamResponseSchema, {
        payload: { case: "artifactUpdate", value: { taskId: "t", contextId: "c", artifact: { artifactId: "a", parts: [{ content: { case: "text", value: chunk } }] }, append: true } },
      });
      await new Promise((r) => setImmediate(r));
      // The task ends (completes, is cut, fails) while the client is behind.
      if (sockets[0]!.writableNeedDrain || sockets[0]!.writableLength > 64 * 1024) { endedBlocked = true; return; }
      if (yielded > 100_000) return;
    }
  },
};

const server = http.createServer(createA2AServiceJsonRpcListener(handler, { heartbeatMs: 200 }));
server.on("connection", (s) => sockets.push(s));
beforeAll(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)));
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

test("a client that never reads is let go after four heartbeat periods even when the stream ended meanwhile", async () => {
  const { port } = server.address() as AddressInfo;
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "go" }] } } });
  const client = net.connect(port, "127.0.0.1");
  client.pause(); // never reads
  client.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\na2a-version: 1.0\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  // Wait until the stream is behind its client (writes buffered in user space).
  for (let i = 0; i < 100 && !(sockets[0] && sockets[0].writableLength > 0); i++) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 100));
  expect(endedBlocked).toBe(true);
  // 4 periods of 200 ms; give it 3 s.
  for (let i = 0; i < 60 && !sockets[0]!.destroyed; i++) await new Promise((r) => setTimeout(r, 50));
  expect(sockets[0]!.destroyed).toBe(true);
  client.destroy();
}, 20_000);
