/**
 * Encodes an RpcError for each binding (D2, D3, D4).
 *
 * All three encodings are derived from the one table entry the error carries,
 * so JSON-RPC, HTTP+JSON and gRPC can never disagree on code, message or
 * details. Details are written in the same order everywhere: the
 * `google.rpc.ErrorInfo` built from the entry first (clients classify by its
 * reason, so it must be easy to find), then the error's own detail messages.
 */
import { create, toBinary, toJson } from "@bufbuild/protobuf";
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
  return statusOf(err, err.message, err.metadata, err.details);
}

function statusOf(err: RpcError, message: string, metadata: Readonly<Record<string, string>>, own: readonly ErrorDetail[]): Status {
  const details = [];
  const info = errorInfoDetail(err, metadata);
  if (info !== undefined) details.push(anyPack(info.desc, info.value));
  for (const detail of own) details.push(anyPack(detail.desc, detail.value));
  return create(StatusSchema, { code: rpcCode(err.entry.grpcStatus), message, details });
}

/**
 * What a gRPC status may take of its trailers (D19): clients bound the
 * metadata they accept (grpc-core: 8 KiB in all), and an error that repeats
 * a long value of its caller (a task id, a version) must still arrive.
 */
export const grpcMessageLimit = 1024;
export const grpcStatusDetailsLimit = 4096;

/**
 * What a gRPC status is sent as (D19): `grpc-message`, within
 * `grpcMessageLimit` characters as grpc-js percent-encodes it, and
 * `grpc-status-details-bin`, within `grpcStatusDetailsLimit` bytes, whose
 * Status carries the same message (grpc-core clients that read rich errors,
 * Python's `rpc_status.from_call`, refuse a status whose two differ). Past
 * the limit, the Status is cut in steps that keep what a client branches on
 * (code, reason, domain): each ErrorInfo metadata entry shortened, then the
 * error's own details dropped, then the metadata.
 */
export function grpcStatusParts(err: RpcError): { readonly message: string; readonly details: Uint8Array } {
  const message = grpcMessage(err.message);
  const full = toBinary(StatusSchema, statusOf(err, message, err.metadata, err.details));
  if (full.length <= grpcStatusDetailsLimit) return { message, details: full };
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(err.metadata)) metadata[cutUtf8(key, 128)] = cutUtf8(value, 256);
  const tries: [Readonly<Record<string, string>>, readonly ErrorDetail[]][] = [
    [metadata, err.details],
    [metadata, []],
  ];
  for (const [md, own] of tries) {
    const bytes = toBinary(StatusSchema, statusOf(err, message, md, own));
    if (bytes.length <= grpcStatusDetailsLimit) return { message, details: bytes };
  }
  // The message is at most 1 KiB as UTF-8 (encodeURI writes no byte as fewer characters), so this fits.
  return { message, details: toBinary(StatusSchema, statusOf(err, message, {}, [])) };
}

/**
 * `grpc-message` within `grpcMessageLimit` characters as grpc-js sends it
 * (percent-encoded by encodeURI, which also refuses a lone surrogate).
 */
function grpcMessage(message: string): string {
  const text = message.replace(loneSurrogate, "\uFFFD");
  // encodeURI writes a UTF-16 unit as at most 9 characters (%XX%XX%XX; a pair as 12).
  if (text.length * 9 <= grpcMessageLimit || encodeURI(text).length <= grpcMessageLimit) return text;
  let out = "";
  let size = 0;
  for (const point of text) {
    const n = encodeURI(point).length;
    // Room is kept for the ellipsis, itself 9 characters encoded.
    if (size + n > grpcMessageLimit - 9) break;
    out += point;
    size += n;
  }
  return `${out}…`;
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` cut to at most `max` UTF-8 bytes at a code point, `…` marking the cut. */
function cutUtf8(text: string, max: number): string {
  if (text.length * 3 <= max || Buffer.byteLength(text) <= max) return text;
  let out = "";
  let size = 0;
  for (const point of text) {
    const n = Buffer.byteLength(point);
    // Room is kept for the ellipsis, itself 3 bytes.
    if (size + n > max - 3) break;
    out += point;
    size += n;
  }
  return `${out}…`;
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
function errorInfoDetail(err: RpcError, metadata: Readonly<Record<string, string>> = err.metadata): ErrorDetail | undefined {
  if (err.entry.domain === "") return undefined;
  // Metadata values are strings by type; keys are passed as given (camelCase
  // by convention, Part B 15 #5). An empty map is omitted by ProtoJSON.
  const value = create(ErrorInfoSchema, {
    reason: err.entry.reason,
    domain: err.entry.domain,
    metadata: { ...metadata },
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
