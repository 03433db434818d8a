/**
 * New messages with no fields set, exactly as `create(desc)` makes them,
 * for the readers that fill them (the fast ProtoJSON reader). protobuf-es's
 * create() loops over the type's fields for each message (~90 ns); the
 * codecs emitted at build time make the same message as an object literal
 * (~10 ns). A type without a registered codec (registry.ts) gets create().
 */
import { create, type DescMessage, type Message } from "@bufbuild/protobuf";
import { codecOf } from "./registry.js";

/** A function making new messages of `desc`, as create(desc) makes them. */
export function zeroFactory(desc: DescMessage): () => Message {
  const codec = codecOf(desc);
  if (codec !== undefined) return () => codec.zero();
  return () => create(desc);
}
