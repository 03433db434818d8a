/**
 * Errors as the core knows them: a `google.rpc.Code` plus details, spelled
 * on each binding by one table entry. The core knows no protocol's errors;
 * a profile (the A2A one, say) brings its own table, and every binding
 * encodes an error from the entry the error carries.
 */
import type { DescMessage, Message } from "@bufbuild/protobuf";
import { Code } from "../gen/google/rpc/code_pb.js";

/** Names of `google.rpc.Code`, which are also the gRPC status names. */
export type RpcCodeName =
  | "OK"
  | "CANCELLED"
  | "UNKNOWN"
  | "INVALID_ARGUMENT"
  | "DEADLINE_EXCEEDED"
  | "NOT_FOUND"
  | "ALREADY_EXISTS"
  | "PERMISSION_DENIED"
  | "RESOURCE_EXHAUSTED"
  | "FAILED_PRECONDITION"
  | "ABORTED"
  | "OUT_OF_RANGE"
  | "UNIMPLEMENTED"
  | "INTERNAL"
  | "UNAVAILABLE"
  | "DATA_LOSS"
  | "UNAUTHENTICATED";

/** One row of an error table: how one error is spelled on every binding. */
export interface ErrorTableEntry {
  /** The error's name without the `Error` suffix, e.g. `TaskNotFound`. */
  readonly name: string;
  /** `google.rpc.ErrorInfo.reason`, e.g. `TASK_NOT_FOUND`. */
  readonly reason: string;
  /** `google.rpc.ErrorInfo.domain`; empty when the error carries no ErrorInfo. */
  readonly domain: string;
  /** JSON-RPC `error.code`. */
  readonly jsonRpcCode: number;
  /** gRPC status, which is also the `status` of the HTTP+JSON error body. */
  readonly grpcStatus: RpcCodeName;
  /** HTTP status of the HTTP+JSON binding. */
  readonly httpStatus: number;
  /** Message used when the error is raised without one. */
  readonly defaultMessage: string;
}

/** A detail message attached to an error, sent as a `google.protobuf.Any`. */
export interface ErrorDetail {
  readonly desc: DescMessage;
  readonly value: Message;
}

export interface RpcErrorOptions {
  /** `ErrorInfo.metadata` (sent when the entry has a domain): keys in camelCase, values strings. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** More detail messages, e.g. a `google.rpc.BadRequest`. */
  readonly details?: readonly ErrorDetail[];
  /**
   * The `WWW-Authenticate` challenge an UNAUTHENTICATED error's HTTP 401 carries (RFC 9110
   * §11.6.1), e.g. `Bearer error="invalid_token"`; without it the profile's (A2A: from the card's
   * security schemes).
   */
  readonly challenge?: string;
  readonly cause?: unknown;
}

// A brand, not class identity: an error raised by one copy of this runtime
// (another bundle, a duplicate install) is still recognised by every other.
const brand = Symbol.for("protoc-gen-a2a/RpcError");

/**
 * An error a handler throws to answer with a specific error: an entry of a
 * profile's table (a generated or runtime subclass fixes one), or a bare
 * `google.rpc.Code` name for a service with no table of its own. `instanceof`
 * checks the brand and, on a subclass with a fixed entry, the reason, so it
 * works across copies of the generated code and of this runtime.
 */
export class RpcError extends Error {
  /** The table entry of a subclass; undefined on RpcError itself. */
  static readonly entry: ErrorTableEntry | undefined = undefined;

  override readonly name: string;
  readonly entry: ErrorTableEntry;
  readonly metadata: Readonly<Record<string, string>>;
  readonly details: readonly ErrorDetail[];
  /** The `WWW-Authenticate` challenge of an UNAUTHENTICATED error, when the thrower gave one. */
  readonly challenge: string | undefined;

  constructor(entry: ErrorTableEntry | RpcCodeName, message?: string, options: RpcErrorOptions = {}) {
    // An error that says OK, or names no code at all (from JavaScript), was answered three ways
    // by the three bindings: refused here, it is the thrower's bug, reported as one (D33).
    if (typeof entry === "string" && (entry === "OK" || !Object.hasOwn(httpStatusOf, entry))) {
      throw new TypeError(`RpcError needs a google.rpc.Code name other than OK (CANCELLED, NOT_FOUND, ...), got ${JSON.stringify(entry)}`);
    }
    const row = typeof entry === "string" ? codeEntry(entry) : entry;
    super(message ?? row.defaultMessage, options.cause === undefined ? undefined : { cause: options.cause });
    Object.defineProperty(this, brand, { value: true });
    this.name = `${row.name}Error`;
    this.entry = row;
    this.metadata = options.metadata ?? {};
    this.details = options.details ?? [];
    this.challenge = options.challenge;
  }

  /** `ErrorInfo.reason` of this error. */
  get reason(): string {
    return this.entry.reason;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    const entry = (this as { entry?: ErrorTableEntry }).entry;
    return isRpcError(value) && (entry === undefined || value.entry.reason === entry.reason);
  }
}

/**
 * Reports whether `value` is an RpcError from any copy of this runtime,
 * optionally with the given reason.
 */
export function isRpcError(value: unknown, reason?: string): value is RpcError {
  if (typeof value !== "object" || value === null) return false;
  if ((value as { [brand]?: unknown })[brand] !== true) return false;
  return reason === undefined || (value as RpcError).entry.reason === reason;
}

/**
 * Turns anything a handler threw into an RpcError. An RpcError from any copy
 * of the runtime passes through unchanged. Anything else becomes `internal`
 * with its default message only: the original message and stack may hold
 * secrets or internals (D4), so they are kept solely as `cause`, for the
 * server's own logging.
 */
export function toRpcError(err: unknown, internal: ErrorTableEntry): RpcError {
  if (isRpcError(err)) return err;
  return new RpcError(internal, undefined, { cause: err });
}

/**
 * HTTP status of each code, as google/rpc/code.proto and grpc-gateway map
 * them; 499 is the client-closed status both use for CANCELLED.
 */
const httpStatusOf: Readonly<Record<RpcCodeName, number>> = {
  OK: 200,
  CANCELLED: 499,
  UNKNOWN: 500,
  INVALID_ARGUMENT: 400,
  DEADLINE_EXCEEDED: 504,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  PERMISSION_DENIED: 403,
  RESOURCE_EXHAUSTED: 429,
  FAILED_PRECONDITION: 400,
  ABORTED: 409,
  OUT_OF_RANGE: 400,
  UNIMPLEMENTED: 501,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DATA_LOSS: 500,
  UNAUTHENTICATED: 401,
};

/**
 * D20: the JSON-RPC code of a bare google.rpc.Code. The three codes JSON-RPC
 * 2.0 gives a meaning keep it; every other code `c` is `-32000 - c`, inside
 * the range JSON-RPC reserves for implementation-defined server errors, one
 * number per code, so a client can tell them apart and map them back.
 */
export function jsonRpcCodeOf(code: RpcCodeName): number {
  switch (code) {
    case "INVALID_ARGUMENT":
      return -32602;
    case "UNIMPLEMENTED":
      return -32601;
    case "INTERNAL":
      return -32603;
    default:
      return -32000 - Code[code];
  }
}

const codeEntries = new Map<RpcCodeName, ErrorTableEntry>();

/** The entry of a bare google.rpc.Code: no ErrorInfo, the code's own HTTP status and JSON-RPC code (D20). */
export function codeEntry(code: RpcCodeName): ErrorTableEntry {
  let entry = codeEntries.get(code);
  if (entry === undefined) {
    const name = code
      .toLowerCase()
      .split("_")
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join("");
    entry = {
      name,
      reason: code,
      domain: "",
      jsonRpcCode: jsonRpcCodeOf(code),
      grpcStatus: code,
      httpStatus: httpStatusOf[code],
      // NOT_FOUND: "Not found".
      defaultMessage: code.charAt(0) + code.slice(1).toLowerCase().replaceAll("_", " "),
    };
    codeEntries.set(code, entry);
  }
  return entry;
}

/** The errors the core raises itself, by role; a profile may spell each its own way. */
export interface CoreErrorTable {
  /** The body is not JSON (JSON-RPC -32700). */
  readonly ParseError: ErrorTableEntry;
  /** Valid JSON but not a request of the binding (JSON-RPC -32600). */
  readonly InvalidRequest: ErrorTableEntry;
  /** No such method, path or RPC. */
  readonly MethodNotFound: ErrorTableEntry;
  /** The request message could not be decoded, or misses a REQUIRED field. */
  readonly InvalidParams: ErrorTableEntry;
  /** Anything unexpected; never carries what went wrong. */
  readonly Internal: ErrorTableEntry;
  /** A request body that is not JSON (HTTP 415). */
  readonly ContentTypeNotSupported: ErrorTableEntry;
}

/**
 * The core's own table, for services with no profile: the JSON-RPC 2.0
 * codes where JSON-RPC defines one, google.rpc.Code everywhere, no ErrorInfo.
 */
export const coreErrors: CoreErrorTable = {
  ParseError: { ...codeEntry("INVALID_ARGUMENT"), name: "ParseError", reason: "PARSE_ERROR", jsonRpcCode: -32700, defaultMessage: "Parse error" },
  InvalidRequest: { ...codeEntry("INVALID_ARGUMENT"), name: "InvalidRequest", reason: "INVALID_REQUEST", jsonRpcCode: -32600, defaultMessage: "Invalid request" },
  MethodNotFound: { ...codeEntry("UNIMPLEMENTED"), name: "MethodNotFound", reason: "METHOD_NOT_FOUND", httpStatus: 404, defaultMessage: "Method not found" },
  InvalidParams: { ...codeEntry("INVALID_ARGUMENT"), name: "InvalidParams", reason: "INVALID_PARAMS", defaultMessage: "Invalid params" },
  Internal: { ...codeEntry("INTERNAL"), defaultMessage: "Internal error" },
  ContentTypeNotSupported: {
    ...codeEntry("INVALID_ARGUMENT"),
    name: "ContentTypeNotSupported",
    reason: "CONTENT_TYPE_NOT_SUPPORTED",
    jsonRpcCode: -32600,
    httpStatus: 415,
    defaultMessage: "Content type not supported",
  },
};
