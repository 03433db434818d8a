// The one request every target is benchmarked with, and the one response
// every target must give: SendMessage answered by a completed Task that
// echoes the message text in an artifact (a2a-js-full: the same Task with the
// user's message in its history, which the SDK's DefaultRequestHandler adds).
import { echoTaskJson, echoTaskWithHistoryJson, message } from "../lib/a2a-fixture.mjs";

export { echoTaskJson };

export const requestHeaders = {
  "content-type": "application/json",
  "A2A-Version": "1.0",
};

export const requestObject = {
  jsonrpc: "2.0",
  id: 1,
  method: "SendMessage",
  params: { message },
};

export const requestBody = JSON.stringify(requestObject);

export const expectedResponse = {
  jsonrpc: "2.0",
  id: requestObject.id,
  result: echoTaskJson(requestObject.params.message),
};

/** What the a2a-js-full target must answer: expectedResponse plus the history the SDK's ResultManager adds. */
export const expectedFullResponse = {
  jsonrpc: "2.0",
  id: requestObject.id,
  result: echoTaskWithHistoryJson(requestObject.params.message),
};

/** The exact response `target` must give. */
export const expectedResponseOf = (target) => (target === "a2a-js-full" ? expectedFullResponse : expectedResponse);
