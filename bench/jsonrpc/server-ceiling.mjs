// Target "ceiling": bare node:http that only JSON.parse's the body and
// JSON.stringify's the same response envelope. No framing checks, no
// version or content-type checks, no schema: the floor of what any
// JSON-RPC server on node:http must spend.
import { createServer } from "node:http";
import { echoTaskJson } from "./fixture.mjs";

/** `answerOf(message)`: the SendMessageResponse (bench/tasks.mjs' task-shaped ceiling passes its own). */
export function createBenchServer(answerOf = echoTaskJson) {
  return createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const rpc = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const body = JSON.stringify({ jsonrpc: "2.0", id: rpc.id, result: answerOf(rpc.params.message) });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    });
  });
}
