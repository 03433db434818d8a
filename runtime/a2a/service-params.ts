/**
 * A2A service parameters (spec 3.2.6): `A2A-Version` and `A2A-Extensions`,
 * read the same way on every binding. HTTP headers and gRPC metadata both
 * arrive here as a WHATWG Headers (names case-insensitive).
 */

// Clients send the same few version strings on every request.
const majorMinorCache = new Map<string, string | undefined>();

/** Major.Minor of a version string: patch numbers never count (spec 3.6). */
export function majorMinor(version: string): string | undefined {
  if (majorMinorCache.has(version)) return majorMinorCache.get(version);
  const m = /^\s*(\d+)\.(\d+)(?:\.\d+)?\s*$/.exec(version);
  const result = m === null ? undefined : `${Number(m[1])}.${Number(m[2])}`;
  // Bounded: the strings come from clients.
  if (majorMinorCache.size < 64) majorMinorCache.set(version, result);
  return result;
}

/**
 * Major.Minor of an `A2A-Version` value, which several header lines (or
 * metadata entries) make a comma-joined list: the entries must agree.
 */
export function majorMinorOfValue(value: string): string | undefined {
  if (!value.includes(",")) return majorMinor(value);
  let agreed: string | undefined;
  for (const entry of value.split(",")) {
    // An empty list element is no version (RFC 9110 5.6.1: recipients ignore them).
    if (entry.trim() === "") continue;
    const version = majorMinor(entry);
    if (version === undefined || (agreed !== undefined && version !== agreed)) return undefined;
    agreed = version;
  }
  return agreed;
}

export interface VersionPolicy {
  /** Versions served, as Major.Minor, e.g. `["1.0"]`. */
  readonly supported: readonly string[];
  /**
   * Spec 3.6.2 says a missing or empty A2A-Version means 0.3. When true, a
   * missing version is taken as the newest supported one instead (D5 option).
   */
  readonly acceptMissing?: boolean;
}

export type VersionResult =
  | { readonly ok: true; readonly version: string }
  | { readonly ok: false; readonly requested: string; readonly message: string };

/**
 * Decision D5: the header wins over a `?A2A-Version=` query value; missing or
 * empty means 0.3 unless the policy accepts it; compare Major.Minor only.
 */
export function negotiateVersion(header: string | null, query: string | null, policy: VersionPolicy): VersionResult {
  const raw = header !== null && header.trim() !== "" ? header : query !== null && query.trim() !== "" ? query : null;
  const newest = newestOf(policy.supported);
  if (raw === null && policy.acceptMissing === true && newest !== undefined) return { ok: true, version: newest };
  const requested = raw === null ? "0.3" : raw.trim();
  const version = majorMinorOfValue(requested);
  if (version !== undefined && policy.supported.includes(version)) return { ok: true, version };
  const several = version === undefined && requested.includes(",");
  // Shown within a bound: an 8 KB value came back three times over (message, grpc-message, details).
  const shown = requested.length > maxShownVersion ? `${requested.slice(0, maxShownVersion)}…` : requested;
  return {
    ok: false,
    requested,
    // Says what to send: most callers that get here sent no version at all (D5: that is 0.3).
    message: several
      ? `A2A-Version names several versions (${shown}); send one of ${policy.supported.join(", ")}, once`
      : `Protocol version ${shown} is not supported. Supported: ${policy.supported.join(", ")}. Send A2A-Version: ${newest ?? "1.0"} with each request`,
  };
}

/** How much of a refused A2A-Version a refusal repeats. */
const maxShownVersion = 64;

/** The newest of `versions` by Major.Minor, wherever it stands in the list (0.3 is listed after 1.0 with compat on). */
function newestOf(versions: readonly string[]): string | undefined {
  const key = (v: string) => v.split(".").map(Number);
  return versions.reduce<string | undefined>((best, v) => {
    if (best === undefined) return v;
    const [a = 0, b = 0] = key(v);
    const [c = 0, d = 0] = key(best);
    return a > c || (a === c && b > d) ? v : best;
  }, undefined);
}

/**
 * `A2A-Extensions`: comma-separated URIs, possibly over several header lines (joined by Headers).
 * One that is not printable ASCII is no URI (RFC 3986 §2: IRIs are sent percent-encoded) and is
 * left out: node reads a header's bytes as latin1, so UTF-8 reached the handler as mojibake.
 */
export function parseExtensions(value: string | null): string[] {
  if (value === null) return [];
  const seen = new Set<string>();
  for (const part of value.split(",")) {
    const uri = part.trim();
    if (uri !== "" && isHeaderUri(uri)) seen.add(uri);
  }
  return [...seen];
}

/** Whether an extension URI can be listed in `A2A-Extensions` (and read back as sent): printable ASCII, no space. */
export function isHeaderUri(uri: string): boolean {
  return printableAscii.test(uri);
}

const printableAscii = /^[\x21-\x7e]+$/;
