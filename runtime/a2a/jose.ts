/**
 * `jose` (RFC 7515 JWS), loaded on first use (D102): an agent that signs
 * nothing and a client that verifies nothing never load it. It is a
 * dependency of this package, so the import fails only in a broken install.
 */
export type Jose = typeof import("jose");

let loading: Promise<Jose> | undefined;

export function loadJose(): Promise<Jose> {
  loading ??= import("jose").catch((err: unknown) => {
    loading = undefined;
    throw new Error(`Agent Card signatures need the npm package "jose", which could not be loaded: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  });
  return loading;
}

/**
 * The JWS algorithms a card may be signed with: asymmetric only. `none` and
 * the HMAC algorithms are never among them: a card is public, so a shared
 * secret would be one every reader has, and an HMAC verified with a public
 * key read as a secret is the classic algorithm confusion.
 */
export const cardSignatureAlgorithms: readonly string[] = ["ES256", "ES384", "ES512", "EdDSA", "Ed25519", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512"];
