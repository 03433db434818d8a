/**
 * The SSRF guard of push notifications (spec section 13.2). A push URL comes
 * from a client, so without it an agent would POST wherever a caller asks,
 * its own network and cloud metadata endpoints included. The guard judges
 * addresses, not names: a name is judged by every address it resolves to,
 * and the same judgement runs inside the socket's own DNS lookup, so a name
 * that resolves differently at connect time (DNS rebinding) is refused there.
 */
import { lookup as lookupCallback, type LookupAddress } from "node:dns";
import { BlockList, isIP, type LookupFunction } from "node:net";

/** A refusal by the guard; never worth retrying, as the next attempt would be refused the same. */
export class PushGuardError extends Error {
  override readonly name = "PushGuardError";
}

type Family = "ipv4" | "ipv6";

// One BlockList per reason, so a refusal can say why. BlockList matches an
// IPv4-mapped IPv6 address (::ffff:127.0.0.1, ::ffff:7f00:1) against the
// IPv4 rules itself, which covers the mapped forms of every IPv4 row.
const forbidden: readonly (readonly [reason: string, rules: readonly (readonly [string, number, Family])[]])[] = [
  ["unspecified", [["0.0.0.0", 8, "ipv4"], ["::", 128, "ipv6"]]],
  ["loopback", [["127.0.0.0", 8, "ipv4"], ["::1", 128, "ipv6"]]],
  ["private (RFC 1918)", [["10.0.0.0", 8, "ipv4"], ["172.16.0.0", 12, "ipv4"], ["192.168.0.0", 16, "ipv4"]]],
  ["shared address space (CGNAT, RFC 6598)", [["100.64.0.0", 10, "ipv4"]]],
  ["link-local", [["169.254.0.0", 16, "ipv4"], ["fe80::", 10, "ipv6"]]],
  ["unique-local or site-local", [["fc00::", 7, "ipv6"], ["fec0::", 10, "ipv6"]]],
  ["multicast", [["224.0.0.0", 4, "ipv4"], ["ff00::", 8, "ipv6"]]],
  // 240/4 is reserved and ends in the limited broadcast 255.255.255.255; the others are the IETF's
  // protocol assignments, the benchmarking range labs use inside their networks, and IPv6's
  // discard prefix (RFC 6890, 6666). The documentation ranges (192.0.2.0/24, 2001:db8::/32, ...)
  // reach nothing and are left to fail on their own, as tests' and examples' addresses do.
  [
    "reserved, broadcast or not routed",
    [
      ["240.0.0.0", 4, "ipv4"],
      ["192.0.0.0", 24, "ipv4"],
      ["198.18.0.0", 15, "ipv4"],
      ["100::", 64, "ipv6"],
    ],
  ],
  // Prefixes that carry or tunnel to an IPv4 address in ways the embedded address cannot be judged
  // by: Teredo (its client address is obfuscated) and local-use NAT64 (RFC 8215), whose translator
  // is the operator's own.
  ["an IPv4 tunnel or local translator", [["2001::", 32, "ipv6"], ["64:ff9b:1::", 48, "ipv6"]]],
];

/**
 * The IPv4 address an IPv6 address stands for, where its prefix says so: NAT64's well-known
 * 64:ff9b::/96 (RFC 6052; what DNS64 answers for a name with only an A record), 6to4's 2002::/16,
 * the deprecated IPv4-compatible ::/96 and the IPv4-translated ::ffff:0:0:0/96. (IPv4-mapped
 * ::ffff:0:0/96 BlockList judges itself.) Such an address reaches that IPv4 address, so it is
 * judged as it.
 */
export function embeddedIpv4(address: string): string | undefined {
  const words = ipv6Words(address);
  if (words === undefined) return undefined;
  const zero = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  let high: number;
  let low: number;
  if (words[0] === 0x64 && words[1] === 0xff9b && zero(2, 6)) [high, low] = [words[6]!, words[7]!];
  else if (words[0] === 0x2002) [high, low] = [words[1]!, words[2]!];
  else if (zero(0, 6) && (words[6] !== 0 || words[7]! > 1)) [high, low] = [words[6]!, words[7]!];
  else if (zero(0, 4) && words[4] === 0xffff && words[5] === 0) [high, low] = [words[6]!, words[7]!];
  else return undefined;
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The eight 16-bit words of an IPv6 address (with `::` and a dotted IPv4 tail), or undefined. */
function ipv6Words(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.toLowerCase();
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const part = (s: string) => (s === "" ? [] : s.split(":").map((w) => parseInt(w, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined;
  return [...left, ...new Array<number>(missing).fill(0), ...right];
}

const forbiddenLists = forbidden.map(([reason, rules]) => {
  const list = new BlockList();
  for (const [network, prefix, family] of rules) list.addSubnet(network, prefix, family);
  return [reason, list] as const;
});

function familyOf(address: string): Family | undefined {
  const version = isIP(address);
  return version === 4 ? "ipv4" : version === 6 ? "ipv6" : undefined;
}

/** URL hosts come bracketed (`[::1]`) and may end in the root's dot; allow entries may be written either way. */
function normalizeHost(host: string): string {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return bare.toLowerCase().replace(/\.$/, "");
}

/** The longest URL the guard takes. */
export const maxUrlLength = 8192;

/**
 * A URL as messages (and an error's metadata) show it: without what stands before an `@` in its
 * authority (credentials, which the guard refuses to send) even where it does not parse.
 */
export function shownUrl(url: string): string {
  return url.replace(/^([^:/?#]*:\/\/)[^/?#]*@/, "$1");
}

export interface PushGuard {
  /**
   * What can be judged without DNS: the URL parses, is http: or https:, and
   * a literal address in it is allowed. Returns the parsed URL. A literal
   * never reaches `lookup` (the socket connects to it directly), so this is
   * the only check it gets at delivery.
   */
  screen(url: string): URL;
  /**
   * `screen`, then every address the host resolves to. `signal` ends the wait for the DNS answer
   * (rejecting with its reason): a resolver that never answers would hold the caller past its
   * time bound. A late answer is dropped.
   */
  check(url: string, signal?: AbortSignal): Promise<void>;
  /** A socket `lookup` that resolves with the guard's lookup (node:dns's by default) and fails when any address is refused. */
  readonly lookup: LookupFunction;
}

/**
 * A guard that lets through what `allow` names: host names, addresses, CIDRs.
 * `subject` names what is fetched in its errors ("push" URL and destination;
 * the card verifier's "JWKS", D101). `resolve`: how names are resolved, in the
 * check and in the socket's lookup alike; node:dns's `lookup` by default.
 */
export function createPushGuard(allow: readonly string[] = [], subject = "push", resolve?: LookupFunction): PushGuard {
  const allowedHosts = new Set<string>();
  const allowedAddresses = new BlockList();
  for (const entry of allow) {
    const [written = "", prefix, ...rest] = entry.split("/");
    const network = normalizeHost(written);
    const family = familyOf(network);
    if (prefix === undefined && family) {
      allowedAddresses.addAddress(network, family);
    } else if (prefix === undefined) {
      allowedHosts.add(network);
    } else {
      const bits = Number(prefix);
      const max = family === "ipv4" ? 32 : 128;
      if (!family || rest.length > 0 || !/^\d+$/.test(prefix) || bits > max) {
        throw new Error(`${subject} allow entry "${entry}" is neither a host name, an IP address nor a CIDR`);
      }
      allowedAddresses.addSubnet(network, bits, family);
    }
  }

  /** Why `address` may not be pushed to; undefined when it may. */
  function refusal(address: string): string | undefined {
    const family = familyOf(address);
    if (!family) return "not an IP address";
    if (allowedAddresses.check(address, family)) return undefined;
    const reason = forbiddenLists.find(([, list]) => list.check(address, family))?.[0];
    if (reason !== undefined || family === "ipv4") return reason;
    const ipv4 = embeddedIpv4(address);
    const inner = ipv4 === undefined ? undefined : refusal(ipv4);
    return inner === undefined ? undefined : `${inner} (as the IPv4 address ${ipv4} it stands for)`;
  }

  function refuseAny(where: string, host: string, addresses: readonly LookupAddress[]): PushGuardError | undefined {
    if (addresses.length === 0) return new PushGuardError(`${where}: ${host} resolves to no address`);
    for (const { address } of addresses) {
      const reason = refusal(address);
      if (reason) {
        const via = address === host ? "" : ` resolves to ${address}, which`;
        return new PushGuardError(`${where} refused by the SSRF guard: ${host}${via} is ${reason}`);
      }
    }
    return undefined;
  }

  function screen(url: string): URL {
    // Stored with its config and named in every failure report: a URL this long is no webhook's.
    if (url.length > maxUrlLength) throw new PushGuardError(`${subject} URL of ${url.length} characters is too long (at most ${maxUrlLength})`);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new PushGuardError(`${subject} URL "${shownUrl(url)}" is not a valid URL`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new PushGuardError(`${subject} URL "${shownUrl(url)}" must be http: or https:, not ${parsed.protocol}`);
    }
    // The HTTP client drops them unsent, and every failure report would print them.
    if (parsed.username !== "" || parsed.password !== "") {
      throw new PushGuardError(`${subject} URL "${parsed.protocol}//${parsed.host}${parsed.pathname}" must not carry credentials (user:password@); a push config sends them as its authentication`);
    }
    const host = normalizeHost(parsed.hostname);
    const family = familyOf(host);
    if (family) {
      const refused = refuseAny(`${subject} URL "${url}"`, host, [{ address: host, family: family === "ipv4" ? 4 : 6 }]);
      if (refused) throw refused;
    }
    return parsed;
  }

  async function check(url: string, signal?: AbortSignal): Promise<void> {
    const parsed = screen(url);
    const host = normalizeHost(parsed.hostname);
    if (familyOf(host) || allowedHosts.has(host)) return;
    // Whoever asked learns only that the name is refused, not whether it resolves nor to what: the
    // answer would otherwise map the agent's network for them. The detail is the error's cause.
    const refuse = (cause: unknown) =>
      new PushGuardError(`${subject} URL "${url}" refused by the SSRF guard: ${host} does not resolve to an address it may be sent to (a public one, or one the allow option lists)`, { cause });
    let addresses: LookupAddress[];
    try {
      addresses = await untilAborted(lookupAll(host), signal);
    } catch (error) {
      if (signal?.aborted === true) throw signal.reason;
      throw refuse(error);
    }
    const refused = refuseAny(`${subject} URL "${url}"`, host, addresses);
    if (refused) throw refuse(refused);
  }

  /** Every address of `host`, by the guard's lookup: the same one the socket's lookup below asks. */
  function lookupAll(host: string): Promise<LookupAddress[]> {
    return new Promise((done, fail) => {
      (resolve ?? lookupCallback)(host, { all: true }, (error: NodeJS.ErrnoException | null, answer: string | LookupAddress[], family?: number) =>
        error ? fail(error) : done(addressesOf(answer, family)),
      );
    });
  }

  const lookup: LookupFunction = (hostname, options, callback) => {
    // Ask for every address whatever the socket asked for: one refused
    // address refuses the name, so the answer cannot depend on which one
    // the socket would have picked.
    (resolve ?? lookupCallback)(hostname, { family: options.family, hints: options.hints, all: true }, (error: NodeJS.ErrnoException | null, answer: string | LookupAddress[], family?: number) => {
      if (error) return callback(error, "");
      const addresses = addressesOf(answer, family);
      const host = normalizeHost(hostname);
      const refused = allowedHosts.has(host) ? undefined : refuseAny(`${subject} destination ${host}`, host, addresses);
      if (refused) return callback(refused, "");
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      return first ? callback(null, first.address, first.family) : callback(new PushGuardError(`${host} resolves to no address`), "");
    });
  };

  return { screen, check, lookup };
}

/**
 * A lookup's answer as a list: a lookup given by the caller that leaves `all: true` aside answers
 * one address (and its family), which was taken for none, and every name refused as resolving to
 * no address it may be sent to.
 */
function addressesOf(answer: string | LookupAddress[] | undefined, family: number | undefined): LookupAddress[] {
  if (Array.isArray(answer)) return answer;
  return typeof answer === "string" && answer !== "" ? [{ address: answer, family: family ?? (answer.includes(":") ? 6 : 4) }] : [];
}

/** `answer`, or the signal's reason once it aborts; the answer that comes later is dropped, its failure too. */
function untilAborted<T>(answer: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return answer;
  return new Promise((resolve, reject) => {
    const stop = () => reject(signal.reason);
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
    answer.then(
      (value) => {
        signal.removeEventListener("abort", stop);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", stop);
        reject(error);
      },
    );
  });
}
