/**
 * "protoc-gen-a2a/runtime": what an agent author imports. The handler
 * interface, the method tables and the endpoints come from the generated
 * files; this entry adds the types a handler is called with, the errors it
 * throws and the adapters that run an endpoint. Generated code imports
 * "protoc-gen-a2a/runtime/internal"; gRPC helpers are in ".../grpc" and the
 * one-call server in ".../server", apart so JSON-only agents never load
 * grpc-js; framework adapters are in ".../adapters".
 */

// What a handler is called with.
export type { A2ACallContext } from "./a2a/profile.js";
export type { AuthRequest, Binding, CallContext } from "./core/call-context.js";

// The errors a handler throws.
export {
  A2AError,
  ContentTypeNotSupportedError,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  InternalError,
  InvalidAgentResponseError,
  InvalidParamsError,
  PermissionDeniedError,
  PushNotificationNotSupportedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  UnsupportedOperationError,
  VersionNotSupportedError,
  isA2AError,
} from "./a2a/errors.js";
export type { A2AErrorOptions } from "./a2a/errors.js";
export { RpcError, isRpcError } from "./core/errors.js";
export type { RpcCodeName, RpcErrorOptions } from "./core/errors.js";

// What an executor (the generated `create<Service>TaskHandler`) often needs; the stores and push delivery are in ".../tasks".
export { textOf } from "./a2a/tasks/text.js";

// Following a task across transport failures, with a generated client (D30).
export { followTask } from "./a2a/client/recovery.js";
export type { FollowTaskOptions, FollowedEvent, TaskFollow } from "./a2a/client/recovery.js";

// Options of A2A endpoints.
export type { AgentPolicy } from "./a2a/policy.js";
export type { VersionPolicy } from "./a2a/service-params.js";

// Running an endpoint.
export { createNodeListener } from "./adapters/node-http.js";
export type { NodeListener } from "./adapters/node-http.js";
export { createFetchHandler } from "./adapters/fetch.js";
export type { FetchHandler } from "./adapters/fetch.js";
export type { Endpoint } from "./core/transport.js";
