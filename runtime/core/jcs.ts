/**
 * The JSON Canonicalization Scheme, RFC 8785 (D100): one text per JSON value,
 * so two parties that hold the same value sign and verify the same bytes.
 * RFC 8785 defines its serialization as ECMAScript's own (section 3.2.2:
 * numbers as Number.prototype.toString, strings as JSON.stringify escapes
 * them), so JSON.stringify does each primitive; what is left is sorting
 * property names by their UTF-16 code units (3.2.3, which is what
 * Array.prototype.sort compares) and refusing what has no canonical form:
 * non-finite numbers and strings with a lone surrogate (3.2.2.2).
 */
import type { JsonValue } from "@bufbuild/protobuf";

/** A value RFC 8785 cannot canonicalize; the message names where it is. */
export class JcsError extends Error {
  override readonly name = "JcsError";
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Nesting deeper than this is refused rather than left to exhaust the stack. */
const maxDepth = 500;

/** The RFC 8785 text of `value`. */
export function canonicalJson(value: JsonValue): string {
  const out: string[] = [];
  write(value, "$", out, new Set());
  return out.join("");
}

function write(value: JsonValue, path: string, out: string[], open: Set<object>): void {
  if (open.size > maxDepth) throw new JcsError(`${path} is nested more than ${maxDepth} levels deep`);
  if (value === null || typeof value === "boolean") {
    out.push(String(value));
  } else if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new JcsError(`${path} is ${value}, which JSON cannot hold (RFC 8785 3.2.2.3)`);
    // -0 is written 0 (Number.prototype.toString does so too).
    out.push(JSON.stringify(value));
  } else if (typeof value === "string") {
    out.push(quote(value, path));
  } else if (Array.isArray(value)) {
    if (open.has(value)) throw new JcsError(`${path} refers to itself`);
    open.add(value);
    out.push("[");
    value.forEach((item, i) => {
      if (i > 0) out.push(",");
      write(item, `${path}[${i}]`, out, open);
    });
    out.push("]");
    open.delete(value);
  } else if (typeof value === "object") {
    if (open.has(value)) throw new JcsError(`${path} refers to itself`);
    open.add(value);
    out.push("{");
    let first = true;
    for (const key of Object.keys(value).sort()) {
      const item = value[key];
      // JSON.stringify leaves undefined members out; so does this.
      if (item === undefined) continue;
      if (!first) out.push(",");
      first = false;
      out.push(quote(key, `${path} key`), ":");
      write(item, `${path}.${key}`, out, open);
    }
    out.push("}");
    open.delete(value);
  } else {
    throw new JcsError(`${path} is a ${typeof value}, not a JSON value`);
  }
}

function quote(text: string, path: string): string {
  if (loneSurrogate.test(text)) throw new JcsError(`${path} holds a lone UTF-16 surrogate, which has no UTF-8 form (RFC 8785 3.2.2.2)`);
  return JSON.stringify(text);
}
