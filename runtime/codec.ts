// The "protoc-gen-a2a/runtime/codec" entry: what the generated message codecs
// (`<file>_codec.ts`) import. Small on purpose: it loads neither the
// bindings nor grpc-js.
export type { GenCodec, ReadContext } from "./core/codec/registry.js";
export {
  boolKey,
  bytesOf,
  customJson,
  enterMessage,
  enumJson,
  floatJson,
  hasBytes,
  int32Key,
  isEnumValue,
  int64Key,
  isNonZero64,
  keepUnknownEnum,
  mapJson,
  readTag,
  readUnknownField,
  setOwn,
  skipField,
  structFieldJson,
  structFromJson,
  structToJson,
  uint64Key,
  wireTypeOf,
  writeUnknownFields,
} from "./core/codec/wire.js";
