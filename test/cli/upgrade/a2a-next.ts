/**
 * A made-up next version of a2a.proto for the upgrade tests: the pinned
 * v1.0.1 (pulled into vendor/, never committed) with three edits made here,
 * so the edit is visible and the upstream file stays out of the repo.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** Replaces `find` in `text` exactly once; throws when it is not there once (the pinned proto moved). */
function replaceOnce(text: string, find: string, replacement: string): string {
  const at = text.indexOf(find);
  if (at < 0 || text.indexOf(find, at + 1) >= 0) throw new Error(`a2a-next: ${JSON.stringify(find.slice(0, 60))} is not in a2a.proto exactly once`);
  return text.slice(0, at) + replacement + text.slice(at + find.length);
}

/** The RPCs the next version adds, after GetTask. */
export const addedRpcs = `  // Gets only the status of a task.
  rpc GetTaskStatus(GetTaskRequest) returns (TaskStatus) {
    option (google.api.http) = {
      get: "/tasks/{id=*}/status"
    };
  }

  // Streams the updates of every task of the caller.
  rpc WatchTasks(ListTasksRequest) returns (stream StreamResponse) {
    option (google.api.http) = {
      get: "/tasks:watch"
    };
  }

`;

/** v1.0.1 with GetTaskStatus and WatchTasks added and DeleteTaskPushNotificationConfig removed. */
export function a2aNext(projectRoot: string): string {
  let text = readFileSync(join(projectRoot, "vendor/a2a/v1.0.1/a2a.proto"), "utf8");
  text = replaceOnce(text, "  // Lists tasks that match the specified filter.\n  rpc ListTasks(", `${addedRpcs}  // Lists tasks that match the specified filter.\n  rpc ListTasks(`);
  const head = "  // Deletes a push notification config for a task.\n  rpc DeleteTaskPushNotificationConfig(";
  const start = text.indexOf(head);
  const end = text.indexOf("\n  }\n", start);
  if (start < 0 || end < 0) throw new Error("a2a-next: no DeleteTaskPushNotificationConfig in a2a.proto");
  return text.slice(0, start) + text.slice(end + "\n  }\n".length);
}
