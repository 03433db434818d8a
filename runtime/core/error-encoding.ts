/**
 * Encodes an RpcError for each binding (D2, D3, D4).
 *
 * All three encodings are derived from the one table entry the error carries,
 * so JSON-RPC, HTTP+JSON and gRPC can never disagree on code, message or
 * details. Details are written in the same order everywhere: the
 * `google.rpc.ErrorInfo` built from the entry first (clients classify by its
 * reason, so it must be easy to find), then the error's own detail messages.
 */
import { create, toJson } from "@bufbuild/protobuf";
import type { DescMessage, JsonObject, JsonValue, Message } from "@bufbuild/protobuf";
import { anyPack, hasCustomJsonRepresentation } from "@bufbuild/protobuf/wkt";
import type { ErrorDetail, RpcCodeName, RpcError } from "./errors.js";
import { Code } from "../gen/google/rpc/code_pb.js";
import { BadRequestSchema, ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../gen/google/rpc/status_pb.js";
import type { Status } from "../gen/google/rpc/status_pb.js";

const typeUrlPrefix = "type.googleapis.com/";

/**
 * The error's details as ProtoJSON `google.protobuf.Any` objects (each with
 * `@type`), for JSON-RPC `error.data` and the HTTP+JSON `error.details`.
 * ErrorInfo is present whenever the entry has a domain (every A2A error, D2,
 * D3); errors of a bare google.rpc.Code have none and get no ErrorInfo.
 */
export function errorDetailsJson(err: RpcError): JsonObject[] {
  const details: JsonObject[] = [];
  const info = errorInfoDetail(err);
  if (info !== undefined) details.push(anyJson(info.desc, info.value));
  for (const detail of err.details) details.push(anyJson(detail.desc, detail.value));
  return details;
}

/** A JSON-RPC 2.0 error object (spec section 9.5); `data` only when there are details. */
export function jsonRpcErrorObject(err: RpcError): { code: number; message: string; data?: JsonValue[] } {
  const data = errorDetailsJson(err);
  const error: { code: number; message: string; data?: JsonValue[] } = {
    code: err.entry.jsonRpcCode,
    message: err.message,
  };
  if (data.length > 0) error.data = data;
  return error;
}

/**
 * The HTTP+JSON error body in the AIP-193 shape (D2; Part B 15 #3):
 * `code` is the HTTP status, `status` the google.rpc.Code name. `details`
 * is always present, possibly empty, so clients need not test for it.
 */
export function httpErrorBody(err: RpcError): JsonObject {
  return {
    error: {
      code: err.entry.httpStatus,
      status: err.entry.grpcStatus,
      message: err.message,
      details: errorDetailsJson(err),
    },
  };
}

/**
 * The `google.rpc.Status` for gRPC (`grpc-status`, `grpc-message` and, in
 * binary, `grpc-status-details-bin`; D19). Details are packed as Any in the
 * same order as the JSON bindings.
 */
export function grpcStatusOf(err: RpcError): Status {
  const details = [];
  const info = errorInfoDetail(err);
  if (info !== undefined) details.push(anyPack(info.desc, info.value));
  for (const detail of err.details) details.push(anyPack(detail.desc, detail.value));
  return create(StatusSchema, { code: rpcCode(err.entry.grpcStatus), message: err.message, details });
}

// RpcCodeName is hand-written in errors.ts; this assignment fails to
// compile if it ever drifts from the generated google.rpc.Code enum, so the
// lookup below cannot miss.
type CodeName = keyof typeof Code;
const codeNamesMatch: [RpcCodeName] extends [CodeName] ? ([CodeName] extends [RpcCodeName] ? true : false) : false =
  true;
void codeNamesMatch;

/** The number of a `google.rpc.Code` name, taken from the generated enum. */
export function rpcCode(name: RpcCodeName): number {
  return Code[name];
}

/**
 * A `google.rpc.BadRequest` detail with one field violation per entry, e.g.
 * the output of `findMissingRequired` (D11: camelCase field paths).
 */
export function badRequest(violations: readonly { field: string; description: string }[]): ErrorDetail {
  const value = create(BadRequestSchema, {
    fieldViolations: violations.map(({ field, description }) => ({ field, description })),
  });
  return { desc: BadRequestSchema, value };
}

/** The ErrorInfo implied by the entry, or undefined when the entry has no domain. */
function errorInfoDetail(err: RpcError): ErrorDetail | undefined {
  if (err.entry.domain === "") return undefined;
  // Metadata values are strings by type; keys are passed as given (camelCase
  // by convention, Part B 15 #5). An empty map is omitted by ProtoJSON.
  const value = create(ErrorInfoSchema, {
    reason: err.entry.reason,
    domain: err.entry.domain,
    metadata: { ...err.metadata },
  });
  return { desc: ErrorInfoSchema, value };
}

/**
 * ProtoJSON of a message packed in Any: `@type` first, then the message's
 * own fields; a well-known type with a non-object JSON form (Timestamp,
 * Struct, wrappers, ...) goes under `value`, as ProtoJSON specifies. Built
 * directly instead of via toJson(AnySchema, ...) so no type registry is needed.
 */
function anyJson(desc: DescMessage, value: Message): JsonObject {
  const typeUrl = typeUrlPrefix + desc.typeName;
  const json = toJson(desc, value);
  if (hasCustomJsonRepresentation(desc) || json === null || typeof json !== "object" || Array.isArray(json)) {
    return { "@type": typeUrl, value: json };
  }
  return { "@type": typeUrl, ...json };
}
