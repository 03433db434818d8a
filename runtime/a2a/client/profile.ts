/**
 * The A2A profile on the client side: every call carries the protocol
 * version (spec 3.6: always sent, never left for the server to assume 0.3)
 * and the extensions asked for; a request with a `tenant` field that the
 * caller left empty gets the interface's tenant (spec 8.3.2); and an error
 * answer becomes the A2A class of its ErrorInfo reason (TaskNotFoundError,
 * ...), the class a handler throws on the server.
 */
import type { DescMessage } from "@bufbuild/protobuf";
import type { ClientErrors, ClientProfile } from "../../core/client/client.js";
import { RpcError, codeEntry, type ErrorTableEntry, type RpcCodeName, type RpcErrorOptions } from "../../core/errors.js";
import type { MethodSpec } from "../../core/method-spec.js";
import type { A2ACallContext } from "../profile.js";
import * as a2aErrors from "../errors.js";
import { A2AErrorTable } from "../errors.js";
import { codeOfA2AJsonRpc } from "../json-rpc-codes.js";

export interface A2AClientProfileOptions {
  /** The protocol version sent (`A2A-Version`). Default `1.0`. */
  readonly protocolVersion?: string;
  /** Extension URIs asked for on every call (`A2A-Extensions`). */
  readonly extensions?: readonly string[];
  /** The tenant put in requests that leave theirs empty. */
  readonly tenant?: string;
}

type ErrorClass = new (message?: string, options?: RpcErrorOptions) => RpcError;

const entries: readonly ErrorTableEntry[] = Object.values(A2AErrorTable);
const classByReason = new Map<string, ErrorClass>();
for (const value of Object.values(a2aErrors)) {
  const entry = (value as { entry?: ErrorTableEntry }).entry;
  if (typeof value === "function" && entry !== undefined) classByReason.set(entry.reason, value as unknown as ErrorClass);
}

/**
 * The A2A errors sent without ErrorInfo (their rows have no domain) travel
 * as a bare status on HTTP+JSON and gRPC: each status stands for the one
 * a client most likely met (a malformed request is InvalidParams once the
 * binding's own framing passed). UNKNOWN is Internal: it is what gRPC
 * servers (grpc-js, grpcio, @a2a-js/sdk's grpcService) answer for an
 * exception that is no A2A error, where the same agent's JSON-RPC says
 * -32603 and its HTTP+JSON 500, so the one failure is one class on all
 * three bindings (D29).
 */
const byStatus: Partial<Record<RpcCodeName, ErrorTableEntry>> = {
  INVALID_ARGUMENT: A2AErrorTable.InvalidParams,
  UNIMPLEMENTED: A2AErrorTable.MethodNotFound,
  INTERNAL: A2AErrorTable.Internal,
  UNKNOWN: A2AErrorTable.Internal,
  UNAUTHENTICATED: A2AErrorTable.Unauthenticated,
  PERMISSION_DENIED: A2AErrorTable.PermissionDenied,
};

/** A2A's error table, for decoding: its classes by reason, its JSON-RPC codes and bare statuses. */
export const a2aClientErrors: ClientErrors = {
  // By reason: an A2A reason sent in another domain (@a2a-js/sdk's INVALID_PARAMS) is still its class.
  create(entry, message, options) {
    const Class = classByReason.get(entry.reason);
    return Class === undefined ? new RpcError(entry, message, options) : new Class(message, options);
  },
  byReason: (reason, domain) => entries.find((e) => e.reason === reason && e.domain === domain),
  byJsonRpcCode: (code) => {
    const entry = entries.find((e) => e.jsonRpcCode === code);
    if (entry !== undefined) return entry;
    // D37: a code that is not A2A's, sent as -31000 - HTTP status.
    const name = codeOfA2AJsonRpc(code);
    return name === undefined ? undefined : byStatus[name] ?? codeEntry(name);
  },
  byCode: (code) => byStatus[code] ?? codeEntry(code),
};

export function createA2AClientProfile(options: A2AClientProfileOptions = {}): ClientProfile {
  const headers: Record<string, string> = { "a2a-version": options.protocolVersion ?? "1.0" };
  if (options.extensions !== undefined && options.extensions.length > 0) headers["a2a-extensions"] = options.extensions.join(", ");
  const tenant = options.tenant ?? "";
  const hasTenant = new Map<DescMessage, boolean>();
  return {
    errors: a2aClientErrors,
    headers: () => headers,
    request(spec: MethodSpec, request: object) {
      if (tenant === "") return request;
      let has = hasTenant.get(spec.input);
      if (has === undefined) hasTenant.set(spec.input, (has = spec.input.fields.some((f) => f.localName === "tenant" && f.fieldKind === "scalar")));
      const current = (request as { tenant?: unknown }).tenant;
      return has && (current === undefined || current === "") ? { ...request, tenant } : request;
    },
    // The extensions the handler's caller asked for are asked of the agent behind it.
    forward: (context): Record<string, string> => {
      const requested = (context as Partial<A2ACallContext>).requestedExtensions ?? [];
      return requested.length === 0 ? {} : { "a2a-extensions": requested.join(", ") };
    },
  };
}
