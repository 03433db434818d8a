/**
 * The JSON-RPC 2.0 binding's core: framing, dispatch on a generated method
 * table, ProtoJSON in and out, errors from the generated error table, and
 * SSE for streaming methods. Transport adapters (node:http, fetch) run it.
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { BodyTooLargeError, decodeUtf8, isJsonMediaType, sseHeaders, type CoreRequest, type CoreResponse, type EventSource } from "../transport.js";
import { createCallScope, type CallScope } from "../call-scope.js";
import { createDispatcher, type BindingErrorTable, type StreamFraming } from "../dispatch.js";
import { A2AError, type ErrorTableEntry } from "../errors.js";
import { jsonRpcErrorObject, toA2AError } from "../error-encoding.js";
import type { MethodSpec, RequiredFieldTable } from "../method-spec.js";
import type { AgentPolicy } from "../../a2a/policy.js";
import { negotiateVersion, type VersionPolicy } from "../../a2a/service-params.js";

/** The generated error table, as the JSON-RPC binding needs it. */
export type JsonRpcErrorTable = BindingErrorTable;

export interface JsonRpcOptions {
  /** Largest request body accepted, in bytes (D16). Default 4 MiB. */
  readonly bodyLimit?: number;
  /** Milliseconds between SSE heartbeat comments; 0 disables them. Default 15 s (D14). */
  readonly heartbeatMs?: number;
  /** Protocol versions served (D5). Default: 1.0 only, a missing version is 0.3. */
  readonly versions?: VersionPolicy;
  /** Authentication, required extensions and capability gating, shared by all bindings. */
  readonly policy?: AgentPolicy;
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

const jsonHeaders = { "content-type": "application/json" } as const;
const defaultBodyLimit = 4 << 20;
const defaultVersions: VersionPolicy = { supported: ["1.0"] };

/** Creates the JSON-RPC endpoint for one service's method table and handler. */
export function createJsonRpcEndpoint<H extends object>(config: JsonRpcEndpointConfig<H>): JsonRpcEndpoint {
  const { errors } = config;
  const bodyLimit = config.bodyLimit ?? defaultBodyLimit;
  const heartbeatMs = config.heartbeatMs ?? 15_000;
  const versions = config.versions ?? defaultVersions;
  const byName = new Map(Object.entries(config.methods));
  const dispatch = createDispatcher(config);

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

  async function unary(call: Call, scope: CallScope): Promise<unknown> {
    try {
      const admitted = dispatch.admit(call.spec, scope);
      if (admitted !== undefined) await admitted;
      const request = dispatch.decode(call.spec, call.params);
      const result = await dispatch.unary(call.spec, request, scope.context(dispatch.tenantOf(request)));
      return { jsonrpc: "2.0", id: call.id ?? null, result };
    } catch (err) {
      return errorEnvelope(call.id ?? null, err);
    }
  }

  // One object per open stream with the call's id and scope; the methods
  // are shared, so a stream holds no closures of its own here.
  class JsonRpcStream implements StreamFraming {
    constructor(
      private readonly id: JsonRpcId,
      private readonly scope: CallScope,
    ) {}

    get heartbeatMs(): number {
      return heartbeatMs;
    }

    event(result: JsonValue): string {
      return JSON.stringify({ jsonrpc: "2.0", id: this.id, result });
    }

    error(err: unknown): string {
      return JSON.stringify(errorEnvelope(this.id, err));
    }

    abort(): void {
      this.scope.abort();
    }
  }

  async function stream(call: Call, scope: CallScope, echo: () => Record<string, string> | undefined): Promise<CoreResponse> {
    const id = call.id ?? null;
    let events: EventSource;
    try {
      const admitted = dispatch.admit(call.spec, scope);
      if (admitted !== undefined) await admitted;
      const request = dispatch.decode(call.spec, call.params);
      events = await dispatch.openStream(call.spec, request, scope.context(dispatch.tenantOf(request)), new JsonRpcStream(id, scope));
    } catch (err) {
      return body(200, errorEnvelope(id, err), echo());
    }
    // After the first event, so extensions the handler activated are echoed.
    return { kind: "stream", headers: { ...sseHeaders, ...(echo() ?? {}) }, events };
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
        const text = decodeUtf8(bytes);
        if (text === undefined) throw new Error("not UTF-8");
        parsed = JSON.parse(text) as JsonValue;
      } catch {
        return body(200, errorEnvelope(null, fail(errors.ParseError, "the request body is not valid JSON")));
      }

      const version = negotiateVersion(req.header("a2a-version"), queryParam(req.url, "A2A-Version"), versions);
      const scope = createCallScope("JSONRPC", version.ok ? version.version : version.requested, req);
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
            const reply = await unary(call, scope);
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
        return stream(call, scope, echo);
      }
      const reply = await unary(call, scope);
      return call.id === undefined ? { kind: "empty", status: 204, headers: echo() ?? {} } : body(200, reply, echo());
    },
  };
}

/** A query parameter of a path-and-query string; parses only when there is a query. */
function queryParam(url: string, name: string): string | null {
  const q = url.indexOf("?");
  return q < 0 ? null : new URLSearchParams(url.slice(q + 1)).get(name);
}
