/**
 * The canonical form a card signature covers (D100): RFC 8785 on its own
 * examples (section 3.2.2's sample, 3.2.3's property order, Appendix B's
 * numbers), and the presence rules of A2A section 8.4.1 read off the
 * descriptors, with the section's own example as the test vector, byte for
 * byte, beside what @a2a-js/sdk 1.3.0 makes of it.
 */
import { create, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { canonicalizeAgentCard } from "@a2a-js/sdk";
import { canonicalJson, JcsError } from "../../runtime/core/jcs.js";
import { presenceJson, presenceJsonOf, PresenceJsonError } from "../../runtime/core/codec/presence-json.js";
import { AgentCardSchema, TaskSchema } from "../../generated/a2a_pb.js";

describe("RFC 8785", () => {
  test("section 3.2.2's sample: numbers, escapes, literals", () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        '"literals": [null, true, false]}',
    );
    expect(canonicalJson(input)).toBe('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  test("section 3.2.3: properties sorted by UTF-16 code units", () => {
    const input = JSON.parse(
      '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One",' +
        '"\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", "\\u00f6": "Latin Small Letter O With Diaeresis"}',
    );
    const text = canonicalJson(input);
    const positions = ["Carriage Return", "One", "Control", "Latin Small Letter O With Diaeresis", "Euro Sign", "Emoji: Grinning Face", "Hebrew Letter Dalet With Dagesh"].map((v) => text.indexOf(v));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(positions.every((p) => p > 0)).toBe(true);
  });

  // Appendix B: IEEE 754 bits and their canonical text.
  const appendixB: readonly [string, string][] = [
    ["0000000000000000", "0"],
    ["8000000000000000", "0"],
    ["0000000000000001", "5e-324"],
    ["8000000000000001", "-5e-324"],
    ["7fefffffffffffff", "1.7976931348623157e+308"],
    ["ffefffffffffffff", "-1.7976931348623157e+308"],
    ["4340000000000000", "9007199254740992"],
    ["c340000000000000", "-9007199254740992"],
    ["4430000000000000", "295147905179352830000"],
    ["44b52d02c7e14af5", "9.999999999999997e+22"],
    ["44b52d02c7e14af6", "1e+23"],
    ["44b52d02c7e14af7", "1.0000000000000001e+23"],
    ["444b1ae4d6e2ef4e", "999999999999999700000"],
    ["444b1ae4d6e2ef4f", "999999999999999900000"],
    ["444b1ae4d6e2ef50", "1e+21"],
    ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
    ["3eb0c6f7a0b5ed8d", "0.000001"],
    ["41b3de4355555553", "333333333.3333332"],
    ["41b3de4355555554", "333333333.33333325"],
    ["41b3de4355555555", "333333333.3333333"],
    ["41b3de4355555556", "333333333.3333334"],
    ["41b3de4355555557", "333333333.33333343"],
    ["becbf647612f3696", "-0.0000033333333333333333"],
    ["43143ff3c1cb0959", "1424953923781206.2"],
  ];
  const double = (hex: string) => new DataView(Uint8Array.from(Buffer.from(hex, "hex")).buffer).getFloat64(0);

  test.each(appendixB)("Appendix B: %s is %s", (hex, text) => {
    expect(canonicalJson(double(hex))).toBe(text);
    expect(canonicalJson([double(hex)])).toBe(`[${text}]`);
  });

  test("Appendix B's NaN and Infinity, and lone surrogates, have no canonical form", () => {
    expect(() => canonicalJson(double("7fffffffffffffff"))).toThrow(JcsError);
    expect(() => canonicalJson({ a: [double("7ff0000000000000")] })).toThrow(/\$\.a\[0\] is Infinity/);
    expect(() => canonicalJson({ name: "\ud800" })).toThrow(/lone UTF-16 surrogate/);
    expect(canonicalJson({ emoji: "\ud83d\ude00" })).toBe('{"emoji":"😀"}');
  });
});

describe("A2A section 8.4.1 from the descriptors", () => {
  const example = { name: "Example Agent", description: "", capabilities: { streaming: false, pushNotifications: false, extensions: [] }, skills: [] };
  const expected = '{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}';

  test("the section's example canonicalizes byte for byte", () => {
    const text = canonicalJson(presenceJson(AgentCardSchema, example, { omit: ["signatures"] }));
    expect(Buffer.from(text, "utf8")).toEqual(Buffer.from(expected, "utf8"));
  });

  test("@a2a-js/sdk 1.3.0 drops the REQUIRED description and skills of the same example (the edge case the README documents)", () => {
    expect(canonicalizeAgentCard(example as never)).toBe('{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}');
  });

  test("signatures are left out; unknown keys are kept; proto names read as JSON names", () => {
    const json = { ...example, signatures: [{ protected: "x", signature: "y" }], futureField: { a: 1 }, icon_url: "" } as JsonObject;
    expect(canonicalJson(presenceJson(AgentCardSchema, json, { omit: ["signatures"] }))).toBe(
      '{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","futureField":{"a":1},"iconUrl":"","name":"Example Agent","skills":[]}',
    );
  });

  test("from a message every REQUIRED field is there, unset optionals and implicit defaults are not", () => {
    const card = create(AgentCardSchema, { name: "A", capabilities: { streaming: true }, skills: [{ id: "s", name: "S", description: "d", tags: ["t"] }] });
    expect(canonicalJson(presenceJsonOf(AgentCardSchema, card, { omit: ["signatures"] }))).toBe(
      '{"capabilities":{"streaming":true},"defaultInputModes":[],"defaultOutputModes":[],"description":"","name":"A",' +
        '"skills":[{"description":"d","id":"s","name":"S","tags":["t"]}],"supportedInterfaces":[],"version":""}',
    );
    // And that JSON, read back as it travels, has the same form: signer and verifier agree.
    const travelled = presenceJsonOf(AgentCardSchema, card);
    expect(canonicalJson(presenceJson(AgentCardSchema, travelled))).toBe(canonicalJson(presenceJsonOf(AgentCardSchema, fromJson(AgentCardSchema, travelled))));
  });

  test("any message: enums at zero by name or number, 64-bit zero as a string, Struct data kept whole", () => {
    const json = { id: "t", contextId: "", status: { state: "TASK_STATE_UNSPECIFIED" }, metadata: { empty: "", zero: 0 }, history: [] };
    expect(canonicalJson(presenceJson(TaskSchema, json))).toBe('{"id":"t","metadata":{"empty":"","zero":0},"status":{"state":"TASK_STATE_UNSPECIFIED"}}');
  });

  test("JSON of the wrong shape, or a field given twice, is refused by name", () => {
    expect(() => presenceJson(AgentCardSchema, { skills: {} } as JsonObject)).toThrow(PresenceJsonError);
    expect(() => presenceJson(AgentCardSchema, { capabilities: "yes" } as JsonObject)).toThrow(/\$\.capabilities must be a JSON object/);
    expect(() => presenceJson(AgentCardSchema, { iconUrl: "a", icon_url: "b" } as JsonObject)).toThrow(/given twice/);
  });
});
