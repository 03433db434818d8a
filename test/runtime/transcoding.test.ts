/**
 * The HTTP+JSON transcoder's query reading for a repeated field (D7): the
 * parameter repeated or comma-separated, split at the commas written as
 * such, so an element holding a comma is sent with it as %2C (as
 * URLSearchParams, the generated client's, writes it) and read back whole.
 * google.protobuf.FieldMask's `repeated string paths` is the repeated field.
 */
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";
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
