/**
 * The client runtime's parts that need no server: the SSE reader over
 * chunks cut anywhere, the inverse HTTP transcoding of A2A's rules (path
 * choice, encoding, query, what cannot be sent), the gRPC address of an
 * interface URL (D28), and error decoding by reason, code and status (D29).
 */
import { create } from "@bufbuild/protobuf";
import { TaskNotFoundError, TaskNotCancelableError, InvalidParamsError, UnauthenticatedError, isRpcError } from "protoc-gen-a2a/runtime";
import { readSse } from "../../runtime/core/client/sse.js";
import { createRequestEncoder, jsonNamesOf, literalsOf, zeroTextOf } from "../../runtime/core/http/request-encoding.js";
import { LendingServiceHttpRules, LendingServiceMethods, LibraryServiceHttpRules, LibraryServiceMethods } from "../../generated/fixtures/v1/library_methods.js";
import { RouteOrderServiceHttpRules, RouteOrderServiceMethods } from "../../generated/fixtures/v1/routes_methods.js";
import { grpcTarget } from "../../runtime/core/client/grpc.js";
import { coreClientErrors, errorFromGrpc, errorFromHttp, errorFromJsonRpc } from "../../runtime/core/client/error-decoding.js";
import { a2aClientErrors } from "../../runtime/a2a/client/profile.js";
import { A2AServiceHttpRules, A2AServiceMethods } from "../../generated/a2a_methods.js";
import { StatusSchema } from "../../runtime/gen/google/rpc/status_pb.js";
import { ErrorInfoSchema } from "../../runtime/gen/google/rpc/error_details_pb.js";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { toBinary } from "@bufbuild/protobuf";

function bodyOf(chunks: readonly string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c));
      controller.close();
    },
  });
}

async function events(chunks: readonly string[]) {
  const out: { event: string; data: string }[] = [];
  for await (const e of readSse(bodyOf(chunks))) out.push(e);
  return out;
}

describe("SSE reader", () => {
  // Whether an event near the bound passed depended on where a read split its last line (review).
  test("an event within maxEventBytes passes, and one past it fails, at every split of its bytes", async () => {
    const max = 100;
    const within = `data: ${"x".repeat(max)}\n\n`;
    const past = `data: ${"x".repeat(max + 1)}\n\n`;
    for (let at = 1; at < within.length; at++) {
      const got: string[] = [];
      for await (const e of readSse(bodyOf([within.slice(0, at), within.slice(at)]), max)) got.push(e.data);
      expect(got).toEqual(["x".repeat(max)]);
      await expect(
        (async () => {
          for await (const e of readSse(bodyOf([past.slice(0, at), past.slice(at)]), max)) void e;
        })(),
      ).rejects.toMatchObject({ entry: { grpcStatus: "RESOURCE_EXHAUSTED" } });
    }
  });

  const stream = 'data: {"a":1}\n\n: keep-alive\n\nevent: error\ndata: {"b":\ndata: 2}\n\n';
  test("reads events, joins data lines, skips comments, whatever the chunking", async () => {
    const expected = [
      { event: "message", data: '{"a":1}' },
      { event: "error", data: '{"b":\n2}' },
    ];
    expect(await events([stream])).toEqual(expected);
    // Every split point, and one byte per chunk.
    for (let i = 1; i < stream.length; i++) expect(await events([stream.slice(0, i), stream.slice(i)])).toEqual(expected);
    expect(await events([...stream])).toEqual(expected);
  });

  test("CR, LF and CRLF all end lines; a CRLF split across chunks is one line end", async () => {
    expect(await events(["data: x\r\n\r\ndata: y\r\rdata: z\n\n"])).toEqual([
      { event: "message", data: "x" },
      { event: "message", data: "y" },
      { event: "message", data: "z" },
    ]);
    expect(await events(["data: x\r", "\n\r", "\n"])).toEqual([{ event: "message", data: "x" }]);
    // Every split point of a CR and CRLF stream, and one character per chunk.
    const mixed = "data: a\r\ndata: b\r\r\n: c\rdata: d\r\n\r\n";
    const expected = [{ event: "message", data: "a\nb" }, { event: "message", data: "d" }];
    for (let i = 1; i < mixed.length; i++) expect(await events([mixed.slice(0, i), mixed.slice(i)])).toEqual(expected);
    expect(await events([...mixed])).toEqual(expected);
  });

  test("a line longer than many chunks is read whole (its pieces joined once its end comes)", async () => {
    const long = "x".repeat(1 << 20);
    const text = `data: ${long}\n\ndata: after\n\n`;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 16 << 10) chunks.push(text.slice(i, i + (16 << 10)));
    const read = await events(chunks);
    expect(read.map((e) => e.data.length)).toEqual([long.length, 5]);
    expect(read[0]!.data === long).toBe(true);
  });

  test("an event cut off by the end of the stream is dropped; a multi-byte character split across chunks is kept", async () => {
    expect(await events(["data: done\n\ndata: cut"])).toEqual([{ event: "message", data: "done" }]);
    const bytes = new TextEncoder().encode("data: é✓\n\n");
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const b of bytes) c.enqueue(new Uint8Array([b]));
        c.close();
      },
    });
    const out = [];
    for await (const e of readSse(body)) out.push(e.data);
    expect(out).toEqual(["é✓"]);
  });
});

describe("HTTP+JSON request encoding (A2A's rules)", () => {
  const encoderFor = (method: keyof typeof A2AServiceMethods) => {
    const spec = A2AServiceMethods[method];
    return createRequestEncoder(spec.name, A2AServiceHttpRules.filter((r) => r.method === method), (field) =>
      field.map((local) => spec.input.fields.find((f) => f.localName === local)!.jsonName),
    );
  };

  test("the tenant picks the /{tenant}/ rule; without one the plain rule is used", () => {
    const get = encoderFor("getTask");
    expect(get.encode({ id: "t 1/2" })).toMatchObject({ method: "GET", path: "/tasks/t%201%2F2", body: undefined });
    expect(get.encode({ id: "t1", tenant: "acme", historyLength: 3 })).toMatchObject({ method: "GET", path: "/acme/tasks/t1?historyLength=3" });
  });

  test("body * sends the whole message; a GET's other fields go to the query by JSON name, repeated and nested", () => {
    const send = encoderFor("sendMessage").encode({ message: { messageId: "m" }, tenant: "acme" });
    expect(send).toMatchObject({ method: "POST", path: "/acme/message:send", body: { message: { messageId: "m" }, tenant: "acme" } });
    const list = encoderFor("listTasks").encode({ contextId: "c", status: "TASK_STATE_WORKING", pageSize: 5, statusTimestampAfter: "2026-01-01T00:00:00Z" });
    expect(list.path).toBe("/tasks?contextId=c&status=TASK_STATE_WORKING&pageSize=5&statusTimestampAfter=2026-01-01T00%3A00%3A00Z");
    expect(encoderFor("cancelTask").encode({ id: "t" })).toMatchObject({ method: "POST", path: "/tasks/t:cancel" });
  });

  test("a request the rules cannot carry is refused, naming what is missing or cannot go", () => {
    expect(() => encoderFor("getTask").encode({ id: "" })).toThrow("GetTask needs id or tenant, id set to be sent over HTTP+JSON");
    expect(() => encoderFor("getTask").encode({ id: "t", bogus: 1 })).toThrow("GetTask cannot send bogus over HTTP+JSON");
    // Rules that bind the same fields (one field under several paths) are named once.
    const rules = A2AServiceHttpRules.filter((r) => r.method === "getTask");
    const twice = createRequestEncoder("GetTask", [...rules, ...rules], (field) => field.map((local) => A2AServiceMethods.getTask.input.fields.find((f) => f.localName === local)!.jsonName));
    expect(() => twice.encode({ id: "" })).toThrow(/^GetTask needs id or tenant, id set to be sent over HTTP\+JSON$/);
  });
});

describe("HTTP+JSON request encoding of a rule whose body is one field", () => {
  // `body` names the field by its local name, which a json_name (or an escaped name) makes differ from its JSON one.
  const rule = (body: string) => ({
    method: "post",
    httpMethod: "POST" as const,
    path: "/v1/notes/{id}",
    body,
    responseBody: "",
    additional: false,
    pathParams: [{ variable: "id", field: ["id"] }],
    query: [],
    derived: false,
  });
  const jsonNames = (field: readonly string[]) => field.map((local) => (local === "inner" ? "innerThing" : local));
  const encoder = (body: string) => createRequestEncoder("Post", [rule(body)], jsonNames);

  test("a body field left out by ProtoJSON (unset, or a string, number or list at its default) is sent as no body: the server reads the field as not set", () => {
    expect(encoder("note").encode({ id: "x" })).toMatchObject({ path: "/v1/notes/x", body: undefined });
    expect(encoder("lines").encode({ id: "x" })).toMatchObject({ body: undefined });
    expect(encoder("inner").encode({ id: "x" })).toMatchObject({ body: undefined });
    // Set, even empty, a message is sent as it is.
    expect(encoder("inner").encode({ id: "x", innerThing: {} })).toMatchObject({ body: {} });
    expect(encoder("note").encode({ id: "x", note: "hi" })).toMatchObject({ body: "hi" });
  });

  test("a body field with a json_name is found by it", () => {
    expect(encoder("inner").encode({ id: "x", innerThing: { n: 1 } })).toMatchObject({ path: "/v1/notes/x", body: { n: 1 } });
  });
});

describe("HTTP+JSON request encoding (a service's literals and patterns)", () => {
  const library = (method: keyof typeof LibraryServiceMethods) => {
    const spec = LibraryServiceMethods[method];
    return createRequestEncoder(
      spec.name,
      LibraryServiceHttpRules.filter((r) => r.method === method),
      (field) => jsonNamesOf(spec.input, field),
      literalsOf(LibraryServiceHttpRules),
      (field) => zeroTextOf(spec.input, field),
    );
  };

  test("a number, bool or enum bound to the path at its zero value (which ProtoJSON leaves out) is sent as that value; an empty string is still no value", () => {
    const exportBook = library("exportBook");
    expect(exportBook.encode({ shelfId: "s1", bookId: "b1" }).path).toBe("/v1/shelves/s1/books/b1/export/EXPORT_FORMAT_UNSPECIFIED");
    expect(exportBook.encode({ shelfId: "s1", bookId: "b1", format: "EXPORT_FORMAT_PDF" }).path).toBe("/v1/shelves/s1/books/b1/export/EXPORT_FORMAT_PDF");
    expect(() => exportBook.encode({ bookId: "b1" })).toThrow(/needs shelfId, bookId, format set/);
  });
  const lending = (method: keyof typeof LendingServiceMethods) => {
    const spec = LendingServiceMethods[method];
    return createRequestEncoder(spec.name, LendingServiceHttpRules.filter((r) => r.method === method), (field) => jsonNamesOf(spec.input, field), literalsOf(LendingServiceHttpRules));
  };

  test("a value equal to a literal of the service's routes has its first character escaped; . and .. (which URL parsing drops, %2E too) are refused", () => {
    const get = library("getShelf");
    expect(get.encode({ shelfId: "s1" }).path).toBe("/v1/shelves/s1");
    // /v1/shelves/featured is GetFeaturedShelf's route.
    expect(get.encode({ shelfId: "featured" }).path).toBe("/v1/shelves/%66eatured");
    expect(get.encode({ shelfId: "a.b" }).path).toBe("/v1/shelves/a.b");
    for (const id of [".", ".."]) {
      expect(() => get.encode({ shelfId: id })).toThrow(`GetShelf cannot send shelfId "${id}" in a URL path: URL parsing drops "." and ".." segments, escaped or not; call it over JSON-RPC or gRPC`);
    }
    // Its "/" goes as %2F: no dot segment in it.
    expect(get.encode({ shelfId: "a/." }).path).toBe("/v1/shelves/a%2F.");
  });

  test("a value that does not fit its variable's pattern is not sent by that rule: another that fits, or an error naming the pattern", () => {
    const get = lending("getLoan");
    expect(get.encode({ name: "loans/l1" }).path).toBe("/v1/loans/l1");
    // Sent as /v1/people/p/loans/l1, it was the other rule's request (borrowerId p, loanId l1).
    expect(() => get.encode({ name: "people/p/loans/l1" })).toThrow('GetLoan cannot be sent over HTTP+JSON: name "people/p/loans/l1" does not match loans/*, the pattern of its HTTP rule');
    expect(() => get.encode({ name: "loans/" })).toThrow(/does not match loans\/\*/);
    expect(get.encode({ borrowerId: "p", loanId: "l1" }).path).toBe("/v1/people/p/loans/l1");
  });

  test("`**` takes one or more segments: {rest=a/**} takes a/m and a/m/n, not a (/r/a is a literal route of its own); a part equal to another route's literal is escaped", () => {
    const spec = RouteOrderServiceMethods.literalThenDeep;
    const deep = createRequestEncoder(spec.name, RouteOrderServiceHttpRules.filter((r) => r.method === "literalThenDeep"), (field) => jsonNamesOf(spec.input, field), literalsOf(RouteOrderServiceHttpRules));
    expect(["a/m", "a/m/n"].map((rest) => deep.encode({ rest }).path)).toEqual(["/r/a/m", "/r/a/m/n"]);
    // /r/a/b is TwoLiterals' route: sent as it is, a/b would reach it.
    expect(deep.encode({ rest: "a/b" }).path).toBe("/r/a/%62");
    for (const rest of ["a", "b/c"]) expect(() => deep.encode({ rest })).toThrow(/does not match a\/\*\*/);
  });
});

test("a gRPC interface URL is dialled by host and port; the scheme or port 443 decides TLS (D28)", () => {
  expect(grpcTarget("127.0.0.1:50051")).toEqual({ target: "127.0.0.1:50051", tls: false });
  expect(grpcTarget("agent.example.com:443")).toEqual({ target: "agent.example.com:443", tls: true });
  // gRPC's own target syntax is grpc-js's to read (as a URL, dns:///h:443 has no host: it was dialled as ":80").
  expect(grpcTarget("dns:///agent.example.com:443")).toEqual({ target: "dns:///agent.example.com:443", tls: true });
  expect(grpcTarget("unix:///tmp/agent.sock")).toEqual({ target: "unix:///tmp/agent.sock", tls: false });
  expect(grpcTarget("https://agent.example.com/a2a/grpc")).toEqual({ target: "agent.example.com:443", tls: true });
  expect(grpcTarget("http://127.0.0.1:8080/a2a/grpc")).toEqual({ target: "127.0.0.1:8080", tls: false });
  expect(grpcTarget("grpcs://h:9000")).toEqual({ target: "h:9000", tls: true });
  expect(grpcTarget("grpc://[::1]:9000")).toEqual({ target: "[::1]:9000", tls: false });
});

describe("error decoding (D29)", () => {
  const info = { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { taskId: "t" } };

  test("the ErrorInfo reason decides the class, whatever the code or status says", () => {
    const rpc = errorFromJsonRpc(a2aClientErrors, { code: -32000, message: "gone", data: [info] });
    expect(rpc).toBeInstanceOf(TaskNotFoundError);
    expect(rpc).toMatchObject({ message: "gone", metadata: { taskId: "t" } });
    expect(errorFromHttp(a2aClientErrors, 500, { error: { code: 500, status: "INTERNAL", message: "m", details: [info] } })).toBeInstanceOf(TaskNotFoundError);
    const status = create(StatusSchema, { code: 5, message: "m", details: [anyPack(ErrorInfoSchema, create(ErrorInfoSchema, { reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" }))] });
    expect(errorFromGrpc(a2aClientErrors, 13, "m", toBinary(StatusSchema, status))).toBeInstanceOf(TaskNotFoundError);
  });

  test("without ErrorInfo: JSON-RPC's code, else the status", () => {
    expect(errorFromJsonRpc(a2aClientErrors, { code: -32001, message: "m" })).toBeInstanceOf(TaskNotFoundError);
    expect(errorFromJsonRpc(a2aClientErrors, { code: -32602, message: "m" })).toBeInstanceOf(InvalidParamsError);
    expect(errorFromHttp(a2aClientErrors, 401, { error: { code: 401, status: "UNAUTHENTICATED", message: "m", details: [] } })).toBeInstanceOf(UnauthenticatedError);
    // A gateway's own answer (no error body of the agent's): the agent could not be reached, as gRPC maps it.
    for (const status of [502, 503, 504]) expect(errorFromHttp(a2aClientErrors, status, "<html>")).toMatchObject({ name: "UnavailableError", message: `HTTP ${status}` });
    expect(errorFromHttp(a2aClientErrors, 500, "<html>")).toMatchObject({ name: "InternalError" });
    // The agent's own 503 or 504, with its AIP-193 body, says what it says.
    expect(errorFromHttp(a2aClientErrors, 504, { error: { code: 504, status: "DEADLINE_EXCEEDED", message: "m", details: [] } })).toMatchObject({ name: "DeadlineExceededError" });
    expect(errorFromGrpc(a2aClientErrors, 14, "down", undefined)).toMatchObject({ name: "UnavailableError", message: "down" });
  });

  // Checklist 15 #3: the spec shows three HTTP error bodies; clients accept all three.
  test("HTTP+JSON: a bare google.rpc.Status body and RFC 9457 problem details are read as the AIP-193 wrapper is", () => {
    const status = errorFromHttp(a2aClientErrors, 404, { code: 5, message: "no task x", details: [info] });
    expect(status).toBeInstanceOf(TaskNotFoundError);
    expect(status).toMatchObject({ message: "no task x", metadata: { taskId: "t" } });
    const notCancelable = { ...info, reason: "TASK_NOT_CANCELABLE" };
    expect(errorFromHttp(a2aClientErrors, 400, { code: 9, message: "done", details: [notCancelable] })).toBeInstanceOf(TaskNotCancelableError);
    // Without ErrorInfo, the Status's own code.
    expect(errorFromHttp(coreClientErrors, 400, { code: 5, message: "no book" })).toMatchObject({ name: "NotFoundError", message: "no book" });
    const problem = errorFromHttp(a2aClientErrors, 404, { type: "https://a2a-protocol.org/errors/task-not-found", title: "Task not found", status: 404, detail: "no task x" });
    expect(problem).toBeInstanceOf(TaskNotFoundError);
    expect(problem.message).toBe("no task x");
    const version = errorFromHttp(a2aClientErrors, 400, { type: "https://a2a-protocol.org/errors/version-not-supported", title: "Version not supported", status: 400 });
    expect(version).toMatchObject({ reason: "VERSION_NOT_SUPPORTED", message: "Version not supported" });
    // about:blank names no error: the status decides.
    expect(errorFromHttp(coreClientErrors, 404, { type: "about:blank", title: "Not Found", status: 404 })).toMatchObject({ name: "NotFoundError", message: "Not Found" });
  });

  test("an AIP-193 status that names no google.rpc.Code (an Object key, a number) is read from the HTTP status instead", () => {
    for (const status of ["toString", "constructor", "__proto__", "3", "hasOwnProperty"]) {
      const err = errorFromHttp(coreClientErrors, 404, { error: { code: 404, status, message: "m", details: [] } });
      expect(err).toMatchObject({ name: "NotFoundError", message: "m" });
      expect(err.entry.httpStatus).toBe(404);
    }
    expect(errorFromHttp(coreClientErrors, 500, { error: { status: "valueOf" } })).toMatchObject({ name: "InternalError" });
  });

  test("a plain service's errors are RpcErrors of the status, its JSON-RPC codes read back per D20", () => {
    const err = errorFromJsonRpc(coreClientErrors, { code: -32005, message: "no book" });
    expect(isRpcError(err)).toBe(true);
    expect(err).toMatchObject({ name: "NotFoundError", reason: "NOT_FOUND" });
    expect(errorFromHttp(coreClientErrors, 404, { error: { code: 404, status: "NOT_FOUND", message: "no book", details: [] } })).toMatchObject({ name: "NotFoundError" });
  });

  test("details that are not JSON objects, unknown types or malformed are skipped", () => {
    const err = errorFromJsonRpc(a2aClientErrors, { code: -32001, message: "m", data: [1, null, { "@type": "type.googleapis.com/x.Unknown" }, { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: 5 }] });
    expect(err).toBeInstanceOf(TaskNotFoundError);
    expect(err.metadata).toEqual({});
  });
});
