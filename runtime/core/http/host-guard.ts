/**
 * Who may address this server from a browser (D119). A page whose DNS name
 * is rebound to 127.0.0.1 is, for the browser, same-origin with a local
 * agent: it may send JSON with any header and read the answers. What gives
 * it away is the name it uses, in `Host` (and `Origin`). So a request is
 * refused when its `Host` names a host that is neither an IP literal,
 * `localhost` (or a name under it), the host the server listens on or is
 * reached at (its public URL), nor one listed; and when it carries an
 * `Origin` (browsers only) other than its own `Host`'s, the server's own
 * or one listed: this server sends no CORS headers, so no page of another
 * origin has any business here.
 */
import { isIP } from "node:net";
import type { CoreRequest } from "../transport.js";

export interface HostGuardOptions {
  /**
   * Host names (no port) a request's `Host` may name besides IP literals, `localhost` and the public
   * URL's host; `"any"` turns the check off (a server behind a proxy that checks it).
   */
  readonly allowedHosts?: readonly string[] | "any";
  /**
   * Origins (`https://app.example.com`) a browser request may come from besides the server's own;
   * `"any"` turns the check off.
   */
  readonly allowedOrigins?: readonly string[] | "any";
}

/** Why a request is refused: its HTTP status (421, 403) and what to tell its client. */
export interface HostRefusal {
  readonly status: number;
  readonly message: string;
}

/** The refusal of a request that fails the guard, or undefined for one that passes. */
export type HostGuard = (req: Pick<CoreRequest, "header">) => HostRefusal | undefined;

/** The host name of a `Host` value (`name:port`, `[v6]:port`), lower-cased, without a trailing dot. */
function hostName(host: string): string {
  const name = host.startsWith("[") ? host.slice(1, host.indexOf("]") < 0 ? undefined : host.indexOf("]")) : host.split(":")[0] ?? "";
  return name.toLowerCase().replace(/\.$/, "");
}

/**
 * The guard for a server reached at `urls` (its listen URL and public URL: their hosts are
 * allowed, their origins are its own), with the listed hosts and origins.
 */
export function createHostGuard(options: HostGuardOptions, urls: readonly string[] = []): HostGuard {
  const own = urls.map((u) => new URL(u));
  const hosts = options.allowedHosts === "any" ? undefined : new Set(["localhost", ...(options.allowedHosts ?? []).map(hostName), ...own.map((u) => hostName(u.host))]);
  const origins =
    options.allowedOrigins === "any" ? undefined : new Set([...(options.allowedOrigins ?? []), ...own.map((u) => u.origin)].map((o) => o.toLowerCase().replace(/\/+$/, "")));
  // The Host every request of a client sends: checked once.
  let passed: string | undefined;
  return (req) => {
    const host = req.header("host");
    if (hosts !== undefined && host !== null && host !== passed) {
      const name = hostName(host);
      // *.localhost is loopback by RFC 6761, and browsers resolve it so themselves: it cannot be rebound.
      if (isIP(name) === 0 && !hosts.has(name) && !name.endsWith(".localhost")) {
        return { status: 421, message: `this agent does not answer to the host ${JSON.stringify(name)}: add it to the server's allowedHosts (a DNS rebinding guard, D119)` };
      }
      passed = host;
    }
    const origin = req.header("origin");
    if (origins === undefined || origin === null) return undefined;
    const from = origin.toLowerCase();
    if (origins.has(from)) return undefined;
    // Same origin: the page's own server (its Host passed above).
    if (host !== null && from !== "null") {
      try {
        if (new URL(from).host === host.toLowerCase()) return undefined;
      } catch {
        // Not a URL: refused below.
      }
    }
    return { status: 403, message: `requests from pages of another origin (${origin}) are refused: add it to the server's allowedOrigins (D119)` };
  };
}
