/**
 * The binary codec as the plugin emits it, held to protobuf-es by the cases
 * in binary-codec.cases.ts.
 */
import { create, createFileRegistry, fromBinary, toBinary, type DescMessage } from "@bufbuild/protobuf";
import { decodeBinary, encodeBinary } from "../../runtime/core/codec/binary-codec.js";
import { codecOf } from "../../runtime/core/codec/registry.js";
import { codecTests, emittedSources, fixtures } from "./binary-codec.cases.js";

test("every fixture has an emitted codec; proto3 messages start from an object literal, proto2 and editions ones from create()", () => {
  for (const desc of Object.values(fixtures)) {
    const codec = codecOf(desc);
    expect([desc.typeName, codec?.schema]).toEqual([desc.typeName, desc]);
    // The zero message is create()'s: deeply equal, same prototype, keys in the same order.
    const zero = codec?.zero() as object;
    const created = create(desc) as object;
    expect(zero).toStrictEqual(created);
    expect(Object.getPrototypeOf(zero)).toBe(Object.getPrototypeOf(created));
    expect(Object.keys(zero)).toEqual(Object.keys(created));
  }
  const all = emittedSources.get("bc/v1/all_codec.ts") ?? "";
  expect(all).toMatch(/export function newAll\(\): All \{\n {2}return \{ \$typeName: "bc\.v1\.All", /);
  // Defaults on the prototype (proto2, editions' explicit presence): no literal can make that message.
  expect(emittedSources.get("bc/v2/p2_codec.ts")).toMatch(/export function newP2\(\): P2 \{\n {2}return create\(P2Schema\);/);
  expect(emittedSources.get("bc/v3/ed_codec.ts")).toMatch(/export function newEd\(\): Ed \{\n {2}return create\(EdSchema\);/);
});

test("no codec is compiled at run time: the emitted sources hold no eval or Function constructor", () => {
  expect(emittedSources.size).toBeGreaterThan(4);
  for (const [name, source] of emittedSources) expect([name, /new Function|\beval\(/.test(source)]).toEqual([name, false]);
});

test("a descriptor without a registered codec goes through protobuf-es itself", () => {
  // The same message type, described anew: not the schema the emitted codec is registered under.
  const Longs = createFileRegistry(fixtures.Longs.file.proto, () => undefined).getMessage("bc.v4.Longs") as DescMessage;
  expect(Longs).not.toBe(fixtures.Longs);
  expect(codecOf(Longs)).toBeUndefined();
  const init = { big: "-5", many: ["1", "18446744073709551615"], raw: new Uint8Array([1, 2]), name: "n" };
  const bytes = toBinary(Longs, create(Longs, init as never));
  expect(encodeBinary(Longs, init as never)).toEqual(bytes);
  expect(decodeBinary(Longs, bytes)).toStrictEqual(fromBinary(Longs, bytes));
  expect(encodeBinary(fixtures.Longs, init as never)).toEqual(bytes);
});

codecTests();
