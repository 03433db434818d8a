/**
 * The clients generated code creates, one per binding, from the service's
 * tables and a URL: the binding's transport under the service's profile
 * (the core's for a plain service, A2A's for A2AService). gRPC's is in
 * grpc.ts, apart so JSON-only clients never load grpc-js.
 */
import type { CallContext } from "../call-context.js";
import type { HttpRuleSpec, MethodSpec, RequiredFieldTable } from "../method-spec.js";
import { createServiceClient, type ClientBase, type ClientCallOptions, type ClientOf, type ClientProfile } from "./client.js";
import { coreClientErrors } from "./error-decoding.js";
import { createHttpJsonTransport } from "./http-json.js";
import { createJsonRpcTransport } from "./jsonrpc.js";
import type { TracingApi } from "../tracing.js";
import type { BodyBoundOptions } from "./bounds.js";

/** What every client takes, whatever its binding (`maxMessageBytes`, `streamIdleTimeoutMs`, `heartbeatTimeoutMs`: bounds.ts). */
export interface ClientOptions extends BodyBoundOptions {
  /** Headers (HTTP) or metadata (gRPC) sent with every call. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Headers computed for each call, e.g. `{ authorization: \`Bearer ${await token()}\` }`. */
  readonly callHeaders?: (method: MethodSpec) => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>;
  /**
   * The fetch of the JSON bindings (a mock, a fetch with its own proxy); default undici's
   * `request` on the global dispatcher, which node's fetch uses too (`setGlobalDispatcher`
   * applies to both), at a fraction of fetch's cost per call.
   */
  readonly fetch?: typeof fetch;
  /**
   * OpenTelemetry (D35): the caller's trace context is sent with every call
   * (`traceparent`). Default: `@opentelemetry/api` if it is installed;
   * `false` sends none; or the API module itself.
   */
  readonly tracing?: TracingApi | false;
}

export type MethodTable = Readonly<Record<string, MethodSpec>>;

/** A service's tables, as generated code hands them over. */
export interface ClientTables<M extends MethodTable = MethodTable> {
  readonly methods: M;
  readonly required: RequiredFieldTable;
  readonly rules: readonly HttpRuleSpec[];
}

/** A profile for the client and the media type of its HTTP+JSON bodies. */
export interface ClientProfileConfig {
  readonly profile: ClientProfile;
  readonly mediaType: string;
}

const coreProfileConfig: ClientProfileConfig = {
  profile: { errors: coreClientErrors, headers: () => ({}), request: (_spec, request) => request, forward: () => ({}) },
  mediaType: "application/json",
};

export type ServiceClient = ClientBase & Record<string, (request: object, options?: ClientCallOptions | CallContext) => unknown>;

export function createJsonRpcClient<M extends MethodTable>(tables: ClientTables<M>, url: string | URL, options: ClientOptions & Partial<ClientProfileConfig> = {}): ClientOf<M> {
  const { profile } = { ...coreProfileConfig, ...options };
  const transport = createJsonRpcTransport({
    url,
    errors: profile.errors,
    required: tables.required,
    fetch: options.fetch,
    maxMessageBytes: options.maxMessageBytes,
    streamIdleTimeoutMs: options.streamIdleTimeoutMs,
    heartbeatTimeoutMs: options.heartbeatTimeoutMs,
  });
  return typed(createServiceClient({ methods: tables.methods, transport, profile, headers: options.headers, callHeaders: options.callHeaders, tracing: options.tracing }));
}

export function createHttpJsonClient<M extends MethodTable>(tables: ClientTables<M>, url: string | URL, options: ClientOptions & Partial<ClientProfileConfig> = {}): ClientOf<M> {
  const { profile, mediaType } = { ...coreProfileConfig, ...options };
  const transport = createHttpJsonTransport({
    baseUrl: url,
    rules: tables.rules,
    errors: profile.errors,
    required: tables.required,
    mediaType,
    fetch: options.fetch,
    maxMessageBytes: options.maxMessageBytes,
    streamIdleTimeoutMs: options.streamIdleTimeoutMs,
    heartbeatTimeoutMs: options.heartbeatTimeoutMs,
  });
  return typed(createServiceClient({ methods: tables.methods, transport, profile, headers: options.headers, callHeaders: options.callHeaders, tracing: options.tracing }));
}

/** createServiceClient builds one method per table entry, as ClientOf<M> describes them. */
export function typed<M extends MethodTable>(client: ServiceClient): ClientOf<M> {
  return client as unknown as ClientOf<M>;
}

export { coreProfileConfig };
