// The one request every target is benchmarked with, and the one response
// every target must give: SendMessage answered by a completed Task that
// echoes the message text in an artifact.
import { echoTaskJson, message } from "../lib/a2a-fixture.mjs";

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
