/** ProtoJSON input per D10: unknown fields ignored at every depth, wrong values named by path. */
import { JsonDecodeError, decodeJson } from "../../runtime/core/codec/proto-json.js";
import type { JsonValue } from "@bufbuild/protobuf";
import { AgentCardSchema, SendMessageRequestSchema } from "../../generated/a2a_pb.js";
import { TagSchema } from "../../generated/fixtures/v1/common_pb.js";
import { ShelfEventSchema } from "../../generated/fixtures/v1/library_pb.js";

function errorOf(run: () => unknown): { field: string | undefined; reason: string } {
  try {
    run();
  } catch (err) {
    if (err instanceof JsonDecodeError) return { field: err.field, reason: err.reason };
    throw err;
  }
  throw new Error("no error");
}

test("a body with no unknown field decodes as is", () => {
  const m = decodeJson(SendMessageRequestSchema, { message: { messageId: "m", parts: [{ text: "a" }] } });
  expect(m).toMatchObject({ message: { messageId: "m" } });
});

test("unknown keys are dropped in nested messages, list elements and map values, but Struct contents are data", () => {
  const m = decodeJson(SendMessageRequestSchema, {
    x: 1,
    message: { messageId: "m", y: 2, parts: [{ text: "a", z: 3 }], metadata: { keep: "me" } },
  });
  expect(m).toMatchObject({ message: { messageId: "m", metadata: { keep: "me" } } });
  const card = decodeJson(AgentCardSchema, {
    name: "a",
    securitySchemes: { k: { apiKeySecurityScheme: { name: "n", location: "header", extra: true } } },
  });
  expect(card).toMatchObject({ securitySchemes: { k: { scheme: { case: "apiKeySecurityScheme" } } } });
});

test("a wrong value in a list element is named with its index", () => {
  expect(errorOf(() => decodeJson(SendMessageRequestSchema, { message: { parts: [{ text: "a" }, { text: 5 }] } }))).toEqual({
    field: "message.parts[1].text",
    reason: "cannot decode field lf.a2a.v1.Part.text from JSON: expected string, got 5",
  });
});

test("a wrong value in a map value is named with its key", () => {
  expect(
    errorOf(() => decodeJson(AgentCardSchema, { securitySchemes: { "api key": { apiKeySecurityScheme: { name: 7 } } } })),
  ).toEqual({
    field: 'securitySchemes["api key"].apiKeySecurityScheme.name',
    reason: "cannot decode field lf.a2a.v1.APIKeySecurityScheme.name from JSON: expected string, got 7",
  });
});

test("two members of one oneof are blamed on the message that holds them", () => {
  expect(errorOf(() => decodeJson(SendMessageRequestSchema, { message: { parts: [{ text: "a", url: "b" }] } }))).toEqual({
    field: "message.parts[0]",
    reason: expect.stringContaining("oneof set multiple times"),
  });
});

test("two members of a oneof of the request itself, which has no path, name the second member (a BadRequest, not none)", () => {
  expect(errorOf(() => decodeJson(ShelfEventSchema, { removedBookId: "b1", added: { id: "b2" } }))).toEqual({
    field: "added",
    reason: expect.stringContaining("oneof set multiple times"),
  });
});

describe("a recursive message (fixtures.v1.Tag)", () => {
  /** A Tag nesting `depth` more Tags below it, through `narrower`. */
  const nested = (depth: number): JsonValue => {
    let tag: JsonValue = { label: "leaf" };
    for (let i = 0; i < depth; i++) tag = { label: "x", narrower: [tag] };
    return tag;
  };

  test("nested deeper than protobuf-es decodes (100 messages) is InvalidParams, however deep: no walk of ours runs out of stack, and the message stays short", () => {
    expect(decodeJson(TagSchema, nested(50))).toMatchObject({ label: "x" });
    for (const depth of [100, 1_000, 50_000]) {
      const e = errorOf(() => decodeJson(TagSchema, nested(depth)));
      expect(e).toEqual({ field: undefined, reason: "the request nests objects more than 100 deep" });
    }
  });

  test('a map key "__proto__" is kept when a value beside or in it has unknown fields to drop', () => {
    const tag = decodeJson(TagSchema, JSON.parse('{"related":{"__proto__":{"label":"p","unknown":1},"other":{"label":"o"}}}') as JsonValue);
    expect(Object.keys((tag as unknown as { related: object }).related).sort()).toEqual(["__proto__", "other"]);
    expect(Object.getOwnPropertyDescriptor((tag as unknown as { related: object }).related, "__proto__")?.value).toMatchObject({ label: "p" });
  });
});
