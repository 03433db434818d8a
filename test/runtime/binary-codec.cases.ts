/**
 * The binary codecs the plugin emits must agree with protobuf-es exactly:
 * - encodeBinary(desc, v) gives the bytes of toBinary(desc, create(desc, v)),
 *   for an init shape and for the created message alike;
 * - decodeBinary(desc, b) gives what fromBinary(desc, b) gives (toStrictEqual:
 *   same fields, defaults and $unknown; `equals` would not do, as NaN is never
 *   equal to itself; and the same prototype for every object, compared
 *   apart, as toStrictEqual only compares constructors), or throws the same
 *   error.
 * Checked on random values (fixed seed) of fixtures with every field kind
 * (proto3, proto2 for closed enums, defaults, required fields and groups,
 * editions for explicit presence by default and delimited message fields),
 * on bytes protobuf-es would never write (packed vs unpacked, concatenated
 * messages that merge, unknown fields, truncation), and on A2A's types.
 * The fixture protos are run through the plugin here (test/support/codecs.ts:
 * protoc-gen-es's `_pb.ts` and the emitted `_codec.ts`, loaded and
 * registered), so `encodeBinary(desc)` and `decodeBinary(desc)` run the
 * emitted code of `desc`, and `serializeMessage(codec)` what the generated
 * gRPC definitions call; A2A's types run generated/a2a_codec.ts.
 */
import {
  ScalarType,
  create,
  createFileRegistry,
  fromBinary,
  toBinary,
  type DescField,
  type DescMessage,
  type JsonValue,
} from "@bufbuild/protobuf";
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { CodeGeneratorRequestSchema, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import "../../generated/a2a_methods.js";
import {
  AgentCardSchema,
  MessageSchema,
  SendMessageRequestSchema,
  SendMessageResponseSchema,
  StreamResponseSchema,
  TaskSchema,
} from "../../generated/a2a_pb.js";
import { CodecWriter, decodeBinary, encodeBinary, encodeBuffer, readsWriterBuffer, serializeMessage } from "../../runtime/core/codec/binary-codec.js";
import { codecOf } from "../../runtime/core/codec/registry.js";
import { codecFixtures } from "../support/codec-fixtures.js";
import { loadCodecs, loadCodecsOf } from "../support/codecs.js";
import { rng } from "../support/rng.js";

const emitted = await loadCodecs(codecFixtures);
afterAll(() => emitted.done());
const message = emitted.message;
const All = message("bc.v1.All");
const Inner = message("bc.v1.Inner");
const Unpacked = message("bc.v1.Unpacked");
const P2 = message("bc.v2.P2");
const WithGroup = message("bc.v2.WithGroup");
const Ed = message("bc.v3.Ed");
const Longs = message("bc.v4.Longs");

/** The fixture messages, proto3 and proto2, and A2A's. */
export const fixtures = { All, Inner, Unpacked, P2, Ed, Longs, Task: TaskSchema, AgentCard: AgentCardSchema, StreamResponse: StreamResponseSchema } as const;

/** The emitted sources of the fixtures' codec files, by file name. */
export const emittedSources = emitted.sources;

function generator(seed: number) {
  const r = rng(seed);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const scalar = (field: DescField, type: ScalarType): unknown => {
    const zero = r() < 0.3;
    const long = (v: bigint) => ((field as { longAsString?: boolean }).longAsString === true ? String(v) : v);
    switch (type) {
      case ScalarType.STRING:
        return zero ? "" : pick(["a", "é ü", "<&>", "line\nbreak", "x".repeat(40), "ü".repeat(70), "😀 emoji"]);
      case ScalarType.BOOL:
        return zero ? false : true;
      case ScalarType.BYTES:
        return zero ? pick([new Uint8Array(0), []]) : pick([new Uint8Array([1, 2, 255, Math.floor(r() * 256)]), [9, 8], new Uint8Array(200).fill(3)]);
      case ScalarType.DOUBLE:
      case ScalarType.FLOAT:
        return zero ? pick([0, -0]) : pick([1.5, -2.25, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e21]);
      case ScalarType.INT64:
      case ScalarType.SINT64:
      case ScalarType.SFIXED64:
        return long(zero ? 0n : pick([1n, -5n, 9007199254740993n, -9223372036854775808n]));
      case ScalarType.UINT64:
      case ScalarType.FIXED64:
        return long(zero ? 0n : pick([1n, 18446744073709551615n]));
      case ScalarType.UINT32:
      case ScalarType.FIXED32:
        return zero ? 0 : pick([1, 300, 4294967295]);
      default:
        return zero ? 0 : pick([1, -7, 2147483647, -2147483648, 200]);
    }
  };
  const enumValue = (field: DescField): number => pick([0, ...(field.enum?.values.map((v) => v.number) ?? []), 99, -3]);
  const json = (depth: number): JsonValue =>
    depth > 1 ? pick([1, "x", true, null]) : pick([1.5, "s", false, null, [1, "a", null], { k: depth < 1 ? json(depth + 1) : 1 }]);
  const value = (desc: DescMessage, depth: number): unknown => {
    switch (desc.typeName) {
      case "google.protobuf.Timestamp":
      case "google.protobuf.Duration":
        return { seconds: BigInt(Math.floor(r() * 1e9)), nanos: pick([0, 5_000_000, 123_456_789]) };
      case "google.protobuf.Value":
        return pick([
          { kind: { case: "stringValue", value: "v" } },
          { kind: { case: "numberValue", value: 2 } },
          { kind: { case: "nullValue", value: 0 } },
          { kind: { case: "boolValue", value: false } },
          { kind: { case: "structValue", value: { fields: { a: { kind: { case: "numberValue", value: 1 } } } } } },
          {},
        ]);
      case "google.protobuf.ListValue":
        return { values: [{ kind: { case: "stringValue", value: "l" } }] };
      case "google.protobuf.Any":
        return pick([{}, { typeUrl: "type.googleapis.com/bc.v1.Inner", value: toBinary(Inner, create(Inner, { name: "in any" })) }]);
      case "google.protobuf.StringValue":
        return pick([{}, { value: "w" }]);
    }
    const out: Record<string, unknown> = {};
    for (const oneof of desc.oneofs) {
      if (r() < 0.3) continue;
      const member = pick(oneof.fields);
      out[oneof.localName] = { case: member.localName, value: single(member, depth) };
    }
    for (const field of desc.fields) {
      if (field.oneof !== undefined || r() < 0.35) continue;
      // Explicitly missing, and null: both are "not set" in an init shape.
      if (r() < 0.05) {
        out[field.localName] = pick([undefined, null]);
        continue;
      }
      out[field.localName] = fieldValue(field, depth);
    }
    return out;
  };
  const wrapper = (desc: DescMessage): unknown => {
    switch (desc.typeName) {
      case "google.protobuf.StringValue":
        return pick(["", "w"]);
      case "google.protobuf.Int64Value":
        return pick([0n, 12n, -1n]);
      case "google.protobuf.BytesValue":
        return pick([new Uint8Array(0), new Uint8Array([4]), [5, 6], []]);
      case "google.protobuf.BoolValue":
        return pick([false, true]);
      default:
        return pick([0, -0, 2.5, Number.NaN]);
    }
  };
  const single = (field: DescField, depth: number): unknown => {
    if (field.message !== undefined) {
      if (field.message.typeName === "google.protobuf.Struct") {
        // Different keys each time, so merging two (a repeated field record) shows.
        const all: Record<string, JsonValue> = { a: json(0), b: [true, null], c: { d: "e" }, d: 2 };
        return Object.fromEntries(Object.entries(all).filter(() => r() < 0.6));
      }
      if (field.fieldKind === "message" && field.oneof === undefined && field.message.typeName.startsWith("google.protobuf.") && field.message.typeName.endsWith("Value") && field.message.typeName !== "google.protobuf.Value" && field.message.typeName !== "google.protobuf.ListValue") {
        return wrapper(field.message);
      }
      // Sometimes a created message rather than an init shape.
      const v = value(field.message, depth + 1);
      return r() < 0.2 ? create(field.message, v as never) : v;
    }
    if (field.enum !== undefined) return enumValue(field);
    return scalar(field, field.scalar as ScalarType);
  };
  const fieldValue = (field: DescField, depth: number): unknown => {
    if (field.message !== undefined && depth > 2 && field.fieldKind === "message") return undefined;
    switch (field.fieldKind) {
      case "list": {
        const n = depth > 2 ? 0 : Math.floor(r() * 4);
        return Array.from({ length: n }, () => single(field, depth));
      }
      case "map": {
        const n = depth > 2 ? 0 : Math.floor(r() * 4);
        const keys =
          field.mapKey === ScalarType.BOOL ? ["true", "false"] : field.mapKey === ScalarType.STRING
              ? ["k", "é", "", "__proto__"]
              : field.mapKey === ScalarType.UINT64 || field.mapKey === ScalarType.FIXED64 || field.mapKey === ScalarType.UINT32 || field.mapKey === ScalarType.FIXED32
                ? ["1", "4294967295", "0"]
                : ["1", "-2", "0"];
        const out: Record<string, unknown> = {};
        const from = Math.floor(r() * keys.length);
        for (const k of [...keys.slice(from), ...keys.slice(0, from)].slice(0, n)) Object.defineProperty(out, k, { value: single(field, depth), enumerable: true, writable: true, configurable: true });
        return out;
      }
      default:
        return single(field, depth);
    }
  };
  return (desc: DescMessage) => value(desc, 0);
}

/** What protobuf-es does, as a result or the error it throws. */
function attempt<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: string } {
  try {
    return { ok: true, value: fn() };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e) };
  }
}

function expectSameEncoding(desc: DescMessage, init: unknown): void {
  const expected = attempt(() => toBinary(desc, create(desc, init as never)));
  expect(attempt(() => encodeBinary(desc, init as never))).toEqual(expected);
  if (!expected.ok) return;
  expect(encodeBinary(desc, create(desc, init as never))).toEqual(expected.value);
  // What the generated gRPC definitions send: the same bytes, in a Node Buffer.
  const codec = codecOf(desc);
  expect(codec?.schema).toBe(desc);
  const buffer = serializeMessage(codec as NonNullable<typeof codec>, init as never);
  expect(Buffer.isBuffer(buffer)).toBe(true);
  expect(new Uint8Array(buffer)).toEqual(expected.value);
  expect(new Uint8Array(encodeBuffer(desc, init as never))).toEqual(expected.value);
  // Decoded by protobuf-es, the same message as created from the value.
  expect(toBinary(desc, fromBinary(desc, encodeBinary(desc, init as never)))).toEqual(toBinary(desc, fromBinary(desc, expected.value)));
}

function expectSameDecoding(desc: DescMessage, bytes: Uint8Array): void {
  const expected = attempt(() => fromBinary(desc, bytes));
  const actual = attempt(() => decodeBinary(desc, bytes));
  expect(actual).toStrictEqual(expected);
  if (expected.ok && actual.ok) expect(prototypeMismatches(actual.value, expected.value)).toEqual([]);
  if (expected.ok) {
    // A decoded message (with its $unknown) encodes as protobuf-es encodes it.
    const value = expected.value;
    expect(attempt(() => encodeBinary(desc, value))).toEqual(attempt(() => toBinary(desc, value)));
  }
}

/**
 * Where two decoded trees have objects of different prototypes (toStrictEqual
 * compares constructors only, and a proto2 message's prototype, which holds
 * its defaults, has Object's).
 */
function prototypeMismatches(a: unknown, b: unknown, path = "$"): string[] {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null || a instanceof Uint8Array) return [];
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return [path];
  return Object.keys(a).flatMap((k) => prototypeMismatches((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function roundTrips(desc: DescMessage, seed: number, count: number, others: readonly DescMessage[] = []): void {
  const next = generator(seed);
  let previous: Uint8Array | undefined;
  for (let i = 0; i < count; i++) {
    const init = next(desc);
    expectSameEncoding(desc, init);
    // Values protobuf-es refuses to encode (a required field unset) end here, the error compared.
    const encoded = attempt(() => toBinary(desc, create(desc, init as never)));
    if (!encoded.ok) continue;
    const bytes = encoded.value;
    expectSameDecoding(desc, bytes);
    // Two messages back to back merge: singular messages merge, lists append.
    if (previous !== undefined) expectSameDecoding(desc, concat(previous, bytes));
    // Cut short: the same error (or the same partial message).
    if (bytes.length > 2) expectSameDecoding(desc, bytes.subarray(0, Math.floor(bytes.length / 2)));
    // Read as other types: unknown fields, unexpected wire types.
    for (const other of others) expectSameDecoding(other, bytes);
    previous = bytes;
  }
}

/** The codec's tests, on the codecs emitted for the fixtures and A2A's. */
export function codecTests(): void {
  test.each([1, 2, 3, 4, 5, 6, 7, 8])("proto3 fixture with every field kind, random values, seed %i", (seed) => {
    roundTrips(All, seed, 60, [Inner, Unpacked, P2]);
  });

  test.each([11, 12, 13])("unpacked lists decode into packed fields and back, seed %i", (seed) => {
    roundTrips(Unpacked, seed, 60, [All]);
  });

  test.each([21, 22, 23, 24])("proto2 fixture (closed enums, defaults, required, groups), seed %i", (seed) => {
    roundTrips(P2, seed, 60, [All, Inner]);
  });

  test.each([31, 32, 33, 34])("editions fixture (explicit presence by default, delimited fields), seed %i", (seed) => {
    roundTrips(Ed, seed, 60, [All, P2]);
  });

  test.each([41, 42])("proto3 64-bit fields held as strings, and bytes, seed %i", (seed) => {
    roundTrips(Longs, seed, 60, [All]);
  });

  test("strings around the writer's ASCII path (up to 127 characters) encode as toBinary encodes them", () => {
    const ascii = (n: number) => "abcdefghij".repeat(13).slice(0, n);
    const values = [0, 1, 31, 32, 33, 36, 100, 126, 127, 128, 129, 200].flatMap((n) => [
      ascii(n),
      // Not ASCII at the end (the path has written the rest by then), in the middle, or a lone surrogate.
      `${ascii(n)}é`,
      `${ascii(Math.floor(n / 2))}ü${ascii(Math.ceil(n / 2))}`,
      `${ascii(n)}\ud800`,
    ]);
    for (const value of values) {
      expectSameEncoding(All, { fString: value, rString: [value, "id"], choice: { case: "cString", value } });
      // A2A's ids and texts, through generated/a2a_codec.ts.
      expectSameEncoding(TaskSchema, { id: value, contextId: "c", history: [{ messageId: value, parts: [{ content: { case: "text", value } }] }] });
    }
  });

  test("values that are not strings, where a list item or a oneof value may be one, encode as toBinary encodes them", () => {
    for (const value of [null, undefined, 5, ["abc"], new String("abc"), true]) {
      expectSameEncoding(All, { rString: [value, "id"], choice: { case: "cString", value } });
      expectSameEncoding(MessageSchema, { messageId: "m", extensions: [value], parts: [{ content: { case: "text", value } }] });
    }
  });

  test("the writer's ASCII path near the end of its buffer: the same bytes as protobuf-es's writer, with or without room", () => {
    const room = (w: BinaryWriter) => (w as unknown as { buffer: Uint8Array }).buffer.length;
    for (const len of [1, 33, 36, 100, 127]) {
      const value = "k".repeat(len);
      const size = room(new CodecWriter().raw(new Uint8Array(1000)));
      // Written at every position from well inside the buffer to past the point where the string no longer fits.
      for (let at = size - len - 4; at <= Math.min(size, size - len + 2); at++) {
        const ours = new CodecWriter().raw(new Uint8Array(at).fill(1));
        expect(room(ours)).toBe(size);
        const theirs = new BinaryWriter().raw(new Uint8Array(at).fill(1));
        expect([len, at, ours.string(value).string("é").finish()]).toEqual([len, at, theirs.string(value).string("é").finish()]);
      }
    }
  });

  test("a closed enum's unknown value and an unknown field, in either order: what fromBinary keeps (protobuf-es 2.17 loses the value)", () => {
    // P2 field 3 is the closed enum `e`: 9 is none of its values; field 99 is no field of P2.
    const enumFirst = Uint8Array.from([0x18, 0x09, 0x98, 0x06, 0x01]);
    const fieldFirst = Uint8Array.from([0x98, 0x06, 0x01, 0x18, 0x09]);
    for (const bytes of [enumFirst, fieldFirst]) {
      expectSameDecoding(P2, bytes);
      // fromBinary's loop sets its own list of unknown fields last, over the one the enum's reader started.
      // When protobuf-es keeps the value, this fails: the emitted reader must then keep it too.
      expect((decodeBinary(P2, bytes) as unknown as { $unknown?: { no: number }[] }).$unknown?.map((u) => u.no)).toEqual([99]);
    }
    // Alone, the value is kept, by both.
    const alone = Uint8Array.from([0x18, 0x09]);
    expectSameDecoding(P2, alone);
    expect((decodeBinary(P2, alone) as unknown as { $unknown?: { no: number }[] }).$unknown?.map((u) => u.no)).toEqual([3]);
    // Field 7 (`child`) met twice: the second is read into the first, whose unknown field is there already; both kept.
    const twice = Uint8Array.from([0x3a, 0x03, 0x98, 0x06, 0x01, 0x3a, 0x02, 0x18, 0x09]);
    expectSameDecoding(P2, twice);
    const child = (decodeBinary(P2, twice) as unknown as { child?: { $unknown?: { no: number }[] } }).child;
    expect(child?.$unknown?.map((u) => u.no)).toEqual([99, 3]);
  });

  test("a group met twice in one message merges, as fromBinary merges it", () => {
    const first = toBinary(WithGroup, create(WithGroup, { g: { a: 1 } } as never));
    const second = toBinary(WithGroup, create(WithGroup, { g: {}, after: "x" } as never));
    expect(first.length).toBeGreaterThan(0);
    expectSameDecoding(WithGroup, concat(first, second));
    expectSameDecoding(WithGroup, concat(second, first));
  });

  test("a message of 25,000 fields codes as protobuf-es codes it", async () => {
    const field = Array.from({ length: 25_000 }, (_, i) => ({ name: `f${i + 1}`, jsonName: `f${i + 1}`, number: i + 1, type: 5, label: 1 }));
    const file = create(FileDescriptorProtoSchema, {
      name: "bc/big.proto",
      package: "bc.big",
      syntax: "proto3",
      messageType: [{ name: "Big", field }],
    });
    expect(createFileRegistry(file, () => undefined).getMessage("bc.big.Big")).toBeDefined();
    const big = await loadCodecsOf(create(CodeGeneratorRequestSchema, { fileToGenerate: [file.name], parameter: "target=ts,import_extension=js", protoFile: [file], sourceFileDescriptors: [file] }));
    const Big = big.message("bc.big.Big");
    big.done();
    const init = { f1: 1, f12345: -7, f25000: 42 };
    expectSameEncoding(Big, init);
    expectSameDecoding(Big, toBinary(Big, create(Big, init as never)));
  }, 60_000);

  test("an empty value, null and undefined encode to nothing", () => {
    for (const v of [{}, undefined, null]) expect(encodeBinary(All, v as never)).toEqual(new Uint8Array(0));
    expectSameDecoding(All, new Uint8Array(0));
  });

  test("decoded proto2 messages keep their defaults on the prototype and presence as own properties", () => {
    const bytes = toBinary(P2, create(P2, { s: "set", e: 2 } as never));
    const m = decodeBinary(P2, bytes) as unknown as Record<string, unknown>;
    expect(Object.prototype.hasOwnProperty.call(m, "i")).toBe(false);
    expect(m.i).toBe(7);
    expect(Object.prototype.hasOwnProperty.call(m, "s")).toBe(true);
    // Re-encoding writes only what is set.
    expect(encodeBinary(P2, m as never)).toEqual(bytes);
  });

  test("malformed input fails as fromBinary fails", () => {
    for (const bytes of [
      [0x00],
      [0x0f],
      [0xff, 0xff, 0xff, 0xff, 0xff, 0x0f],
      [0x8a, 0x01, 0x05, 0x0a],
      [0x0a, 0x80],
      [0x9a, 0x02, 0x02, 0x0a],
    ]) {
      expectSameDecoding(All, new Uint8Array(bytes));
    }
  });

  test("the recursion limit applies as in fromBinary", () => {
    let init: Record<string, unknown> = {};
    for (let i = 0; i < 120; i++) init = { recurse: init };
    const bytes = toBinary(All, create(All, init as never));
    expect(encodeBinary(All, init as never)).toEqual(bytes);
    expectSameDecoding(All, bytes);
    expect(attempt(() => decodeBinary(All, bytes, { recursionLimit: 200 }))).toStrictEqual(attempt(() => fromBinary(All, bytes, { recursionLimit: 200 })));
  });

  test("values encoding rejects are reported as toBinary reports them", () => {
    for (const bad of [{ fInt32: 1.5 }, { rInt64: ["x"] }, { mInt64: { nope: "v" } }, { choice: { case: "cInt32", value: "no" } }, { fMsg: { big: "z" } }]) {
      expectSameEncoding(All, bad);
    }
  });

  test.each([
    ["Task", TaskSchema],
    ["AgentCard", AgentCardSchema],
    ["StreamResponse", StreamResponseSchema],
    ["SendMessageRequest", SendMessageRequestSchema],
    ["SendMessageResponse", SendMessageResponseSchema],
  ] as const)("A2A %s, random values", (_name, desc) => {
    roundTrips(desc, 7, 80, [TaskSchema]);
  });

  describe("encodeBuffer", () => {
    test("reads protobuf-es's BinaryWriter buffer directly (a protobuf-es upgrade that changes it shows here)", () => {
      expect(readsWriterBuffer()).toBe(true);
    });

    test("every call answers its own copy: the writer's buffer is reused, earlier results are not overwritten", () => {
      const a = encodeBuffer(TaskSchema, { id: "first", contextId: "c-1" });
      const aBytes = Uint8Array.from(a);
      const b = encodeBuffer(TaskSchema, { id: "second-and-longer", contextId: "c-2" });
      expect(new Uint8Array(a)).toEqual(aBytes);
      expect(new Uint8Array(a)).toEqual(toBinary(TaskSchema, create(TaskSchema, { id: "first", contextId: "c-1" })));
      expect(new Uint8Array(b)).toEqual(toBinary(TaskSchema, create(TaskSchema, { id: "second-and-longer", contextId: "c-2" })));
      expect(a.buffer === b.buffer && a.byteOffset === b.byteOffset).toBe(false);
    });

    test("a value that fails to encode leaves the next encoding intact", () => {
      expect(() => encodeBuffer(TaskSchema, { id: "x", status: { state: 1.5 as never } })).toThrow(/cannot encode field lf\.a2a\.v1\.TaskStatus\.state/);
      const ok = encodeBuffer(TaskSchema, { id: "after" });
      expect(new Uint8Array(ok)).toEqual(toBinary(TaskSchema, create(TaskSchema, { id: "after" })));
    });

    test("a message larger than the kept writer's limit, then a small one", () => {
      const big = { id: "big", artifacts: [{ artifactId: "a", parts: [{ content: { case: "text" as const, value: "x".repeat(70_000) } }] }] };
      expect(new Uint8Array(encodeBuffer(TaskSchema, big))).toEqual(toBinary(TaskSchema, create(TaskSchema, big)));
      expect(new Uint8Array(encodeBuffer(TaskSchema, { id: "small" }))).toEqual(toBinary(TaskSchema, create(TaskSchema, { id: "small" })));
    });
  });
}
