/**
 * Protobuf binary for the gRPC binding, without the message tree protobuf-es
 * needs around it.
 *
 * The generated service definition used to serialize with
 * `toBinary(Schema, create(Schema, value))` and parse with `fromBinary`.
 * Handlers mostly return init shapes, so each answer was first copied into a
 * fresh message tree by `create()` only to be read once by `toBinary()`. This
 * module compiles, once per message type and cached, a writer that takes a
 * message *or* its init shape (a missing field is its default, exactly as
 * `create()` would make it) and a reader that builds the very message
 * `fromBinary()` builds (`create(desc)`, then the same assignments in the
 * same order: defaults, presence, merging of repeated singular messages,
 * packed and unpacked lists, open and closed enums, `$unknown`).
 *
 * Why a runtime compiled codec rather than generated per-message code: the
 * binding's generated files stay about the binding (one definition per
 * service, reading like hand-written code), the codec covers any message a
 * service reaches (including well-known and imported types) without the
 * plugin emitting serializers for them, and the whole of the codec sits in
 * two modules a property test holds to protobuf-es (test/runtime/binary-codec.cases.ts):
 * `encodeBinary(desc, v)` gives the bytes of `toBinary(desc, create(desc, v))`
 * and `decodeBinary(desc, b)` the message `fromBinary(desc, b)` gives (deeply
 * equal, `$unknown` and prototypes included), or the same error.
 *
 * This module decides, per field, what is written and read (a plan:
 * property, presence rule, value writer and reader); codec-fields.ts turns
 * a message's plans into code that reaches its properties by name, compiled
 * once per message type where the platform allows it. Per-message code is
 * what static serializers (ts-proto's) get for free: closures shared by all
 * fields made every property access megamorphic, and encoding 3-4x slower.
 * New messages come from message-zero.ts (an object literal per type).
 *
 * Every field kind is handled here: scalars, open and closed enums, packed
 * and unpacked lists, maps, oneofs, explicit presence (proto3 optional,
 * proto2 defaults on the prototype, required fields), groups, unboxed
 * wrapper fields and Struct fields held as a JsonObject (converted the way
 * protobuf-es converts them). Nothing is handed back to protobuf-es, so even
 * malformed input fails with the error fromBinary gives.
 *
 * The equivalence holds for every value the protobuf-es types allow; values
 * they do not (say a `null` in a message field of a created message) may fail
 * differently than with protobuf-es.
 */
import {
  ScalarType,
  protoInt64,
  type BinaryReadOptions,
  type DescField,
  type DescMessage,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { FeatureSet_FieldPresence, isWrapperDesc } from "@bufbuild/protobuf/wkt";
import {
  closureCode,
  compiledCode,
  type ChildRead,
  type ContainerRead,
  type FieldPlan,
  type FieldReader,
  type Fields,
  type ReadContext,
  type ReadPlan,
  type ValueWrite,
  type WriteMessage,
  type WritePlan,
} from "./codec-fields.js";
import { zeroFactory } from "./message-zero.js";
import { setOwn } from "./own-property.js";

type ListField = Extract<DescField, { fieldKind: "list" }>;
type MapField = Extract<DescField, { fieldKind: "map" }>;

/** Reads `length` bytes of fields into `message`, as fromBinary's compiled reader does. */
type ReadMessage = (message: Fields, r: BinaryReader, ctx: ReadContext, length: number) => void;

interface Codec {
  readonly write: WriteMessage;
  readonly read: ReadMessage;
  /** Reads a group's fields up to its end tag, as fromBinary's readGroup does. */
  readonly readGroup: (message: Fields, r: BinaryReader, ctx: ReadContext, fieldNo: number) => void;
  /** A new message of the type, as create(desc) makes it. */
  readonly zero: () => Fields;
  /** Whether its fields are reached by compiled code (else closures, see codec-fields.ts). */
  readonly compiled: boolean;
}

const IMPLICIT = FeatureSet_FieldPresence.IMPLICIT;
const LEGACY_REQUIRED = FeatureSet_FieldPresence.LEGACY_REQUIRED;
const codecs = new WeakMap<DescMessage, Codec>();

/**
 * The bytes of `toBinary(desc, create(desc, value))`, for a message of
 * `desc` or its init shape, without building the message.
 */
export function encodeBinary<Desc extends DescMessage>(desc: Desc, value: MessageInitShape<Desc>): Uint8Array {
  return encodeBinaryWith(desc, value, copyBytes);
}

const copyBytes = (bytes: Uint8Array, length: number): Uint8Array => bytes.slice(0, length);

/**
 * Encodes like `encodeBinary` and hands the encoded bytes, `bytes[0..length)`,
 * to `copy`, whose result is returned. `bytes` may be the writer's own
 * buffer, valid only during the call: `copy` must copy them (into a Node
 * Buffer, say), which saves the intermediate copy `finish()` would make.
 */
export function encodeBinaryWith<Desc extends DescMessage, T>(
  desc: Desc,
  value: MessageInitShape<Desc>,
  copy: (bytes: Uint8Array, length: number) => T,
): T {
  const codec = codecOf(desc);
  // One writer is kept between calls so its buffer need not grow again each
  // time; a call made while it is in use (or after a throw) takes a new one.
  const w = spareWriter ?? new BinaryWriter();
  spareWriter = undefined;
  codec.write(w, (value ?? {}) as Fields);
  const inner = internalsOf(w);
  let result: T;
  let length: number;
  if (inner !== undefined) {
    length = inner.pos;
    result = copy(inner.buffer, length);
    // What finish() resets, without its copy.
    inner.pos = 0;
  } else {
    const bytes = w.finish();
    length = bytes.byteLength;
    result = copy(bytes, length);
  }
  // Do not keep a buffer a rare large message grew.
  if (length <= 65536) spareWriter = w;
  return result;
}

/**
 * How protobuf-es 2.x's BinaryWriter holds what it wrote: `buffer` up to
 * `pos`, with `stackPos` empty once every fork is joined. Checked at each
 * use; a writer that looks otherwise goes through finish().
 */
interface WriterInternals {
  buffer: Uint8Array;
  pos: number;
  stackPos: number[];
}

function internalsOf(w: BinaryWriter): WriterInternals | undefined {
  const inner = w as unknown as Partial<WriterInternals>;
  return inner.buffer instanceof Uint8Array && typeof inner.pos === "number" && inner.stackPos?.length === 0 ? (inner as WriterInternals) : undefined;
}

/** Whether encodeBinaryWith reads the writer's buffer directly (false: it copies through finish()). */
export function readsWriterBuffer(): boolean {
  return internalsOf(new BinaryWriter().uint32(1))?.pos === 1;
}

let spareWriter: BinaryWriter | undefined;

/**
 * How the codec of `desc` reaches fields: `compiled`, per-message code
 * (with `literalZero` when new messages are an object literal rather than
 * create()), or closures where code generation is not allowed.
 */
export function codecKind(desc: DescMessage): { compiled: boolean; literalZero: boolean } {
  const codec = codecOf(desc);
  return { compiled: codec.compiled, literalZero: zeroFactory(desc).literal };
}

export { allowCodeGeneration } from "./code-generation.js";

/** The message `fromBinary(desc, bytes, options)` gives. */
export function decodeBinary<Desc extends DescMessage>(desc: Desc, bytes: Uint8Array, options?: Partial<BinaryReadOptions>): MessageShape<Desc> {
  const codec = codecOf(desc);
  const message = codec.zero();
  const ctx: ReadContext = {
    buf: bytes,
    readUnknownFields: options?.readUnknownFields ?? true,
    recursionLimit: options?.recursionLimit ?? 100,
    depth: 0,
  };
  codec.read(message, new BinaryReader(bytes), ctx, bytes.byteLength);
  return message as MessageShape<Desc>;
}

function codecOf(desc: DescMessage): Codec {
  return codecs.get(desc) ?? compile(desc);
}

function compile(desc: DescMessage): Codec {
  const typeName = desc.typeName;
  const descString = String(desc);
  // Planning looks no other codec up (value writers and readers do on first
  // use), so a recursive type needs no codec registered before its plans.
  const plans = [...desc.fields].sort((a, b) => a.number - b.number).map(fieldPlan);
  const code = compiledCode(typeName, plans) ?? closureCode(typeName, plans);
  const readField = code.readField;
  const enter = (ctx: ReadContext) => {
    if (++ctx.depth > ctx.recursionLimit) {
      throw new Error(`cannot decode ${descString} from binary: maximum recursion depth of ${ctx.recursionLimit} reached`);
    }
  };
  /**
   * One record, after its tag: to its field's reader, or kept as unknown.
   * Returns the message's unknown fields, made only once one turns up (most
   * messages have none, so none get an empty array).
   */
  const record = (message: Fields, r: BinaryReader, ctx: ReadContext, fieldNo: number, wireType: WireType, unknownFields: unknown[] | undefined) => {
    if (readField(message, r, ctx, fieldNo, wireType)) return unknownFields;
    const data = r.skip(wireType, fieldNo, ctx.recursionLimit - ctx.depth);
    if (!ctx.readUnknownFields) return unknownFields;
    const fields = unknownFields ?? (message.$unknown as unknown[] | undefined) ?? [];
    fields.push({ no: fieldNo, wireType, data });
    return fields;
  };
  const codec: Codec = {
    write: code.write,
    read(message, r, ctx, length) {
      enter(ctx);
      const end = r.pos + length;
      let unknownFields: unknown[] | undefined;
      while (r.pos < end) {
        const tag = readTag(r, ctx.buf);
        unknownFields = record(message, r, ctx, tag >>> 3, (tag & 7) as WireType, unknownFields);
      }
      if (unknownFields !== undefined) message.$unknown = unknownFields;
      ctx.depth--;
    },
    readGroup(message, r, ctx, fieldNo) {
      enter(ctx);
      let recordNo: number | undefined;
      let wireType: WireType | undefined;
      let unknownFields: unknown[] | undefined;
      while (r.pos < r.len) {
        const tag = readTag(r, ctx.buf);
        recordNo = tag >>> 3;
        wireType = (tag & 7) as WireType;
        if (wireType === WireType.EndGroup) break;
        unknownFields = record(message, r, ctx, recordNo, wireType, unknownFields);
      }
      if (wireType !== WireType.EndGroup || recordNo !== fieldNo) throw new Error("invalid end group tag");
      if (unknownFields !== undefined) message.$unknown = unknownFields;
      ctx.depth--;
    },
    zero: zeroFactory(desc).make,
    compiled: code.compiled,
  };
  codecs.set(desc, codec);
  return codec;
}

function fieldPlan(field: DescField): FieldPlan {
  return { number: field.number, write: writePlan(field), read: readPlan(field) };
}

/** BinaryReader.tag() with its checks, as one number (no array per record). */
function readTag(r: BinaryReader, buf: Uint8Array): number {
  const start = r.pos;
  const tag = r.uint32();
  const read = r.pos - start;
  if (read > 5 || (read === 5 && (buf[r.pos - 1] as number) > 0x0f)) throw new Error("illegal tag: varint overflows uint32");
  const fieldNo = tag >>> 3;
  const wireType = tag & 7;
  if (fieldNo <= 0 || wireType > 5) throw new Error("illegal tag: field no " + fieldNo + " wire type " + wireType);
  return tag;
}

// ---------------------------------------------------------------------------
// Writing

/** A google.protobuf.Struct field, held as a JsonObject (not inside a Value). */
function isJsonStruct(field: DescField): boolean {
  return field.message?.typeName === "google.protobuf.Struct" && field.parent.typeName !== "google.protobuf.Value";
}

/** A singular wrapper field outside a oneof: held unboxed (a string for StringValue). */
function isUnboxedWrapper(field: DescField): boolean {
  return field.fieldKind === "message" && field.oneof === undefined && isWrapperDesc(field.message);
}

function writePlan(field: DescField): WritePlan {
  const name = field.localName;
  let write: ValueWrite;
  switch (field.fieldKind) {
    case "scalar":
    case "enum":
      write = taggedScalarWriter(field);
      if (field.oneof === undefined && field.presence === IMPLICIT) {
        // Bytes: the zero check is on the Uint8Array create() makes of a number[].
        const convert = field.scalar === ScalarType.BYTES ? toU8 : undefined;
        return { kind: "implicit", name, isSet: implicitIsSet(field), convert, write };
      }
      break;
    case "message":
      write = isUnboxedWrapper(field) ? wrapperWriter(field) : messageWriter(field.number, field.message, fieldDelimited(field), isJsonStruct(field));
      break;
    case "list":
      return { kind: "container", name, write: listWriter(field) };
    case "map":
      return { kind: "container", name, write: mapWriter(field) };
  }
  if (field.oneof !== undefined) return { kind: "oneof", oneof: field.oneof.localName, name, write };
  // Explicit presence (messages, proto3 optional, proto2): set when create() would set it.
  const required = field.presence === LEGACY_REQUIRED ? `cannot encode ${String(field)} to binary: required field not set` : undefined;
  return { kind: "explicit", name, required, write };
}

function fieldDelimited(field: DescField): boolean {
  return (field as { delimitedEncoding?: boolean }).delimitedEncoding === true;
}

/** Whether a non-null value of an implicit-presence field is set (toBinary's zero checks). */
function implicitIsSet(field: DescField): (v: unknown) => boolean {
  if (field.fieldKind === "enum") {
    const zero = field.enum.values[0]?.number ?? 0;
    return (v) => v !== zero;
  }
  switch (field.scalar) {
    case ScalarType.BOOL:
      return (v) => v !== false;
    case ScalarType.STRING:
      return (v) => v !== "";
    case ScalarType.BYTES:
      return (v) => !(v instanceof Uint8Array) || v.byteLength > 0;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      // Object.is: -0 is written.
      return (v) => !Object.is(v, 0);
    default:
      // Loose: 0n, 0 and "0".
      return (v) => v != 0;
  }
}

/** create() turns a number[] given for bytes into a Uint8Array. */
const toU8 = (v: unknown): unknown => (Array.isArray(v) ? new Uint8Array(v as number[]) : v);

type ScalarWrite = (w: BinaryWriter, v: unknown) => void;

function scalarWrite(type: ScalarType): ScalarWrite {
  switch (type) {
    case ScalarType.STRING:
      return (w, v) => w.string(v as string);
    case ScalarType.BOOL:
      return (w, v) => w.bool(v as boolean);
    case ScalarType.DOUBLE:
      return (w, v) => w.double(v as number);
    case ScalarType.FLOAT:
      return (w, v) => w.float(v as number);
    case ScalarType.INT32:
      return (w, v) => w.int32(v as number);
    case ScalarType.INT64:
      return (w, v) => w.int64(v as bigint);
    case ScalarType.UINT64:
      return (w, v) => w.uint64(v as bigint);
    case ScalarType.FIXED64:
      return (w, v) => w.fixed64(v as bigint);
    case ScalarType.BYTES:
      return (w, v) => w.bytes(toU8(v) as Uint8Array);
    case ScalarType.FIXED32:
      return (w, v) => w.fixed32(v as number);
    case ScalarType.SFIXED32:
      return (w, v) => w.sfixed32(v as number);
    case ScalarType.SFIXED64:
      return (w, v) => w.sfixed64(v as bigint);
    case ScalarType.SINT64:
      return (w, v) => w.sint64(v as bigint);
    case ScalarType.UINT32:
      return (w, v) => w.uint32(v as number);
    case ScalarType.SINT32:
      return (w, v) => w.sint32(v as number);
  }
}

function wireTypeOf(type: ScalarType): WireType {
  switch (type) {
    case ScalarType.BYTES:
    case ScalarType.STRING:
      return WireType.LengthDelimited;
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return WireType.Bit64;
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
    case ScalarType.FLOAT:
      return WireType.Bit32;
    default:
      return WireType.Varint;
  }
}

/** The scalar type a field's values are written as (enums as int32). */
function scalarTypeOf(field: DescField): ScalarType {
  return field.enum !== undefined ? ScalarType.INT32 : (field.scalar as ScalarType);
}

/** A writer error named after the field, worded as toBinary words it. */
function encodeError(field: DescField, e: unknown): unknown {
  return e instanceof Error ? new Error(`cannot encode field ${field.parent.typeName}.${field.name} to binary: ${e.message}`) : e;
}

function taggedScalarWriter(field: DescField): ScalarWrite {
  const type = scalarTypeOf(field);
  const tag = ((field.number << 3) | wireTypeOf(type)) >>> 0;
  const write = scalarWrite(type);
  return (w, v) => {
    w.uint32(tag);
    try {
      write(w, v);
    } catch (e) {
      throw encodeError(field, e);
    }
  };
}

/**
 * A message value with its tag: length-delimited, or a group. Null or
 * undefined is an empty message, as toBinary makes it; a Struct held as a
 * JsonObject is first converted as protobuf-es converts it.
 */
function messageWriter(fieldNo: number, desc: DescMessage, delimited: boolean, jsonStruct: boolean): (w: BinaryWriter, v: unknown) => void {
  let codec: Codec | undefined;
  const writeFields = (w: BinaryWriter, v: unknown) => {
    codec ??= codecOf(desc);
    if (jsonStruct) codec.write(w, structToMessage(v));
    else if (v != null) codec.write(w, v as Fields);
  };
  if (delimited) {
    const start = ((fieldNo << 3) | WireType.StartGroup) >>> 0;
    const end = ((fieldNo << 3) | WireType.EndGroup) >>> 0;
    return (w, v) => {
      w.uint32(start);
      writeFields(w, v);
      w.uint32(end);
    };
  }
  const tag = ((fieldNo << 3) | WireType.LengthDelimited) >>> 0;
  return (w, v) => {
    w.uint32(tag).fork();
    writeFields(w, v);
    w.join();
  };
}

/** An unboxed wrapper value (a string for StringValue), written as the wrapper message holding it. */
function wrapperWriter(field: DescField): (w: BinaryWriter, v: unknown) => void {
  const desc = field.message as DescMessage;
  const valueName = (desc.fields[0] as DescField).localName;
  const write = messageWriter(field.number, desc, fieldDelimited(field), false);
  return (w, v) => write(w, { [valueName]: v });
}

/** Writes a list's items (the container is not null). */
function listWriter(field: ListField): ValueWrite {
  if (field.listKind === "message") {
    const write = messageWriter(field.number, field.message, fieldDelimited(field), isJsonStruct(field));
    return (w, v) => {
      const items = v as unknown[];
      for (let i = 0; i < items.length; i++) write(w, items[i]);
    };
  }
  const type = scalarTypeOf(field);
  const write = scalarWrite(type);
  if (field.packed) {
    const tag = ((field.number << 3) | WireType.LengthDelimited) >>> 0;
    return (w, v) => {
      const items = v as unknown[];
      if (items.length === 0) return;
      w.uint32(tag).fork();
      try {
        for (let i = 0; i < items.length; i++) write(w, items[i]);
      } catch (e) {
        throw encodeError(field, e);
      }
      w.join();
    };
  }
  const tag = ((field.number << 3) | wireTypeOf(type)) >>> 0;
  return (w, v) => {
    const items = v as unknown[];
    try {
      for (let i = 0; i < items.length; i++) {
        w.uint32(tag);
        write(w, items[i]);
      }
    } catch (e) {
      throw encodeError(field, e);
    }
  };
}

/** Map keys are object keys (strings); toBinary converts them back to the key type first. */
function mapKeyConverter(type: ScalarType): (key: string) => unknown {
  switch (type) {
    case ScalarType.STRING:
      return (key) => key;
    case ScalarType.BOOL:
      return (key) => (key === "true" ? true : key === "false" ? false : key);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return (key) => {
        try {
          return protoInt64.uParse(key);
        } catch {
          return key;
        }
      };
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return (key) => {
        try {
          return protoInt64.parse(key);
        } catch {
          return key;
        }
      };
    default:
      return (key) => {
        const n = Number.parseInt(key);
        return Number.isFinite(n) ? n : key;
      };
  }
}

/** Writes a map's entries (the container is not null). */
function mapWriter(field: MapField): ValueWrite {
  const entryTag = ((field.number << 3) | WireType.LengthDelimited) >>> 0;
  const keyType = field.mapKey as ScalarType;
  const keyTag = ((1 << 3) | wireTypeOf(keyType)) >>> 0;
  const writeKey = scalarWrite(keyType);
  const convertKey = mapKeyConverter(keyType);
  const keyWriter = (w: BinaryWriter, key: string) => {
    w.uint32(keyTag);
    try {
      writeKey(w, convertKey(key));
    } catch (e) {
      throw encodeError(field, e);
    }
  };
  let writeValue: (w: BinaryWriter, v: unknown) => void;
  if (field.mapKind === "message") {
    // Map values are never delimited.
    writeValue = messageWriter(2, field.message, false, isJsonStruct(field));
  } else {
    const type = scalarTypeOf(field);
    const valueTag = ((2 << 3) | wireTypeOf(type)) >>> 0;
    const write = scalarWrite(type);
    writeValue = (w, v) => {
      w.uint32(valueTag);
      try {
        write(w, v);
      } catch (e) {
        throw encodeError(field, e);
      }
    };
  }
  return (w, v) => {
    const record = v as Fields;
    const keys = Object.keys(record);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      w.uint32(entryTag).fork();
      keyWriter(w, key);
      writeValue(w, record[key]);
      w.join();
    }
  };
}

/** google.protobuf.Struct from its JsonObject, as protobuf-es's wktStructToReflect makes it. */
function structToMessage(json: unknown): Fields {
  const fields: Fields = {};
  if (json !== null && typeof json === "object" && !Array.isArray(json)) {
    for (const k of Object.keys(json)) setOwn(fields, k, valueToMessage((json as Fields)[k]));
  }
  return { $typeName: "google.protobuf.Struct", fields };
}

/** google.protobuf.Value from a JsonValue (anything else: a Value with no kind). */
function valueToMessage(json: unknown): Fields {
  let kind: { case: string | undefined; value?: unknown } = { case: undefined };
  switch (typeof json) {
    case "number":
      kind = { case: "numberValue", value: json };
      break;
    case "string":
      kind = { case: "stringValue", value: json };
      break;
    case "boolean":
      kind = { case: "boolValue", value: json };
      break;
    case "object":
      if (json === null) kind = { case: "nullValue", value: 0 };
      else if (Array.isArray(json)) kind = { case: "listValue", value: { $typeName: "google.protobuf.ListValue", values: json.map(valueToMessage) } };
      else kind = { case: "structValue", value: structToMessage(json) };
      break;
  }
  return { $typeName: "google.protobuf.Value", kind };
}

/** The JsonObject of a google.protobuf.Struct, as protobuf-es's wktStructToLocal makes it. */
function structToJson(struct: Fields): Fields {
  const json: Fields = {};
  const fields = struct.fields as Fields;
  for (const k of Object.keys(fields)) setOwn(json, k, valueToJson(fields[k] as Fields));
  return json;
}

function valueToJson(value: Fields): unknown {
  const kind = value.kind as { case: string | undefined; value?: unknown };
  switch (kind.case) {
    case "structValue":
      return structToJson(kind.value as Fields);
    case "listValue":
      return ((kind.value as Fields).values as Fields[]).map(valueToJson);
    case "nullValue":
    case undefined:
      return null;
    default:
      return kind.value;
  }
}

// ---------------------------------------------------------------------------
// Reading (every reader mirrors the one fromBinary compiles for the field)

function readPlan(field: DescField): ReadPlan {
  const name = field.localName;
  const oneof = field.oneof?.localName;
  switch (field.fieldKind) {
    case "scalar":
    case "enum": {
      if (field.fieldKind === "enum" && !field.enum.open) return { kind: "custom", read: closedEnumReader(field) };
      const read = field.fieldKind === "enum" ? readInt32 : scalarRead(field.scalar, field.utf8Validation, field.longAsString);
      return oneof !== undefined ? { kind: "oneofAssign", oneof, name, read } : { kind: "assign", name, read };
    }
    case "message": {
      const read = childReader(field.number, field.message, fieldDelimited(field), isJsonStruct(field));
      if (oneof !== undefined) return { kind: "oneofMerge", oneof, name, read };
      if (!isUnboxedWrapper(field)) return { kind: "merge", name, read };
      // Read as the wrapper message around the value held (so a repeated record merges), then unboxed.
      const valueName = (field.message.fields[0] as DescField).localName;
      const make = zeroFactory(field.message).make;
      const unboxed: ChildRead = (existing, r, ctx) => {
        const child = make();
        if (existing !== undefined) child[valueName] = existing;
        read(child, r, ctx);
        return child[valueName];
      };
      return { kind: "merge", name, read: unboxed };
    }
    case "list":
      return { kind: "container", name, read: listReader(field) };
    case "map":
      return { kind: "container", name, read: mapReader(field) };
  }
}

const readInt32 = (r: BinaryReader): number => r.int32();

/** Closed enums: an unknown number is kept as an unknown field. */
function closedEnumReader(field: Extract<DescField, { fieldKind: "enum" }>): FieldReader {
  const name = field.localName;
  const oneof = field.oneof?.localName;
  const known = new Set(field.enum.values.map((v) => v.number));
  const fieldNo = field.number;
  return (message, r, ctx, wireType) => {
    const val = r.int32();
    if (known.has(val)) {
      if (oneof !== undefined) message[oneof] = { case: name, value: val };
      else message[name] = val;
    } else if (ctx.readUnknownFields) {
      const w = new BinaryWriter();
      w.int32(val);
      const unknownFields = (message.$unknown as unknown[] | undefined) ?? [];
      unknownFields.push({ no: fieldNo, wireType, data: w.finish() });
      message.$unknown = unknownFields;
    }
  };
}

/**
 * Reads a message value into `existing` (a repeated singular message
 * merges) or a new message, and returns it: length-delimited or a group; a
 * Struct held as a JsonObject is read as a Struct and converted back.
 */
function childReader(fieldNo: number, desc: DescMessage, delimited: boolean, jsonStruct: boolean): (existing: unknown, r: BinaryReader, ctx: ReadContext) => unknown {
  let codec: Codec | undefined;
  const readInto: (child: Fields, r: BinaryReader, ctx: ReadContext) => void = delimited
    ? (child, r, ctx) => (codec ??= codecOf(desc)).readGroup(child, r, ctx, fieldNo)
    : (child, r, ctx) => (codec ??= codecOf(desc)).read(child, r, ctx, r.uint32());
  // Resolved now, not per message (zero messages look no codec up).
  const make = zeroFactory(desc).make;
  if (jsonStruct) {
    return (existing, r, ctx) => {
      const child = existing === undefined ? make() : structToMessage(existing);
      readInto(child, r, ctx);
      return structToJson(child);
    };
  }
  return (existing, r, ctx) => {
    const child = (existing ?? make()) as Fields;
    readInto(child, r, ctx);
    return child;
  };
}

type ScalarRead = (r: BinaryReader) => unknown;

function scalarRead(type: ScalarType, utf8Validation: boolean, longAsString: boolean): ScalarRead {
  switch (type) {
    case ScalarType.STRING:
      return (r) => r.string(utf8Validation);
    case ScalarType.BOOL:
      return (r) => r.bool();
    case ScalarType.DOUBLE:
      return (r) => r.double();
    case ScalarType.FLOAT:
      return (r) => r.float();
    case ScalarType.INT32:
      return (r) => r.int32();
    case ScalarType.INT64:
      return longAsString ? (r) => String(r.int64()) : (r) => r.int64();
    case ScalarType.UINT64:
      return longAsString ? (r) => String(r.uint64()) : (r) => r.uint64();
    case ScalarType.FIXED64:
      return longAsString ? (r) => String(r.fixed64()) : (r) => r.fixed64();
    case ScalarType.BYTES:
      return (r) => r.bytes();
    case ScalarType.FIXED32:
      return (r) => r.fixed32();
    case ScalarType.SFIXED32:
      return (r) => r.sfixed32();
    case ScalarType.SFIXED64:
      return longAsString ? (r) => String(r.sfixed64()) : (r) => r.sfixed64();
    case ScalarType.SINT64:
      return longAsString ? (r) => String(r.sint64()) : (r) => r.sint64();
    case ScalarType.UINT32:
      return (r) => r.uint32();
    case ScalarType.SINT32:
      return (r) => r.sint32();
  }
}

/** Adds one record to a list (both packed and unpacked records of a packable list). */
function listReader(field: ListField): ContainerRead {
  if (field.listKind === "message") {
    const read = childReader(field.number, field.message, fieldDelimited(field), isJsonStruct(field));
    return (items, r, ctx) => {
      (items as unknown[]).push(read(undefined, r, ctx));
    };
  }
  const type = scalarTypeOf(field);
  const read = scalarRead(type, field.utf8Validation, field.listKind === "scalar" ? field.longAsString : false);
  const packable = type !== ScalarType.STRING && type !== ScalarType.BYTES;
  // Packed or not, whatever the field's declaration: both are read.
  return (container, r, _ctx, wireType) => {
    const items = container as unknown[];
    if (wireType === WireType.LengthDelimited && packable) {
      const end = r.uint32() + r.pos;
      while (r.pos < end) items.push(read(r));
    } else {
      items.push(read(r));
    }
  };
}

/** A bytes map value's default is made per entry, so entries do not share one array. */
function zeroOf(type: ScalarType): () => unknown {
  switch (type) {
    case ScalarType.BOOL:
      return () => false;
    case ScalarType.STRING:
      return () => "";
    case ScalarType.BYTES:
      return () => new Uint8Array(0);
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return () => protoInt64.zero;
    default:
      return () => 0;
  }
}

/** Adds one entry to a map. */
function mapReader(field: MapField): ContainerRead {
  const keyType = field.mapKey as ScalarType;
  const readKey = scalarRead(keyType, field.utf8Validation, false);
  const keyZero = zeroOf(keyType)();
  let readValue: (r: BinaryReader, ctx: ReadContext, existing: unknown) => unknown;
  let valueDefault: () => unknown;
  switch (field.mapKind) {
    case "scalar": {
      const read = scalarRead(field.scalar as ScalarType, field.utf8Validation, false);
      readValue = (r) => read(r);
      valueDefault = zeroOf(field.scalar as ScalarType);
      break;
    }
    case "enum": {
      const zero = field.enum.values[0]?.number ?? 0;
      readValue = (r) => r.int32();
      valueDefault = () => zero;
      break;
    }
    case "message": {
      // Map values are never delimited; a repeated value within one entry merges into the previous one.
      const read = childReader(2, field.message, false, isJsonStruct(field));
      const desc = field.message;
      readValue = (r, ctx, existing) => read(existing, r, ctx);
      valueDefault = isJsonStruct(field) ? () => ({}) : zeroFactory(desc).make;
      break;
    }
  }
  return (container, r, ctx) => {
    const record = container as Fields;
    let key: unknown;
    let val: unknown;
    const len = r.uint32();
    const end = r.pos + len;
    while (r.pos < end) {
      const tag = readTag(r, ctx.buf);
      const fieldNo = tag >>> 3;
      if (fieldNo === 1) key = readKey(r);
      else if (fieldNo === 2) val = readValue(r, ctx, val);
      else r.skip((tag & 7) as WireType, fieldNo, ctx.recursionLimit - ctx.depth);
    }
    if (key === undefined) key = keyZero;
    if (val === undefined) val = valueDefault();
    // Keys may be booleans, numbers or bigints: object keys are their strings.
    setOwn(record, String(key), val);
  };
}
