/**
 * The error base that generated error classes extend. The error table itself
 * (codes per binding) is generated; this file only knows the shape of an
 * entry, so every binding encodes an error from the entry the error carries.
 */
import type { DescMessage, Message } from "@bufbuild/protobuf";

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

/** One row of the error table: how one error is spelled on every binding. */
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

export interface A2AErrorOptions {
  /** `ErrorInfo.metadata`: keys in camelCase, values strings. */
  readonly metadata?: Readonly<Record<string, string>>;
  /** More detail messages, e.g. a `google.rpc.BadRequest`. */
  readonly details?: readonly ErrorDetail[];
  readonly cause?: unknown;
}

// A brand, not class identity: an error raised by one copy of this runtime
// (another bundle, a duplicate install) is still recognised by every other.
const brand = Symbol.for("protoc-gen-a2a/A2AError");

/**
 * An error a handler can throw to answer with a specific protocol error.
 * Generated subclasses (e.g. `TaskNotFoundError`) fix the table entry;
 * `instanceof` on them checks the brand and the reason, so it works across
 * copies of the generated code and of this runtime.
 */
export class A2AError extends Error {
  /** The table entry of a generated subclass; undefined on A2AError itself. */
  static readonly entry: ErrorTableEntry | undefined = undefined;

  override readonly name: string;
  readonly entry: ErrorTableEntry;
  readonly metadata: Readonly<Record<string, string>>;
  readonly details: readonly ErrorDetail[];

  constructor(entry: ErrorTableEntry, message?: string, options: A2AErrorOptions = {}) {
    super(message ?? entry.defaultMessage, options.cause === undefined ? undefined : { cause: options.cause });
    Object.defineProperty(this, brand, { value: true });
    this.name = `${entry.name}Error`;
    this.entry = entry;
    this.metadata = options.metadata ?? {};
    this.details = options.details ?? [];
  }

  /** `ErrorInfo.reason` of this error. */
  get reason(): string {
    return this.entry.reason;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    const entry = (this as { entry?: ErrorTableEntry }).entry;
    return isA2AError(value) && (entry === undefined || value.entry.reason === entry.reason);
  }
}

/**
 * Reports whether `value` is an A2AError from any copy of this runtime,
 * optionally with the given `ErrorInfo.reason`.
 */
export function isA2AError(value: unknown, reason?: string): value is A2AError {
  if (typeof value !== "object" || value === null) return false;
  if ((value as { [brand]?: unknown })[brand] !== true) return false;
  return reason === undefined || (value as A2AError).entry.reason === reason;
}
