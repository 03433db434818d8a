/**
 * The ProtoJSON fast path (runtime/core/codec/json-reader.ts) against protobuf-es:
 * whenever readJsonFast answers, its message equals what decodeJson gives
 * through protobuf-es alone (and fromJson with ignoreUnknownFields); when
 * it does not answer, protobuf-es decides. Random bodies over every field
 * kind, mutated into the inputs clients get wrong. The fixture protos are
 * run through the plugin here (test/support/codecs.ts), so new messages are
 * the emitted codecs' zero messages, as in a generated server.
 */
import { fromJson, type DescField, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import "../../generated/a2a_methods.js";
import {
  AgentCardSchema,
  ListTasksRequestSchema,
  SendMessageRequestSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
} from "../../generated/a2a_pb.js";
import { readJsonFast } from "../../runtime/core/codec/json-reader.js";
import { decodeJson, decodeJsonStrict } from "../../runtime/core/codec/proto-json.js";
import { codecOf } from "../../runtime/core/codec/registry.js";
import { loadCodecs } from "../support/codecs.js";
import { rng } from "../support/rng.js";

const proto3 = `syntax = "proto3";
package jr.v1;
import "google/protobuf/struct.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
enum Color { COLOR_UNSPECIFIED = 0; COLOR_RED = 1; COLOR_BLUE = 2; }
message All {
  string f_string = 1; bool f_bool = 2; int32 f_int32 = 3; uint32 f_uint32 = 4; sint32 f_sint32 = 5;
  fixed32 f_fixed32 = 6; sfixed32 f_sfixed32 = 7; Color f_enum = 8; Inner f_msg = 9;
  int64 f_int64 = 10; double f_double = 11; float f_float = 12; bytes f_bytes = 13;
  optional string o_string = 14; optional int32 o_int32 = 15; optional Color o_enum = 16;
  repeated string r_string = 17; repeated Color r_enum = 18; repeated Inner r_msg = 19; repeated int32 r_int32 = 20;
  repeated bool r_bool = 21; repeated int64 r_int64 = 22;
  map<string, string> m_string = 23; map<string, Inner> m_msg = 24; map<string, Color> m_enum = 25;
  map<int32, string> m_int32_key = 26;
  oneof choice { string c_string = 27; Inner c_msg = 28; int32 c_int32 = 29; Color c_enum = 30; google.protobuf.Struct c_struct = 31; }
  google.protobuf.Struct f_struct = 32; google.protobuf.Timestamp f_ts = 33; google.protobuf.StringValue w_string = 34;
  google.protobuf.Value f_value = 35; repeated google.protobuf.Struct r_struct = 36;
  All recurse = 37;
  string custom = 38 [json_name = "renamed"];
}
message Inner { string name = 1; Inner child = 2; map<string, string> labels = 3; repeated string tags = 4; }
`;
const proto2 = `syntax = "proto2";
package jr.v2;
message P2 { optional int32 i = 1 [default = 7]; optional string s = 2; }
`;

const { message, done } = await loadCodecs({ "jr/v1/all.proto": proto3, "jr/v2/p2.proto": proto2 });
afterAll(done);
const All = message("jr.v1.All");
const P2 = message("jr.v2.P2");

/** What clients send wrong, or what only protobuf-es's path takes. */
const oddValues: JsonValue[] = [null, "", "7", "1.5", 1.5, -1, 2 ** 31, 2 ** 32, -(2 ** 31) - 1, true, [], {}, "COLOR_RED", "NOPE", 0, { __proto__: 1 } as unknown as JsonValue];

function generator(seed: number) {
  const random = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const odd = () => structuredClone(pick(oddValues));
  const text = () => pick(["", "a", "héllo", "日本", "x".repeat(20), "__proto__", "constructor"]);

  function json(depth: number): JsonValue {
    const r = random();
    if (depth > 2 || r < 0.5) return pick<JsonValue>([null, true, 1, -0.5, "s", ""]);
    if (r < 0.75) return Array.from({ length: Math.floor(random() * 3) }, () => json(depth + 1));
    const o: JsonObject = {};
    for (let i = Math.floor(random() * 3); i > 0; i--) o[pick(["k", "v", "nested", "__proto__", "0"])] = json(depth + 1);
    return o;
  }

  function scalarOrEnum(field: DescField): JsonValue {
    if (field.enum !== undefined) {
      return pick<JsonValue>([...field.enum.values.map((v) => v.name), 1, "BOGUS"]);
    }
    switch (field.scalar) {
      case undefined:
        return odd();
      default: {
        const kind = field.scalar as number;
        // 9 string, 8 bool, then numbers of every kind.
        if (kind === 9) return text();
        if (kind === 8) return random() < 0.5;
        return pick<JsonValue>([0, 1, -5, 2147483647, -2147483648, 4294967295, 12, "12"]);
      }
    }
  }

  function messageJson(desc: DescMessage, depth: number): JsonValue {
    if (desc.typeName === "google.protobuf.Struct") return random() < 0.8 ? (json(1) as JsonValue) : odd();
    if (desc.typeName === "google.protobuf.Timestamp") return pick<JsonValue>(["2026-12-01T00:00:00Z", "nope", 5]);
    if (desc.typeName === "google.protobuf.StringValue") return pick<JsonValue>(["w", 5]);
    if (desc.typeName === "google.protobuf.Value") return json(1);
    if (depth > 3) return {};
    const o: JsonObject = {};
    // A few fields per body, so bodies without anything only protobuf-es reads are common.
    const share = Math.min(0.45, 3 / desc.fields.length);
    for (const field of desc.fields) {
      if (random() >= share) continue;
      const key = random() < 0.7 ? field.jsonName : field.name;
      o[key] = random() < 0.08 ? odd() : fieldJson(field, depth);
      // Both names of one field, now and then.
      if (random() < 0.03) o[field.jsonName === key ? field.name : field.jsonName] = fieldJson(field, depth);
    }
    if (random() < 0.2) o[pick(["unknownKey", "__proto__", "[ext.field]", "x_y"])] = json(1);
    return o;
  }

  function fieldJson(field: DescField, depth: number): JsonValue {
    switch (field.fieldKind) {
      case "message":
        return messageJson(field.message, depth + 1);
      case "list": {
        const one = () => (random() < 0.05 ? odd() : field.listKind === "message" ? messageJson(field.message, depth + 1) : scalarOrEnum(field));
        return Array.from({ length: Math.floor(random() * 3) }, one);
      }
      case "map": {
        const o: JsonObject = {};
        for (let i = Math.floor(random() * 3); i > 0; i--) {
          const key = field.mapKey === 9 ? pick(["a", "b", "with space", "__proto__"]) : pick(["1", "-2", "x"]);
          o[key] = random() < 0.05 ? odd() : field.mapKind === "message" ? messageJson(field.message, depth + 1) : scalarOrEnum(field);
        }
        return o;
      }
      default:
        return scalarOrEnum(field);
    }
  }

  return (desc: DescMessage) => messageJson(desc, 0);
}

function attempt<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: string } {
  try {
    return { ok: true, value: fn() };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** Checks `count` random bodies for `desc`; returns how many the fast path answered. */
function compare(desc: DescMessage, seed: number, count: number): number {
  const next = generator(seed);
  let answered = 0;
  for (let i = 0; i < count; i++) {
    const body = next(desc);
    const fast = attempt(() => readJsonFast(desc, structuredClone(body)));
    // The fast path never throws: it answers or leaves the body to protobuf-es.
    expect(fast).toMatchObject({ ok: true });
    if (!fast.ok || fast.value === undefined) continue;
    answered++;
    const strict = attempt(() => decodeJsonStrict(desc, structuredClone(body)));
    if (!strict.ok) throw new Error(`fast path answered a body protobuf-es refuses (${strict.error}): ${JSON.stringify(body)}`);
    expect(fast.value).toStrictEqual(strict.value);
    expect(fast.value).toStrictEqual(fromJson(desc, structuredClone(body), { ignoreUnknownFields: true }));
  }
  return answered;
}

test("the fixtures and A2A's types have emitted codecs (their zero messages are what the fast path fills)", () => {
  for (const desc of [All, message("jr.v1.Inner"), P2, SendMessageRequestSchema, TaskSchema]) expect(codecOf(desc)?.schema).toBe(desc);
});

describe("readJsonFast answers only as protobuf-es would", () => {
  test.each([1, 2, 3, 4, 5, 6])("every field kind, random and mutated bodies, seed %i", (seed) => {
    const answered = compare(All, seed, 400);
    // Both paths are exercised: the fast path is taken often, and often left.
    expect(answered).toBeGreaterThan(20);
    expect(answered).toBeLessThan(400);
  });

  test.each([
    ["SendMessageRequest", SendMessageRequestSchema],
    ["Task", TaskSchema],
    ["AgentCard", AgentCardSchema],
    ["ListTasksRequest", ListTasksRequestSchema],
    ["TaskPushNotificationConfig", TaskPushNotificationConfigSchema],
  ] as const)("A2A %s", (_name, desc) => {
    expect(compare(desc, 11, 300)).toBeGreaterThan(10);
  });
});

describe("what the fast path leaves to protobuf-es", () => {
  const leaves = (json: JsonValue) => expect(readJsonFast(All, json)).toBeUndefined();

  test("values only protobuf-es reads: null, 64-bit integers, floats, bytes, numbers for enums, int32 as strings", () => {
    leaves({ fString: null });
    leaves({ fInt64: "5" });
    leaves({ fDouble: 1 });
    leaves({ fBytes: "AAA=" });
    leaves({ fEnum: 1 });
    leaves({ fInt32: "5" });
    leaves({ fInt32: 1.5 });
    leaves({ fUint32: -1 });
  });

  test("well-known types with their own JSON, except Struct", () => {
    leaves({ fTs: "2026-12-01T00:00:00Z" });
    leaves({ wString: "x" });
    leaves({ fValue: 1 });
    expect(readJsonFast(All, { fStruct: { a: [1, "b", null, { c: true }] } })).toMatchObject({ fStruct: { a: [1, "b", null, { c: true }] } });
  });

  test("errors: wrong types, unknown enum names, a field set twice, two oneof members, a __proto__ map key", () => {
    leaves({ fString: 5 });
    leaves({ fEnum: "COLOR_GREEN" });
    leaves({ fString: "a", f_string: "b" });
    leaves({ cString: "a", cInt32: 1 });
    leaves({ mString: JSON.parse('{"__proto__": "x"}') as JsonValue });
    leaves({ fMsg: [] });
    leaves([]);
    leaves("x");
  });

  test("proto2 messages (defaults on a prototype)", () => {
    expect(readJsonFast(P2, { s: "x" })).toBeUndefined();
  });

  test("nesting deeper than the fast path goes", () => {
    let deep: JsonObject = {};
    for (let i = 0; i < 40; i++) deep = { recurse: deep };
    expect(readJsonFast(All, deep)).toBeUndefined();
    // protobuf-es still decodes it.
    expect(decodeJson(All, deep).$typeName).toBe("jr.v1.All");
  });
});

test("unknown keys are skipped as decodeJson skips them, at every depth", () => {
  const body = { x: 1, message: { messageId: "m", y: 2, parts: [{ text: "a", z: 3 }], metadata: { keep: "me" } } };
  const fast = readJsonFast(SendMessageRequestSchema, body);
  expect(fast).toBeDefined();
  expect(fast).toStrictEqual(decodeJsonStrict(SendMessageRequestSchema, body));
});

test("a custom json_name and the proto name both reach the field", () => {
  expect(readJsonFast(All, { renamed: "a" })).toMatchObject({ custom: "a" });
  expect(readJsonFast(All, { custom: "b" })).toMatchObject({ custom: "b" });
});
