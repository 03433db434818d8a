/**
 * New messages with no fields set, exactly as `create(desc)` makes them,
 * for the readers that fill them (the binary codec, the fast ProtoJSON
 * reader). protobuf-es's create() loops over the type's fields for each
 * message (~90 ns); an object literal of the same properties is ~10 ns.
 *
 * The literal is spelled from a message create() made (its own properties
 * in their order: primitives, empty lists, maps and bytes, unset oneofs) and
 * checked against it once. Messages whose defaults live on a prototype
 * (proto2, editions' explicit presence with defaults), or with anything
 * else in them, keep create().
 */
import { isDeepStrictEqual } from "node:util";
import { create, type DescMessage } from "@bufbuild/protobuf";
import { generate, type Ref } from "./code-generation.js";

type Fields = Record<string, unknown>;

export interface ZeroFactory {
  /** A new message of the type, as create(desc) makes it. */
  readonly make: () => Fields;
  /** Whether `make` is an object literal (else create()). */
  readonly literal: boolean;
}

const factories = new WeakMap<DescMessage, ZeroFactory>();

export function zeroFactory(desc: DescMessage): ZeroFactory {
  let factory = factories.get(desc);
  if (factory === undefined) {
    factory = compileZero(desc);
    factories.set(desc, factory);
  }
  return factory;
}

function compileZero(desc: DescMessage): ZeroFactory {
  const created = () => create(desc) as unknown as Fields;
  const template = created();
  // Values the literal holds (64-bit zeros as bigints) are bound by ref.
  const make = generate<() => Fields>((ref) => {
    const literal = zeroLiteral(template, ref);
    return literal === undefined ? undefined : `return () => (${literal});`;
  });
  if (make !== undefined && sameZero(make(), template)) return { make, literal: true };
  return { make: created, literal: false };
}

function zeroLiteral(template: Fields, ref: Ref): string | undefined {
  if (Object.getPrototypeOf(template) !== Object.prototype) return undefined;
  const parts: string[] = [];
  for (const key of Object.keys(template)) {
    const v = template[key];
    let expr: string;
    if (typeof v === "string" || typeof v === "boolean") expr = JSON.stringify(v);
    else if (typeof v === "number" && Number.isFinite(v) && !Object.is(v, -0)) expr = String(v);
    else if (typeof v === "bigint") expr = ref(v);
    else if (Array.isArray(v) && v.length === 0) expr = "[]";
    else if (v instanceof Uint8Array && v.byteLength === 0) expr = "new Uint8Array(0)";
    else if (isPlainEmpty(v)) expr = "{}";
    else if (isUnsetOneof(v)) expr = "{ case: undefined }";
    else return undefined;
    parts.push(`${JSON.stringify(key)}: ${expr}`);
  }
  return `{ ${parts.join(", ")} }`;
}

function isPlainEmpty(v: unknown): boolean {
  return typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype && Object.keys(v).length === 0;
}

function isUnsetOneof(v: unknown): boolean {
  if (typeof v !== "object" || v === null || Object.getPrototypeOf(v) !== Object.prototype) return false;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === "case" && (v as { case?: unknown }).case === undefined;
}

/** The literal's message is create()'s: deeply equal (prototypes included), keys in the same order. */
function sameZero(made: Fields, template: Fields): boolean {
  const keys = Object.keys(made);
  return isDeepStrictEqual(made, template) && Object.keys(template).every((k, i) => keys[i] === k);
}
