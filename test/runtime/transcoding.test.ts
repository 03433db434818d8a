/**
 * The HTTP+JSON transcoder's query reading for a repeated field (D7): the
 * parameter repeated or comma-separated, split at the commas written as
 * such, so an element holding a comma is sent with it as %2C (as
 * URLSearchParams, the generated client's, writes it) and read back whole.
 * google.protobuf.FieldMask's `repeated string paths` is the repeated field.
 */
import { create, createFileRegistry, type JsonValue } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FieldMaskSchema, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { createTranscoder } from "../../runtime/core/http/transcoding.js";
import type { HttpRuleSpec } from "../../runtime/core/method-spec.js";

const rule: HttpRuleSpec = { method: "m", httpMethod: "GET", path: "/masks", body: "", responseBody: "", additional: false, pathParams: [], query: ["paths"], derived: false };
const transcoder = createTranscoder(FieldMaskSchema, rule);
const pathsOf = (raw: string) => transcoder.build([], undefined, new URLSearchParams(raw), `/masks?${raw}`).paths;

test("a repeated parameter, comma-separated values, or both, make one list in order", () => {
  expect(pathsOf("paths=a&paths=b")).toEqual(["a", "b"]);
  expect(pathsOf("paths=a,b&paths=c")).toEqual(["a", "b", "c"]);
  expect(pathsOf("other=x&paths=a+b,%C3%A9")).toEqual(["a b", "é"]);
});

test("a comma sent as %2C stays in its element; what URLSearchParams writes reads back as it was", () => {
  expect(pathsOf("paths=Smith%2C+John&paths=Doe%2C+Jane")).toEqual(["Smith, John", "Doe, Jane"]);
  const written = new URLSearchParams([["paths", "a,b"], ["paths", "c"]]).toString();
  expect(pathsOf(written)).toEqual(["a,b", "c"]);
});

test("an enum bound to the path agrees with the query by value: its name and its number name the same", async () => {
  const { LibraryServiceHttpRules } = await import("../../generated/fixtures/v1/library_methods.js");
  const { ExportBookRequestSchema } = await import("../../generated/fixtures/v1/library_pb.js");
  const rule = LibraryServiceHttpRules.find((r) => r.method === "exportBook" && r.httpMethod === "GET")!;
  const exportBook = createTranscoder(ExportBookRequestSchema, rule);
  const build = (pathFormat: string, queryFormat: string) => exportBook.build(["s1", "b1", pathFormat], undefined, new URLSearchParams(`format=${queryFormat}`), `/x?format=${queryFormat}`);
  expect(build("1", "EXPORT_FORMAT_PDF")).toMatchObject({ format: 1 });
  expect(build("EXPORT_FORMAT_PDF", "1")).toMatchObject({ format: "EXPORT_FORMAT_PDF" });
  expect(() => build("1", "EXPORT_FORMAT_EPUB")).toThrow(/must agree/);
  expect(() => build("1", "EXPORT_FORMAT_BOGUS")).toThrow(/must agree/);
});

describe("fields named like Object.prototype's members (constructor, toString, valueOf, __proto__)", () => {
  // Every HTTP+JSON call bound to one failed: the body's inherited members were read as values (generator hunt).
  const { STRING, MESSAGE } = FieldDescriptorProto_Type;
  const field = (name: string, number: number, jsonName: string, typeName?: string) => ({
    name,
    number,
    jsonName,
    label: FieldDescriptorProto_Label.OPTIONAL,
    type: typeName === undefined ? STRING : MESSAGE,
    typeName,
  });
  const registry = createFileRegistry(
    create(FileDescriptorProtoSchema, {
      name: "keys.proto",
      package: "keys",
      syntax: "proto3",
      messageType: [
        { name: "Owner", field: [field("constructor", 1, "constructor")] },
        {
          name: "Req",
          field: [field("constructor", 1, "constructor"), field("to_string", 2, "toString"), field("value_of", 3, "valueOf"), field("__proto__", 4, "Proto"), field("owner", 5, "owner", ".keys.Owner")],
        },
      ],
    }),
    () => undefined,
  );
  const Req = registry.getMessage("keys.Req")!;
  const transcoderFor = (field: string[], body: "" | "*") => {
    const localNames = field.map((name, i) => (i === 0 ? Req : registry.getMessage("keys.Owner")!).fields.find((f) => f.name === name)!.localName);
    return createTranscoder(Req, { method: "m", httpMethod: body === "" ? "GET" : "POST", path: "/x/{v}", body, responseBody: "", additional: false, pathParams: [{ variable: field.join("."), field: localNames }], query: [], derived: false });
  };

  test.each([["constructor"], ["to_string"], ["value_of"], ["__proto__"]])("%s bound to the path, with no body or an empty one, is the path's value", (name) => {
    const jsonName = Req.fields.find((f) => f.name === name)!.jsonName;
    expect(transcoderFor([name], "").build(["v1"], undefined, new URLSearchParams(""), "/x/v1")).toEqual({ [jsonName]: "v1" });
    const built = transcoderFor([name], "*").build(["v1"], JSON.parse("{}") as JsonValue, undefined, "/x/v1");
    expect(Object.getOwnPropertyDescriptor(built, jsonName)?.value).toBe("v1");
    expect(Object.getPrototypeOf(built)).toBe(Object.prototype);
  });

  test("a nested path through a message field whose own field is `constructor`", () => {
    expect(transcoderFor(["owner", "constructor"], "").build(["o1"], undefined, undefined, "/x/o1")).toEqual({ owner: { constructor: "o1" } });
    // A body that does give it must agree.
    expect(() => transcoderFor(["owner", "constructor"], "*").build(["o1"], { owner: { constructor: "o2" } }, undefined, "/x/o1")).toThrow(/must agree/);
  });
});
