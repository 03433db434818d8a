// Optional target "a2a-js-core" (not in the default set): the SDK's
// JsonRpcTransportHandler alone behind node:http, without express, with the
// same per-request work the express handler does around it (content-type
// check, version check against the agent card, ServerCallContext). Shows
// how much of the "a2a-js" cost is express.
import { createServer } from "node:http";
import { JsonRpcTransportHandler, defaultServerCallContextBuilder, validateVersion } from "@a2a-js/sdk/server";
import { EchoRequestHandler } from "../lib/a2a-js-handler.mjs";

export function createBenchServer() {
  const requestHandler = new EchoRequestHandler();
  const transport = new JsonRpcTransportHandler(requestHandler);
  const send = (res, value) => {
    const body = JSON.stringify(value);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  };
  return createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", async () => {
      try {
        const type = (req.headers["content-type"] ?? "").split(";", 1)[0].trim().toLowerCase();
        if (type !== "application/json") throw new Error("unsupported content-type");
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const context = defaultServerCallContextBuilder({
          extensions: undefined,
          user: undefined,
          headers: req.headers,
          requestedVersion: req.headers["a2a-version"],
        });
        validateVersion(context.requestedVersion, await requestHandler.getAgentCard(), "JSONRPC");
        send(res, await transport.handle(body, context));
      } catch (err) {
        send(res, { jsonrpc: "2.0", id: null, error: JsonRpcTransportHandler.mapToJSONRPCError(err) });
      }
    });
  });
}
