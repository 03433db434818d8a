/**
 * The inverse of error-encoding.ts: an error as each binding sends it (the
 * JSON-RPC error object, the AIP-193 body, the gRPC status with its
 * `grpc-status-details-bin`) back to an RpcError of the profile's class.
 * The `google.rpc.ErrorInfo` reason and domain decide the class (checklist:
 * branch on the reason, never on the status code); only without one does
 * the code decide. Details other than ErrorInfo are kept when they are
 * types this runtime knows (BadRequest), and skipped otherwise.
 */
import { create, createRegistry, fromBinary, fromJson, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { RpcError, codeEntry, type ErrorDetail, type ErrorTableEntry, type RpcCodeName } from "../errors.js";
import { Code } from "../../gen/google/rpc/code_pb.js";
import { BadRequestSchema, ErrorInfoSchema, type ErrorInfo } from "../../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../gen/google/rpc/status_pb.js";
import type { ClientErrors } from "./client.js";

const typeUrlPrefix = "type.googleapis.com/";
/** Detail types kept on a decoded error beside ErrorInfo. */
const knownDetails: readonly DescMessage[] = [BadRequestSchema];
const detailRegistry = createRegistry(ErrorInfoSchema, ...knownDetails);

/** What a binding's error carries, in a binding-neutral form. */
interface DecodedStatus {
  readonly code: RpcCodeName;
  readonly message: string;
  readonly info: ErrorInfo | undefined;
  readonly details: readonly ErrorDetail[];
}

function toError(errors: ClientErrors, status: DecodedStatus, jsonRpcCode?: number): RpcError {
  const entry =
    (status.info === undefined ? undefined : errors.byReason(status.info.reason, status.info.domain)) ??
    (jsonRpcCode === undefined ? undefined : errors.byJsonRpcCode(jsonRpcCode)) ??
    (status.info === undefined ? errors.byCode(status.code) : unknownReason(errors.byCode(status.code), status.info));
  return errors.create(entry, status.message, { metadata: status.info?.metadata ?? {}, details: status.details });
}

/**
 * An ErrorInfo reason the profile has no row for (an error of a newer
 * protocol, another domain's): kept, so `isRpcError(e, reason)` and
 * `e.reason` still tell it apart, with the status's code and binding forms.
 */
function unknownReason(base: ErrorTableEntry, info: ErrorInfo): ErrorTableEntry {
  const name = info.reason
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");
  return { ...base, name: name === "" ? base.name : name, reason: info.reason, domain: info.domain };
}

/** Details as ProtoJSON Any objects (JSON-RPC `error.data`, AIP-193 `details`). */
function detailsFromJson(json: JsonValue | undefined): { info: ErrorInfo | undefined; details: ErrorDetail[] } {
  let info: ErrorInfo | undefined;
  const details: ErrorDetail[] = [];
  if (!Array.isArray(json)) return { info, details };
  for (const item of json) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) continue;
    const typeUrl = item["@type"];
    if (typeof typeUrl !== "string" || !typeUrl.startsWith(typeUrlPrefix)) continue;
    const desc = detailRegistry.getMessage(typeUrl.slice(typeUrlPrefix.length));
    if (desc === undefined) continue;
    const { "@type": _, ...fields } = item;
    try {
      const value = fromJson(desc, fields, { ignoreUnknownFields: true });
      if (desc === ErrorInfoSchema) info ??= value as ErrorInfo;
      else details.push({ desc, value });
    } catch {
      // A detail we cannot read does not hide the error it belongs to.
    }
  }
  return { info, details };
}

/** The JSON-RPC codes JSON-RPC 2.0 itself defines, and the core's `-32000 - code` (D20). */
function codeOfJsonRpc(code: number): RpcCodeName {
  switch (code) {
    case -32700:
    case -32600:
    case -32602:
      return "INVALID_ARGUMENT";
    case -32601:
      return "UNIMPLEMENTED";
    case -32603:
      return "INTERNAL";
  }
  const name = Code[-32000 - code] as RpcCodeName | undefined;
  return name === undefined || name === "OK" ? "UNKNOWN" : name;
}

/** A JSON-RPC error object (`{ code, message, data }`). */
export function errorFromJsonRpc(errors: ClientErrors, error: JsonValue): RpcError {
  const object = error !== null && typeof error === "object" && !Array.isArray(error) ? error : {};
  const code = typeof object.code === "number" ? object.code : -32603;
  const message = typeof object.message === "string" ? object.message : "";
  const { info, details } = detailsFromJson(object.data);
  return toError(errors, { code: codeOfJsonRpc(code), message, info, details }, code);
}

const codeByHttpStatus: Readonly<Record<number, RpcCodeName>> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  415: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  501: "UNIMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** Whether an agent's `status` text names a google.rpc.Code: the enum's own name keys, not a number or what Object has ("toString"). */
function isCodeName(status: string): status is RpcCodeName {
  return Object.hasOwn(Code, status) && typeof (Code as unknown as Record<string, unknown>)[status] === "number";
}

/**
 * What a gateway's own answer means, with no error body of the agent's: the agent could not be
 * reached, as gRPC maps these statuses. A restarting proxy answers 502 or 503, one that gave up
 * waiting 504; stream recovery tries again after them (D30), and DEADLINE_EXCEEDED is kept for the
 * caller's own deadline (D29).
 */
const gatewayStatuses: ReadonlySet<number> = new Set([502, 503, 504]);

const isObject = (value: JsonValue | undefined): value is JsonObject => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * An HTTP+JSON error response, in any of the shapes the spec shows (checklist 15 #3): the AIP-193
 * wrapper (`{"error": {code, status, message, details}}`, what D2 sends), a bare google.rpc.Status
 * (`{code, message, details}`, §11.6's prose) or RFC 9457 problem details (`{type, title, status,
 * detail}`, §6.4, whose `type` ends in the error's kebab-case name); else the HTTP status alone.
 */
export function errorFromHttp(errors: ClientErrors, status: number, body: JsonValue | undefined): RpcError {
  const top = isObject(body) ? body : undefined;
  const wrapped = isObject(top?.error) ? top.error : undefined;
  if (wrapped === undefined && top !== undefined) {
    if (typeof top.code === "number" && (typeof top.message === "string" || Array.isArray(top.details))) return errorFromStatusJson(errors, top);
    if (typeof top.type === "string" || typeof top.detail === "string") return errorFromProblem(errors, status, top);
  }
  const object: JsonObject = wrapped ?? {};
  const named = typeof object.status === "string" && isCodeName(object.status) ? object.status : undefined;
  const fromGateway = wrapped === undefined && gatewayStatuses.has(status);
  const code = named ?? (fromGateway ? "UNAVAILABLE" : httpCode(status));
  const message = typeof object.message === "string" ? object.message : `HTTP ${status}`;
  const { info, details } = detailsFromJson(object.details);
  return toError(errors, { code, message, info, details });
}

const httpCode = (status: number): RpcCodeName => codeByHttpStatus[status] ?? (status >= 500 ? "INTERNAL" : "UNKNOWN");

/** A google.rpc.Status as JSON: its numeric code, message and details. */
function errorFromStatusJson(errors: ClientErrors, status: JsonObject): RpcError {
  const name = Code[status.code as number] as RpcCodeName | undefined;
  const { info, details } = detailsFromJson(status.details);
  return toError(errors, { code: name === undefined || name === "OK" ? "UNKNOWN" : name, message: typeof status.message === "string" ? status.message : "", info, details });
}

/** RFC 9457 problem details: the message from `detail` (else `title`), the reason from the last segment of `type`. */
function errorFromProblem(errors: ClientErrors, httpStatus: number, problem: JsonObject): RpcError {
  const message = typeof problem.detail === "string" ? problem.detail : typeof problem.title === "string" ? problem.title : `HTTP ${httpStatus}`;
  let info: ErrorInfo | undefined;
  if (typeof problem.type === "string") {
    try {
      const type = new URL(problem.type);
      const name = type.pathname.split("/").filter((s) => s !== "").at(-1);
      // about:blank, the RFC's type for none, names no error.
      if ((type.protocol === "https:" || type.protocol === "http:") && name !== undefined && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(name)) info = create(ErrorInfoSchema, { reason: name.replace(/-/g, "_").toUpperCase(), domain: type.hostname });
    } catch {
      // A type that is no URL names nothing.
    }
  }
  return toError(errors, { code: httpCode(typeof problem.status === "number" ? problem.status : httpStatus), message, info, details: [] });
}

/** A gRPC status: its code and message, and the `google.rpc.Status` of `grpc-status-details-bin` when sent. */
export function errorFromGrpc(errors: ClientErrors, code: number, message: string, statusDetails: Uint8Array | undefined): RpcError {
  let info: ErrorInfo | undefined;
  const details: ErrorDetail[] = [];
  if (statusDetails !== undefined) {
    try {
      const status = fromBinary(StatusSchema, statusDetails);
      for (const any of status.details) {
        const value = anyUnpack(any, detailRegistry);
        if (value === undefined) continue;
        if (value.$typeName === ErrorInfoSchema.typeName) info ??= value as ErrorInfo;
        else details.push({ desc: detailRegistry.getMessage(value.$typeName)!, value });
      }
    } catch {
      // Details that do not decode leave the status code to speak.
    }
  }
  const name = Code[code] as RpcCodeName | undefined;
  return toError(errors, { code: name === undefined || name === "OK" ? "UNKNOWN" : name, message, info, details });
}

/** The errors of a service with no profile: RpcError with the google.rpc.Code of the status. */
export const coreClientErrors: ClientErrors = {
  create: (entry, message, options) => new RpcError(entry, message, options),
  byReason: () => undefined,
  byJsonRpcCode: () => undefined,
  byCode: codeEntry,
};
