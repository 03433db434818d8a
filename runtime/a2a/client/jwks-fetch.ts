/**
 * JWKS documents named by a card signature's `jku` (D101). The URL comes from
 * the card, a document from elsewhere, so it is fetched only through the SSRF
 * guard push notifications use (addresses inside the network refused unless
 * `allow` names them, checked again in the socket's own DNS lookup, no
 * redirects), within a time and size limit, and kept for `cacheMs` (64 at
 * most; a kept one is fetched again for a key it lacks once `cooldownMs` has
 * passed since it was fetched, as jose's remote JWKS does).
 */
import type { LookupFunction } from "node:net";
import { Agent, request } from "undici";
import { createPushGuard, PushGuardError } from "../tasks/push-guard.js";
import type { Jwk } from "../card-signing.js";

export interface JwksFetchOptions {
  /** Destinations inside the network a JWKS may be fetched from: host names, addresses, CIDRs. */
  readonly allow?: readonly string[];
  /** How long a fetched JWKS is used. Default 300,000 ms. */
  readonly cacheMs?: number;
  /**
   * A kept JWKS without the key a signature names (the agent rotated) is fetched again once this
   * long has passed since it was fetched. Default 30,000 ms.
   */
  readonly cooldownMs?: number;
  /** How long a fetch may take, the SSRF guard's DNS lookup of its host included. Default 5,000 ms. */
  readonly timeoutMs?: number;
  /** The largest JWKS read. Default 65,536 bytes. */
  readonly maxBytes?: number;
  /**
   * How a JWKS host's name is resolved, for the SSRF check and the connection alike: a socket
   * `lookup` (node:net's LookupFunction; it is asked for every address). Default node:dns's.
   */
  readonly lookup?: LookupFunction;
}

/** A JWKS that could not be had; the message says why. */
export class JwksFetchError extends Error {
  override readonly name = "JwksFetchError";
}

export interface JwksFetcher {
  /**
   * The keys of the JWKS at `url`. With `usable`, a kept JWKS without a key it takes is fetched
   * again (a rotation), at most once per `cooldownMs`, as jose's remote JWKS does on no match. `signal` ends this caller's wait at once (it
   * rejects with the signal's reason); a fetch no caller waits for any more is aborted, one
   * another caller still waits for goes on within `timeoutMs`.
   */
  keys(url: string, usable?: (key: Jwk) => boolean, signal?: AbortSignal): Promise<readonly Jwk[]>;
}

/** How many JWKS are kept: a card names its jku, so a hostile agent could name a new one per answer. */
const maxKept = 64;

export function createJwksFetcher(options: JwksFetchOptions = {}): JwksFetcher {
  const cacheMs = options.cacheMs ?? 300_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxBytes = options.maxBytes ?? 65_536;
  const guard = createPushGuard(options.allow, "JWKS", options.lookup);
  let agent: Agent | undefined;
  const cooldownMs = options.cooldownMs ?? 30_000;
  interface Kept {
    readonly fetchedAt: number;
    readonly until: number;
    readonly keys: Promise<readonly Jwk[]>;
    /** Aborts the fetch; called when every caller that waited for it has left. */
    readonly abort: (reason: unknown) => void;
    /** Callers waiting with a signal; a caller without one waits to the end (`held`). */
    waiting: number;
    held: boolean;
    settled: boolean;
  }
  const cache = new Map<string, Kept>();

  /** Fetches `url` and keeps it, at once, so calls that come meanwhile share the fetch. */
  function fetchInto(url: string, now: number): Kept {
    for (const [kept, entry] of cache) if (entry.until <= now) cache.delete(kept);
    cache.delete(url);
    if (cache.size >= maxKept) cache.delete(cache.keys().next().value as string);
    const controller = new AbortController();
    const keys = fetchKeys(url, controller.signal);
    const abort = (reason: unknown) => {
      // Gone from the cache at once: a caller that comes next fetches anew rather than share an aborted fetch.
      if (cache.get(url) === entry) cache.delete(url);
      controller.abort(reason);
    };
    const entry: Kept = { fetchedAt: now, until: now + cacheMs, keys, abort, waiting: 0, held: false, settled: false };
    cache.set(url, entry);
    keys.then(
      () => {
        entry.settled = true;
      },
      () => {
        entry.settled = true;
        // A failure is not kept: the next card tries again.
        if (cache.get(url) === entry) cache.delete(url);
      },
    );
    return entry;
  }

  /** The entry's keys, for as long as `signal` lets this caller wait. */
  function waitFor(entry: Kept, signal: AbortSignal | undefined): Promise<readonly Jwk[]> {
    if (signal === undefined) {
      entry.held = true;
      return entry.keys;
    }
    if (signal.aborted) return Promise.reject(signal.reason);
    if (entry.settled) return entry.keys;
    entry.waiting++;
    return new Promise((resolve, reject) => {
      const leave = () => {
        entry.waiting--;
        if (entry.waiting === 0 && !entry.held && !entry.settled) entry.abort(signal.reason);
        reject(signal.reason);
      };
      signal.addEventListener("abort", leave, { once: true });
      entry.keys.then(
        (keys) => {
          signal.removeEventListener("abort", leave);
          entry.waiting--;
          resolve(keys);
        },
        (err: unknown) => {
          signal.removeEventListener("abort", leave);
          entry.waiting--;
          reject(err);
        },
      );
    });
  }

  async function fetchKeys(url: string, abort: AbortSignal): Promise<readonly Jwk[]> {
    // The time bound covers the DNS lookup too: a resolver that never answers held the fetch (and
    // every verify sharing it, a caller without a signal for good) past timeoutMs.
    const signal = AbortSignal.any([abort, AbortSignal.timeout(timeoutMs)]);
    // Refused before any connection; a name is checked again at connect time.
    try {
      await guard.check(url, signal);
    } catch (err) {
      if (err instanceof PushGuardError || abort.aborted) throw err;
      throw new JwksFetchError(`the JWKS at ${url} was not fetched: the DNS lookup of its host did not answer within ${timeoutMs} ms (jwks.timeoutMs)`, { cause: err });
    }
    agent ??= new Agent({ connect: { lookup: guard.lookup } });
    let text = "";
    try {
      // reset: the connection closes after the answer; a JWKS is fetched rarely, and a kept socket would hold a short-lived client's process open.
      const response = await request(url, { dispatcher: agent, reset: true, headers: { accept: "application/jwk-set+json, application/json" }, signal });
      if (response.statusCode !== 200) {
        await response.body.dump().catch(() => undefined);
        throw new JwksFetchError(`the JWKS at ${url} answered HTTP ${response.statusCode}`);
      }
      let size = 0;
      const chunks: Buffer[] = [];
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxBytes) {
          response.body.destroy();
          throw new JwksFetchError(`the JWKS at ${url} is larger than ${maxBytes} bytes`);
        }
        chunks.push(chunk);
      }
      text = Buffer.concat(chunks).toString("utf8");
    } catch (err) {
      if (err instanceof JwksFetchError) throw err;
      throw new JwksFetchError(`the JWKS at ${url} could not be fetched: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new JwksFetchError(`the JWKS at ${url} is not JSON`);
    }
    const keys = (json as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new JwksFetchError(`the JWKS at ${url} has no "keys" array`);
    return keys.filter((k): k is Jwk => typeof k === "object" && k !== null && typeof (k as { kty?: unknown }).kty === "string");
  }

  return {
    async keys(url, usable, signal) {
      const cached = cache.get(url);
      const entry = cached === undefined || cached.until <= Date.now() ? fetchInto(url, Date.now()) : cached;
      const kept = await waitFor(entry, signal);
      if (usable === undefined || cached === undefined || entry !== cached || kept.some(usable)) return kept;
      // Another call may have fetched it again meanwhile: that one is used.
      const current = cache.get(url);
      if (current !== undefined && current !== cached) return waitFor(current, signal);
      const later = Date.now();
      return later - cached.fetchedAt < cooldownMs ? kept : waitFor(fetchInto(url, later), signal);
    },
  };
}
