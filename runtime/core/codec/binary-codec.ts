/**
 * Protobuf binary for the gRPC binding, without the message tree protobuf-es
 * needs around it.
 *
 * Handlers mostly return init shapes; `toBinary(Schema, create(Schema,
 * value))` first copies each answer into a fresh message tree only to read
 * it once. The codecs protoc-gen-a2a emits at build time (`<file>_codec.ts`,
 * plugin/emit/codec.ts) write a message *or* its init shape directly (a
 * missing field is its default, exactly as `create()` would make it) and
 * read the very message `fromBinary()` builds. This module runs them: one
 * BinaryWriter kept between calls, the bytes handed out with one copy, the
 * read context fromBinary's options make.
 *
 * Two ways in:
 * - `serializeMessage(codec, value)` / `deserializeMessage(codec, bytes)`:
 *   what the generated gRPC definitions call, naming the codec;
 * - `encodeBinary(desc, value)` / `decodeBinary(desc, bytes)` (and
 *   `encodeBinaryWith`), by descriptor: the registered codec of `desc`
 *   (registry.ts), else protobuf-es's toBinary/fromBinary themselves.
 *
 * Either way `encode` gives the bytes of `toBinary(desc, create(desc, v))`
 * and `decode` the message `fromBinary(desc, b)` gives (deeply equal,
 * `$unknown` and prototypes included), or the same error: a value the
 * emitted writer cannot write is handed to protobuf-es, whose error (the
 * field, in its words) is the one thrown. test/runtime/binary-codec.cases.ts
 * holds the emitted codecs to protobuf-es on random and malformed input.
 */
import { create, fromBinary, toBinary, type BinaryReadOptions, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import { codecOf, type GenCodec, type ReadContext } from "./registry.js";

/**
 * The bytes of `toBinary(desc, create(desc, value))`, for a message of
 * `desc` or its init shape, without building the message where `desc` has a
 * registered codec.
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
  if (codec === undefined) {
    const bytes = toBinary(desc, create(desc, value));
    return copy(bytes, bytes.byteLength);
  }
  return encodeWith(codec, value, copy);
}

/**
 * How bytes this process wrote itself (a task store's) are read back. The
 * decoder's default bound of 100 nested messages guards against a peer's
 * bytes; a Struct or Value nests two messages per JSON level, so metadata
 * that ProtoJSON took can be deeper than that, and a store that read its
 * own task with the default bound could never read that task again (every
 * GetTask or ListTasks that met it failed Internal; found by the fuzz
 * campaign).
 */
export const ownBytesReadOptions: Partial<BinaryReadOptions> = { recursionLimit: 1000 };

/** The message `fromBinary(desc, bytes, options)` gives. */
export function decodeBinary<Desc extends DescMessage>(desc: Desc, bytes: Uint8Array, options?: Partial<BinaryReadOptions>): MessageShape<Desc> {
  const codec = codecOf(desc);
  return codec === undefined ? fromBinary(desc, bytes, options) : decodeWith(codec, bytes, options);
}

/**
 * A message or its init shape in protobuf binary by descriptor, as the
 * Buffer grpc-js wants (a registered codec, else protobuf-es).
 */
export function encodeBuffer<Desc extends DescMessage>(desc: Desc, value: MessageInitShape<Desc>): Buffer {
  return encodeBinaryWith(desc, value, toBuffer);
}

/**
 * A message or its init shape in protobuf binary, written by its emitted
 * codec, as the Buffer grpc-js wants: one copy out of the writer, into
 * Buffer's pool for small messages. What the generated definitions
 * serialize with.
 */
export function serializeMessage<Desc extends DescMessage>(codec: GenCodec<Desc>, value: MessageInitShape<Desc>): Buffer {
  return encodeWith(codec, value, toBuffer);
}

/** The message `fromBinary(codec.schema, bytes)` gives, read by its emitted codec. What the generated definitions deserialize with. */
export function deserializeMessage<Desc extends DescMessage>(codec: GenCodec<Desc>, bytes: Uint8Array, options?: Partial<BinaryReadOptions>): MessageShape<Desc> {
  return decodeWith(codec, bytes, options);
}

function toBuffer(bytes: Uint8Array, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  out.set(length === bytes.byteLength ? bytes : bytes.subarray(0, length));
  return out;
}

function encodeWith<Desc extends DescMessage, T>(codec: GenCodec<Desc>, value: MessageInitShape<Desc>, copy: (bytes: Uint8Array, length: number) => T): T {
  // One writer is kept between calls so its buffer need not grow again each
  // time; a call made while it is in use (or after a throw) takes a new one.
  const w = spareWriter ?? newWriter();
  spareWriter = undefined;
  const init = (value ?? {}) as MessageInitShape<Desc>;
  try {
    codec.write(w, init);
  } catch (e) {
    throw encodeError(codec.schema, init, e);
  }
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
 * The error of a value the emitted writer could not write: protobuf-es's
 * own for it (which names the field as toBinary names it), or the writer's
 * when protobuf-es writes that value (emitted code is held to writing
 * whatever protobuf-es writes, so that is a bug to see, not to hide).
 */
function encodeError(desc: DescMessage, value: MessageInitShape<DescMessage>, e: unknown): unknown {
  try {
    toBinary(desc, create(desc, value));
  } catch (canonical) {
    return canonical;
  }
  return e;
}

function decodeWith<Desc extends DescMessage>(codec: GenCodec<Desc>, bytes: Uint8Array, options: Partial<BinaryReadOptions> | undefined): MessageShape<Desc> {
  const ctx: ReadContext = {
    buf: bytes,
    readUnknownFields: options?.readUnknownFields ?? true,
    recursionLimit: options?.recursionLimit ?? 100,
    depth: 0,
  };
  return codec.read(new BinaryReader(bytes), ctx, bytes.byteLength);
}

/**
 * protobuf-es's writer, with its copy-free path for ASCII strings taken up
 * to 127 characters instead of 32: ids are mostly 36-character UUIDs, which
 * its path for the rest encodes through TextEncoder.encodeInto and a
 * subarray each. The bytes are the same: an ASCII string of 127 characters
 * or fewer is that many bytes, after a one-byte length.
 */
export class CodecWriter extends BinaryWriter {
  override string(value: string): this {
    // A list item or a oneof value may be anything at run time: protobuf-es writes String(value).
    if (typeof value !== "string") return super.string(value);
    const inner = this as unknown as WriterInternals;
    const len = value.length;
    // Anything else (no room yet, a longer string, not a string at all) goes the base class's way.
    if (len <= 127 && inner.pos + len < inner.buffer.length) {
      const buf = inner.buffer;
      let pos = inner.pos;
      buf[pos++] = len;
      for (let i = 0; i < len; i++) {
        const code = value.charCodeAt(i);
        if (code > 0x7f) return super.string(value);
        buf[pos++] = code;
      }
      inner.pos = pos;
      return this;
    }
    return super.string(value);
  }
}

let spareWriter: BinaryWriter | undefined;

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

/** The codecs' writer: CodecWriter where protobuf-es's writer is laid out as WriterInternals says, else its own. */
const newWriter: () => BinaryWriter = internalsOf(new BinaryWriter().uint32(1))?.pos === 1 ? () => new CodecWriter() : () => new BinaryWriter();

/** Whether the codec reads the writer's buffer directly (false: it copies through finish()). */
export function readsWriterBuffer(): boolean {
  return internalsOf(new BinaryWriter().uint32(1))?.pos === 1;
}
