/**
 * D37: the JSON-RPC code of an error that is not one of A2A's. A2A's table
 * spends codes from -32001 up in the range JSON-RPC 2.0 leaves to the
 * implementation (-32000 to -32099), where the core spells a bare
 * google.rpc.Code `c` as `-32000 - c` (D20): in an A2A service a handler's
 * `new RpcError("NOT_FOUND")` would go out as -32005, A2A's
 * ContentTypeNotSupported. So an A2A service sends any code of that range
 * that is not A2A's as `-31000 - HTTP status` (NOT_FOUND -31404, ABORTED
 * -31409), the rule A2A's own authentication codes (-31401, -31403) and the
 * runtime's stream cut (-31429) follow; and a client reads those back.
 */
import { RpcError, type ErrorTableEntry, type RpcCodeName } from "../core/errors.js";
import { A2AErrorTable } from "./errors.js";

/** A2A's rows by their JSON-RPC code. */
const a2aRows: ReadonlyMap<number, ErrorTableEntry> = new Map(Object.values(A2AErrorTable).map((e) => [e.jsonRpcCode, e]));
const respelled = new WeakMap<ErrorTableEntry, ErrorTableEntry>();

/** `err` as an A2A service answers it: with its code moved out of A2A's range when it is not A2A's. */
export function a2aAnswerError(err: RpcError): RpcError {
  const entry = err.entry;
  const code = entry.jsonRpcCode;
  if (code > -32000 || code < -32099) return err;
  // An A2A error (its row, or a copy of it: the same reason in the same domain) keeps its code.
  const row = a2aRows.get(code);
  if (row !== undefined && row.reason === entry.reason && row.domain === entry.domain) return err;
  let own = respelled.get(entry);
  if (own === undefined) respelled.set(entry, (own = { ...entry, jsonRpcCode: -31000 - entry.httpStatus }));
  return new RpcError(own, err.message, { metadata: err.metadata, details: err.details, cause: err });
}

/**
 * The code behind `-31000 - HTTP status`. Three statuses stand for two codes
 * each; the one given is the one that can have come: 400 is
 * FAILED_PRECONDITION (INVALID_ARGUMENT has -32602 of its own), 409
 * ABORTED (as an HTTP+JSON 409 without a body is read), 500 UNKNOWN
 * (INTERNAL has -32603).
 */
const codeByStatus: Readonly<Record<number, RpcCodeName>> = {
  400: "FAILED_PRECONDITION",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "UNKNOWN",
  501: "UNIMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** The google.rpc.Code a JSON-RPC code of D37's form stands for, if it is one. */
export function codeOfA2AJsonRpc(code: number): RpcCodeName | undefined {
  return codeByStatus[-31000 - code];
}

