/**
 * One call to serve an agent on all three bindings (spec 5.1): JSON-RPC and
 * HTTP+JSON on one node:http server under their base paths, gRPC on its own
 * port, the public Agent Card with `supportedInterfaces` filled from what is
 * mounted, and one policy (authentication, required extensions, capability
 * gating) applied identically everywhere. Imported as
 * "protoc-gen-a2a/runtime/server"; grpc-js, and the gRPC definition, are
 * imported only when gRPC is served, so `grpcPort: false` runs without
 * @grpc/grpc-js installed (D43).
 */
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { DescService, JsonObject } from "@bufbuild/protobuf";
import type { Server as GrpcServer, ServiceDefinition } from "@grpc/grpc-js";
import { keepAnswersWhole } from "../adapters/closing.js";
import { continueOnRead, createNodeListener } from "../adapters/node-http.js";
import { createHostGuard, type HostRefusal } from "../core/http/host-guard.js";
import type { Binding } from "../core/call-context.js";
import { httpErrorBody, jsonRpcErrorObject } from "../core/error-encoding.js";
import { RpcError } from "../core/errors.js";
import { checkGrpcOptions, type GrpcServerOptions, type HealthHandle, type ListenOptions } from "../core/grpc/server-options.js";
import { httpErrors } from "../core/http/endpoint.js";
import type { HttpRuleSpec, MethodSpec, RequiredFieldTable } from "../core/method-spec.js";
import type { CoreRequest, CoreResponse, Endpoint } from "../core/transport.js";
import type { Logger, OnError } from "../core/failures.js";
import { loadTracingApi, type TracingApi } from "../core/tracing.js";
import { Health } from "../gen/health/v1/health_pb.js";
import { agentCardPath, checkMaxAgeSeconds, isAbsoluteHttpUrl, createStaticJsonEndpoint, policyOf, type MountedInterface } from "./agent-card.js";
import { servedCard } from "./card-endpoint.js";
import { createCardSigner, defaultJwksPath, type CardSigner, type CardSigningOptions } from "./card-signing.js";
import { servedExtendedCardHandler } from "./extended-card.js";
import { A2AErrorTable } from "./errors.js";
import type { AgentPolicy } from "./policy.js";
import { createA2AHttpJsonEndpoint, createA2AJsonRpcEndpoint, withV03 } from "./endpoints.js";
import { createA2AProfile, type CompatOptions } from "./profile.js";
import { isHeaderUri, type VersionPolicy } from "./service-params.js";
import { settlesWithin } from "../core/settles-within.js";

export interface ServeOptions {
  /** Address to listen on. Default 127.0.0.1 (loopback only). */
  readonly host?: string;
  /** HTTP port for JSON-RPC, HTTP+JSON and the card; 0 picks a free one. Default 8080. */
  readonly port?: number;
  /** gRPC port; 0 picks a free one, false serves no gRPC. Default 50051. */
  readonly grpcPort?: number | false;
  /** Path of the JSON-RPC endpoint, or false for none. Default `/a2a/jsonrpc`. */
  readonly jsonRpcPath?: string | false;
  /** Base path of the HTTP+JSON routes, or false for none. Default `/a2a/rest`. */
  readonly httpJsonPath?: string | false;
  /** Order of `supportedInterfaces` in the card (first = preferred). Default JSON-RPC, HTTP+JSON, gRPC. */
  readonly interfaceOrder?: readonly Binding[];
  /** Base URL clients reach the HTTP server at, when it is not `http://host:port` (a proxy). */
  readonly publicUrl?: string;
  /** Address clients reach gRPC at (`host:port`), when it is not host and grpcPort. */
  readonly publicGrpcAddress?: string;
  /**
   * Host names (no port) the HTTP server answers to besides IP literals, `localhost` and
   * `publicUrl`'s host; any other `Host` is refused (421), so a page whose DNS name is rebound to
   * this machine cannot drive the agent (D119). `"any"` turns the check off.
   */
  readonly allowedHosts?: readonly string[] | "any";
  /** Origins (`https://app.example.com`) a browser request may come from besides the server's own (else 403, D119); `"any"` turns the check off. */
  readonly allowedOrigins?: readonly string[] | "any";
  readonly authenticate?: AgentPolicy["authenticate"];
  /** Hears of each unexpected handler failure on any binding (the client gets Internal). Default: `logger`. */
  readonly onError?: OnError;
  /** Where unexpected failures are logged without `onError`: pino, or any `{ error(obj, msg) }`. Default: one JSON line on stderr. */
  readonly logger?: Logger;
  /**
   * OpenTelemetry (D35): a server span per call on every binding. Default
   * `true`: `@opentelemetry/api` is loaded if it is installed (nothing is
   * traced and nothing loaded when it is not). `false` turns tracing off;
   * the API module itself (`import * as api from "@opentelemetry/api"`) is
   * used as given.
   */
  readonly tracing?: boolean | TracingApi;
  readonly versions?: VersionPolicy;
  readonly bodyLimit?: number;
  readonly heartbeatMs?: number;
  /** `Cache-Control: max-age` of the public card, in seconds. Default 300. */
  readonly cardMaxAgeSeconds?: number;
  /**
   * Signs the public card and every extended card GetExtendedAgentCard
   * answers (spec 8.4, D101) with each of `keys`, and serves their public
   * keys as a JWKS at `jwksPath` (default `/.well-known/jwks.json`).
   */
  readonly signing?: CardSigningOptions;
  /** How long close() lets open calls and streams finish before the handler ends them. Default 5000 ms. */
  readonly drainMs?: number;
  /** Most requests in one JSON-RPC batch (D31). Default 100. */
  readonly maxBatchSize?: number;
  /** How long slow clients are waited for (D32); each in milliseconds. */
  readonly timeouts?: ServerTimeouts;
  /** The gRPC server's settings, TLS, health service and reflection. */
  readonly grpc?: GrpcServeOptions;
  /** Older protocol versions served on the same endpoints beside 1.0 (D110). */
  readonly compat?: CompatOptions;
}

export type { CompatOptions } from "./profile.js";

/**
 * The gRPC side of serveAgent: createGrpcServer's settings (4 MiB message
 * limits both ways by default, keepalive, connection age), and:
 */
export interface GrpcServeOptions extends GrpcServerOptions {
  /** PEM TLS material. Without it gRPC is plaintext, like the HTTP server beside it: terminate TLS in front of both, or pass it here. */
  readonly tls?: ListenOptions["tls"];
  /**
   * The standard grpc.health.v1 service (npm `grpc-health-check`), SERVING
   * for "" and the service; NOT_SERVING as soon as close() starts draining.
   * Default off.
   */
  readonly health?: boolean;
  /**
   * gRPC server reflection (npm `@grpc/reflection`) describing the service's
   * proto file, its imports and the google.rpc error details (and, with
   * `health`, grpc.health.v1), so `buf curl` or grpcurl need no .proto
   * files. Default off.
   */
  readonly reflection?: boolean;
}

/** D32: what a client may take to send a request, and how long an idle connection is kept. */
export interface ServerTimeouts {
  /** Until the request's headers are in. Default 10,000. */
  readonly headersMs?: number;
  /** Until the whole request (headers and body) is in; never cuts a response or stream. Default 60,000. */
  readonly requestMs?: number;
  /** From when the body is first read until it is in (answered 408). Default 30,000. */
  readonly bodyMs?: number;
  /** An idle keep-alive connection is closed after this. Default 5,000. */
  readonly keepAliveMs?: number;
  /**
   * A gRPC connection with no call open is closed (GOAWAY) after this; its client reconnects at
   * its next call. Default 300,000. `grpc.maxConnectionIdleMs`, if given, is used instead.
   */
  readonly grpcIdleMs?: number;
}

/** D32's defaults. */
export const defaultServerTimeouts = { headersMs: 10_000, requestMs: 60_000, bodyMs: 30_000, keepAliveMs: 5_000, grpcIdleMs: 300_000 } as const satisfies Required<ServerTimeouts>;

/**
 * A generated grpc-js service definition (grpc-js's `ServiceDefinition`),
 * typed without grpc-js so that these types need no grpc-js to compile: an
 * agent served on the JSON bindings alone does not install it.
 */
export type GrpcDefinition = Readonly<Record<string, { readonly path: string; readonly requestStream: boolean; readonly responseStream: boolean }>>;

/** What generated code hands over: the service's tables and the handler. */
export interface ServeAgentConfig<H extends object> {
  readonly handler: H;
  /** The public Agent Card as ProtoJSON. */
  readonly card: JsonObject;
  readonly methods: Readonly<Record<string, MethodSpec>>;
  readonly jsonRpcMethods: Readonly<Record<string, MethodSpec>>;
  readonly rules: readonly HttpRuleSpec[];
  readonly required: RequiredFieldTable;
  /**
   * The gRPC definition, imported when gRPC is served (generated serve
   * functions pass `() => import("./x_grpc.js")...`); none for code generated
   * with `grpc=false`, which can only serve with `grpcPort: false`.
   */
  readonly loadGrpcDefinition?: () => Promise<GrpcDefinition>;
  /** The service's descriptor: what health reports and reflection describes (generated serve functions pass it). */
  readonly service?: DescService;
}

export interface AgentServer {
  /** Where the public card is served. */
  readonly cardUrl: string;
  readonly jsonRpcUrl: string | undefined;
  readonly httpJsonUrl: string | undefined;
  /** `host:port` of the gRPC server. */
  readonly grpcAddress: string | undefined;
  /** Where the public keys of `signing` are served, if they are. */
  readonly jwksUrl: string | undefined;
  /** The card as served, `supportedInterfaces` included. */
  readonly card: JsonObject;
  /**
   * Stops accepting calls, lets open ones finish (up to drainMs), then has the handler end the
   * rest (a task handler answers them with the task as it is and ends its streams) and cuts the
   * connections still open a second after that.
   */
  close(): Promise<void>;
}

// A path no binding serves: the router's own 404.
const { routeNotFound: nothingHere } = httpErrors(A2AErrorTable);

export async function serveAgent<H extends object>(config: ServeAgentConfig<H>, options: ServeOptions = {}): Promise<AgentServer> {
  const host = options.host ?? "127.0.0.1";
  const grpcOptions = options.grpc ?? {};
  // Before anything listens.
  if (options.grpcPort !== false && grpcOptions.reflection === true && config.service === undefined) {
    throw new Error("serveAgent: grpc.reflection needs the service descriptor (config.service), which generated serve functions pass");
  }
  if (options.grpcPort !== false && config.loadGrpcDefinition === undefined) {
    throw new Error(
      "serveAgent: this code was generated with grpc=false, so it cannot serve gRPC: pass `grpcPort: false`, " +
        "or remove grpc=false from the plugin's options in buf.gen.yaml (and install @grpc/grpc-js) to serve it",
    );
  }
  const v03 = options.compat?.v0_3 === true;
  if (v03) withV03(options.versions, "serveAgent: compat.v0_3");
  // The card's URLs and the host guard's own origin (D119) come from it: `agent.example.com:8080` parses as a URL of scheme "agent.example.com:".
  if (options.publicUrl !== undefined && !isAbsoluteHttpUrl(options.publicUrl)) {
    throw new Error(`serveAgent: publicUrl must be an absolute http(s) URL, e.g. "https://agent.example.com", got ${JSON.stringify(options.publicUrl)}`);
  }
  const timeouts = { ...defaultServerTimeouts, ...options.timeouts };
  for (const [name, ms] of Object.entries(timeouts)) {
    if (!(Number.isFinite(ms) && ms > 0)) throw new Error(`serveAgent: timeouts.${name} must be a number of milliseconds > 0, got ${ms}`);
  }
  if (timeouts.headersMs > timeouts.requestMs) throw new Error("serveAgent: timeouts.headersMs must not exceed timeouts.requestMs");
  checkMaxAgeSeconds(options.cardMaxAgeSeconds, "serveAgent: cardMaxAgeSeconds");
  // Before anything listens or loads, as the timeouts are.
  if (options.grpcPort !== false) checkGrpcOptions(grpcOptions.serverOptions, "serveAgent: grpc.serverOptions");
  // A task handler's store named by URL opens its database first (D73): one that cannot be reached fails the start.
  await readyOf(config.handler);
  // Before anything listens, too: grpc-js and the definition, when gRPC is served.
  const grpcParts =
    options.grpcPort === false || config.loadGrpcDefinition === undefined
      ? undefined
      : await Promise.all([import("../core/grpc/binding.js"), import("../core/grpc/server.js"), config.loadGrpcDefinition(), v03 ? import("./compat/v03-grpc.js") : undefined]);
  // The keys are checked (and sign once) before anything listens, too.
  const cardSchema = Object.values(config.methods).find((m) => m.name === "GetExtendedAgentCard")?.output;
  let signer: CardSigner | undefined;
  let jwksUrl: string | undefined;
  const jwksPath = options.signing?.jwksPath === undefined ? defaultJwksPath : options.signing.jwksPath;
  if (options.signing !== undefined) {
    if (cardSchema === undefined) throw new Error("serveAgent: signing needs the service's AgentCard message (the output of GetExtendedAgentCard), which this service has not");
    signer = await createCardSigner(cardSchema, options.signing, () => jwksUrl);
  }
  // The extended card lists the interfaces the public one does (D17), known once everything listens.
  let mounted: MountedInterface[] | undefined;
  const handler = cardSchema === undefined ? config.handler : servedExtendedCardHandler(config.handler, config.methods, cardSchema, { interfaces: () => mounted, signer });
  const jsonRpcPath = options.jsonRpcPath === undefined ? "/a2a/jsonrpc" : options.jsonRpcPath;
  const httpJsonPath = options.httpJsonPath === undefined ? "/a2a/rest" : options.httpJsonPath;
  const policy: AgentPolicy = policyOf(config.card);
  // Such a URI is left out of every request's extensions (D18), so each call would be refused as
  // not listing it, though the client did: said once here rather than on every call.
  const unlistable = policy.requiredExtensions?.find((uri) => !isHeaderUri(uri));
  if (unlistable !== undefined) {
    throw new Error(`serveAgent: the card requires the extension ${JSON.stringify(unlistable)}, which no client can list in A2A-Extensions: a URI there is printable ASCII (RFC 3986 §2); percent-encode the rest (RFC 3987 §3.1)`);
  }
  const tracing = options.tracing === false ? undefined : options.tracing === true || options.tracing === undefined ? await loadTracingApi() : options.tracing;
  // One policy, one version policy and one error table for every binding.
  const common = {
    required: config.required,
    handler,
    onError: options.onError,
    logger: options.logger,
    tracing,
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
    bodyTimeoutMs: timeouts.bodyMs,
  };
  // gRPC's, with the A2A profile.
  const shared = { ...common, profile: createA2AProfile({ policy, ...(options.versions === undefined ? {} : { versions: options.versions }) }), authenticate: options.authenticate };
  // The JSON bindings' are the generated endpoint factories' options (with 0.3's layer in front when compat is on, D110; gRPC's 0.3 service is below).
  const json = {
    ...common,
    policy: { ...policy, authenticate: options.authenticate },
    ...(options.versions === undefined ? {} : { versions: options.versions }),
    ...(options.compat === undefined ? {} : { compat: options.compat }),
  };
  const routes: { readonly path: string; readonly prefix: boolean; readonly core: Endpoint }[] = [];
  const routeOf = (path: string) => routes.find((r) => (r.prefix ? path === r.path || path.startsWith(`${r.path}/`) : path === r.path));
  if (jsonRpcPath !== false) {
    const batch = options.maxBatchSize === undefined ? {} : { maxBatchSize: options.maxBatchSize };
    routes.push({ path: jsonRpcPath, prefix: false, core: createA2AJsonRpcEndpoint({ ...json, ...batch, methods: config.jsonRpcMethods }) });
  }
  if (httpJsonPath !== false) {
    routes.push({ path: httpJsonPath, prefix: true, core: createA2AHttpJsonEndpoint({ ...json, methods: config.methods, rules: config.rules, basePath: httpJsonPath }) });
  }
  // The card is filled in once the ports are known; until then nothing is listening.
  let card: { handle(req: CoreRequest): CoreResponse; readonly json?: JsonObject } | undefined;
  const jwks = signer === undefined || jwksPath === false ? undefined : createStaticJsonEndpoint(jwksPath, signer.jwks as unknown as JsonObject, { contentType: "application/jwk-set+json", ...(options.cardMaxAgeSeconds === undefined ? {} : { maxAgeSeconds: options.cardMaxAgeSeconds }) });
  // The host it listens on (a name, say, that the card then names) and the public URL's; made again
  // with the port once it is known (the listen address's origin has it), before any request is read.
  const hostUrl = (port?: number) => `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}${port === undefined ? "" : `:${port}`}`;
  const guardFor = (port?: number) => createHostGuard(options, [hostUrl(port), ...(options.publicUrl === undefined ? [] : [options.publicUrl])]);
  let guard = guardFor();
  const listener = createNodeListener({
    async handle(req) {
      const path = req.url.split("?")[0] ?? "/";
      const refused = guard(req);
      if (refused !== undefined) return hostRefusal(refused, path === jsonRpcPath);
      if (path === agentCardPath && card !== undefined) return card.handle(req);
      if (path === jwksPath && jwks !== undefined) return jwks.handle(req);
      const route = routeOf(path);
      if (route !== undefined) return route.core.handle(req);
      return {
        kind: "body",
        status: 404,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(httpErrorBody(new RpcError(nothingHere, `nothing is served at ${path}`))),
      };
    },
    report: (err, url) => routeOf(url.split("?")[0] ?? "/")?.core.report?.(err, url),
  });
  const http = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      // node checks the first two only this often (default 30 s): a timeout is then late by at most a quarter of the shortest.
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(timeouts.headersMs / 4))),
    },
    listener,
  );
  // 100 Continue only for a body that is read: one over the limit is refused before the client sends it (D32).
  http.on("checkContinue", continueOnRead(listener));
  // close() lets an answer being sent reach its client whole (it cut one still in the socket's buffer).
  keepAnswersWhole(http);
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 8080, host, () => resolve());
  });
  const httpPort = (http.address() as AddressInfo).port;
  guard = guardFor(httpPort);
  const base = (options.publicUrl ?? hostUrl(httpPort)).replace(/\/+$/, "");
  if (jwks !== undefined) jwksUrl = `${base}${jwksPath}`;

  let grpc: GrpcServer | undefined;
  let grpcAddress: string | undefined;
  let health: HealthHandle | undefined;
  if (grpcParts !== undefined) {
    const [{ addGrpcService }, { addHealthService, addReflectionService, createGrpcServer, listenGrpc }, definition, compat] = grpcParts;
    const server = createGrpcServer({ maxConnectionIdleMs: timeouts.grpcIdleMs, ...grpcOptions });
    // Its one port is TLS or not (listenGrpc below): the default port of a span's authority without one (D35).
    const secure = grpcOptions.tls !== undefined;
    try {
      addGrpcService(server, { ...shared, secure, definition: definition as ServiceDefinition, methods: config.methods });
      if (compat !== undefined) {
        // D113: 0.3's a2a.v1.A2AService beside it, the same handler behind; a call without a2a-version is 0.3 there.
        const profile = createA2AProfile({ policy, versions: { supported: ["0.3"] } });
        const v03Handler = compat.createV03GrpcHandler({ handler, methods: config.methods, card: () => card?.json ?? config.card, authenticate: options.authenticate });
        addGrpcService(server, { ...shared, secure, profile, required: {}, handler: v03Handler, definition: compat.v03GrpcDefinition, methods: compat.v03GrpcMethods });
      }
      const service = config.service;
      // 0.3's service is reported and described beside 1.0's, so a 0.3 caller can probe and reflect it too.
      const services = service === undefined ? [] : compat === undefined ? [service] : [service, compat.v03GrpcService];
      if (grpcOptions.health === true) health = addHealthService(server, { services: services.map((s) => s.typeName) });
      if (grpcOptions.reflection === true && service !== undefined) {
        // With health on, reflection describes it too, so `buf curl --reflect` can call Health/Check.
        const described = grpcOptions.health === true ? [...services, Health] : services;
        addReflectionService(server, described.map((s) => s.file), { services: described.map((s) => s.typeName) });
      }
      const port = await listenGrpc(server, {
        host,
        port: typeof options.grpcPort === "number" ? options.grpcPort : 50051,
        ...(grpcOptions.tls === undefined ? { insecure: true } : { tls: grpcOptions.tls }),
      });
      grpc = server;
      grpcAddress = options.publicGrpcAddress ?? `${host}:${port}`;
    } catch (err) {
      // A port in use, a missing optional package, bad TLS material: nothing is left listening.
      server.forceShutdown();
      await closeHttp(http, 0);
      throw err;
    }
  }

  const listening: MountedInterface[] = [];
  for (const binding of options.interfaceOrder ?? ["JSONRPC", "HTTP+JSON", "GRPC"]) {
    if (binding === "JSONRPC" && jsonRpcPath !== false) listening.push({ binding, url: `${base}${jsonRpcPath}` });
    if (binding === "HTTP+JSON" && httpJsonPath !== false) listening.push({ binding, url: `${base}${httpJsonPath}` });
    if (binding === "GRPC" && grpcAddress !== undefined) listening.push({ binding, url: grpcAddress });
  }
  // D111: the same URLs again as 0.3 interfaces, after the 1.0 ones.
  if (v03) listening.push(...listening.map((m) => ({ ...m, protocolVersion: "0.3" })));
  mounted = listening;
  let served: JsonObject;
  try {
    served = await servedCard(config.card, mounted, { v03, signer });
  } catch (err) {
    grpc?.forceShutdown();
    await closeHttp(http, 0);
    throw err;
  }
  card = { ...createStaticJsonEndpoint(agentCardPath, served, options.cardMaxAgeSeconds === undefined ? {} : { maxAgeSeconds: options.cardMaxAgeSeconds }), json: served };

  const drainMs = options.drainMs ?? 5000;
  return {
    cardUrl: `${base}${agentCardPath}`,
    jsonRpcUrl: jsonRpcPath === false ? undefined : `${base}${jsonRpcPath}`,
    httpJsonUrl: httpJsonPath === false ? undefined : `${base}${httpJsonPath}`,
    grpcAddress,
    jwksUrl,
    card: served,
    close: () => {
      // Health checkers stop routing here before the calls in flight finish.
      health?.setAll("NOT_SERVING");
      const done = shutDown(http, grpc, config.handler, drainMs);
      // The server takes no new call now: a Watch, told NOT_SERVING, ends instead of holding the drain.
      health?.endWatches();
      return done;
    },
  };
}

/** How long the answers a handler's close() gives (below) have to go out before their connections are cut. */
const answerGraceMs = 1000;

/**
 * Stops accepting calls and lets the open ones finish, for `drainMs`. What is still open then is
 * ended by the handler first, when it has a close() (the task handler's aborts its executors,
 * answers a waiting caller with the task as it is and ends every stream, D25), so its clients get
 * an answer or a stream's end rather than a cut connection; the connections still open a second
 * later are cut. A handler's close() that has not resolved by then holds this one's, as it did.
 */
async function shutDown(http: HttpServer, grpc: GrpcServer | undefined, handler: object, drainMs: number): Promise<void> {
  const transports = Promise.all([closeHttp(http, undefined), grpc === undefined ? undefined : closeGrpc(grpc)]);
  if (await settlesWithin(transports, drainMs)) {
    await closeHandler(handler);
    return;
  }
  const handlerClosed = closeHandler(handler);
  // A handler with nothing to end (no close()) has no answers to wait for.
  if (handlerClosed !== undefined) await settlesWithin(Promise.all([handlerClosed, transports]), answerGraceMs);
  http.closeAllConnections();
  grpc?.forceShutdown();
  // A connection that never sent HTTP/2's preface (a TCP probe, a stalled client) is left open by
  // node's http2, and so by grpc-js's forceShutdown, until its peer closes it: close() does not wait
  // for it, or it would never resolve.
  await settlesWithin(transports, answerGraceMs);
  await handlerClosed;
}

/** Waits for a handler with a ready() (the task handler's); a failure closes it and fails the start. */
async function readyOf(handler: object): Promise<void> {
  const ready = (handler as { ready?: unknown }).ready;
  if (typeof ready !== "function") return;
  try {
    await ready.call(handler);
  } catch (err) {
    await closeHandler(handler)?.catch(() => undefined);
    throw err;
  }
}

/** A handler with a close() (the task handler's) is closed with the server. */
function closeHandler(handler: object): Promise<void> | undefined {
  const close = (handler as { close?: unknown }).close;
  return typeof close === "function" ? Promise.resolve(close.call(handler)).then(() => undefined) : undefined;
}

/** Stops accepting; resolves once every connection ended, which `forceMs` later is forced (undefined: the caller forces it). */
function closeHttp(server: HttpServer, forceMs: number | undefined): Promise<void> {
  return new Promise((resolve) => {
    const force = forceMs === undefined ? undefined : setTimeout(() => server.closeAllConnections(), forceMs);
    // A call answered after this says `connection: close` (the node adapter, D115), so its
    // connection ends once the answer is out and does not hold close() for its keep-alive timeout.
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    // Keep-alive connections with no request in flight would hold close() open.
    server.closeIdleConnections();
  });
}

/** Stops accepting gRPC calls; resolves once every call ended (shutDown forces the rest). */
function closeGrpc(server: GrpcServer): Promise<void> {
  return new Promise((resolve) => server.tryShutdown(() => resolve()));
}

/**
 * The answer to a request the host guard refused (D119): on the JSON-RPC path a JSON-RPC error
 * (PermissionDenied, id null), which its clients read with its message, else the AIP-193 body.
 */
function hostRefusal(refused: HostRefusal, jsonRpc: boolean): CoreResponse {
  // The body's code is the HTTP status sent (421 or 403), as AIP-193 has it.
  const error = new RpcError({ ...A2AErrorTable.PermissionDenied, httpStatus: refused.status }, refused.message);
  const body = jsonRpc ? { jsonrpc: "2.0", id: null, error: jsonRpcErrorObject(error) } : httpErrorBody(error);
  return { kind: "body", status: refused.status, headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}
