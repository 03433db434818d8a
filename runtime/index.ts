// The runtime that generated code imports as "protoc-gen-a2a/runtime".
export type { Binding, CallContext } from "./core/call-context.js";
export { A2AError, isA2AError } from "./core/errors.js";
export type { A2AErrorOptions, ErrorDetail, ErrorTableEntry, RpcCodeName } from "./core/errors.js";
export {
  badRequest,
  errorDetailsJson,
  grpcStatusOf,
  httpErrorBody,
  jsonRpcErrorObject,
  rpcCode,
  toA2AError,
} from "./core/error-encoding.js";
export type {
  HttpMethod,
  HttpRuleSpec,
  MethodKind,
  MethodSpec,
  PathParamSpec,
  RequiredFieldTable,
} from "./core/method-spec.js";
export {
  PathTemplateError,
  compareTemplatePrecedence,
  parsePathTemplate,
  templateKey,
} from "./core/http/path-template.js";
export type { PathTemplate, TemplateSegment, TemplateVariable } from "./core/http/path-template.js";
export { createRouter } from "./core/http/router.js";
export type { RouteInput, RouteMatch, Router } from "./core/http/router.js";
export { findMissingRequired, requiredFieldDescription, toJsonWithRequired } from "./core/codec/required-fields.js";
export { registerCodecs } from "./core/codec/registry.js";
export type { GenCodec } from "./core/codec/registry.js";
export type { FieldViolation } from "./core/codec/required-fields.js";
export { BodyTooLargeError, isJsonMediaType } from "./core/transport.js";
export type { CoreRequest, CoreResponse, EventSource } from "./core/transport.js";
export { createJsonRpcEndpoint } from "./core/jsonrpc/endpoint.js";
export type { JsonRpcEndpoint, JsonRpcEndpointConfig, JsonRpcErrorTable, JsonRpcOptions } from "./core/jsonrpc/endpoint.js";
export { createNodeListener } from "./adapters/node-http.js";
export type { BindingCore, NodeListener } from "./adapters/node-http.js";
export { majorMinor, negotiateVersion, parseExtensions } from "./a2a/service-params.js";
export type { VersionPolicy, VersionResult } from "./a2a/service-params.js";
export { createFetchHandler } from "./adapters/fetch.js";
export type { FetchHandler } from "./adapters/fetch.js";
export { createHttpJsonEndpoint } from "./core/http/endpoint.js";
export type { HttpJsonEndpoint, HttpJsonEndpointConfig, HttpJsonOptions } from "./core/http/endpoint.js";
export type { BindingErrorTable } from "./core/dispatch.js";
export type { AgentPolicy, AuthRequest } from "./a2a/policy.js";
