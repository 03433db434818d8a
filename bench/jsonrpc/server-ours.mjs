// Target "ours": the generated createA2AServiceJsonRpcListener on node:http.
// generated/*.ts is TypeScript; bench/jsonrpc.mjs transpiles it (type-free,
// ts.transpileModule) into bench/.build/generated/, whose imports of
// "protoc-gen-a2a/runtime" resolve to this package's own dist/runtime (the
// package self-reference), i.e. the runtime exactly as it is shipped.
import { createServer } from "node:http";
import { createA2AServiceJsonRpcListener } from "../.build/generated/a2a_jsonrpc.js";
import { TaskState } from "../.build/generated/a2a_pb.js";

/** @type {import("../../generated/a2a_handler.js").A2AServiceHandler} */
const handler = {
  async sendMessage(request) {
    const message = request.message;
    const part = message?.parts[0];
    const text = part?.content.case === "text" ? part.content.value : "";
    return {
      payload: {
        case: "task",
        value: {
          id: `task-${message?.messageId}`,
          contextId: message?.contextId ?? "",
          status: { state: TaskState.COMPLETED },
          artifacts: [{ artifactId: "echo", parts: [{ content: { case: "text", value: text } }] }],
        },
      },
    };
  },
};

export function createBenchServer() {
  return createServer(createA2AServiceJsonRpcListener(handler));
}
