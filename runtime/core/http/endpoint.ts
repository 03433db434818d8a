/**
 * The HTTP+JSON binding's core: routes compiled from the generated
 * google.api.http rules, HttpRule transcoding into one ProtoJSON request,
 * the shared dispatcher, AIP-193 error bodies, and SSE for streaming
 * methods. Transport adapters (node:http, fetch) run it.
 */
import type { JsonValue } from "@bufbuild/protobuf";
import { BodyTooLargeError, decodeUtf8, isJsonMediaType, sseHeaders, type CoreRequest, type CoreResponse, type EventSource } from "../transport.js";
import { createCallScope, type CallScope } from "../call-scope.js";
import { createDispatcher, type BindingErrorTable, type StreamFraming } from "../dispatch.js";
import { badRequest, httpErrorBody, toA2AError } from "../error-encoding.js";
import { A2AError, type ErrorTableEntry } from "../errors.js";
import { createTranscoder, type Transcoder } from "./transcoding.js";
import type { HttpRuleSpec, MethodSpec, RequiredFieldTable } from "../method-spec.js";
import type { AgentPolicy } from "../../a2a/policy.js";
import { parsePathTemplate } from "./path-template.js";
import { JsonDecodeError } from "../codec/proto-json.js";
import { createRouter } from "./router.js";
import { negotiateVersion, type VersionPolicy } from "../../a2a/service-params.js";

export interface HttpJsonOptions {
  /** Largest request body accepted, in bytes (D16). Default 4 MiB. */
  readonly bodyLimit?: number;
  /** Milliseconds between SSE heartbeat comments; 0 disables them. Default 15 s (D14). */
  readonly heartbeatMs?: number;
  /** Protocol versions served (D5). Default: 1.0 only, a missing version is 0.3. */
  readonly versions?: VersionPolicy;
  /** Path the routes are mounted under, e.g. `/a2a/rest`; default none. */
  readonly basePath?: string;
  /** Authentication, required extensions and capability gating, shared by all bindings. */
  readonly policy?: AgentPolicy;
}

export interface HttpJsonEndpointConfig<H extends object> extends HttpJsonOptions {
  /** The generated method table, keyed by the handler's method names. */
  readonly methods: Readonly<Record<string, MethodSpec>>;
  /** The generated google.api.http rules. */
  readonly rules: readonly HttpRuleSpec[];
  readonly errors: BindingErrorTable;
  readonly required: RequiredFieldTable;
  readonly handler: H;
}

export interface HttpJsonEndpoint {
  handle(request: CoreRequest): Promise<CoreResponse>;
}

interface Target {
  readonly rule: HttpRuleSpec;
  readonly spec: MethodSpec;
  readonly transcoder: Transcoder;
}

const a2aJson = "application/a2a+json";

/** Creates the HTTP+JSON endpoint for one service's rules, method table and handler. */
export function createHttpJsonEndpoint<H extends object>(config: HttpJsonEndpointConfig<H>): HttpJsonEndpoint {
  const { errors } = config;
  const bodyLimit = config.bodyLimit ?? 4 << 20;
  const heartbeatMs = config.heartbeatMs ?? 15_000;
  const versions = config.versions ?? { supported: ["1.0"] };
  const basePath = (config.basePath ?? "").replace(/\/+$/, "");
  const dispatch = createDispatcher(config);
  const router = createRouter(
    config.rules.map((rule) => {
      const spec = config.methods[rule.method];
      if (spec === undefined) throw new Error(`HTTP rule ${rule.httpMethod} ${rule.path} names no method ${rule.method}`);
      return { httpMethod: rule.httpMethod, template: parsePathTemplate(rule.path), target: { rule, spec, transcoder: createTranscoder(spec.input, rule) } };
    }),
  );
  // HTTP statuses the error table has no row for: same error, HTTP's own word.
  const routeNotFound: ErrorTableEntry = { ...errors.MethodNotFound, grpcStatus: "NOT_FOUND" };
  const methodNotAllowed: ErrorTableEntry = { ...errors.MethodNotFound, httpStatus: 405 };
  const tooLarge: ErrorTableEntry = { ...errors.InvalidRequest, httpStatus: 413 };
  const notJson: ErrorTableEntry = { ...errors.ContentTypeNotSupported, httpStatus: 415 };

  function errorResponse(err: unknown, mediaType: string, headers?: Record<string, string>): CoreResponse {
    const a2a = toA2AError(err, errors.Internal);
    return {
      kind: "body",
      status: a2a.entry.httpStatus,
      headers: { "content-type": mediaType, ...headers },
      body: JSON.stringify(httpErrorBody(a2a)),
    };
  }

  /** Reads and parses the body as the rule maps it; undefined when the rule takes none. */
  async function readBody(req: CoreRequest, target: Target): Promise<JsonValue | undefined> {
    const { rule } = target;
    if (rule.body === "" && !rule.derived) return undefined;
    let bytes: Uint8Array;
    try {
      bytes = await req.body(bodyLimit);
    } catch (err) {
      if (!(err instanceof BodyTooLargeError)) throw err;
      throw new A2AError(tooLarge, err.message);
    }
    const text = decodeUtf8(bytes);
    // No body at all is a message with no fields set (POST /tasks/x:cancel
    // carries only an optional metadata), as grpc-gateway and Envoy read it.
    if (text !== undefined && text.trim() === "") return rule.body === "*" ? {} : undefined;
    if (rule.derived) {
      // D1: the POST twin of a streaming GET takes no request fields in its body.
      if (text === undefined || (text.trim() !== "" && text.replace(/\s/g, "") !== "{}")) {
        throw new A2AError(errors.InvalidRequest, `${rule.path} takes its fields from the path; send an empty body or {}`);
      }
      return undefined;
    }
    if (!isJsonMediaType(req.header("content-type"))) {
      throw new A2AError(notJson, "the request body must be JSON (application/a2a+json or application/json)");
    }
    try {
      if (text === undefined) throw new Error("not UTF-8");
      return JSON.parse(text) as JsonValue;
    } catch {
      throw new A2AError(errors.ParseError, "the request body is not valid JSON");
    }
  }

  // One object per open stream, holding only its scope; the methods are shared.
  class HttpJsonStream implements StreamFraming {
    constructor(private readonly scope: CallScope) {}

    get heartbeatMs(): number {
      return heartbeatMs;
    }

    // The spec is silent on errors after a stream started (A2A #1262): one
    // last event carries the same AIP-193 body a plain response would, named
    // `error` so clients that dispatch on the event type (@a2a-js/sdk does)
    // see an error, not an empty StreamResponse.
    get errorEvent(): string {
      return "error";
    }

    event(json: JsonValue): string {
      return JSON.stringify(json);
    }

    error(err: unknown): string {
      return JSON.stringify(httpErrorBody(toA2AError(err, errors.Internal)));
    }

    abort(): void {
      this.scope.abort();
    }
  }

  return {
    async handle(req) {
      const mediaType = responseMediaType(req);
      const q = req.url.indexOf("?");
      const fullPath = q < 0 ? req.url : req.url.slice(0, q);
      const query = q < 0 ? undefined : new URLSearchParams(req.url.slice(q + 1));
      if (basePath !== "" && fullPath !== basePath && !fullPath.startsWith(`${basePath}/`)) {
        return errorResponse(new A2AError(routeNotFound, `no route for ${req.method} ${fullPath}`), mediaType);
      }
      const path = fullPath.slice(basePath.length);
      const match = router.match(req.method, path);
      switch (match.kind) {
        case "not_found":
          return errorResponse(new A2AError(routeNotFound, `no route for ${req.method} ${fullPath}`), mediaType);
        case "method_not_allowed":
          return errorResponse(new A2AError(methodNotAllowed, `${req.method} is not allowed on ${fullPath}; allowed: ${match.allow.join(", ")}`), mediaType, {
            allow: match.allow.join(", "),
          });
        case "bad_path":
          return errorResponse(new A2AError(errors.InvalidParams, match.reason), mediaType);
      }
      const { spec, transcoder } = match.route.target;

      const version = negotiateVersion(req.header("a2a-version"), query?.get("A2A-Version") ?? null, versions);
      if (!version.ok) return errorResponse(new A2AError(errors.VersionNotSupported, version.message), mediaType);
      const scope = createCallScope("HTTP+JSON", version.version, req);
      const echo = (): Record<string, string> => {
        const activated = scope.activatedHeader();
        return activated === undefined ? {} : { "a2a-extensions": activated };
      };

      let request;
      try {
        const admitted = dispatch.admit(spec, scope);
        if (admitted !== undefined) await admitted;
        const { rule } = match.route.target;
        const body = rule.body === "" && !rule.derived ? undefined : await readBody(req, match.route.target);
        request = dispatch.decode(spec, transcoderJson(transcoder, match.values, body, query, errors));
      } catch (err) {
        return errorResponse(err, mediaType);
      }
      const context = scope.context(dispatch.tenantOf(request));

      if (spec.kind !== "unary") {
        let events: EventSource;
        try {
          events = await dispatch.openStream(spec, request, context, new HttpJsonStream(scope));
        } catch (err) {
          return errorResponse(err, mediaType, echo());
        }
        return { kind: "stream", headers: { ...sseHeaders, ...echo() }, events };
      }
      try {
        const result = await dispatch.unary(spec, request, context);
        const responseBody = match.route.target.rule.responseBody;
        const body = responseBody === "" ? result : fieldOf(result, spec, responseBody);
        return { kind: "body", status: 200, headers: { "content-type": mediaType, ...echo() }, body: JSON.stringify(body) };
      } catch (err) {
        return errorResponse(err, mediaType, echo());
      }
    },
  };
}

function transcoderJson(
  transcoder: Transcoder,
  values: readonly string[],
  body: JsonValue | undefined,
  query: URLSearchParams | undefined,
  errors: BindingErrorTable,
): JsonValue {
  try {
    return transcoder.build(values, body, query);
  } catch (err) {
    if (!(err instanceof JsonDecodeError)) throw err;
    // Raised as the dispatcher raises decode errors, so both read the same.
    const details = err.field === undefined ? [] : [badRequest([{ field: err.field, description: err.reason }])];
    throw new A2AError(errors.InvalidParams, `invalid params: ${err.message}`, { details });
  }
}

/** The `response_body` field of a result, by its JSON name. */
function fieldOf(result: JsonValue, spec: MethodSpec, localName: string): JsonValue {
  const field = spec.output.fields.find((f) => f.localName === localName);
  const json = result as Record<string, JsonValue>;
  return field === undefined ? null : (json[field.jsonName] ?? null);
}


/**
 * D9: what the client accepts (`application/a2a+json` or `application/json`),
 * else the JSON type it sent, else `application/a2a+json`.
 */
function responseMediaType(req: CoreRequest): string {
  const accept = req.header("accept");
  const sent = req.header("content-type");
  const key = `${accept ?? ""}\n${sent ?? ""}`;
  let type = mediaTypeCache.get(key);
  if (type === undefined) {
    type = negotiate(accept, sent);
    // Clients send the same few header pairs; bounded, since they are client data.
    if (mediaTypeCache.size < 256) mediaTypeCache.set(key, type);
  }
  return type;
}

const mediaTypeCache = new Map<string, string>();

function negotiate(accept: string | null, sent: string | null): string {
  if (accept !== null) {
    const types = accept.split(",").map((t) => (t.split(";")[0] ?? "").trim().toLowerCase());
    if (types.includes(a2aJson)) return a2aJson;
    if (types.includes("application/json")) return "application/json";
  }
  if (sent !== null && isJsonMediaType(sent)) return (sent.split(";")[0] ?? "").trim().toLowerCase();
  return a2aJson;
}
