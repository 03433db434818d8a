/**
 * Verifying an Agent Card's signatures (spec 8.4, D101) where a client gets a
 * card: the public card it fetches and the extended card GetExtendedAgentCard
 * answers. The payload is computed from the card as it arrived (its 8.4.1
 * presence form without `signatures`, then RFC 8785), each signature's key is
 * found by `kid` among the keys the caller trusts, then in the JWKS its `jku`
 * names, if the caller trusts that URL, and must fit its `alg` as jose's
 * createLocalJWKSet has it (kty, curve, `use`, `key_ops`, `ext`, the key's own
 * `alg`; each that fits is tried, trusted keys first); the first
 * signature that verifies with an allowed algorithm makes the card valid
 * (keys rotate).
 */
import type { DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";
import { presenceJson, PresenceJsonError } from "../../core/codec/presence-json.js";
import { canonicalJson, JcsError } from "../../core/jcs.js";
import { transportFailure } from "../../core/client/client.js";
import type { Jwk } from "../card-signing.js";
import { cardSignatureAlgorithms, loadJose, type Jose } from "../jose.js";
import { createJwksFetcher, type JwksFetchOptions } from "./jwks-fetch.js";

/** `require`: a card must carry a valid signature; `verify-if-present`: an unsigned card passes, a signed one must verify; `skip`: nothing is checked. */
export type CardSignaturePolicy = "require" | "verify-if-present" | "skip";

/** Where a signature's key may come from, beside the keys given. */
export interface CardJwksOptions extends JwksFetchOptions {
  /** JWKS URLs trusted for any card. */
  readonly urls?: readonly string[];
  /** Whether a `jku` on the card's own origin (scheme, host, port) is trusted. Default true. */
  readonly sameOrigin?: boolean;
}

export interface CardVerificationOptions {
  /** Default `require`. */
  readonly policy?: CardSignaturePolicy;
  /** Public keys trusted by `kid`, as JWKs with a `kid` (their `alg`, if set, must be the signature's; `use`, if set, "sig"; `key_ops`, if set, with "verify"). */
  readonly keys?: readonly Jwk[];
  /** Fetching keys by `jku`; without it (and with `keys`), no JWKS is ever fetched. */
  readonly jwks?: CardJwksOptions | false;
  /** The algorithms accepted, a subset of ES256..512, EdDSA/Ed25519, RS256..512, PS256..512. Default all of them. */
  readonly algorithms?: readonly string[];
  /** The largest card verified, as canonical JSON. Default 1 MiB. */
  readonly maxBytes?: number;
}

/** Why one signature did not make the card valid. */
export type CardSignatureProblem = "malformed" | "algorithm" | "unknown-key" | "jku-refused" | "jwks-unavailable" | "invalid-signature";

/**
 * A card that fails the policy. `reason` is `unsigned` (none, and the policy
 * requires one), `invalid` (none of its signatures verifies; `failures` says
 * why for each), `malformed` (the card has no canonical form: a field of the
 * wrong JSON type, NaN, nesting past any real card) or `too-large`.
 */
export class AgentCardSignatureError extends Error {
  override readonly name = "AgentCardSignatureError";
  constructor(
    message: string,
    readonly reason: "unsigned" | "invalid" | "malformed" | "too-large",
    readonly failures: readonly { readonly index: number; readonly problem: CardSignatureProblem; readonly message: string }[] = [],
  ) {
    super(message);
  }
}

/** The signature that made a card valid. */
export interface VerifiedSignature {
  readonly kid: string;
  readonly alg: string;
  /** The JWKS the key came from; absent when a trusted `keys` entry verified it, whatever the header's jku. */
  readonly jku?: string;
}

export interface CardVerifier {
  /**
   * Checks `card` (ProtoJSON) against the policy; `cardUrl` is where it came
   * from (for same-origin `jku`). Resolves with the signature that verified,
   * or undefined when the policy let the card through unverified. `signal`
   * bounds the whole check, JWKS fetches included: once it aborts, verify
   * rejects at once with CANCELLED, or DEADLINE_EXCEEDED for a timeout's
   * signal, as a call does (D29).
   */
  verify(card: JsonObject, cardUrl?: string, options?: { readonly signal?: AbortSignal | undefined }): Promise<VerifiedSignature | undefined>;
}

/** More are not looked at: a card with hundreds of signatures is a way to make a client work. */
const maxSignatures = 8;
const base64url = /^[A-Za-z0-9_-]+$/;
/** Keys tried for one signature's kid: a JWKS could list hundreds under one. */
const maxCandidates = 4;

/** The key type (and curve) each accepted algorithm's key has. */
function keyTypeOf(alg: string): { kty: string; crv?: string } | undefined {
  if (alg === "ES256") return { kty: "EC", crv: "P-256" };
  if (alg === "ES384") return { kty: "EC", crv: "P-384" };
  if (alg === "ES512") return { kty: "EC", crv: "P-521" };
  if (alg === "EdDSA" || alg === "Ed25519") return { kty: "OKP", crv: "Ed25519" };
  if (/^(RS|PS)(256|384|512)$/.test(alg)) return { kty: "RSA" };
  return undefined;
}

interface Unfit {
  readonly problem: CardSignatureProblem;
  readonly why: string;
}

/**
 * Why `jwk` cannot verify a signature with `alg`, or undefined when it may: jose's JWKS selection
 * (createLocalJWKSet's isUsableJWK) rule for rule, kid apart (matched before): a public key of the
 * alg's kty (and curve), its own `alg` absent or the header's, `use` absent or "sig", `key_ops`
 * absent or a list of distinct strings with "verify", `ext` absent or a boolean.
 */
function unfitFor(jwk: Jwk, alg: string): Unfit | undefined {
  if (jwk.kty === "oct" || "d" in jwk) return { problem: "unknown-key", why: "is not a public key" };
  if (jwk.alg !== undefined && jwk.alg !== alg) return { problem: "algorithm", why: `is for ${String(jwk.alg)}, the signature says ${alg}` };
  const type = keyTypeOf(alg);
  if (type !== undefined && (jwk.kty !== type.kty || (type.crv !== undefined && jwk.crv !== type.crv))) {
    return { problem: "algorithm", why: `is ${[jwk.kty, jwk.crv].filter((v) => v !== undefined).join(" ")}, not the ${[type.kty, type.crv].filter((v) => v !== undefined).join(" ")} key ${alg} needs` };
  }
  if (jwk.use !== undefined && jwk.use !== "sig") return { problem: "unknown-key", why: `is published for ${shown(jwk.use)}, not for signatures (use "sig")` };
  const ops: unknown = jwk.key_ops;
  // Distinct by a Set, not jose's indexOf per entry: that is quadratic, and a JWKS's key_ops of tens
  // of thousands of strings held the event loop for seconds per signature (review).
  if (ops !== undefined && !(Array.isArray(ops) && ops.every((op) => typeof op === "string") && new Set(ops).size === ops.length && ops.includes("verify"))) {
    return { problem: "unknown-key", why: `is published for ${shown(ops)}, not "verify" (key_ops)` };
  }
  if (jwk.ext !== undefined && typeof jwk.ext !== "boolean") return { problem: "unknown-key", why: `has an ext that is not a boolean (${shown(jwk.ext)})` };
  return undefined;
}

/** A JWK member as a refusal shows it, within a bound: a JWKS is the agent's to fill (64 KiB). */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

class Refusal extends Error {
  constructor(
    readonly problem: CardSignatureProblem,
    message: string,
  ) {
    super(message);
  }
}

export function createCardVerifier(schema: DescMessage, options: CardVerificationOptions = {}): CardVerifier {
  const policy = options.policy ?? "require";
  if (!["require", "verify-if-present", "skip"].includes(policy)) throw new Error(`verifyCard.policy must be require, verify-if-present or skip, not ${JSON.stringify(policy)}`);
  const algorithms = options.algorithms ?? cardSignatureAlgorithms;
  for (const alg of algorithms) {
    if (!cardSignatureAlgorithms.includes(alg)) throw new Error(`verifyCard.algorithms lists ${JSON.stringify(alg)}; only ${cardSignatureAlgorithms.join(", ")} are accepted (never none or an HMAC)`);
  }
  const keys = options.keys ?? [];
  for (const [i, key] of keys.entries()) {
    if (typeof key.kid !== "string" || key.kid === "") throw new Error(`verifyCard.keys[${i}] has no kid: signatures name their key by it`);
    if (key.kty === "oct" || "d" in key) throw new Error(`verifyCard.keys[${i}] (${key.kid}) must be a public key`);
  }
  const jwksOptions = options.jwks === false ? undefined : options.jwks ?? (keys.length > 0 ? undefined : {});
  const fetcher = jwksOptions === undefined ? undefined : createJwksFetcher(jwksOptions);
  const trustedUrls = new Set((jwksOptions?.urls ?? []).map((u) => new URL(u).href));
  const maxBytes = options.maxBytes ?? 1 << 20;

  /**
   * The keys with `header.kid` in the JWKS its `jku` names, when the caller trusts that URL. A kept
   * JWKS with none of them that fits `alg` is fetched again once its cooldown has passed, as jose's
   * remote JWKS does on its JWKSNoMatchingKey (not only one without the kid: a key rotated to
   * another algorithm under the same kid is found too).
   */
  async function jwksKeysFor(header: { kid: string; alg: string; jku: string }, cardUrl: string | undefined, signal: AbortSignal): Promise<readonly Jwk[]> {
    if (fetcher === undefined) throw new Refusal("jku-refused", `its jku ${header.jku} is not fetched: verifyCard.jwks is off`);
    let url: URL;
    try {
      url = new URL(header.jku);
    } catch {
      throw new Refusal("malformed", `its jku ${JSON.stringify(header.jku)} is not a URL`);
    }
    const sameOrigin = jwksOptions?.sameOrigin !== false && cardUrl !== undefined && new URL(cardUrl).origin === url.origin;
    if (!sameOrigin && !trustedUrls.has(url.href)) {
      throw new Refusal("jku-refused", `its jku ${url.href} is neither on the card's origin nor in verifyCard.jwks.urls`);
    }
    const named = (k: Jwk) => k.kid === header.kid;
    let found: readonly Jwk[];
    try {
      found = await fetcher.keys(url.href, (k) => named(k) && unfitFor(k, header.alg) === undefined, signal);
    } catch (err) {
      // The caller's abort (or another signature verified meanwhile): not the JWKS's failure.
      if (signal.aborted) throw err;
      throw new Refusal("jwks-unavailable", err instanceof Error ? err.message : String(err));
    }
    return found.filter(named);
  }

  /**
   * The key of `header.kid` that may verify it: one that can verify `alg` (its kty, and curve), is
   * published for signatures (`use` absent or "sig", `key_ops` absent or with "verify"), and whose
   * own `alg`, if set, is the header's; as jose's JWKS selection (createLocalJWKSet) has it.
   * Each that fits is tried, so an RSA and an EC key, or an old and a new one, under one kid (RFC
   * 7517 4.5) verify what they signed.
   */
  async function verifyWithKeys(jose: Jose, header: { kid: string; alg: string }, candidates: readonly Jwk[], verify: (key: Awaited<ReturnType<Jose["importJWK"]>>) => Promise<unknown>): Promise<void> {
    const kid = JSON.stringify(header.kid);
    const unfit = candidates.map((jwk) => unfitFor(jwk, header.alg));
    const fitting = candidates.filter((_, i) => unfit[i] === undefined);
    if (fitting.length === 0) {
      const reasons = unfit.filter((u): u is Unfit => u !== undefined);
      if (reasons.length === 1) throw new Refusal(reasons[0]!.problem, `the key ${kid} ${reasons[0]!.why}`);
      const problem = reasons.every((r) => r.problem === "algorithm") ? "algorithm" : "unknown-key";
      throw new Refusal(problem, `none of the ${reasons.length} keys with kid ${kid} can verify it (${reasons.map((r) => r.why).join("; ")})`);
    }
    const tried = fitting.slice(0, maxCandidates);
    const failures: string[] = [];
    let imported = 0;
    for (const jwk of tried) {
      let key: Awaited<ReturnType<Jose["importJWK"]>>;
      try {
        key = await jose.importJWK(jwk as Parameters<Jose["importJWK"]>[0], header.alg);
      } catch (err) {
        failures.push(`cannot verify ${header.alg}: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      imported++;
      try {
        await verify(key);
        return;
      } catch (err) {
        failures.push(`it does not verify: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const more = fitting.length > tried.length ? `; ${fitting.length - tried.length} more with that kid not tried` : "";
    if (imported === 0) throw new Refusal("algorithm", `the key ${kid} ${failures.join("; ")}${more}`);
    if (tried.length === 1) throw new Refusal("invalid-signature", `${failures[0]!}${more}`);
    throw new Refusal("invalid-signature", `it verifies with none of the ${tried.length} keys with kid ${kid} (${failures.join("; ")})${more}`);
  }

  async function verifyOne(jose: Jose, entry: JsonValue, payload: string, cardUrl: string | undefined, signal: AbortSignal): Promise<VerifiedSignature> {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw new Refusal("malformed", "it is not an object");
    const { protected: protectedHeader, signature, header: unprotected } = entry;
    if (typeof protectedHeader !== "string" || !base64url.test(protectedHeader) || protectedHeader.length > 4096 || protectedHeader.length % 4 === 1) {
      throw new Refusal("malformed", "its protected header is not base64url");
    }
    if (typeof signature !== "string" || !base64url.test(signature) || signature.length > 2048 || signature.length % 4 === 1) {
      throw new Refusal("malformed", "its signature is not base64url");
    }
    if (unprotected !== undefined && unprotected !== null && (typeof unprotected !== "object" || Array.isArray(unprotected))) throw new Refusal("malformed", "its header is not an object");
    let header: Record<string, unknown>;
    try {
      header = jose.decodeProtectedHeader({ protected: protectedHeader, signature }) as Record<string, unknown>;
    } catch (err) {
      throw new Refusal("malformed", `its protected header does not decode: ${err instanceof Error ? err.message : String(err)}`);
    }
    const { alg, kid, jku } = header;
    if (typeof alg !== "string") throw new Refusal("malformed", "its protected header has no alg");
    if (!algorithms.includes(alg)) throw new Refusal("algorithm", `alg ${JSON.stringify(alg)} is not accepted (accepted: ${algorithms.join(", ")})`);
    if (typeof kid !== "string" || kid === "") throw new Refusal("malformed", "its protected header has no kid");
    if (jku !== undefined && typeof jku !== "string") throw new Refusal("malformed", "its jku is not a string");
    const jws = { payload: jose.base64url.encode(payload), protected: protectedHeader, signature, ...(unprotected ? { header: unprotected as Record<string, never> } : {}) };
    const verifyWith = (candidates: readonly Jwk[]) => verifyWithKeys(jose, { kid, alg }, candidates, (key) => jose.flattenedVerify(jws, key, { algorithms: [...algorithms] }));
    // The trusted keys with its kid first, then (none of them verified it, or none has the kid)
    // the JWKS its jku names: one set of candidates, as a jose key set would be, the trusted
    // ones tried without a fetch. A trusted key of the wrong type, or an old one, under the kid
    // stopped the search there, and the card was refused although its JWKS verified it.
    const trusted = keys.filter((k) => k.kid === kid);
    let pinned: Refusal | undefined;
    if (trusted.length > 0) {
      try {
        await verifyWith(trusted);
        // No jku: a trusted key's signature says nothing of that URL.
        return { kid, alg };
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        pinned = err;
      }
    }
    if (jku === undefined) throw pinned ?? new Refusal("unknown-key", `no trusted key has kid ${JSON.stringify(kid)}`);
    try {
      const found = await jwksKeysFor({ alg, kid, jku }, cardUrl, signal);
      if (found.length === 0) throw new Refusal("unknown-key", `${pinned === undefined ? "no trusted key, and " : ""}no key of the JWKS at ${jku} has kid ${JSON.stringify(kid)}`);
      await verifyWith(found);
      return { kid, alg, jku };
    } catch (err) {
      if (!(err instanceof Refusal) || pinned === undefined) throw err;
      // The trusted key's refusal comes first: it is the key the caller named; then why its jku did not help.
      throw new Refusal(pinned.problem, `${pinned.message}; from its jku: ${err.message}`);
    }
  }

  return {
    async verify(card, cardUrl, options = {}) {
      if (policy === "skip") return undefined;
      const signal = options.signal;
      const stopped = () => transportFailure(signal?.reason, signal);
      // A function, not a property read: TypeScript would take a read once checked for the same ever after.
      const aborted = () => signal?.aborted === true;
      if (aborted()) throw stopped();
      const signatures = Array.isArray(card.signatures) ? card.signatures : card.signatures === undefined || card.signatures === null ? [] : [card.signatures];
      const where = cardUrl === undefined ? "the agent card" : `the agent card at ${cardUrl}`;
      if (signatures.length === 0) {
        if (policy === "verify-if-present") return undefined;
        throw new AgentCardSignatureError(`${where} is not signed, and verifyCard.policy is require`, "unsigned");
      }
      let payload: string;
      try {
        payload = canonicalJson(presenceJson(schema, card, { omit: ["signatures"] }));
      } catch (err) {
        if (!(err instanceof PresenceJsonError || err instanceof JcsError)) throw err;
        throw new AgentCardSignatureError(`${where} has no canonical form: ${err.message}`, "malformed");
      }
      if (Buffer.byteLength(payload) > maxBytes) throw new AgentCardSignatureError(`${where} is larger than ${maxBytes} bytes (verifyCard.maxBytes)`, "too-large");
      const jose = await loadJose();
      if (aborted()) throw stopped();
      // Every signature is checked at once (their JWKS fetched in parallel), so a card is held up
      // by its slowest JWKS once, not once per signature; the first in the card's order that
      // verifies is the one reported, and the checks still under way then are let go.
      const done = new AbortController();
      const each = signal === undefined ? done.signal : AbortSignal.any([signal, done.signal]);
      const checks = signatures.slice(0, maxSignatures).map((entry) =>
        verifyOne(jose, entry, payload, cardUrl, each).then(
          (verified) => ({ verified }),
          (err: unknown) => ({ err }),
        ),
      );
      const failures: { index: number; problem: CardSignatureProblem; message: string }[] = [];
      try {
        for (const [index, check] of checks.entries()) {
          const outcome = await check;
          if (aborted()) throw stopped();
          if ("verified" in outcome) return outcome.verified;
          if (!(outcome.err instanceof Refusal)) throw outcome.err;
          failures.push({ index, problem: outcome.err.problem, message: outcome.err.message });
        }
      } finally {
        done.abort();
      }
      const why = failures.map((f) => `signature ${f.index}: ${f.message}`).join("; ");
      const more = signatures.length > maxSignatures ? `; ${signatures.length - maxSignatures} more not looked at` : "";
      throw new AgentCardSignatureError(`${where} has no valid signature (${why}${more})`, "invalid", failures);
    },
  };
}
