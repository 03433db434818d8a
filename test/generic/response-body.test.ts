/**
 * `response_body` names a field of the answer, and the HTTP+JSON body is that field's ProtoJSON
 * value. A field left unset is answered `null` where it tracks presence (a message, an `optional`
 * scalar, a oneof member: ProtoJSON reads null as unset, so the generated client over HTTP+JSON
 * sees what it sees over gRPC) and its default where it does not (`""`/`0`/the zero enum name for
 * a scalar, `[]` for a list, `{}` for a map), where it was `null`, no value of the field's type.
 * Served over a real socket with the fixture's LibraryService (GetBook) under one rule per field
 * kind, and read back by the generated clients of both bindings.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpJsonEndpoint, createNodeListener, type HttpRuleSpec } from "protoc-gen-a2a/runtime/internal";
import { createLibraryServiceHttpJsonClient, createLibraryServiceJsonRpcClient } from "../../generated/fixtures/v1/library_client.js";
import { createLibraryServiceHttpJsonListener } from "../../generated/fixtures/v1/library_http.js";
import { createLibraryServiceJsonRpcListener } from "../../generated/fixtures/v1/library_jsonrpc.js";
import type { LibraryServiceHandler } from "../../generated/fixtures/v1/library_handler.js";
import { LibraryServiceMethods, LibraryServiceRequiredFields } from "../../generated/fixtures/v1/library_methods.js";

/** GetBook answers book `full` with every field set, any other with only its id and title. */
const handler: LibraryServiceHandler = {
  async getBook(request) {
    if (request.bookId === "bare") return { id: "bare" };
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
  // Fields that track presence: null, which ProtoJSON reads as the field unset.
  ["location", "null"],
  ["cover", "null"],
  ["isbn", "null"],
  // Fields without presence: their default, a value of the field's type.
  ["authors", "[]"],
  ["reviews", "{}"],
  ["title", '""'],
])("an unset %s is answered %s", async (field, body) => {
  expect(await get(`/books/bare/${field}`)).toEqual({ status: 200, text: body });
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

test("the generated clients read GetBookCover (response_body: cover) of a book without a cover as JSON-RPC serves it: cover unset", async () => {
  const cover: LibraryServiceHandler = {
    async getBookCover(request) {
      return request.bookId === "c" ? { id: "c", title: "T", cover: { mediaType: "image/png" } } : { id: request.bookId, title: "T" };
    },
  };
  const servers = [http.createServer(createLibraryServiceHttpJsonListener(cover)), http.createServer(createLibraryServiceJsonRpcListener(cover))];
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))));
  const origin = (s: http.Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  const clients = [createLibraryServiceHttpJsonClient(origin(servers[0]!)), createLibraryServiceJsonRpcClient(origin(servers[1]!))];
  try {
    for (const client of clients) {
      expect((await client.getBookCover({ shelfId: "s", bookId: "b" })).cover).toBeUndefined();
      expect((await client.getBookCover({ shelfId: "s", bookId: "c" })).cover?.mediaType).toBe("image/png");
    }
  } finally {
    for (const client of clients) client.close();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
});
