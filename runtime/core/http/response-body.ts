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
import type { DescField, DescMessage, JsonValue } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { defaultJson } from "../codec/required-fields.js";

/** Returns how to take `localName`'s value out of `output`'s ProtoJSON, what says "unset" where it is. */
export function responseBodyOf(output: DescMessage, localName: string): (result: JsonValue) => JsonValue {
  const field = output.fields.find((f) => f.localName === localName);
  // The plugin checked the name against the descriptor; a hand-written rule may not have.
  if (field === undefined) throw new Error(`response_body "${localName}" is no field of ${output.typeName}`);
  const unset = unsetJson(field);
  return (result) => {
    const value = (result as Record<string, JsonValue>)[field.jsonName];
    return value === undefined ? unset : value;
  };
}

function unsetJson(field: DescField): JsonValue {
  // A list or map has no presence: its default, [] or {}.
  if (field.fieldKind === "list" || field.fieldKind === "map") return defaultJson(field, {}) ?? null;
  if (field.fieldKind === "message" || field.presence === FeatureSet_FieldPresence.EXPLICIT || field.oneof !== undefined) return null;
  // A scalar or enum without presence: the default a REQUIRED field is written with (D11), the same JSON.
  return defaultJson(field, {}) ?? null;
}
