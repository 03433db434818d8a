/**
 * What protobuf binary can carry and ProtoJSON cannot write (D90), as the gRPC binding checks a
 * request before its handler: for every well-known type with a JSON form of its own and limits
 * (Timestamp, Duration, FieldMask, Value, ListValue, Struct), met as a field or as a method's whole
 * input. Each case is checked against protobuf-es's own toJson and fromJson, so the check says no
 * more and no less than what a JSON binding could write and read back.
 */
import { create, fromJson, toJson, type DescMessage } from "@bufbuild/protobuf";
import { DurationSchema, FieldMaskSchema, StructSchema, TimestampSchema, ValueSchema } from "@bufbuild/protobuf/wkt";
import { jsonProblemOf } from "../../runtime/core/codec/json-representable.js";
import { ListTasksRequestSchema } from "../../generated/a2a_pb.js";

const writes = (desc: DescMessage, message: object): boolean => {
  try {
    fromJson(desc, toJson(desc, message as never));
    return true;
  } catch {
    return false;
  }
};

const cases: [string, DescMessage, object, RegExp | undefined][] = [
  ["a Timestamp in range", TimestampSchema, create(TimestampSchema, { seconds: 253402300799n, nanos: 999_999_999 }), undefined],
  ["a Timestamp past 9999", TimestampSchema, create(TimestampSchema, { seconds: 253402300800n }), /^google\.protobuf\.Timestamp: a google\.protobuf\.Timestamp must be from 0001/],
  ["a Timestamp before year 1", TimestampSchema, create(TimestampSchema, { seconds: -62135596801n }), /Timestamp must be from/],
  ["a Timestamp with negative nanos", TimestampSchema, create(TimestampSchema, { seconds: 1n, nanos: -1 }), /Timestamp must be from/],
  ["a Timestamp with nanos past a second", TimestampSchema, create(TimestampSchema, { nanos: 1_000_000_000 }), /Timestamp must be from/],
  ["a Duration at its limits", DurationSchema, create(DurationSchema, { seconds: -315576000000n, nanos: -999_999_999 }), undefined],
  ["a Duration past 10,000 years", DurationSchema, create(DurationSchema, { seconds: 315576000001n }), /^google\.protobuf\.Duration: a google\.protobuf\.Duration must be within/],
  ["a Duration whose nanos have the other sign", DurationSchema, create(DurationSchema, { seconds: 1n, nanos: -1 }), /Duration must be within/],
  ["a Duration of negative nanos alone", DurationSchema, create(DurationSchema, { nanos: -5 }), undefined],
  // protobuf-es writes this one ("1.1000000000s"), and then cannot read it back.
  ["a Duration whose nanos are a second or more", DurationSchema, create(DurationSchema, { seconds: 1n, nanos: 1_000_000_000 }), /Duration must be within/],
  ["a FieldMask of snake_case paths", FieldMaskSchema, create(FieldMaskSchema, { paths: ["a.b_c", "display_name"] }), undefined],
  ["a FieldMask path in camelCase", FieldMaskSchema, create(FieldMaskSchema, { paths: ["ok", "displayName"] }), /^google\.protobuf\.FieldMask\[1\]: a google\.protobuf\.FieldMask path must be lower_snake_case/],
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
  expect(found === undefined).toBe(writes(desc, message));
});
