import type { ErrorTableEntry } from "../../runtime/core/errors.js";

/** A row of the error table with the text its generated class is documented with. */
export interface ErrorModel extends ErrorTableEntry {
  readonly doc: string;
}

const a2aDomain = "a2a-protocol.org";

/**
 * The error table: the one place where an error's code on each binding is
 * decided. The A2A errors are those of spec section 5.4 at v1.0.1 (decisions
 * D2 to D4 of the binding checklist); `reason` follows the spec's rule
 * "UPPER_SNAKE name without Error". The generic errors of D4 carry no
 * ErrorInfo (empty domain).
 *
 * JSON-RPC has no code for authentication failures; we use -31401 and -31403,
 * outside the range JSON-RPC 2.0 and A2A reserve (-32768 to -32000), so no
 * future A2A code can collide with them.
 */
export const errorTable: readonly ErrorModel[] = [
  {
    name: "TaskNotFound",
    reason: "TASK_NOT_FOUND",
    domain: a2aDomain,
    jsonRpcCode: -32001,
    grpcStatus: "NOT_FOUND",
    httpStatus: 404,
    defaultMessage: "Task not found",
    doc: "The task ID does not exist, is no longer available, or the caller may not see it.",
  },
  {
    name: "TaskNotCancelable",
    reason: "TASK_NOT_CANCELABLE",
    domain: a2aDomain,
    jsonRpcCode: -32002,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    defaultMessage: "Task cannot be canceled",
    doc: "The task is in a state where it cannot be canceled, e.g. a terminal state.",
  },
  {
    name: "PushNotificationNotSupported",
    reason: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    domain: a2aDomain,
    jsonRpcCode: -32003,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    defaultMessage: "Push notifications are not supported",
    doc: "The agent does not support push notifications (capabilities.pushNotifications is not true).",
  },
  {
    name: "UnsupportedOperation",
    reason: "UNSUPPORTED_OPERATION",
    domain: a2aDomain,
    jsonRpcCode: -32004,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    defaultMessage: "This operation is not supported",
    doc: "The operation is not supported by the agent, or not for the task in its current state.",
  },
  {
    name: "ContentTypeNotSupported",
    reason: "CONTENT_TYPE_NOT_SUPPORTED",
    domain: a2aDomain,
    jsonRpcCode: -32005,
    grpcStatus: "INVALID_ARGUMENT",
    httpStatus: 400,
    defaultMessage: "Content type not supported",
    doc: "A media type in the request's parts, or an accepted output mode, is not supported by the agent.",
  },
  {
    name: "InvalidAgentResponse",
    reason: "INVALID_AGENT_RESPONSE",
    domain: a2aDomain,
    jsonRpcCode: -32006,
    grpcStatus: "INTERNAL",
    httpStatus: 500,
    defaultMessage: "The agent returned an invalid response",
    doc: "The agent produced a response that does not conform to the specification.",
  },
  {
    name: "ExtendedAgentCardNotConfigured",
    reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    domain: a2aDomain,
    jsonRpcCode: -32007,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    defaultMessage: "The extended agent card is not configured",
    doc: "The agent declares an extended agent card but has none configured.",
  },
  {
    name: "ExtensionSupportRequired",
    reason: "EXTENSION_SUPPORT_REQUIRED",
    domain: a2aDomain,
    jsonRpcCode: -32008,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    defaultMessage: "A required extension was not requested",
    doc: "The agent requires an extension that the client did not declare in A2A-Extensions.",
  },
  {
    name: "VersionNotSupported",
    reason: "VERSION_NOT_SUPPORTED",
    domain: a2aDomain,
    jsonRpcCode: -32009,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    defaultMessage: "Protocol version not supported",
    doc: "The protocol version the client asked for (A2A-Version) is not supported by this interface.",
  },
  {
    name: "ParseError",
    reason: "PARSE_ERROR",
    domain: "",
    jsonRpcCode: -32700,
    grpcStatus: "INVALID_ARGUMENT",
    httpStatus: 400,
    defaultMessage: "Parse error",
    doc: "The request body is not valid JSON.",
  },
  {
    name: "InvalidRequest",
    reason: "INVALID_REQUEST",
    domain: "",
    jsonRpcCode: -32600,
    grpcStatus: "INVALID_ARGUMENT",
    httpStatus: 400,
    defaultMessage: "Invalid request",
    doc: "The request is valid JSON but not a valid request object of the binding.",
  },
  {
    name: "MethodNotFound",
    reason: "METHOD_NOT_FOUND",
    domain: "",
    jsonRpcCode: -32601,
    grpcStatus: "UNIMPLEMENTED",
    httpStatus: 404,
    defaultMessage: "Method not found",
    doc: "No such method (JSON-RPC), path (HTTP+JSON, 404; 405 when only the HTTP method is wrong) or RPC (gRPC).",
  },
  {
    name: "InvalidParams",
    reason: "INVALID_PARAMS",
    domain: "",
    jsonRpcCode: -32602,
    grpcStatus: "INVALID_ARGUMENT",
    httpStatus: 400,
    defaultMessage: "Invalid params",
    doc: "The request message could not be decoded, or a REQUIRED field is missing (details carry a google.rpc.BadRequest).",
  },
  {
    name: "Internal",
    reason: "INTERNAL",
    domain: "",
    jsonRpcCode: -32603,
    grpcStatus: "INTERNAL",
    httpStatus: 500,
    defaultMessage: "Internal error",
    doc: "An unexpected failure. Bindings send only the default message, never a stack or the text of an unexpected exception.",
  },
  {
    name: "Unauthenticated",
    reason: "UNAUTHENTICATED",
    domain: "",
    jsonRpcCode: -31401,
    grpcStatus: "UNAUTHENTICATED",
    httpStatus: 401,
    defaultMessage: "Authentication required",
    doc: "The request carries no valid credentials.",
  },
  {
    name: "PermissionDenied",
    reason: "PERMISSION_DENIED",
    domain: "",
    jsonRpcCode: -31403,
    grpcStatus: "PERMISSION_DENIED",
    httpStatus: 403,
    defaultMessage: "Permission denied",
    doc: "The caller is authenticated but may not perform this operation.",
  },
];

/**
 * The error a binding answers with when the handler leaves an RPC out
 * (decision D18): the push-config RPCs are gated by the pushNotifications
 * capability, so they say PushNotificationNotSupported; every other RPC
 * says UnsupportedOperation, as spec 3.3.4 does for a gated operation.
 */
export function unimplementedError(rpcName: string): ErrorModel {
  const name = /PushNotificationConfig/.test(rpcName) ? "PushNotificationNotSupported" : "UnsupportedOperation";
  return errorTable.find((e) => e.name === name) as ErrorModel;
}

/** The Agent Card capability that gates an RPC (spec 3.3.4), or "" when none does. */
export type Capability = "" | "streaming" | "pushNotifications" | "extendedAgentCard";

/**
 * Which capability of `AgentCapabilities` gates an RPC (D18): streaming RPCs
 * need `streaming`, the push-config RPCs `pushNotifications`, an RPC that
 * returns the AgentCard `extendedAgentCard`. Decided here, beside the error
 * each gate answers with, so bindings know no RPC by name.
 */
export function capabilityOf(rpcName: string, serverStreaming: boolean, outputTypeName: string): Capability {
  if (serverStreaming) return "streaming";
  if (/PushNotificationConfig/.test(rpcName)) return "pushNotifications";
  if (/(^|\.)AgentCard$/.test(outputTypeName)) return "extendedAgentCard";
  return "";
}
