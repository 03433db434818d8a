// The requests bench/http-json.mjs sends and the exact answers every target
// must give: GetTask (GET /tasks/{id}) answered by the stored task, and
// SendMessage (POST /message:send) answered by a completed Task that echoes
// the message text in an artifact. HTTP+JSON carries the ProtoJSON of the
// request and of the response message as the whole body (rule body "*",
// response_body ""). `expectedFull` is what the a2a-js-full target must
// answer instead: the SDK's DefaultRequestHandler adds the user's message to
// the echo task's history (GetTask: the stored task, unchanged).
import { echoTaskJson, echoTaskWithHistoryJson, message, storedTaskId, storedTaskJson } from "../lib/a2a-fixture.mjs";

export const routes = {
  "get-task": {
    name: "GET /tasks/{id}",
    what: "GetTask",
    request: { path: `/tasks/${storedTaskId}`, method: "GET", headers: { "A2A-Version": "1.0" } },
    expected: storedTaskJson,
    expectedFull: storedTaskJson,
  },
  "send-message": {
    name: "POST /message:send",
    what: "SendMessage",
    request: {
      path: "/message:send",
      method: "POST",
      headers: { "content-type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({ message }),
    },
    expected: echoTaskJson(message),
    expectedFull: echoTaskWithHistoryJson(message),
  },
};

/** The exact answer `target` must give on route `key`. */
export const expectedOf = (key, target) => (target === "a2a-js-full" ? routes[key].expectedFull : routes[key].expected);
