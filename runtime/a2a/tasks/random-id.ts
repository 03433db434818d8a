/**
 * Random version 4 UUIDs as flat strings. `crypto.randomUUID()` builds its
 * answer by concatenating 20 pieces, and V8 keeps such a string as a tree
 * of about a dozen cons cells (some 400 bytes) for as long as it lives: a
 * task keeps two (its id and its context's), and the store keeps the task.
 * Writing the 36 characters into a buffer and reading them back as one
 * latin1 string gives a plain 36-byte string. The entropy comes from
 * `crypto.randomFillSync`, drawn for 256 ids at a time, as node itself
 * draws it for randomUUID.
 */
import { randomFillSync } from "node:crypto";

const ids = 256;
const entropy = Buffer.allocUnsafe(16 * ids);
let next = entropy.length;
const text = Buffer.allocUnsafe(36);
const hex = Buffer.from("0123456789abcdef", "latin1");

export function randomId(): string {
  if (next === entropy.length) {
    randomFillSync(entropy);
    next = 0;
  }
  const at = next;
  next += 16;
  // Version 4, variant 10 (RFC 9562, section 5.4).
  entropy[at + 6] = (entropy[at + 6]! & 0x0f) | 0x40;
  entropy[at + 8] = (entropy[at + 8]! & 0x3f) | 0x80;
  let o = 0;
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) text[o++] = 0x2d;
    const byte = entropy[at + i]!;
    text[o++] = hex[byte >> 4]!;
    text[o++] = hex[byte & 15]!;
  }
  return text.toString("latin1", 0, 36);
}
