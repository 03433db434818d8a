/**
 * A rule's `response_body`: the answer's field, as its ProtoJSON value. ProtoJSON leaves a field
 * at its default out of the answer, but a body must still be a value of the field's type, so an
 * unset field is answered as its default, as grpc-gateway answers it (its getter's value:
 * protojson writes a nil message as `{}`, a scalar as its zero) and as proto3's JSON mapping
 * spells defaults: a message's zero message (`{}`, with its REQUIRED fields, D11), `""`, `0`,
 * `false` or the zero enum's name for a scalar (also an `optional` one), `[]` for a list and `{}`
 * for a map. It was `null`, which no client of the field's type reads as a value.
 * `google.protobuf.Value` is the exception: its default is JSON's null.
 */
import { create, toJson, type DescField, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { jsonWriter } from "../codec/json-writer.js";
import type { RequiredFieldTable } from "../method-spec.js";

/** Returns how to take `localName`'s value out of `output`'s ProtoJSON, its default where unset. */
export function responseBodyOf(output: DescMessage, localName: string, required: RequiredFieldTable): (result: JsonValue) => JsonValue {
  const field = output.fields.find((f) => f.localName === localName);
  // The plugin checked the name against the descriptor; a hand-written rule may not have.
  if (field === undefined) throw new Error(`response_body "${localName}" is no field of ${output.typeName}`);
  let fallback: { value: JsonValue } | undefined;
  return (result) => {
    const value = (result as Record<string, JsonValue>)[field.jsonName];
    if (value !== undefined) return value;
    fallback ??= { value: defaultJson(output, field, required) };
    return fallback.value;
  };
}

function defaultJson(output: DescMessage, field: DescField, required: RequiredFieldTable): JsonValue {
  switch (field.fieldKind) {
    case "list":
      return [];
    case "map":
      return {};
    case "message":
      return field.message.typeName === "google.protobuf.Value" ? null : jsonWriter(field.message, required)(create(field.message));
    default: {
      // The scalar's or enum's default, set so that ProtoJSON writes it (an `optional` one too).
      const zero = reflect(output, create(output));
      zero.set(field, zero.get(field));
      return (toJson(output, zero.message, { alwaysEmitImplicit: true }) as Record<string, JsonValue>)[field.jsonName] ?? null;
    }
  }
}
