/**
 * What protobuf binary can carry and ProtoJSON cannot write (D90), as the gRPC binding checks a
 * request before its handler: Timestamp, Duration, FieldMask, Value, ListValue and Struct, met as
 * a field or as a method's whole input (google.protobuf.Any is not checked: the JSON bindings
 * have no type registry to write one with, README "Any other service"). Each case is checked
 * against protobuf-es's own toJson and fromJson: found exactly when the message does not come
 * back equal from its JSON.
 */
import { create, equals, fromJson, toJson, type DescMessage, type Message } from "@bufbuild/protobuf";
import { protoCamelCase, protoSnakeCase } from "@bufbuild/protobuf/reflect";
import { DurationSchema, FieldMaskSchema, StructSchema, TimestampSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import { jsonProblemOf } from "../../runtime/core/codec/json-representable.js";
import { ListTasksRequestSchema } from "../../generated/a2a_pb.js";

const readsBack = (desc: DescMessage, message: object): boolean => {
  try {
    return equals(desc, fromJson(desc, toJson(desc, message as never)), message as Message);
  } catch {
    return false;
  }
};

const cases: [string, DescMessage, object, RegExp | undefined][] = [
  ["a Timestamp in range", TimestampSchema, create(TimestampSchema, { seconds: 253402300799n, nanos: 999_999_999 }), undefined],
  ["a Timestamp past 9999", TimestampSchema, create(TimestampSchema, { seconds: 253402300800n }), /^google\.protobuf\.Timestamp: a google\.protobuf\.Timestamp must be from 0001.*; got seconds 253402300800, nanos 0$/],
  ["a Timestamp before year 1", TimestampSchema, create(TimestampSchema, { seconds: -62135596801n }), /Timestamp must be from/],
  ["a Timestamp with negative nanos", TimestampSchema, create(TimestampSchema, { seconds: 1n, nanos: -1 }), /Timestamp must be from/],
  ["a Timestamp with nanos past a second", TimestampSchema, create(TimestampSchema, { nanos: 1_000_000_000 }), /Timestamp must be from/],
  ["a Duration at its limits", DurationSchema, create(DurationSchema, { seconds: -315576000000n, nanos: -999_999_999 }), undefined],
  ["a Duration past 10,000 years", DurationSchema, create(DurationSchema, { seconds: 315576000001n }), /^google\.protobuf\.Duration: a google\.protobuf\.Duration must be within/],
  ["a Duration whose nanos have the other sign", DurationSchema, create(DurationSchema, { seconds: 1n, nanos: -1 }), /Duration must be within/],
  ["a Duration of negative nanos alone", DurationSchema, create(DurationSchema, { nanos: -5 }), undefined],
  // protobuf-es's toJson throws a RangeError on this one.
  ["a Duration whose nanos are a second or more", DurationSchema, create(DurationSchema, { seconds: 1n, nanos: 1_000_000_000 }), /Duration must be within/],
  ["a FieldMask of snake_case paths", FieldMaskSchema, create(FieldMaskSchema, { paths: ["a.b_c", "display_name"] }), undefined],
  ["a FieldMask path in camelCase", FieldMaskSchema, create(FieldMaskSchema, { paths: ["ok", "displayName"] }), /^google\.protobuf\.FieldMask\.paths\[1\]: a google\.protobuf\.FieldMask path must be lower_snake_case.*; got "displayName"$/],
  ["a FieldMask path with a comma", FieldMaskSchema, create(FieldMaskSchema, { paths: ["a,b"] }), /FieldMask path must be/],
  ["a FieldMask of one empty path", FieldMaskSchema, create(FieldMaskSchema, { paths: [""] }), /^google\.protobuf\.FieldMask\.paths: a google\.protobuf\.FieldMask of one empty path/],
  ["a FieldMask of two empty paths", FieldMaskSchema, create(FieldMaskSchema, { paths: ["", ""] }), undefined],
  ["a FieldMask path with a doubled underscore", FieldMaskSchema, create(FieldMaskSchema, { paths: ["a__b"] }), /FieldMask path must be/],
  ["a FieldMask path with an underscore before a digit", FieldMaskSchema, create(FieldMaskSchema, { paths: ["a_1"] }), /FieldMask path must be/],
  ["a FieldMask path ending in an underscore", FieldMaskSchema, create(FieldMaskSchema, { paths: ["a_"] }), /FieldMask path must be/],
  ["a FieldMask path with an underscore before a dotless i (upper-cased to I)", FieldMaskSchema, create(FieldMaskSchema, { paths: ["a_\u0131"] }), /FieldMask path must be/],
  ["a FieldMask path of digits, dots and a leading underscore", FieldMaskSchema, create(FieldMaskSchema, { paths: ["_a.b1.c_d2", ""] }), undefined],
  ["a Struct as the whole input, holding a Value with no kind", StructSchema, create(StructSchema, { fields: { k: create(ValueSchema) } }), /^google\.protobuf\.Struct\["k"\]: a google\.protobuf\.Value must have a value/],
  ["a Value as the whole input, a NaN", ValueSchema, create(ValueSchema, { kind: { case: "numberValue", value: NaN } }), /cannot be NaN/],
  [
    "A2A's ListTasksRequest, its statusTimestampAfter past 9999",
    ListTasksRequestSchema,
    create(ListTasksRequestSchema, { statusTimestampAfter: { seconds: 253402300800n } }),
    /^lf\.a2a\.v1\.ListTasksRequest\.statusTimestampAfter: a google\.protobuf\.Timestamp must be from/,
  ],
  ["A2A's ListTasksRequest, its statusTimestampAfter in range", ListTasksRequestSchema, create(ListTasksRequestSchema, { statusTimestampAfter: { seconds: 1n } }), undefined],
];

test.each(cases)("%s", (_, desc, message, problem) => {
  const found = jsonProblemOf(desc, message);
  if (problem === undefined) expect(found).toBeUndefined();
  else expect(found).toMatch(problem);
  // Found exactly when protobuf-es cannot write it, or not so that it reads back.
  expect(found === undefined).toBe(readsBack(desc, message));
});

test("a FieldMask path passes exactly when protobuf-es's lowerCamelCase of it reads back and it has no comma (random paths)", () => {
  const alphabet = ["a", "b", "z", "A", "Z", "_", "_", "0", "9", ".", ",", " ", "\u00e9", "\u0131", "\u017f", "\u00df", "\u212a", "\ud83d\ude00"];
  let seed = 20261204;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let i = 0; i < 20_000; i++) {
    let path = "";
    for (let n = 1 + (next() % 8); n > 0; n--) path += alphabet[next() % alphabet.length];
    const expected = protoSnakeCase(protoCamelCase(path)) === path && !path.includes(",");
    if ((jsonProblemOf(FieldMaskSchema, create(FieldMaskSchema, { paths: [path] })) === undefined) !== expected) throw new Error(`disagree on ${JSON.stringify(path)}`);
  }
});
