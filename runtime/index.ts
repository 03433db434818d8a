// The runtime that generated code imports as "protoc-gen-a2a/runtime".
export type { Binding, CallContext } from "./call-context.js";
export { A2AError, isA2AError } from "./errors.js";
export type { A2AErrorOptions, ErrorDetail, ErrorTableEntry, RpcCodeName } from "./errors.js";
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
