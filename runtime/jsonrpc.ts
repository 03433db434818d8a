/**
 * The JSON-RPC 2.0 binding's core: framing, dispatch on a generated method
 * table, ProtoJSON in and out, errors from the generated error table, and
 * SSE for streaming methods. Transport adapters (node:http, fetch) run it.
 */
import type { DescMessage, JsonObject, JsonValue, Message } from "@bufbuild/protobuf";
import { BodyTooLargeError, sseHeaders, type CoreRequest, type CoreResponse } from "./binding-core.js";
import type { CallContext } from "./call-context.js";
import { A2AError, type ErrorTableEntry } from "./errors.js";
import { badRequest, jsonRpcErrorObject, toA2AError } from "./error-encoding.js";
import { createEventSource } from "./event-stream.js";
import { decodeJson, JsonDecodeError } from "./proto-json.js";
import { createStreamCheck } from "./stream-rules.js";
import type { MethodSpec, RequiredFieldTable } from "./method-spec.js";
import { jsonWriter } from "./json-writer.js";
import { findMissingRequired } from "./required-fields.js";
import { createCallScope } from "./call-scope.js";
import { negotiateVersion, type VersionPolicy } from "./service-params.js";

/**
 * The generated error table: the rows the JSON-RPC binding raises itself,
 * and any row a method table names for a left-out method (D18).
 */
export type JsonRpcErrorTable = Readonly<
  Record<
    | "ParseError"
    | "InvalidRequest"
    | "MethodNotFound"
    | "InvalidParams"
    | "Internal"
    | "UnsupportedOperation"
    | "VersionNotSupported"
    | "ContentTypeNotSupported"
    | "InvalidAgentResponse",
    ErrorTableEntry
  >
> &
  Readonly<Record<string, ErrorTableEntry>>;

export interface JsonRpcOptions {
  /** Largest request body accepted, in bytes (D16). Default 4 MiB. */
  readonly bodyLimit?: number;
  /** Milliseconds between SSE heartbeat comments; 0 disables them. Default 15 s (D14). */
  readonly heartbeatMs?: number;
  /** Protocol versions served (D5). Default: 1.0 only, a missing version is 0.3. */
  readonly versions?: VersionPolicy;
}

export interface JsonRpcEndpointConfig<H extends object> extends JsonRpcOptions {
  /** The generated dispatch table: JSON-RPC method name (the RPC name) to method. */
  readonly methods: Readonly<Record<string, MethodSpec>>;
  readonly errors: JsonRpcErrorTable;
  readonly required: RequiredFieldTable;
  readonly handler: H;
}

export interface JsonRpcEndpoint {
  handle(request: CoreRequest): Promise<CoreResponse>;
}

type JsonRpcId = string | number | null;

/** A call that passed framing: `id` is undefined for a notification. */
interface Call {
  readonly id: JsonRpcId | undefined;
  readonly spec: MethodSpec;
  readonly params: JsonObject;
}

type HandlerFn = (request: Message, context: CallContext) => unknown;

const jsonHeaders = { "content-type": "application/json" } as const;
// fatal: a body that is not UTF-8 is a parse error, not text with U+FFFD in it.
const utf8 = new TextDecoder("utf-8", { fatal: true });
const defaultBodyLimit = 4 << 20;
const defaultVersions: VersionPolicy = { supported: ["1.0"] };

/** Creates the JSON-RPC endpoint for one service's method table and handler. */
export function createJsonRpcEndpoint<H extends object>(config: JsonRpcEndpointConfig<H>): JsonRpcEndpoint {
  const { errors, required } = config;
  const bodyLimit = config.bodyLimit ?? defaultBodyLimit;
  const heartbeatMs = config.heartbeatMs ?? 15_000;
  const versions = config.versions ?? defaultVersions;
  const byName = new Map(Object.entries(config.methods));
  const handler = config.handler as Record<string, HandlerFn | undefined>;

  const fail = (entry: ErrorTableEntry, message?: string) => new A2AError(entry, message);
  const errorEnvelope = (id: JsonRpcId, err: unknown) => ({
    jsonrpc: "2.0",
    id,
    error: jsonRpcErrorObject(toA2AError(err, errors.Internal)),
  });
  const body = (status: number, value: unknown, headers?: Record<string, string>): CoreResponse => ({
    kind: "body",
    status,
    headers: headers === undefined ? jsonHeaders : { ...jsonHeaders, ...headers },
    body: JSON.stringify(value),
  });

  /** Framing rules of JSON-RPC 2.0 for one request object (D13). */
  function frame(value: JsonValue): Call | { id: JsonRpcId | undefined; error: A2AError } {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { id: null, error: fail(errors.InvalidRequest, "a request must be a JSON object") };
    }
    const hasId = Object.prototype.hasOwnProperty.call(value, "id");
    const rawId = value.id;
    const idValid = !hasId || rawId === null || typeof rawId === "string" || typeof rawId === "number";
    const id: JsonRpcId = idValid && hasId ? (rawId as JsonRpcId) : null;
    if (!idValid) return { id: null, error: fail(errors.InvalidRequest, "id must be a string, a number or null") };
    if (value.jsonrpc !== "2.0") return { id, error: fail(errors.InvalidRequest, 'jsonrpc must be "2.0"') };
    if (typeof value.method !== "string") return { id, error: fail(errors.InvalidRequest, "method must be a string") };
    const params = "params" in value ? value.params : {};
    if (typeof params !== "object" || params === null || Array.isArray(params)) {
      return { id, error: fail(errors.InvalidRequest, "params must be an object") };
    }
    const spec = byName.get(value.method);
    if (spec === undefined) {
      // A well-formed notification is never answered, not even with an error.
      const error = fail(errors.MethodNotFound, `method ${JSON.stringify(value.method)} does not exist`);
      return { id: hasId ? id : undefined, error };
    }
    return { id: hasId ? id : undefined, spec, params };
  }

  function decode(spec: MethodSpec, params: JsonObject): Message {
    let request: Message;
    try {
      request = decodeJson(spec.input, params);
    } catch (err) {
      if (!(err instanceof JsonDecodeError)) throw err;
      const details = err.field === undefined ? [] : [badRequest([{ field: err.field, description: err.reason }])];
      throw new A2AError(errors.InvalidParams, `invalid params: ${err.message}`, { details });
    }
    const missing = findMissingRequired(spec.input, request, required);
    if (missing.length > 0) {
      throw new A2AError(errors.InvalidParams, `missing required field${missing.length > 1 ? "s" : ""}: ${missing.map((v) => v.field).join(", ")}`, {
        details: [badRequest(missing)],
      });
    }
    return request;
  }

  /** Calls the handler's method for `spec`, or throws the error for a left-out method (D18). */
  function invoke(spec: MethodSpec, request: Message, context: CallContext): unknown {
    const fn = handler[spec.localName];
    // An RPC named e.g. HasOwnProperty must not find Object.prototype's method.
    const inherited = (Object.prototype as unknown as Record<string, unknown>)[spec.localName];
    if (typeof fn !== "function" || fn === inherited) {
      throw fail(errors[spec.unimplemented] ?? errors.UnsupportedOperation, `${spec.name} is not supported by this agent`);
    }
    return fn.call(handler, request, context);
  }

  function encodeResult(desc: DescMessage, value: unknown): JsonValue {
    return jsonWriter(desc, required)(value);
  }

  async function unary(call: Call, context: CallContext): Promise<unknown> {
    try {
      const request = decode(call.spec, call.params);
      const result = await invoke(call.spec, request, context);
      return { jsonrpc: "2.0", id: call.id ?? null, result: encodeResult(call.spec.output, result) };
    } catch (err) {
      return errorEnvelope(call.id ?? null, err);
    }
  }

  async function stream(
    call: Call,
    context: CallContext,
    abort: () => void,
    echo: () => Record<string, string> | undefined,
  ): Promise<CoreResponse> {
    const id = call.id ?? null;
    const output = call.spec.output;
    const check = createStreamCheck(output);
    const serialize = (event: unknown) => {
      const problem = check?.(event);
      if (problem !== undefined) throw fail(errors.InvalidAgentResponse, problem);
      return JSON.stringify({ jsonrpc: "2.0", id, result: encodeResult(output, event) });
    };
    let iterator: AsyncIterator<unknown> | undefined;
    let first: string;
    try {
      const request = decode(call.spec, call.params);
      const iterable = invoke(call.spec, request, context) as AsyncIterable<unknown>;
      iterator = iterable[Symbol.asyncIterator]();
      const r = await iterator.next();
      if (r.done === true) throw fail(errors.Internal, "the stream ended before its first event");
      // Serialized before answering, so an unencodable first event is still a plain error response.
      first = serialize(r.value);
    } catch (err) {
      abort();
      void Promise.resolve()
        .then(() => iterator?.return?.())
        .catch(() => undefined);
      return body(200, errorEnvelope(id, err), echo());
    }
    return {
      kind: "stream",
      // After the first event, so extensions the handler activated are echoed.
      headers: { ...sseHeaders, ...(echo() ?? {}) },
      events: createEventSource({
        first,
        iterator,
        serialize,
        serializeError: (err) => JSON.stringify(errorEnvelope(id, err)),
        abort,
        heartbeatMs,
      }),
    };
  }

  return {
    async handle(req) {
      if (req.method !== "POST") {
        return body(405, errorEnvelope(null, fail(errors.InvalidRequest, "JSON-RPC requests are sent with POST")), {
          allow: "POST",
        });
      }
      if (!isJsonMediaType(req.header("content-type"))) {
        return body(415, errorEnvelope(null, fail(errors.ContentTypeNotSupported, "the request body must be application/json")));
      }
      let bytes: Uint8Array;
      try {
        bytes = await req.body(bodyLimit);
      } catch (err) {
        if (!(err instanceof BodyTooLargeError)) throw err;
        return body(413, errorEnvelope(null, fail(errors.InvalidRequest, err.message)));
      }
      let parsed: JsonValue;
      try {
        parsed = JSON.parse(utf8.decode(bytes)) as JsonValue;
      } catch {
        return body(200, errorEnvelope(null, fail(errors.ParseError, "the request body is not valid JSON")));
      }

      const version = negotiateVersion(req.header("a2a-version"), queryParam(req.url, "A2A-Version"), versions);
      const scope = createCallScope("JSONRPC", version.ok ? version.version : version.requested, req);
      const abort = () => scope.abort();
      const contextOf = (call: Call): CallContext => {
        const tenant = call.params.tenant;
        return scope.context(typeof tenant === "string" && tenant !== "" ? tenant : undefined);
      };
      const echo = (): Record<string, string> | undefined => {
        const activated = scope.activatedHeader();
        return activated === undefined ? undefined : { "a2a-extensions": activated };
      };
      const versionError = version.ok ? undefined : fail(errors.VersionNotSupported, version.message);

      if (Array.isArray(parsed)) {
        if (parsed.length === 0) return body(200, errorEnvelope(null, fail(errors.InvalidRequest, "an empty batch is not a request")));
        const replies = await Promise.all(
          parsed.map(async (item) => {
            const call = frame(item);
            if (!("spec" in call)) return call.id === undefined ? undefined : errorEnvelope(call.id, call.error);
            if (versionError !== undefined) return call.id === undefined ? undefined : errorEnvelope(call.id, versionError);
            if (call.spec.kind !== "unary") {
              if (call.id === undefined) return undefined;
              return errorEnvelope(call.id ?? null, fail(errors.InvalidRequest, `${call.spec.name} streams its response and cannot be called in a batch`));
            }
            const reply = await unary(call, contextOf(call));
            return call.id === undefined ? undefined : reply;
          }),
        );
        const answered = replies.filter((r) => r !== undefined);
        return answered.length === 0 ? { kind: "empty", status: 204, headers: echo() ?? {} } : body(200, answered, echo());
      }

      const call = frame(parsed);
      if (!("spec" in call)) {
        return call.id === undefined ? { kind: "empty", status: 204, headers: {} } : body(200, errorEnvelope(call.id, call.error));
      }
      if (versionError !== undefined) {
        return call.id === undefined ? { kind: "empty", status: 204, headers: {} } : body(200, errorEnvelope(call.id, versionError));
      }
      if (call.spec.kind !== "unary") {
        // A notification expects no response, and a stream is nothing but one.
        if (call.id === undefined) return { kind: "empty", status: 204, headers: {} };
        return stream(call, contextOf(call), abort, echo);
      }
      const reply = await unary(call, contextOf(call));
      return call.id === undefined ? { kind: "empty", status: 204, headers: echo() ?? {} } : body(200, reply, echo());
    },
  };
}

/** A query parameter of a path-and-query string; parses only when there is a query. */
function queryParam(url: string, name: string): string | null {
  const q = url.indexOf("?");
  return q < 0 ? null : new URLSearchParams(url.slice(q + 1)).get(name);
}

/** D9: application/json, application/a2a+json and any +json type (parameters ignored). */
export function isJsonMediaType(value: string | null): boolean {
  if (value === null) return false;
  if (value === "application/json") return true;
  const type = (value.split(";")[0] ?? "").trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}
