/**
 * ProtoJSON output straight from what a handler returns, a message or its
 * init shape, with REQUIRED fields kept at their defaults (D11).
 *
 * The general route, `create()` then `toJson()` then putting REQUIRED
 * defaults back (toJsonWithRequired), builds the whole message tree once
 * only to read it again; on the unary hot path that was the largest cost
 * after the socket. The codecs protoc-gen-a2a emits at build time have a
 * ProtoJSON writer per message type that reads the value once and writes
 * JSON in field order, REQUIRED fields included as the plugin found them
 * (`google.api.field_behavior`), which is what the generated REQUIRED
 * tables say too. `jsonWriter(desc, table)` answers that writer where
 * `desc` has a registered codec (registry.ts) and `table` agrees with the
 * codecs on every type `desc` reaches; otherwise, the general route through
 * protobuf-es. test/runtime/json-writer.test.ts holds the emitted writers to
 * the general route.
 */
import { create, isMessage, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { hasCustomJsonRepresentation } from "@bufbuild/protobuf/wkt";
import type { RequiredFieldTable } from "../method-spec.js";
import { codecOf } from "./registry.js";
import { toJsonWithRequired } from "./required-fields.js";

type Writer = (value: unknown) => JsonValue;

const writers = new WeakMap<RequiredFieldTable, Map<DescMessage, Writer>>();

/** Returns the writer of `desc`'s ProtoJSON for this REQUIRED table. */
export function jsonWriter(desc: DescMessage, table: RequiredFieldTable): Writer {
  let cache = writers.get(table);
  if (cache === undefined) {
    cache = new Map();
    writers.set(table, cache);
  }
  let write = cache.get(desc);
  if (write === undefined) {
    const codec = codecOf(desc);
    write =
      codec !== undefined && agrees(desc, table)
        ? (value) => codec.toJson(value as never)
        : (value) => toJsonWithRequired(desc, isMessage(value, desc) ? value : create(desc, value as never), table);
    cache.set(desc, write);
  }
  return write;
}

/** Whether `write` (from jsonWriter) is an emitted writer rather than the general route: for tests and diagnostics. */
export function isEmittedWriter(desc: DescMessage, table: RequiredFieldTable): boolean {
  return codecOf(desc) !== undefined && agrees(desc, table);
}

/**
 * Whether the emitted writers of `desc` and of every message it reaches
 * write the REQUIRED fields `table` names: each reached type has a
 * registered codec (a well-known type with a JSON form of its own needs
 * none: no REQUIRED field is added inside one) whose REQUIRED fields are
 * the table's for that type.
 */
function agrees(desc: DescMessage, table: RequiredFieldTable): boolean {
  const seen = new Set<DescMessage>();
  const pending = [desc];
  for (let m = pending.pop(); m !== undefined; m = pending.pop()) {
    if (seen.has(m)) continue;
    seen.add(m);
    if (hasCustomJsonRepresentation(m)) continue;
    const codec = codecOf(m);
    if (codec === undefined) return false;
    const listed = table[m.typeName]?.required ?? [];
    if (listed.length !== codec.required.length || !listed.every((name) => codec.required.includes(name))) return false;
    for (const field of m.fields) {
      if (field.message !== undefined) pending.push(field.message);
    }
  }
  return true;
}
