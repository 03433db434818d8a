// The runtime that generated code imports as "protoc-gen-a2a/runtime".
export type { Binding, CallContext } from "./call-context.js";
export { A2AError, isA2AError } from "./errors.js";
export type { A2AErrorOptions, ErrorDetail, ErrorTableEntry, RpcCodeName } from "./errors.js";
export {
  badRequest,
  errorDetailsJson,
  grpcStatusOf,
  httpErrorBody,
  jsonRpcErrorObject,
  rpcCode,
  toA2AError,
} from "./error-encoding.js";
export type {
  HttpMethod,
  HttpRuleSpec,
  MethodKind,
  MethodSpec,
  PathParamSpec,
  RequiredFieldTable,
} from "./method-spec.js";
export {
  PathTemplateError,
  compareTemplatePrecedence,
  parsePathTemplate,
  templateKey,
} from "./path-template.js";
export type { PathTemplate, TemplateSegment, TemplateVariable } from "./path-template.js";
export { createRouter } from "./router.js";
export type { RouteInput, RouteMatch, Router } from "./router.js";
export { findMissingRequired, requiredFieldDescription, toJsonWithRequired } from "./required-fields.js";
export type { FieldViolation } from "./required-fields.js";
export { BodyTooLargeError, isJsonMediaType } from "./binding-core.js";
export type { CoreRequest, CoreResponse, EventSource } from "./binding-core.js";
export { createJsonRpcEndpoint } from "./jsonrpc.js";
export type { JsonRpcEndpoint, JsonRpcEndpointConfig, JsonRpcErrorTable, JsonRpcOptions } from "./jsonrpc.js";
export { createNodeListener } from "./node-http.js";
export type { BindingCore, NodeListener } from "./node-http.js";
export { majorMinor, negotiateVersion, parseExtensions } from "./service-params.js";
export type { VersionPolicy, VersionResult } from "./service-params.js";
export { createFetchHandler } from "./fetch.js";
export type { FetchHandler } from "./fetch.js";
export { createHttpJsonEndpoint } from "./http-json.js";
export type { HttpJsonEndpoint, HttpJsonEndpointConfig, HttpJsonOptions } from "./http-json.js";
export type { BindingErrorTable } from "./dispatch.js";
export type { AgentPolicy, AuthRequest } from "./policy.js";
