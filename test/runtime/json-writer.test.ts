/**
 * The ProtoJSON writers the plugin emits must give exactly what the general
 * route gives: toJsonWithRequired(desc, create(desc, value), table), keys in
 * declaration order. Checked on random values (fixed seed) of a fixture with
 * every field kind, and of A2A's types; the fixture protos are run through
 * the plugin here (test/support/codecs.ts), so jsonWriter(desc, table) runs
 * their emitted writers.
 */
import {
  ScalarType,
  create,
  createFileRegistry,
  type DescField,
  type DescMessage,
  type JsonValue,
  toJson,
} from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { A2AServiceRequiredFields } from "../../generated/a2a_methods.js";
import { AgentCardSchema, ListTasksResponseSchema, SendMessageResponseSchema, StreamResponseSchema, TaskSchema } from "../../generated/a2a_pb.js";
import { collectRequiredFields } from "../../plugin/model/required-fields.js";
import { isEmittedWriter, jsonWriter } from "../../runtime/core/codec/json-writer.js";
import type { RequiredFieldTable } from "../../runtime/core/method-spec.js";
import { toJsonWithRequired } from "../../runtime/core/codec/required-fields.js";
import { customJson } from "../../runtime/core/codec/wire.js";
import { loadCodecs } from "../support/codecs.js";
import { rng } from "../support/rng.js";

const fixture = `syntax = "proto3";
package jw.v1;
import "google/api/field_behavior.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/wrappers.proto";
enum Color { COLOR_UNSPECIFIED = 0; COLOR_RED = 1; COLOR_BLUE = 2; }
message All {
  double f_double = 1; float f_float = 2; int64 f_int64 = 3; uint64 f_uint64 = 4; int32 f_int32 = 5;
  fixed64 f_fixed64 = 6; fixed32 f_fixed32 = 7; bool f_bool = 8; string f_string = 9; bytes f_bytes = 10;
  uint32 f_uint32 = 11; sfixed32 f_sfixed32 = 12; sfixed64 f_sfixed64 = 13; sint32 f_sint32 = 14; sint64 f_sint64 = 15;
  Color f_enum = 16; Inner f_msg = 17;
  optional string o_string = 18; optional int32 o_int32 = 19; optional Color o_enum = 20; optional bool o_bool = 21;
  repeated int64 r_int64 = 22; repeated string r_string = 23; repeated Color r_enum = 24; repeated Inner r_msg = 25;
  repeated bytes r_bytes = 26; repeated double r_double = 27;
  map<string, Inner> m_msg = 28; map<int64, string> m_int64 = 29; map<bool, Color> m_bool = 30; map<int32, bytes> m_bytes = 31;
  oneof choice { string c_string = 32; Inner c_msg = 33; int32 c_int32 = 34; Color c_enum = 35; }
  google.protobuf.Struct f_struct = 36; google.protobuf.Value f_value = 37; google.protobuf.ListValue f_list = 38;
  google.protobuf.Timestamp f_ts = 39; google.protobuf.Duration f_dur = 40; repeated google.protobuf.Timestamp r_ts = 41;
  string req_string = 42 [(google.api.field_behavior) = REQUIRED];
  int32 req_int32 = 43 [(google.api.field_behavior) = REQUIRED];
  repeated Inner req_list = 44 [(google.api.field_behavior) = REQUIRED];
  Color req_enum = 45 [(google.api.field_behavior) = REQUIRED];
  map<string, string> req_map = 46 [(google.api.field_behavior) = REQUIRED];
  Inner req_msg = 47 [(google.api.field_behavior) = REQUIRED];
  All recurse = 48;
}
message Inner {
  string name = 1 [(google.api.field_behavior) = REQUIRED];
  int64 big = 2 [(google.api.field_behavior) = REQUIRED];
  bytes raw = 3;
  Inner child = 4;
}
message Wrapped { google.protobuf.StringValue s = 1; google.protobuf.Int64Value n = 2; string plain = 3; }
`;

// Explicit presence with defaults on the prototype, closed enums, 64-bit as
// strings; and a JSON name that is "__proto__".
const proto2 = `syntax = "proto2";
package jw.v2;
enum Closed { CLOSED_A = 1; CLOSED_B = 2; }
message P2 {
  optional int32 i = 1 [default = 7];
  optional string s = 2 [default = "d"];
  optional Closed e = 3;
  repeated Closed re = 4;
  optional P2 child = 5;
  optional int64 l = 6 [jstype = JS_STRING];
  optional bytes b = 7 [default = "x"];
  optional double d = 8 [default = 1.5];
  oneof o { string o_s = 9; int32 o_i = 10; }
  map<string, string> m = 11;
  repeated P2 kids = 12;
}
message Odd { optional string a = 1 [json_name = "__proto__"]; optional int32 n = 2; }
`;

const emitted = await loadCodecs({ "jw/v1/jw.proto": fixture, "jw/v2/p2.proto": proto2 });
const message = emitted.message;
afterAll(() => emitted.done());
const All = message("jw.v1.All");
const fixtureTable: RequiredFieldTable = Object.fromEntries(
  collectRequiredFields([All, message("jw.v1.Wrapped")]).map((t) => [
    t.message.typeName,
    { required: t.required.map((f) => f.localName), nested: t.nested.map((f) => f.localName) },
  ]),
);

function generator(seed: number) {
  const r = rng(seed);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const scalar = (type: ScalarType): unknown => {
    const zero = r() < 0.3;
    switch (type) {
      case ScalarType.STRING:
        return zero ? "" : pick(["a", "é ü", "<&>", "line\nbreak"]);
      case ScalarType.BOOL:
        return zero ? false : true;
      case ScalarType.BYTES:
        return zero ? new Uint8Array(0) : new Uint8Array([1, 2, 255, Math.floor(r() * 256)]);
      case ScalarType.DOUBLE:
      case ScalarType.FLOAT:
        return zero ? pick([0, -0]) : pick([1.5, -2.25, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e21]);
      case ScalarType.INT64:
      case ScalarType.SINT64:
      case ScalarType.SFIXED64:
        return zero ? 0n : pick([1n, -5n, 9007199254740993n, -9223372036854775808n]);
      case ScalarType.UINT64:
      case ScalarType.FIXED64:
        return zero ? 0n : pick([1n, 18446744073709551615n]);
      case ScalarType.UINT32:
      case ScalarType.FIXED32:
        return zero ? 0 : pick([1, 4294967295]);
      default:
        return zero ? 0 : pick([1, -7, 2147483647]);
    }
  };
  const enumValue = (field: DescField): number => pick([0, ...(field.enum?.values.map((v) => v.number) ?? []), 99]);
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
        ]);
      case "google.protobuf.ListValue":
        return { values: [{ kind: { case: "stringValue", value: "l" } }] };
      case "google.protobuf.StringValue":
        return pick(["", "w"]);
      case "google.protobuf.Int64Value":
        return pick([0n, 12n]);
    }
    const out: Record<string, unknown> = {};
    for (const oneof of desc.oneofs) {
      if (r() < 0.3) continue;
      const member = pick(oneof.fields);
      out[oneof.localName] = { case: member.localName, value: single(member, depth) };
    }
    for (const field of desc.fields) {
      if (field.oneof !== undefined || r() < 0.35) continue;
      out[field.localName] = fieldValue(field, depth);
    }
    return out;
  };
  const single = (field: DescField, depth: number): unknown => {
    if (field.message !== undefined) {
      if (field.message.typeName === "google.protobuf.Struct") return { a: json(0), b: [true, null] };
      return value(field.message, depth + 1);
    }
    if (field.enum !== undefined) return enumValue(field);
    return scalar(field.scalar as ScalarType);
  };
  const fieldValue = (field: DescField, depth: number): unknown => {
    if (field.message !== undefined && depth > 2 && field.fieldKind === "message") return undefined;
    switch (field.fieldKind) {
      case "list": {
        const n = depth > 2 ? 0 : Math.floor(r() * 3);
        return Array.from({ length: n }, () => single(field, depth));
      }
      case "map": {
        const n = depth > 2 ? 0 : Math.floor(r() * 3);
        const keys = field.mapKey === ScalarType.BOOL ? ["true", "false"] : field.mapKey === ScalarType.STRING ? ["k", "__proto__", "é", ""] : ["1", "-2", "0"];
        return Object.fromEntries(keys.slice(0, n).map((k) => [k, single(field, depth)]));
      }
      default:
        return single(field, depth);
    }
  };
  return (desc: DescMessage) => value(desc, 0);
}

/** Whether the keys of `json` (a message's JSON) come in the declaration order of `desc`'s fields, as the emitted writers write them. */
function inDeclarationOrder(desc: DescMessage, json: JsonValue): boolean {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return true;
  const order = Object.keys(json).map((key) => desc.fields.findIndex((f) => f.jsonName === key));
  return order.every((i, n) => i >= 0 && (n === 0 || i > (order[n - 1] as number)));
}

function expectSame(desc: DescMessage, table: RequiredFieldTable, init: unknown): void {
  const expected = toJsonWithRequired(desc, create(desc, init as never), table);
  const write = jsonWriter(desc, table);
  expect(write(init)).toEqual(expected);
  expect(write(create(desc, init as never))).toEqual(expected);
  // toEqual ignores key order; the JSON on the wire does not.
  expect(inDeclarationOrder(desc, write(init))).toBe(true);
  expect(JSON.stringify(write(init))).toBe(JSON.stringify(write(create(desc, init as never))));
}

test("jsonWriter answers the emitted writer where the REQUIRED table agrees with the codecs, the general route otherwise", () => {
  for (const desc of [All, TaskSchema, SendMessageResponseSchema]) {
    const table = desc === All ? fixtureTable : A2AServiceRequiredFields;
    expect([desc.typeName, isEmittedWriter(desc, table)]).toEqual([desc.typeName, true]);
  }
  // A table that names other REQUIRED fields than the annotations: protobuf-es's route, with that table.
  const other: RequiredFieldTable = { ...fixtureTable, "jw.v1.Inner": { required: [], nested: [] } };
  expect(isEmittedWriter(All, other)).toBe(false);
  expect(jsonWriter(All, other)({ fMsg: {} })).toEqual(toJsonWithRequired(All, create(All, { fMsg: {} } as never), other));
  expect(jsonWriter(All, other)({ fMsg: {} })).toMatchObject({ fMsg: {} });
  expect(jsonWriter(All, fixtureTable)({ fMsg: {} })).toMatchObject({ fMsg: { name: "", big: "0" } });
  // A type without a registered codec (the same message, described anew): protobuf-es's route.
  const P2 = message("jw.v2.P2");
  const fresh = createFileRegistry(P2.file.proto, () => undefined).getMessage("jw.v2.P2") as DescMessage;
  expect(isEmittedWriter(fresh, fixtureTable)).toBe(false);
  expect(jsonWriter(fresh, fixtureTable)({ s: "x", re: [1] })).toEqual(toJsonWithRequired(fresh, create(fresh, { s: "x", re: [1] } as never), fixtureTable));
});

test.each([1, 2, 3, 4, 5, 6, 7, 8])("a fixture with every field kind, random values, seed %i", (seed) => {
  const next = generator(seed);
  for (let i = 0; i < 60; i++) expectSame(All, fixtureTable, next(All));
});

test.each([11, 12, 13, 14])("proto2: explicit presence, prototype defaults, closed enums, random values, seed %i", (seed) => {
  const P2 = message("jw.v2.P2");
  const next = generator(seed);
  for (let i = 0; i < 60; i++) expectSame(P2, fixtureTable, next(P2));
  // A field set to its declared default is set (an own property), and written.
  expectSame(P2, fixtureTable, { i: 7, s: "d" });
  expect(jsonWriter(P2, fixtureTable)(create(P2, { i: 7 } as never))).toEqual({ i: 7 });
});

test("a JSON name or map key that is __proto__ is written as an own property, as protobuf-es writes it", () => {
  const Odd = message("jw.v2.Odd");
  const P2 = message("jw.v2.P2");
  const odd = jsonWriter(Odd, fixtureTable)({ a: "x", n: 1 }) as Record<string, unknown>;
  expect(Object.keys(odd)).toEqual(["__proto__", "n"]);
  expect(Object.getPrototypeOf(odd)).toBe(Object.prototype);
  expectSame(Odd, fixtureTable, { a: "x", n: 1 });
  const withKey = JSON.parse('{"m":{"__proto__":"v","k":"w"}}') as unknown;
  const p2 = jsonWriter(P2, fixtureTable)(withKey) as { m: Record<string, unknown> };
  expect(Object.keys(p2.m)).toEqual(["__proto__", "k"]);
  expectSame(P2, fixtureTable, withKey);
});

test("an empty value writes only the REQUIRED defaults", () => {
  expect(jsonWriter(All, fixtureTable)({})).toEqual({
    reqString: "",
    reqInt32: 0,
    reqList: [],
    reqEnum: "COLOR_UNSPECIFIED",
    reqMap: {},
  });
});

test("messages with unboxed wrapper fields agree too", () => {
  const Wrapped = message("jw.v1.Wrapped");
  expect(isEmittedWriter(Wrapped, fixtureTable)).toBe(true);
  const next = generator(42);
  for (let i = 0; i < 40; i++) expectSame(Wrapped, fixtureTable, next(Wrapped));
});

test.each([
  ["Task", TaskSchema],
  ["AgentCard", AgentCardSchema],
  ["StreamResponse", StreamResponseSchema],
  ["SendMessageResponse", SendMessageResponseSchema],
  ["ListTasksResponse", ListTasksResponseSchema],
] as const)("A2A %s, random values", (_name, desc) => {
  const next = generator(7);
  for (let i = 0; i < 80; i++) expectSame(desc, A2AServiceRequiredFields, next(desc));
});

test("a Timestamp is written as protobuf-es writes it, and refused with its message when out of range", () => {
  const write = (value: object) => customJson(TimestampSchema, value as never);
  const seconds = [0n, 1n, -1n, 1796207923n, -62135596800n, 253402300799n, -62135596801n, 253402300800n];
  const nanos = [0, 1, 999, 1000, 5_000_000, 120_000, 123_456_789, 999_999_999, -1, 1_000_000_000, 1.5];
  for (const s of seconds) {
    for (const n of nanos) {
      const value = { seconds: s, nanos: n };
      let expected: unknown;
      try {
        expected = toJson(TimestampSchema, create(TimestampSchema, value));
      } catch (err) {
        expect(() => write(value)).toThrow((err as Error).message);
        continue;
      }
      expect(write(value)).toBe(expected);
      expect(write(create(TimestampSchema, value))).toBe(expected);
    }
  }
  // An init shape may leave fields out, or give seconds as a number.
  expect(write({})).toBe("1970-01-01T00:00:00Z");
  expect(write({ seconds: 86_400 })).toBe("1970-01-02T00:00:00Z");
  expect(write({ nanos: 10_000_000 })).toBe(toJson(TimestampSchema, create(TimestampSchema, { nanos: 10_000_000 })));
});
