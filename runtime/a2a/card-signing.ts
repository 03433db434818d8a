/**
 * Signing Agent Cards (spec 8.4, D101): each key signs the card's canonical
 * form (the 8.4.1 presence form of the card without `signatures`, then RFC
 * 8785) as a flattened JWS with a detached payload, protected header `alg`,
 * `typ: "JOSE"`, `kid` and, if given, `jku`. The card served is exactly the
 * presence form that was signed, plus `signatures`, so a verifier reading the
 * JSON computes the bytes the signer signed.
 */
import { createPrivateKey, createPublicKey, KeyObject, type JsonWebKey, type webcrypto } from "node:crypto";
import type { JWK } from "jose";
import { fromJson, type DescMessage, type JsonObject, type MessageShape } from "@bufbuild/protobuf";
import { presenceJsonOf } from "../core/codec/presence-json.js";
import { canonicalJson } from "../core/jcs.js";
import { cardSignatureAlgorithms, loadJose } from "./jose.js";

/** A JSON Web Key (RFC 7517) as a plain object: jose's type. */
export type Jwk = JWK;

/** One key a server signs its cards with. */
export interface CardSigningKey {
  /** The private key: a JWK (with `d`), a node KeyObject or a WebCrypto CryptoKey. */
  readonly privateKey: Jwk | KeyObject | webcrypto.CryptoKey;
  /** The JWS algorithm: ES256, ES384, ES512, EdDSA/Ed25519, RS256..512 or PS256..512. */
  readonly alg: string;
  /** The key id put in the protected header and the JWKS. */
  readonly kid: string;
  /** A JWKS URL put in the protected header; `true` is this server's own JWKS (`jwksPath`). */
  readonly jku?: string | true;
}

/** `serveA2AService`'s `signing` option. */
export interface CardSigningOptions {
  /** The keys; each adds one signature to every card (more than one while keys rotate). */
  readonly keys: readonly CardSigningKey[];
  /** Where the public keys are served as a JWKS, or false for nowhere. Default `/.well-known/jwks.json`. */
  readonly jwksPath?: string | false;
}

export const defaultJwksPath = "/.well-known/jwks.json";

/** The signatures of one card, as AgentCardSignature JSON. */
export interface CardSigner {
  /**
   * The card's presence form with `signatures` replaced by this signer's.
   * `beside`: keys that are not the AgentCard's, served with it and signed
   * as written, as a verifier reads unknown keys (D100): A2A 0.3's fields
   * beside a 1.0 card (D111).
   */
  sign(card: JsonObject, beside?: JsonObject): Promise<JsonObject>;
  /** The public keys, as a JWKS document. */
  readonly jwks: { readonly keys: readonly Jwk[] };
}

interface PreparedKey {
  readonly key: KeyObject;
  readonly header: { alg: string; typ: "JOSE"; kid: string };
  /** The `jku`, or true for this server's JWKS (known once it listens). */
  readonly jku: string | true | undefined;
}

/**
 * Checks and imports the keys, and signs once with each, so a key that does
 * not fit its `alg` fails here, before anything listens. `jwksUrl()` is what
 * `jku: true` stands for, asked when a card is signed.
 */
export async function createCardSigner(schema: DescMessage, options: CardSigningOptions, jwksUrl: () => string | undefined): Promise<CardSigner> {
  const jose = await loadJose();
  if (!Array.isArray(options.keys) || options.keys.length === 0) throw new Error("signing.keys must list at least one key");
  const kids = new Set<string>();
  const prepared: PreparedKey[] = [];
  const publicKeys: Jwk[] = [];
  for (const [i, entry] of options.keys.entries()) {
    const where = `signing.keys[${i}]`;
    if (!cardSignatureAlgorithms.includes(entry.alg)) {
      throw new Error(`${where}.alg is ${JSON.stringify(entry.alg)}; a card is signed with one of ${cardSignatureAlgorithms.join(", ")} (never none or an HMAC)`);
    }
    if (typeof entry.kid !== "string" || entry.kid === "") throw new Error(`${where}.kid must be a non-empty string: verifiers find the key by it`);
    if (kids.has(entry.kid)) throw new Error(`${where}.kid ${JSON.stringify(entry.kid)} is used twice`);
    kids.add(entry.kid);
    const key = privateKeyOf(entry.privateKey, where);
    if (entry.jku === true && options.jwksPath === false) throw new Error(`${where}.jku is true (this server's JWKS) but signing.jwksPath is false`);
    let jku: string | true | undefined = entry.jku;
    if (typeof jku === "string") {
      try {
        jku = new URL(jku).href;
      } catch {
        throw new Error(`${where}.jku ${JSON.stringify(jku)} is not an absolute URL`);
      }
    }
    const header = { alg: entry.alg, typ: "JOSE" as const, kid: entry.kid };
    try {
      await new jose.FlattenedSign(new Uint8Array(0)).setProtectedHeader(header).sign(key);
    } catch (err) {
      throw new Error(`${where}: the key cannot sign ${entry.alg}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    prepared.push({ key, header, jku });
    publicKeys.push({ ...(createPublicKey(key).export({ format: "jwk" }) as Jwk), kid: entry.kid, alg: entry.alg, use: "sig" });
  }

  // ECDSA and EdDSA signatures are fresh each time; one card keeps its signatures (and its ETag) while it does not change.
  const recent = new Map<string, JsonObject[]>();
  return {
    jwks: { keys: publicKeys },
    async sign(card, beside = {}) {
      const plain = presenceJsonOf(schema, fromJson(schema, card) as MessageShape<DescMessage>, { omit: ["signatures"] });
      const form = { ...plain, ...beside };
      const payload = canonicalJson(form);
      let signatures = recent.get(payload);
      if (signatures === undefined) {
        signatures = [];
        // With keys beside the card (0.3's, D111), each key signs the card as served and then the
        // card alone: a verifier that keeps unknown keys (ours) checks the first, and one that
        // rebuilds the card from the proto, dropping them (@a2a-js/sdk), the second.
        const payloads = Object.keys(beside).length === 0 ? [payload] : [payload, canonicalJson(plain)];
        for (const signed of payloads) {
          const bytes = new TextEncoder().encode(signed);
          for (const { key, header, jku } of prepared) {
            const url = jku === true ? jwksUrl() : jku;
            const jws = await new jose.FlattenedSign(bytes).setProtectedHeader(url === undefined ? header : { ...header, jku: url }).sign(key);
            signatures.push({ protected: jws.protected as string, signature: jws.signature });
          }
        }
        if (recent.size >= 32) recent.delete(recent.keys().next().value as string);
        recent.set(payload, signatures);
      }
      return { ...form, signatures };
    },
  };
}

function privateKeyOf(given: Jwk | KeyObject | webcrypto.CryptoKey, where: string): KeyObject {
  if (isJwk(given) && !("d" in given)) throw new Error(`${where}.privateKey is a public key; signing needs the private key (a JWK with "d")`);
  let key: KeyObject;
  try {
    if (given instanceof KeyObject) key = given;
    else if (isJwk(given)) key = createPrivateKey({ key: given as JsonWebKey, format: "jwk" });
    else key = KeyObject.from(given as webcrypto.CryptoKey);
  } catch (err) {
    throw new Error(`${where}.privateKey is not a usable private key: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (key.type !== "private") throw new Error(`${where}.privateKey is a ${key.type} key; signing needs the private key (a JWK with "d")`);
  return key;
}

function isJwk(value: unknown): value is Jwk {
  return typeof value === "object" && value !== null && typeof (value as { kty?: unknown }).kty === "string";
}
