// The one request every target is benchmarked with, and the one response
// every target must give: SendMessage answered by a completed Task that
// echoes the message text in an artifact.

export const requestHeaders = {
  "content-type": "application/json",
  "A2A-Version": "1.0",
};

export const requestObject = {
  jsonrpc: "2.0",
  id: 1,
  method: "SendMessage",
  params: {
    message: {
      messageId: "msg-1",
      contextId: "ctx-1",
      role: "ROLE_USER",
      parts: [{ text: "hello from the benchmark" }],
    },
  },
};

export const requestBody = JSON.stringify(requestObject);

/** The ProtoJSON result of SendMessage for `message` (a JSON-RPC params.message). */
export function echoTaskJson(message) {
  return {
    task: {
      id: `task-${message.messageId}`,
      contextId: message.contextId,
      status: { state: "TASK_STATE_COMPLETED" },
      artifacts: [{ artifactId: "echo", parts: [{ text: message.parts[0].text }] }],
    },
  };
}

export const expectedResponse = {
  jsonrpc: "2.0",
  id: requestObject.id,
  result: echoTaskJson(requestObject.params.message),
};
