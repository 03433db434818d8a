/**
 * A rule's `response_body`: the answer's field, as its ProtoJSON value. ProtoJSON leaves a field
 * at its default out of the answer, so an unset field is answered by what tells a reader it is
 * unset where the field tracks presence, and by its default where it does not:
 * - a message field, an `optional` scalar, a oneof member (presence): `null`, which ProtoJSON
 *   reads as the field unset, so a client over HTTP+JSON sees what JSON-RPC and gRPC show (a
 *   `{}` or `""` there was read as a set empty value, and a oneof's other member as this one);
 * - a scalar or enum without presence: its default (`""`, `0`, `false`, the zero enum's name),
 *   the value grpc-gateway's getter gives, where `null` was no value of the field's type;
 * - a list `[]`, a map `{}`.
 */
import { create, toJson, type DescField, type DescMessage, type JsonValue } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";

/** Returns how to take `localName`'s value out of `output`'s ProtoJSON, its default where unset. */
export function responseBodyOf(output: DescMessage, localName: string): (result: JsonValue) => JsonValue {
  const field = output.fields.find((f) => f.localName === localName);
  // The plugin checked the name against the descriptor; a hand-written rule may not have.
  if (field === undefined) throw new Error(`response_body "${localName}" is no field of ${output.typeName}`);
  let fallback: { value: JsonValue } | undefined;
  return (result) => {
    const value = (result as Record<string, JsonValue>)[field.jsonName];
    if (value !== undefined) return value;
    fallback ??= { value: defaultJson(output, field) };
    return fallback.value;
  };
}

function defaultJson(output: DescMessage, field: DescField): JsonValue {
  switch (field.fieldKind) {
    case "list":
      return [];
    case "map":
      return {};
    case "message":
      return null;
    default: {
      if (field.presence === FeatureSet_FieldPresence.EXPLICIT || field.oneof !== undefined) return null;
      // The scalar's or enum's default, set so that ProtoJSON writes it (an `optional` one too).
      const zero = reflect(output, create(output));
      zero.set(field, zero.get(field));
      return (toJson(output, zero.message, { alwaysEmitImplicit: true }) as Record<string, JsonValue>)[field.jsonName] ?? null;
    }
  }
}
