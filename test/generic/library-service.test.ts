/**
 * A service that is not A2A's, generated from our own fixture proto
 * (proto/fixtures/v1/library.proto, into generated/fixtures by `npm run
 * generate`), served on all three bindings over real sockets: none of A2A's
 * rules apply (D21). No version header is needed and none is read, JSON is
 * `application/json`, errors are google.rpc.Code with no A2A ErrorInfo and
 * JSON-RPC codes of D20, the request's `tenant` field is just a field, and a
 * stream may start with any event, or have none.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary } from "@bufbuild/protobuf";
import { RpcError, type CallContext } from "protoc-gen-a2a/runtime";
import { LibraryServiceGrpcDefinition, addLibraryServiceToServer } from "../../generated/fixtures/v1/library_grpc.js";
import type { LibraryServiceHandler } from "../../generated/fixtures/v1/library_handler.js";
import { createLibraryServiceHttpJsonClient } from "../../generated/fixtures/v1/library_client.js";
import { createLibraryServiceHttpJsonListener } from "../../generated/fixtures/v1/library_http.js";
import { createLibraryServiceJsonRpcListener } from "../../generated/fixtures/v1/library_jsonrpc.js";
import { GetShelfRequestSchema, ShelfEventSchema, WatchShelfRequestSchema, type Shelf, type ShelfEvent } from "../../generated/fixtures/v1/library_pb.js";
import { StatusSchema } from "../../runtime/gen/google/rpc/status_pb.js";

const shelves = new Map<string, { id: string; theme: string }>([["s1", { id: "s1", theme: "poetry" }]]);
/** The context of the last call, as the handler saw it. */
let lastContext: CallContext | undefined;

const handler: LibraryServiceHandler = {
  async getShelf(request, context) {
    lastContext = context;
    const shelf = shelves.get(request.shelfId);
    if (shelf === undefined) throw new RpcError("NOT_FOUND", `no shelf ${request.shelfId}`);
    return shelf;
  },
  async *watchShelf(request) {
    // "empty": a stream with no event is a legal gRPC and SSE stream here.
    if (request.shelfId === "empty") return;
    // Any first event will do: no A2A stream rules.
    yield create(ShelfEventSchema, { event: { case: "removedBookId", value: "b1" } });
    yield create(ShelfEventSchema, { event: { case: "added", value: { id: "b2", title: "Odes" } } });
  },
};

// Authentication is a core option: it runs for a plain service too.
const authenticate = ({ headers }: { headers: Headers }) => {
  if (headers.get("authorization") === "Bearer bad") throw new RpcError("UNAUTHENTICATED", "bad token");
  return headers.get("authorization") ?? undefined;
};

const servers: http.Server[] = [];
async function listen(listener: http.RequestListener): Promise<string> {
  const server = http.createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const grpcServer = new grpc.Server();
addLibraryServiceToServer(grpcServer, handler, { authenticate });
type UnaryFn = (request: unknown, metadata: grpc.Metadata, callback: (error: grpc.ServiceError | null, value: never) => void) => grpc.ClientUnaryCall;
const Client = grpc.makeGenericClientConstructor(LibraryServiceGrpcDefinition, "LibraryService");
let client: grpc.Client & {
  getShelf: UnaryFn;
  getBook: UnaryFn;
  watchShelf: (request: unknown, metadata: grpc.Metadata) => grpc.ClientReadableStream<ShelfEvent>;
};
let rest = "";
let rpc = "";

beforeAll(async () => {
  rest = await listen(createLibraryServiceHttpJsonListener(handler, { authenticate, heartbeatMs: 0 }));
  rpc = await listen(createLibraryServiceJsonRpcListener(handler, { authenticate, heartbeatMs: 0 }));
  const port = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as typeof client;
});
afterAll(async () => {
  client.close();
  grpcServer.forceShutdown();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});
beforeEach(() => {
  lastContext = undefined;
});

/** A JSON-RPC call with no A2A header at all. */
async function call(method: string, params: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(rpc, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
  });
  return { status: response.status, type: response.headers.get("content-type"), body: (await response.json()) as Record<string, unknown> };
}

function grpcCall(method: "getShelf" | "getBook", request: unknown, md = new grpc.Metadata()): Promise<{ value?: unknown; error?: grpc.ServiceError }> {
  return new Promise((resolve) => {
    client[method](request, md, (error, value) => resolve(error === null ? { value } : { error }));
  });
}

/** The google.rpc.Status a gRPC error carries in grpc-status-details-bin. */
function statusOf(error: grpc.ServiceError) {
  const bin = error.metadata.get("grpc-status-details-bin")[0] as Buffer;
  return fromBinary(StatusSchema, bin);
}

describe("HTTP+JSON", () => {
  test("a call with no A2A-Version answers 200 in application/json", async () => {
    const response = await fetch(`${rest}/v1/shelves/s1`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({ id: "s1", theme: "poetry" });
  });

  test("an A2A-Version header means nothing to it, and no A2A-Extensions is echoed", async () => {
    const response = await fetch(`${rest}/v1/shelves/s1?A2A-Version=0.5`, { headers: { "a2a-version": "0.5", "a2a-extensions": "urn:x" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("a2a-extensions")).toBeNull();
  });

  test("the handler's context has the core's members only; tenant stays a request field", async () => {
    const response = await fetch(`${rest}/v1/acme/shelves/s1`);
    expect(response.status).toBe(200);
    expect(lastContext?.binding).toBe("HTTP+JSON");
    expect(lastContext?.principal).toBeUndefined();
    expect("tenant" in (lastContext as object)).toBe(false);
    expect("protocolVersion" in (lastContext as object)).toBe(false);
  });

  // D6: only A2A's profile reads a trailing slash as an empty id; a service without one drops it, as Envoy does.
  test("a trailing slash is dropped: /v1/shelves/s1/ is GetShelf s1, /v1/shelves/ the list's route", async () => {
    const item = await fetch(`${rest}/v1/shelves/s1/`);
    expect(item.status).toBe(200);
    expect(await item.json()).toEqual({ id: "s1", theme: "poetry" });
    const list = await fetch(`${rest}/v1/shelves/`);
    expect(await list.json()).toMatchObject({ error: { message: expect.stringContaining("ListShelves") } });
  });

  test("a thrown google.rpc.Code is its HTTP status in an AIP-193 body with no A2A ErrorInfo", async () => {
    const response = await fetch(`${rest}/v1/shelves/nope`);
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual({ error: { code: 404, status: "NOT_FOUND", message: "no shelf nope", details: [] } });
  });

  test("a method the handler leaves out is 501 UNIMPLEMENTED", async () => {
    const response = await fetch(`${rest}/v1/shelves/s1/books/b1`);
    expect(response.status).toBe(501);
    expect(await response.json()).toEqual({ error: { code: 501, status: "UNIMPLEMENTED", message: "GetBook is not implemented", details: [] } });
  });

  test("the generated client's GetShelf of a shelf named like a literal route (featured) reaches GetShelf with that id; one named . or .. is refused before it is sent", async () => {
    const client = createLibraryServiceHttpJsonClient(rest);
    try {
      const err = await client.getShelf({ shelfId: "featured" }).catch((e: unknown) => e);
      expect([(err as Error).name, (err as Error).message]).toEqual(["NotFoundError", "no shelf featured"]);
      for (const id of [".", ".."]) await expect(client.getShelf({ shelfId: id })).rejects.toThrow(/cannot send shelfId .* in a URL path/);
      expect((await client.getShelf({ shelfId: "s1" })).theme).toBe("poetry");
    } finally {
      client.close();
    }
  });

  test("a body that is not an object where a path-bound field goes inside it is 400 naming the field, never replaced by one (D10)", async () => {
    for (const [method, path, body, field] of [
      ["PATCH", "/v1/shelves/s1", '"garbage"', "shelf"],
      ["PATCH", "/v1/shelves/s1", "[1,2,3]", "shelf"],
      ["PUT", "/v1/shelves/s1", '{"shelf":"str"}', "shelf"],
      ["PATCH", "/v1/shelves/s1/books/b1", '{"title":"t","location":"x"}', "book.location"],
      ["PATCH", "/v1/shelves/s1/books/b1", '{"title":"t","location":[7]}', "book.location"],
    ] as const) {
      const res = await fetch(`${rest}${path}`, { method, headers: { "content-type": "application/json" }, body });
      const answer = (await res.json()) as { error: { status: string; message: string } };
      expect([method, path, body, res.status, answer.error.status, answer.error.message]).toEqual([method, path, body, 400, "INVALID_ARGUMENT", expect.stringContaining(`invalid value for ${field}: expected an object`)]);
    }
  });

  test("a missing REQUIRED field is 400 INVALID_ARGUMENT with a BadRequest, as on A2A", async () => {
    const response = await fetch(`${rest}/v1/shelves`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { status: string; details: { "@type": string }[] } };
    expect(body.error.status).toBe("INVALID_ARGUMENT");
    expect(body.error.details.map((d) => d["@type"])).toEqual(["type.googleapis.com/google.rpc.BadRequest"]);
  });

  test("authentication runs as a core option: a refused caller gets its code", async () => {
    const response = await fetch(`${rest}/v1/shelves/s1`, { headers: { authorization: "Bearer bad" } });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { status: string } }).error.status).toBe("UNAUTHENTICATED");
  });

  test("a stream may start with any event", async () => {
    const response = await fetch(`${rest}/v1/shelves/s1:watch`);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = (await response.text()).split("\n\n").filter((e) => e !== "");
    expect(events).toEqual(['data: {"removedBookId":"b1"}', 'data: {"added":{"id":"b2","title":"Odes"}}']);
  });

  test("a stream with no event is an empty event stream, not an error", async () => {
    const response = await fetch(`${rest}/v1/shelves/empty:watch`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await response.text()).toBe("");
  });
});

describe("JSON-RPC", () => {
  test("a call with no A2A-Version is answered", async () => {
    expect(await call("GetShelf", { shelfId: "s1" })).toEqual({
      status: 200,
      type: "application/json",
      body: { jsonrpc: "2.0", id: 7, result: { id: "s1", theme: "poetry" } },
    });
    expect(lastContext?.binding).toBe("JSONRPC");
  });

  test.each<[string, Record<string, unknown>, Record<string, string>, number, string]>([
    // D20: -32000 - code for codes JSON-RPC 2.0 has no meaning for.
    ["NOT_FOUND", { shelfId: "nope" }, {}, -32005, "no shelf nope"],
    ["UNAUTHENTICATED", { shelfId: "s1" }, { authorization: "Bearer bad" }, -32016, "bad token"],
  ])("a thrown %s has its own JSON-RPC code and no data", async (_code, params, headers, code, message) => {
    const { body } = await call("GetShelf", params, headers);
    expect(body).toEqual({ jsonrpc: "2.0", id: 7, error: { code, message } });
  });

  test("a method the handler leaves out is -32601, and an unknown one too", async () => {
    expect((await call("GetBook", { shelfId: "s1", bookId: "b1" })).body).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32601, message: "GetBook is not implemented" },
    });
    expect(((await call("SendMessage", {})).body.error as { code: number }).code).toBe(-32601);
  });

  test("a missing REQUIRED field is -32602 with a BadRequest", async () => {
    const { body } = await call("GetShelf", {});
    const error = body.error as { code: number; data: { "@type": string }[] };
    expect(error.code).toBe(-32602);
    expect(error.data.map((d) => d["@type"])).toEqual(["type.googleapis.com/google.rpc.BadRequest"]);
  });

  test("a streaming method answers SSE whatever its first event", async () => {
    const response = await fetch(rpc, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: "w", method: "WatchShelf", params: { shelfId: "s1" } }),
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = (await response.text()).split("\n\n").filter((e) => e !== "");
    expect(events[0]).toBe('data: {"jsonrpc":"2.0","id":"w","result":{"removedBookId":"b1"}}');
    expect(events).toHaveLength(2);
  });
});

describe("gRPC", () => {
  test("a call with no a2a-version metadata is answered", async () => {
    const { value, error } = await grpcCall("getShelf", create(GetShelfRequestSchema, { shelfId: "s1" }));
    expect(error).toBeUndefined();
    expect((value as Shelf).theme).toBe("poetry");
    expect(lastContext?.binding).toBe("GRPC");
  });

  test("a thrown google.rpc.Code is that status, its details empty", async () => {
    const { error } = await grpcCall("getShelf", create(GetShelfRequestSchema, { shelfId: "nope" }));
    expect(error?.code).toBe(grpc.status.NOT_FOUND);
    expect(error?.details).toBe("no shelf nope");
    const status = statusOf(error as grpc.ServiceError);
    expect({ code: status.code, details: status.details }).toEqual({ code: 5, details: [] });
  });

  test("a method the handler leaves out is UNIMPLEMENTED", async () => {
    const { error } = await grpcCall("getBook", {});
    expect(error?.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  test("authentication reads metadata", async () => {
    const md = new grpc.Metadata();
    md.set("authorization", "Bearer bad");
    const { error } = await grpcCall("getShelf", create(GetShelfRequestSchema, { shelfId: "s1" }), md);
    expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  test.each([
    ["s1", ["removedBookId", "added"]],
    ["empty", []],
  ])("WatchShelf(%s) streams %j and ends OK", async (shelfId, cases) => {
    const stream = client.watchShelf(create(WatchShelfRequestSchema, { shelfId }), new grpc.Metadata());
    const seen: string[] = [];
    const status = await new Promise<grpc.StatusObject>((resolve, reject) => {
      stream.on("data", (event: ShelfEvent) => seen.push(String(event.event.case)));
      stream.on("status", resolve);
      stream.on("error", reject);
    });
    expect(status.code).toBe(grpc.status.OK);
    expect(seen).toEqual(cases);
  });

  // D90: what a JSON binding could not write (nor read) is refused on gRPC too, for any service.
  test.each([
    ["a year past 9999", { seconds: 253402300800n, nanos: 0 }, "seconds 253402300800, nanos 0"],
    ["negative nanos", { seconds: 0n, nanos: -1 }, "seconds 0, nanos -1"],
    ["the last second of 9999", { seconds: 253402300799n, nanos: 999_999_999 }, undefined],
    ["the first second of year 1", { seconds: -62135596800n, nanos: 0 }, undefined],
  ])("WatchShelf with a Timestamp at %s (%j): INVALID_ARGUMENT when ProtoJSON cannot write it (%s)", async (_, since, got) => {
    const stream = client.watchShelf(create(WatchShelfRequestSchema, { shelfId: "empty", since }), new grpc.Metadata());
    const status = await new Promise<grpc.StatusObject>((resolve) => {
      stream.on("data", () => undefined);
      stream.on("status", resolve);
      stream.on("error", () => undefined);
    });
    if (got === undefined) {
      expect(status.code).toBe(grpc.status.OK);
    } else {
      expect(status.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(status.details).toBe(
        "invalid params: the request holds what its JSON form cannot: fixtures.v1.WatchShelfRequest.since: a google.protobuf.Timestamp must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z, its nanos from 0 to 999999999 (ProtoJSON has no form for others); got " +
          got,
      );
    }
  });
});
