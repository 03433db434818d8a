// Target "ceiling": bare node:http that routes by a fixed string check and
// only JSON.parse's / JSON.stringify's the same payloads. No templates, no
// version or content-type checks, no schema: the floor of what any
// HTTP+JSON server on node:http must spend.
import { createServer } from "node:http";
import { echoTaskJson, storedTaskId, storedTaskJson } from "../lib/a2a-fixture.mjs";

const tasks = new Map([[storedTaskId, storedTaskJson]]);

/** `answerOf(message)`: the SendMessageResponse (bench/tasks.mjs' task-shaped ceiling passes its own). */
export function createBenchServer(answerOf = echoTaskJson) {
  const send = (res, status, body) => {
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  };
  return createServer((req, res) => {
    if (req.method === "GET" && req.url.startsWith("/tasks/")) {
      const task = tasks.get(req.url.slice("/tasks/".length));
      send(res, task === undefined ? 404 : 200, JSON.stringify(task ?? {}));
    } else if (req.method === "POST" && req.url === "/message:send") {
      const chunks = [];
      req.on("data", (chunk) => chunks.push(chunk));
      req.on("end", () => {
        const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        send(res, 200, JSON.stringify(answerOf(request.message)));
      });
    } else {
      send(res, 404, "{}");
    }
  });
}
