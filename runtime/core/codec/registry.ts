/**
 * Message codecs specialised at build time (D22): protoc-gen-a2a emits one
 * per message type in `<file>_codec.ts` (plugin/emit/codec.ts), and the
 * runtime finds them by message descriptor.
 *
 * The one mechanism: a generated codec file exports the list of its codecs
 * (and of the codec files it imports), and the generated method table
 * (`<file>_methods.ts`, which every binding file imports) passes that list
 * to `registerCodecs` when it is loaded. From then on the runtime's
 * descriptor-based entry points (`encodeBinary`, `decodeBinary`, the
 * dispatcher's ProtoJSON writer, the fast ProtoJSON reader's zero
 * messages) use the emitted functions for those types. A type nobody
 * registered (a descriptor the runtime is called with directly, a message of
 * a file generated without this plugin) goes through protobuf-es itself.
 * The generated gRPC definitions do not look anything up: they name the
 * codecs they serialize with.
 */
import type { DescMessage, JsonValue, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";

/** What the readers of one decode share, as protobuf-es's fromBinary counts it. */
export interface ReadContext {
  /** The buffer being read (BinaryReader keeps its own private). */
  readonly buf: Uint8Array;
  readonly readUnknownFields: boolean;
  readonly recursionLimit: number;
  /** Messages entered so far. */
  depth: number;
}

/**
 * The codec of one message type, as the plugin emits it. Declared with
 * method signatures so that the codec of one type is a `GenCodec` of any
 * (a list of a file's codecs holds them all).
 */
export interface GenCodec<Desc extends DescMessage = DescMessage> {
  readonly schema: Desc;
  /**
   * Local names of the fields marked `google.api.field_behavior = REQUIRED`,
   * which `toJson` writes even at their default.
   */
  readonly required: readonly string[];
  /** A new message with no field set, as `create(schema)` makes it. */
  zero(): MessageShape<Desc>;
  /**
   * Writes the fields of a message or of its init shape, as
   * `toBinary(schema, create(schema, value))` writes them (a missing field
   * is its default), and a message's unknown fields.
   */
  write(w: BinaryWriter, value: MessageInitShape<Desc>): void;
  /**
   * Reads `length` bytes of fields into `message` (a new message when
   * undefined) and returns it, as fromBinary and mergeFromBinary read them.
   */
  read(r: BinaryReader, ctx: ReadContext, length: number, message?: MessageShape<Desc>): MessageShape<Desc>;
  /**
   * The ProtoJSON of a message or of its init shape, as
   * `toJson(schema, create(schema, value))` writes it, plus every REQUIRED
   * field at its default (toJsonWithRequired with the generated table).
   */
  toJson(value: MessageInitShape<Desc>): JsonValue;
}

const codecs = new WeakMap<DescMessage, GenCodec>();

/** Registers codecs, each list as a generated codec file exports it (its own codecs and those of the files it imports). */
export function registerCodecs(...lists: readonly (readonly GenCodec[])[]): void {
  for (const list of lists) {
    for (const codec of list) codecs.set(codec.schema, codec);
  }
}

/** The registered codec of `desc`, if any. */
export function codecOf<Desc extends DescMessage>(desc: Desc): GenCodec<Desc> | undefined {
  return codecs.get(desc) as GenCodec<Desc> | undefined;
}
