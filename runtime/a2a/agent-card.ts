/**
 * The public Agent Card (D17): served at /.well-known/agent-card.json with
 * `supportedInterfaces` filled from the bindings actually mounted, and HTTP
 * caching (ETag, Cache-Control, Last-Modified, 304 on If-None-Match), and
 * read for the policy every binding applies (capabilities, required
 * extensions).
 */
import { createHash } from "node:crypto";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Binding } from "../core/call-context.js";
import { httpErrorBody } from "../core/error-encoding.js";
import { RpcError } from "../core/errors.js";
import { httpErrors } from "../core/http/endpoint.js";
import { canonicalJson } from "../core/jcs.js";
import type { CoreRequest, CoreResponse } from "../core/transport.js";
import { A2AErrorTable } from "./errors.js";
import type { AgentPolicy } from "./policy.js";

export const agentCardPath = "/.well-known/agent-card.json";

/** One interface the server mounts, as `AgentInterface` JSON. */
export interface MountedInterface {
  readonly binding: Binding;
  /** Absolute URL for HTTP bindings, `host:port` for gRPC. */
  readonly url: string;
  /** The protocol version served there, when not the card's (a 0.3 interface beside 1.0's, D111). */
  readonly protocolVersion?: string;
}

/**
 * The card's ProtoJSON with `supportedInterfaces` replaced by the mounted
 * interfaces, in the order given (the first is the preferred one).
 */
export function withInterfaces(card: JsonObject, mounted: readonly MountedInterface[], protocolVersion: string): JsonObject {
  const tenantOf = (binding: Binding): string | undefined => {
    const declared = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : [];
    const found = declared.find((i) => typeof i === "object" && i !== null && !Array.isArray(i) && i.protocolBinding === binding) as JsonObject | undefined;
    return typeof found?.tenant === "string" && found.tenant !== "" ? found.tenant : undefined;
  };
  // A custom binding the agent serves elsewhere (spec 5.8) is its own to declare: kept, after these.
  const declared = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : [];
  const custom = declared.filter((i) => typeof i === "object" && i !== null && !Array.isArray(i) && typeof i.protocolBinding === "string" && !coreBindings.has(i.protocolBinding));
  return {
    ...card,
    supportedInterfaces: [
      ...mounted.map((m) => {
        // A 0.3 call names no tenant (D110): a tenant on its interface would promise one it never reaches.
        const tenant = m.protocolVersion === "0.3" ? undefined : tenantOf(m.binding);
        return { url: m.url, protocolBinding: m.binding, protocolVersion: m.protocolVersion ?? protocolVersion, ...(tenant === undefined ? {} : { tenant }) };
      }),
      ...custom,
    ],
  };
}

/** The bindings this server mounts itself; any other `protocolBinding` is a custom one. */
const coreBindings: ReadonlySet<string> = new Set(["JSONRPC", "HTTP+JSON", "GRPC"]);

/**
 * `withInterfaces`, and without the `signatures` the card came with when that changed it: they
 * covered the card as it was (D101), and over the card as served they would fail every verifier.
 * `beside` (0.3's fields, D111) changes the card too.
 */
export function withServedInterfaces(card: JsonObject, mounted: readonly MountedInterface[], protocolVersion: string, beside: JsonObject = {}): JsonObject {
  const rebuilt = withInterfaces(card, mounted, protocolVersion);
  const changed = Object.keys(beside).length > 0 || canonicalJson(rebuilt.supportedInterfaces ?? []) !== canonicalJson(card.supportedInterfaces ?? []);
  if (!changed || rebuilt.signatures === undefined) return rebuilt;
  const { signatures: _given, ...unsigned } = rebuilt;
  return unsigned;
}

/** The policy a card implies: its capabilities and its required extensions. */
export function policyOf(card: JsonObject): Pick<AgentPolicy, "capabilities" | "requiredExtensions" | "challenge"> {
  const caps = (card.capabilities ?? {}) as Record<string, JsonValue>;
  const extensions = Array.isArray(caps.extensions) ? caps.extensions : [];
  const challenge = challengeOf(card);
  return {
    ...(challenge === undefined ? {} : { challenge }),
    capabilities: {
      streaming: caps.streaming === true,
      pushNotifications: caps.pushNotifications === true,
      extendedAgentCard: caps.extendedAgentCard === true,
    },
    requiredExtensions: extensions
      .filter((e): e is JsonObject => typeof e === "object" && e !== null && !Array.isArray(e) && e.required === true)
      .map((e) => String(e.uri)),
  };
}

/**
 * The `WWW-Authenticate` challenges of the card's security schemes (RFC 9110 §11.6.1), one per
 * scheme HTTP has a challenge for: an HTTP scheme by its name (`Bearer`, `Basic`), OAuth 2 and
 * OpenID Connect as `Bearer` (RFC 6750); an API key or mutual TLS has none. Undefined with none.
 */
function challengeOf(card: JsonObject): string | undefined {
  const schemes = card.securitySchemes;
  if (typeof schemes !== "object" || schemes === null || Array.isArray(schemes)) return undefined;
  const challenges = new Set<string>();
  for (const scheme of Object.values(schemes)) {
    if (typeof scheme !== "object" || scheme === null || Array.isArray(scheme)) continue;
    const http = scheme.httpAuthSecurityScheme;
    if (typeof http === "object" && http !== null && !Array.isArray(http) && typeof http.scheme === "string" && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(http.scheme)) challenges.add(http.scheme);
    if (scheme.oauth2SecurityScheme !== undefined || scheme.openIdConnectSecurityScheme !== undefined) challenges.add("Bearer");
  }
  return challenges.size === 0 ? undefined : [...challenges].join(", ");
}

const { methodNotAllowed } = httpErrors(A2AErrorTable);

/**
 * Whether `url` is an absolute http(s) URL, as a card's URLs must be: `agent.example.com:8080`
 * parses as a URL of scheme "agent.example.com:", and a relative one names nothing a client can resolve.
 */
export function isAbsoluteHttpUrl(url: string): boolean {
  return /^https?:\/\/[^/]/i.test(url);
}

/**
 * Checks a card's `Cache-Control: max-age` before anything listens: `max-age=-1` or `max-age=NaN`
 * went out as written, which caches make nothing of (RFC 9111 §1.2.2: delta-seconds, a
 * non-negative integer). `option` is the name the caller knows it by.
 */
export function checkMaxAgeSeconds(value: number | undefined, option: string): void {
  if (value !== undefined && !(Number.isInteger(value) && value >= 0)) throw new Error(`${option} must be a whole number of seconds, 0 or more, got ${String(value)}`);
}

/**
 * GET and HEAD of one JSON document that never changes while it runs (the
 * card, the JWKS of its signing keys): its ETag is a hash of the bytes
 * served, signatures included, so a client revalidating gets 304 only for
 * the very same document. It answers at whatever path it is mounted; `path`
 * is where it is meant to be, named when a method is refused there.
 */
export function createStaticJsonEndpoint(path: string, document: JsonObject, options: { readonly maxAgeSeconds?: number; readonly contentType?: string } = {}) {
  const body = JSON.stringify(document);
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  const lastModified = new Date(Math.floor(Date.now() / 1000) * 1000).toUTCString();
  const headers = {
    "content-type": options.contentType ?? "application/json",
    etag,
    "last-modified": lastModified,
    "cache-control": `public, max-age=${options.maxAgeSeconds ?? 300}`,
  };
  return {
    handle(req: CoreRequest): CoreResponse {
      if (req.method !== "GET" && req.method !== "HEAD") {
        return { kind: "body", status: 405, headers: { "content-type": "application/json", allow: "GET, HEAD" }, body: JSON.stringify(httpErrorBody(new RpcError(methodNotAllowed, `${req.method} is not allowed on ${path}`))) };
      }
      const ifNoneMatch = req.header("if-none-match");
      // Weak comparison (RFC 9110 13.1.2): a proxy that compressed the card marks the tag weak (W/"...").
      if (ifNoneMatch !== null && ifNoneMatch.split(",").some((t) => t.trim().replace(/^W\//, "") === etag || t.trim() === "*")) {
        return { kind: "empty", status: 304, headers: { etag, "last-modified": lastModified, "cache-control": headers["cache-control"] } };
      }
      return req.method === "HEAD" ? { kind: "empty", status: 200, headers } : { kind: "body", status: 200, headers, body };
    },
  };
}
