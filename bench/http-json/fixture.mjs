// The requests bench/http-json.mjs sends and the exact answers every target
// must give: GetTask (GET /tasks/{id}) answered by the stored task, and
// SendMessage (POST /message:send) answered by a completed Task that echoes
// the message text in an artifact. HTTP+JSON carries the ProtoJSON of the
// request and of the response message as the whole body (rule body "*",
// response_body "").
import { echoTaskJson, message, storedTaskId, storedTaskJson } from "../lib/a2a-fixture.mjs";

export const routes = {
  "get-task": {
    name: "GET /tasks/{id}",
    what: "GetTask",
    request: { path: `/tasks/${storedTaskId}`, method: "GET", headers: { "A2A-Version": "1.0" } },
    expected: storedTaskJson,
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
  },
};
