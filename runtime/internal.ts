/**
 * "protoc-gen-a2a/runtime/internal": what generated code imports. Not for
 * agent authors: its names follow what the generator emits and may change
 * with it. gRPC's part is in "protoc-gen-a2a/runtime/grpc".
 */

// The bindings.
export type { HttpRuleSpec, MethodSpec, RequiredFieldTable } from "./core/method-spec.js";
export type { CallContext } from "./core/call-context.js";
export type { Endpoint } from "./core/transport.js";
export { createJsonRpcEndpoint } from "./core/jsonrpc/endpoint.js";
export type { JsonRpcOptions } from "./core/jsonrpc/endpoint.js";
export { createHttpJsonEndpoint } from "./core/http/endpoint.js";
export type { HttpJsonOptions } from "./core/http/endpoint.js";
export { createNodeListener } from "./adapters/node-http.js";
export type { NodeListener } from "./adapters/node-http.js";
export { withA2AProfile } from "./a2a/profile.js";
export { createA2AHttpJsonEndpoint, createA2AJsonRpcEndpoint } from "./a2a/endpoints.js";
export type { A2ACallContext, A2AGrpcOptions, A2AHttpJsonOptions, A2AJsonRpcOptions } from "./a2a/profile.js";

// The clients, typed by the generated `_client.ts` (gRPC's in "protoc-gen-a2a/runtime/grpc").
export { createHttpJsonClient, createJsonRpcClient } from "./core/client/factories.js";
export type { ClientOptions } from "./core/client/factories.js";
export type { ClientCallOptions } from "./core/client/client.js";
export { connectA2AClient, withA2AClientProfile } from "./a2a/client/connect.js";
export type { A2AClientOptions, A2AConnectOptions, CardClient } from "./a2a/client/connect.js";
export { followTask } from "./a2a/client/recovery.js";
export type { FollowTaskOptions, TaskFollow } from "./a2a/client/recovery.js";

// The task runtime, typed by the generated `_tasks.ts`.
export { createTaskHandler } from "./a2a/tasks/task-handler.js";
export type { TaskHandler, TaskHandlerOptions } from "./a2a/tasks/task-handler.js";
export type { RequestContext, TaskEvent } from "./a2a/tasks/executor.js";

// The message codecs emitted at build time (`<file>_codec.ts`): how the
// runtime finds them, and the wire steps they share.
export { registerCodecs } from "./core/codec/registry.js";
export type { GenCodec, ReadContext } from "./core/codec/registry.js";
export {
  boolKey,
  bytesOf,
  customJson,
  enterMessage,
  enumJson,
  floatJson,
  hasBytes,
  int32Key,
  isEnumValue,
  int64Key,
  isNonZero64,
  keepUnknownEnum,
  mapJson,
  readTag,
  readUnknownField,
  setOwn,
  skipField,
  structFieldJson,
  structFromJson,
  structToJson,
  uint64Key,
  wireTypeOf,
  writeUnknownFields,
} from "./core/codec/wire.js";
