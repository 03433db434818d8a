/**
 * The binary codec as it runs by default: compiled per-message code, held to
 * protobuf-es by the cases in binary-codec.cases.ts.
 */
import { codecKind } from "../../runtime/core/codec/binary-codec.js";
import { codecTests, fixtures } from "./binary-codec.cases.js";

test("codecs are compiled per message; proto3 messages start from an object literal, proto2 ones from create()", () => {
  for (const desc of [fixtures.All, fixtures.Inner, fixtures.Unpacked, fixtures.Longs, fixtures.Task, fixtures.AgentCard, fixtures.StreamResponse]) {
    expect([desc.typeName, codecKind(desc)]).toEqual([desc.typeName, { compiled: true, literalZero: true }]);
  }
  // Defaults on the prototype (proto2, editions' explicit presence): no literal can make that message.
  for (const desc of [fixtures.P2, fixtures.Ed]) expect([desc.typeName, codecKind(desc)]).toEqual([desc.typeName, { compiled: true, literalZero: false }]);
});

codecTests();
