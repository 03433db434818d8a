/**
 * `response_body` names a field of the answer, and the HTTP+JSON body is that field's ProtoJSON
 * value. A field left unset is answered as its default, as grpc-gateway answers it (protojson of a
 * nil message is `{}`) and as proto3's JSON mapping defines defaults: `{}` for a message (with its
 * REQUIRED fields, D11), `""`/`0`/the zero enum name for a scalar, `[]` for a list, `{}` for a map;
 * it was `null`, no value of the field's type. Served over a real socket with the fixture's
 * LibraryService (GetBook) under one rule per field kind.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpJsonEndpoint, createNodeListener, type HttpRuleSpec } from "protoc-gen-a2a/runtime/internal";
import type { LibraryServiceHandler } from "../../generated/fixtures/v1/library_handler.js";
import { LibraryServiceMethods, LibraryServiceRequiredFields } from "../../generated/fixtures/v1/library_methods.js";

/** GetBook answers book `full` with every field set, any other with only its id and title. */
const handler: LibraryServiceHandler = {
  async getBook(request) {
    if (request.bookId !== "full") return { id: request.bookId, title: "T" };
    return {
      id: "full",
      title: "T",
      location: { shelfId: "s1" },
      authors: [{ displayName: "A" }],
      reviews: { r: { stars: 5 } },
      isbn: "",
      cover: { mediaType: "image/png" },
    };
  },
};

/** One GET rule of GetBook per response field: `/books/{book_id}/<field>`. */
const fields = ["location", "authors", "reviews", "isbn", "cover", "title"] as const;
const rules: HttpRuleSpec[] = fields.map((field, i) => ({
  method: "getBook",
  httpMethod: "GET",
  path: `/books/{book_id}/${field}`,
  body: "",
  responseBody: field,
  additional: i > 0,
  derived: false,
  pathParams: [{ variable: "book_id", field: ["bookId"] }],
  query: [],
}));

let server: http.Server;
let url = "";
beforeAll(async () => {
  const endpoint = createHttpJsonEndpoint({ methods: LibraryServiceMethods, rules, required: LibraryServiceRequiredFields, handler, heartbeatMs: 0 });
  server = http.createServer(createNodeListener(endpoint));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

async function get(path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, text: await res.text() };
}

test.each([
  // A message field: its zero message, REQUIRED fields at their defaults (Location.shelf_id).
  ["location", '{"shelfId":""}'],
  ["cover", "{}"],
  ["authors", "[]"],
  ["reviews", "{}"],
  // `optional string`, unset: the type's default, as grpc-gateway's getter gives it.
  ["isbn", '""'],
  ["title", '"T"'],
])("an unset %s is answered as its default, %s, never null", async (field, body) => {
  expect(await get(`/books/b1/${field}`)).toEqual({ status: 200, text: body });
});

test.each([
  ["location", '{"shelfId":"s1"}'],
  ["cover", '{"mediaType":"image/png"}'],
  ["authors", '[{"displayName":"A"}]'],
  ["reviews", '{"r":{"stars":5}}'],
  ["isbn", '""'],
])("a set %s is answered as its value, %s", async (field, body) => {
  expect(await get(`/books/full/${field}`)).toEqual({ status: 200, text: body });
});
