/**
 * The A2A service's JSON endpoints: the core's binding with the A2A profile
 * (D21) and, with `compat.v0_3`, the 0.3 layer in front of it (D110). What the
 * generated `create<A2AService>JsonRpcEndpoint` and `...HttpJsonEndpoint`
 * return and what serveA2AService mounts, so an endpoint mounted in an
 * express, fastify, Hono or node:http app of its own answers 0.3 callers as
 * the one-call server does.
 */
import { defaultBodyLimit, defaultBodyTimeoutMs } from "../core/defaults.js";
import { createHttpJsonEndpoint } from "../core/http/endpoint.js";
import { createJsonRpcEndpoint } from "../core/jsonrpc/endpoint.js";
import type { HttpRuleSpec, MethodSpec, RequiredFieldTable } from "../core/method-spec.js";
import type { Endpoint } from "../core/transport.js";
import { createV03HttpJsonEndpoint } from "./compat/v03-http.js";
import { createV03JsonRpcEndpoint } from "./compat/v03-jsonrpc.js";
import { withA2AProfile, type A2AHttpJsonOptions, type A2AJsonOptions, type A2AJsonRpcOptions } from "./profile.js";
import type { VersionPolicy } from "./service-params.js";

/** The generated tables and the handler, beside the options a caller gave. */
interface ServiceTables<H extends object> {
  readonly required: RequiredFieldTable;
  readonly handler: H;
}

export interface A2AJsonRpcEndpointConfig<H extends object> extends A2AJsonRpcOptions, ServiceTables<H> {
  /** The generated JSON-RPC dispatch table. */
  readonly methods: Readonly<Record<string, MethodSpec>>;
}

export interface A2AHttpJsonEndpointConfig<H extends object> extends A2AHttpJsonOptions, ServiceTables<H> {
  /** The generated method table and google.api.http rules: the 1.0 routes, which 0.3's are translated onto too. */
  readonly methods: Readonly<Record<string, MethodSpec>>;
  readonly rules: readonly HttpRuleSpec[];
}

export function createA2AJsonRpcEndpoint<H extends object>(config: A2AJsonRpcEndpointConfig<H>): Endpoint {
  const { compat, ...options } = config;
  if (compat?.v0_3 !== true) return createJsonRpcEndpoint(withA2AProfile(options));
  const core = createJsonRpcEndpoint(withA2AProfile({ ...options, versions: withV03(options.versions, "compat.v0_3") }));
  return createV03JsonRpcEndpoint(core, bodyOf(options));
}

export function createA2AHttpJsonEndpoint<H extends object>(config: A2AHttpJsonEndpointConfig<H>): Endpoint {
  const { compat, ...options } = config;
  if (compat?.v0_3 !== true) return createHttpJsonEndpoint(withA2AProfile(options));
  const core = createHttpJsonEndpoint(withA2AProfile({ ...options, versions: withV03(options.versions, "compat.v0_3") }));
  // The core reads its base path without a trailing slash; 0.3's routes are under the same one.
  const basePath = (options.basePath ?? "").replace(/\/+$/, "");
  return createV03HttpJsonEndpoint(core, { ...bodyOf(options), basePath, methods: options.methods, rules: options.rules });
}

/**
 * The versions a JSON endpoint with 0.3 on takes: the given ones and 0.3, which only the compat
 * layer in front hands it (D110). `versions.acceptMissing` reads a request without A2A-Version as
 * the newest, where 0.3 reads it as 0.3 (spec 3.6.2): refused, naming `option`.
 */
export function withV03(versions: VersionPolicy | undefined, option: string): VersionPolicy {
  if (versions?.acceptMissing === true) {
    throw new Error(`${option} reads a request without A2A-Version as 0.3 (spec 3.6.2), and versions.acceptMissing as the newest: choose one`);
  }
  return { ...versions, supported: [...(versions?.supported ?? ["1.0"]), "0.3"] };
}

/** The 1.0 endpoint's body limit and timeout, which the compat layer applies while it reads the body. */
function bodyOf(options: A2AJsonOptions & { readonly bodyLimit?: number; readonly bodyTimeoutMs?: number }) {
  return { bodyLimit: options.bodyLimit ?? defaultBodyLimit, bodyTimeoutMs: options.bodyTimeoutMs ?? defaultBodyTimeoutMs };
}
