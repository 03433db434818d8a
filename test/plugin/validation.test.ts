/**
 * Every validation error of the binding model, asserted on the full message:
 * the proto file, `rpc <pkg.Service.Method>`, the rule as written and the
 * problem. Protos are compiled with the real buf CLI and the plugin is run
 * in-process; one failure also goes through `buf generate` end to end.
 */
import { spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { create, createFileRegistry, type DescFile } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { ModelError } from "../../plugin/model/diagnostics.js";
import { createFileModels } from "../../plugin/model/service-model.js";
import { bufBin, createRequest, generate, projectRoot, runPlugin, scratchDir, writeModule } from "../support/protos.js";

const file = "demo/v1/svc.proto";

/** A proto with messages covering every kind of field a rule can name; `rpcs` is the service body. */
function proto(rpcs: string): string {
  return `syntax = "proto3";
package demo.v1;
import "google/api/annotations.proto";

message Leaf { string v = 1; }
message Inner {
  string name = 1;
  repeated string tags = 2;
  Leaf leaf = 3;
  map<string, Leaf> leaves = 4;
}
message Req {
  string id = 1;
  string tenant = 2;
  Inner inner = 3;
  repeated string ids = 4;
  map<string, string> labels = 5;
  Leaf leaf = 6;
  int32 count = 7;
  repeated Leaf leaf_list = 8;
}
message Res {
  string id = 1;
  Leaf leaf = 2;
}

service Svc {
${rpcs}
}
`;
}

/** One unary RPC `name(Req) returns (Res)` with the given google.api.http body. */
function rpc(rule: string, name = "Get"): string {
  return `  rpc ${name}(Req) returns (Res) { option (google.api.http) = { ${rule} }; }`;
}

/** Runs the plugin on `rpcs` and returns what it throws. */
function failure(rpcs: string, files: Record<string, string> = { [file]: proto(rpcs) }): Error {
  try {
    generate(files);
  } catch (e) {
    return e as Error;
  }
  throw new Error(`expected the plugin to reject:\n${rpcs}`);
}

/** The binding model of `rpcs`, built directly (no emitters). */
function model(rpcs: string) {
  const req = createRequest({ [file]: proto(rpcs) });
  const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: req.protoFile }));
  const desc = registry.getFile(file) as DescFile;
  return createFileModels([desc]);
}

const at = (method: string) => `${file}: rpc demo.v1.Svc.${method}`;

// ---------------------------------------------------------------------------
// One problem per proto: the thrown message is that problem alone.
// ---------------------------------------------------------------------------

describe("one invalid rule: the full message", () => {
  test.each<[string, string, string]>([
    // Templates that do not follow the grammar.
    [
      "** before a literal",
      rpc(`get: "/a/**/b"`),
      `${at("Get")}: get "/a/**/b": "**" must be the last segment of the path at offset 3`,
    ],
    [
      "no leading slash",
      rpc(`get: "a/b"`),
      `${at("Get")}: get "a/b": a template must start with "/" at offset 0`,
    ],
    [
      "unclosed brace",
      rpc(`get: "/x/{id"`),
      `${at("Get")}: get "/x/{id": "{" is never closed at offset 3`,
    ],
    [
      "empty segment",
      rpc(`post: "/x//y" body: "*"`),
      `${at("Get")}: post "/x//y": empty segment at offset 3`,
    ],
    [
      "a field bound twice",
      rpc(`get: "/x/{id}/{id}"`),
      `${at("Get")}: get "/x/{id}/{id}": field "id" is bound by two variables at offset 8`,
    ],
    [
      "bad template in a custom pattern",
      rpc(`custom: { kind: "PURGE" path: "x" }`),
      `${at("Get")}: custom "PURGE" "x": a template must start with "/" at offset 0`,
    ],
    [
      "bad template in an additional binding",
      rpc(`get: "/x/{id}" additional_bindings { get: "/y/**/z" }`),
      `${at("Get")}: get "/y/**/z": "**" must be the last segment of the path at offset 3`,
    ],

    // Variables that name no usable field.
    [
      "variable naming no field",
      rpc(`get: "/x/{nope}"`),
      `${at("Get")}: get "/x/{nope}": variable "nope" names no field of demo.v1.Req`,
    ],
    [
      "dotted variable whose last part is no field",
      rpc(`get: "/x/{inner.nope}"`),
      `${at("Get")}: get "/x/{inner.nope}": variable "inner.nope" names no field of demo.v1.Req ("nope" is not a field of demo.v1.Inner)`,
    ],
    [
      "dotted variable whose middle part is a scalar",
      rpc(`get: "/x/{id.part}"`),
      `${at("Get")}: get "/x/{id.part}": variable "id.part": "id" is not a message field, so it has no field "part"`,
    ],
    [
      "dotted variable whose deeper middle part is a scalar",
      rpc(`get: "/x/{inner.name.part}"`),
      `${at("Get")}: get "/x/{inner.name.part}": variable "inner.name.part": "inner.name" is not a message field, so it has no field "part"`,
    ],
    [
      "variable binding a repeated scalar field",
      rpc(`get: "/x/{ids}"`),
      `${at("Get")}: get "/x/{ids}": variable "ids" binds repeated field "ids"; path variables bind singular fields only`,
    ],
    [
      "variable binding a nested repeated field",
      rpc(`get: "/x/{inner.tags}"`),
      `${at("Get")}: get "/x/{inner.tags}": variable "inner.tags" binds repeated field "inner.tags"; path variables bind singular fields only`,
    ],
    [
      "dotted variable through a repeated message field",
      rpc(`get: "/x/{leaf_list.v}"`),
      `${at("Get")}: get "/x/{leaf_list.v}": variable "leaf_list.v" binds repeated field "leaf_list"; path variables bind singular fields only`,
    ],
    [
      "variable binding a map field",
      rpc(`get: "/x/{labels}"`),
      `${at("Get")}: get "/x/{labels}": variable "labels" binds map field "labels"; path variables bind singular fields only`,
    ],
    [
      "dotted variable through a map field",
      rpc(`get: "/x/{inner.leaves.v}"`),
      `${at("Get")}: get "/x/{inner.leaves.v}": variable "inner.leaves.v" binds map field "inner.leaves"; path variables bind singular fields only`,
    ],
    [
      "variable binding a message field",
      rpc(`get: "/x/{leaf}"`),
      `${at("Get")}: get "/x/{leaf}": variable "leaf" binds message field "leaf" (demo.v1.Leaf); path variables bind scalar or enum fields`,
    ],
    [
      "dotted variable binding a nested message field",
      rpc(`get: "/x/{inner.leaf}"`),
      `${at("Get")}: get "/x/{inner.leaf}": variable "inner.leaf" binds message field "inner.leaf" (demo.v1.Leaf); path variables bind scalar or enum fields`,
    ],

    // A pattern only a string can fill (D7).
    [
      "an int field bound with a literal in its pattern",
      rpc(`get: "/v1/{count=shelves/*}"`),
      `${at("Get")}: get "/v1/{count=shelves/*}": variable "count" binds int32 field "count" with the pattern "shelves/*", which only a string field can hold (a value of several segments or with literals); bind it as {count} or make the field a string`,
    ],
    [
      "an int field bound with several segments",
      rpc(`get: "/v1/{inner.leaf.v}/{count=*/*}"`),
      `${at("Get")}: get "/v1/{inner.leaf.v}/{count=*/*}": variable "count" binds int32 field "count" with the pattern "*/*", which only a string field can hold (a value of several segments or with literals); bind it as {count} or make the field a string`,
    ],

    // body and response_body.
    [
      "body naming no field",
      rpc(`post: "/x" body: "nope"`),
      `${at("Get")}: post "/x": body "nope" names no field of demo.v1.Req (fields: id, tenant, inner, ids, labels, leaf, count, leaf_list)`,
    ],
    [
      "body naming a nested field (body must be top-level)",
      rpc(`post: "/x" body: "inner.name"`),
      `${at("Get")}: post "/x": body "inner.name" names no field of demo.v1.Req (fields: id, tenant, inner, ids, labels, leaf, count, leaf_list)`,
    ],
    [
      "response_body naming no field",
      rpc(`get: "/x" response_body: "nope"`),
      `${at("Get")}: get "/x": response_body "nope" names no field of demo.v1.Res (fields: id, leaf)`,
    ],
    [
      "GET with body *",
      rpc(`get: "/x" body: "*"`),
      `${at("Get")}: get "/x": a GET rule cannot have a body (body: "*"); remove it or use another method`,
    ],
    [
      "GET with a field body",
      rpc(`get: "/x" body: "leaf"`),
      `${at("Get")}: get "/x": a GET rule cannot have a body (body: "leaf"); remove it or use another method`,
    ],

    // Rule structure.
    [
      "nested additional_bindings",
      rpc(`get: "/x/{id}" additional_bindings { get: "/y/{id}" additional_bindings { get: "/z/{id}" } }`),
      `${at("Get")}: get "/y/{id}": additional_bindings cannot be nested`,
    ],
    [
      "a rule with no pattern",
      rpc(`body: "*"`),
      `${at("Get")}: google.api.http rule: the rule has no pattern (set one of get, put, post, delete, patch or custom)`,
    ],
    [
      "an empty rule",
      rpc(""),
      `${at("Get")}: google.api.http rule: the rule has no pattern (set one of get, put, post, delete, patch or custom)`,
    ],
    [
      "an empty additional binding",
      rpc(`get: "/x/{id}" additional_bindings {}`),
      `${at("Get")}: google.api.http rule: the rule has no pattern (set one of get, put, post, delete, patch or custom)`,
    ],
    [
      "a pattern with an empty path",
      rpc(`get: ""`),
      `${at("Get")}: get "": a template must start with "/" at offset 0`,
    ],
    [
      "an additional binding with no pattern",
      rpc(`get: "/x/{id}" additional_bindings { body: "*" }`),
      `${at("Get")}: google.api.http rule: the rule has no pattern (set one of get, put, post, delete, patch or custom)`,
    ],
    [
      "a custom pattern with no kind",
      rpc(`custom: { kind: "" path: "/x" }`),
      `${at("Get")}: custom "" "/x": a custom pattern needs a kind (the HTTP method)`,
    ],

    // Same verb and same shape.
    [
      "duplicate within one method (additional binding, other variable name)",
      rpc(`get: "/x/{id}" additional_bindings { get: "/x/{tenant}" }`),
      `${at("Get")}: get "/x/{tenant}": same HTTP method and path pattern as get "/x/{id}" of rpc Get; ` +
        "no request could tell them apart, change one of the paths",
    ],
    [
      "duplicate across two methods (different variable names)",
      [rpc(`get: "/x/{id}"`, "A"), rpc(`get: "/x/{tenant}"`, "B")].join("\n"),
      `${at("B")}: get "/x/{tenant}": same HTTP method and path pattern as get "/x/{id}" of rpc A; ` +
        "no request could tell them apart, change one of the paths",
    ],
    [
      "duplicate across two methods: {id} vs {id=*} are the same shape",
      [rpc(`get: "/x/{id}"`, "A"), rpc(`get: "/x/{id=*}"`, "B")].join("\n"),
      `${at("B")}: get "/x/{id=*}": same HTTP method and path pattern as get "/x/{id}" of rpc A; ` +
        "no request could tell them apart, change one of the paths",
    ],
    [
      "duplicate with the same verb: {a}:cancel twice",
      [rpc(`post: "/x/{id}:cancel" body: "*"`, "A"), rpc(`post: "/x/{tenant}:cancel" body: "*"`, "B")].join("\n"),
      `${at("B")}: post "/x/{tenant}:cancel": same HTTP method and path pattern as post "/x/{id}:cancel" of rpc A; ` +
        "no request could tell them apart, change one of the paths",
    ],
    [
      "duplicate of a later method's default binding by an earlier method's additional binding",
      [rpc(`get: "/a" additional_bindings { get: "/x/{id}" }`, "A"), rpc(`get: "/x/{tenant}"`, "B")].join("\n"),
      `${at("A")}: get "/x/{id}": same HTTP method and path pattern as get "/x/{tenant}" of rpc B; ` +
        "no request could tell them apart, change one of the paths",
    ],
    [
      "duplicate of a literal-only path",
      [rpc(`get: "/x"`, "A"), rpc(`get: "/x"`, "B")].join("\n"),
      `${at("B")}: get "/x": same HTTP method and path pattern as get "/x" of rpc A; ` +
        "no request could tell them apart, change one of the paths",
    ],
    [
      "custom GET duplicates get",
      rpc(`get: "/x/{id}" additional_bindings { custom: { kind: "GET" path: "/x/{tenant}" } }`),
      `${at("Get")}: custom "GET" "/x/{tenant}": same HTTP method and path pattern as get "/x/{id}" of rpc Get; ` +
        "no request could tell them apart, change one of the paths",
    ],
  ])("%s", (_name, rpcs, message) => {
    const err = failure(rpcs);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.message).toBe(message);
    expect((err as ModelError).problems).toEqual([message]);
  });
});

test("response_body on a server-streaming RPC is refused: a stream's messages are sent whole (D14)", () => {
  const rpcs = [`  rpc Watch(Req) returns (stream Res) { option (google.api.http) = { get: "/w/{id}" additional_bindings { get: "/v/{id}" response_body: "leaf" } }; }`].join("\n");
  const err = failure(rpcs) as ModelError;
  expect(err.problems).toEqual([
    `${at("Watch")}: get "/v/{id}": response_body "leaf" on a server-streaming RPC: each message of the stream is sent whole as an SSE event; remove response_body`,
  ]);
});

describe("streaming kinds the bindings cannot serve", () => {
  test.each<[string, string, string]>([
    [
      "client streaming",
      "  rpc Up(stream Req) returns (Res);",
      `${file}: rpc demo.v1.Svc.Up: client streaming RPCs cannot be served over JSON-RPC or HTTP+JSON; ` +
        "A2A bindings serve unary and server-streaming RPCs only",
    ],
    [
      "bidi streaming",
      "  rpc Chat(stream Req) returns (stream Res);",
      `${file}: rpc demo.v1.Svc.Chat: bidi streaming RPCs cannot be served over JSON-RPC or HTTP+JSON; ` +
        "A2A bindings serve unary and server-streaming RPCs only",
    ],
  ])("%s", (_name, rpcs, message) => {
    expect(failure(rpcs).message).toBe(message);
  });

  test("server streaming and unary are accepted", () => {
    const [m] = model(["  rpc Watch(Req) returns (stream Res);", "  rpc Get(Req) returns (Res);"].join("\n"));
    expect(m?.services[0]?.methods.map((x) => [x.desc.name, x.kind])).toEqual([
      ["Watch", "server_streaming"],
      ["Get", "unary"],
    ]);
  });
});

describe("requests whose JSON is not an object (D7)", () => {
  /** A service of `rpcs`, with every well-known type imported. */
  const wkt = (rpcs: string) => ({
    [file]: `syntax = "proto3";
package demo.v1;
import "google/api/annotations.proto";
import "google/protobuf/duration.proto";
import "google/protobuf/empty.proto";
import "google/protobuf/field_mask.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
message Res { string id = 1; }
service Svc {
${rpcs}
}
`,
  });
  const refusal = (rpc: string, type: string, form: string) =>
    `${at(rpc)}: its request google.protobuf.${type} is ${form}; JSON-RPC params and an HTTP+JSON request ` +
    `are a JSON object, so no JSON call could reach the RPC: take a request message that holds the value (message ${rpc}Request { google.protobuf.${type} value = 1; })`;

  test("a wrapper, Timestamp, Duration, FieldMask, Value or ListValue request is refused, with an HTTP rule or without, each named", () => {
    const types: [string, string][] = [
      ["StringValue", "a string in JSON, not an object"],
      ["BytesValue", "a string in JSON, not an object"],
      ["Int64Value", "a string in JSON, not an object"],
      ["UInt64Value", "a string in JSON, not an object"],
      ["Int32Value", "a number in JSON, not an object"],
      ["UInt32Value", "a number in JSON, not an object"],
      ["DoubleValue", "a number in JSON, not an object"],
      ["FloatValue", "a number in JSON, not an object"],
      ["BoolValue", "a boolean in JSON, not an object"],
      ["Timestamp", "a string in JSON, not an object"],
      ["Duration", "a string in JSON, not an object"],
      ["FieldMask", "a string in JSON, not an object"],
      ["Value", "any JSON value, not always an object"],
      ["ListValue", "an array in JSON, not an object"],
    ];
    const rpcs = types.map(([t], i) => `  rpc M${t}(google.protobuf.${t}) returns (Res)${i % 2 === 0 ? ` { option (google.api.http) = { post: "/v1/m${i}" body: "*" }; }` : ";"}`);
    const err = failure("", wkt(rpcs.join("\n"))) as ModelError;
    expect(err.problems).toEqual(types.map(([t, form]) => refusal(`M${t}`, t, form)));
  });

  test("Empty, Struct and a message holding a wrapper are objects, and served", () => {
    expect(() =>
      generate(
        wkt(
          [
            `  rpc Ping(google.protobuf.Empty) returns (Res) { option (google.api.http) = { get: "/v1/ping" }; }`,
            `  rpc Put(google.protobuf.Struct) returns (Res) { option (google.api.http) = { post: "/v1/put" body: "*" }; }`,
            "  rpc Answer(Res) returns (google.protobuf.StringValue);",
          ].join("\n"),
        ),
      ),
    ).not.toThrow();
  });
});

describe("RPCs whose handler methods would have one name (D118)", () => {
  test.each<[string, string, string]>([
    [
      "Get and get",
      [rpc(`get: "/a/{id}"`, "Get"), rpc(`get: "/b/{id}"`, "get")].join("\n"),
      `${at("get")}: its handler method would be get, as rpc Get's is; the handler, the method table and the clients have one member per name: rename one of the two RPCs`,
    ],
    [
      "Constructor and constructor (protobuf-es's constructor$ for both)",
      ["  rpc Constructor(Req) returns (Res);", "  rpc constructor(Req) returns (Res);"].join("\n"),
      `${at("constructor")}: its handler method would be constructor$, as rpc Constructor's is; the handler, the method table and the clients have one member per name: rename one of the two RPCs`,
    ],
  ])("%s", (_name, rpcs, message) => {
    const err = failure(rpcs);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).problems).toEqual([message]);
  });

  test("get_foo and GetFoo are get_foo and getFoo, and are served", () => {
    const [m] = model(["  rpc get_foo(Req) returns (Res);", "  rpc GetFoo(Req) returns (Res);"].join("\n"));
    expect(m?.services[0]?.methods.map((x) => x.localName)).toEqual(["get_foo", "getFoo"]);
  });
});

// ---------------------------------------------------------------------------
// Several problems are collected and reported together.
// ---------------------------------------------------------------------------

describe("fields named like a member of every object (D118)", () => {
  const problem = (what: string, name: string, fix: string) =>
    `demo/v1/obj.proto: ${what}: its property would be ${name}, a member of every JavaScript object, which protobuf-es does not escape: ` +
    "an unset value reads as Object.prototype's method, and the generated types and codecs cannot hold it " +
    "(demo/v1/obj_codec.ts has a codec for every message of demo/v1/obj.proto, which the services of any file importing it use, " +
    `so a file without a service is no exception); ${fix}`;
  const rename = "rename the field (a json_name option keeps its JSON name)";

  test("hasOwnProperty, isPrototypeOf, propertyIsEnumerable and toLocaleString are refused, in a message an RPC reaches or not, naming the file, message and field", () => {
    const files = {
      "demo/v1/obj.proto": `syntax = "proto3";
package demo.v1;
message Owner { string id = 1; }
message A { Owner has_own_property = 1; string name = 2; }
message B { optional string is_prototype_of = 1; }
message C { int32 property_is_enumerable = 1; }
message Unused { repeated string to_locale_string = 1; oneof is_prototype_of { string x = 2; } }
// protobuf-es escapes these (constructor$, toString$, valueOf$, toJSON$): served.
message Fine { string constructor = 1; string to_string = 2; string value_of = 3; string toJSON = 4; string __proto__ = 5; }
message Req { A a = 1; B b = 2; Fine fine = 3; }
message Res { C c = 1; }
service Svc { rpc Get(Req) returns (Res); }
`,
    };
    const err = failure("", files) as ModelError;
    expect(err.problems).toEqual([
      problem("field demo.v1.A.has_own_property", "hasOwnProperty", rename),
      problem("field demo.v1.B.is_prototype_of", "isPrototypeOf", rename),
      problem("field demo.v1.C.property_is_enumerable", "propertyIsEnumerable", rename),
      problem("field demo.v1.Unused.to_locale_string", "toLocaleString", rename),
      problem("oneof demo.v1.Unused.is_prototype_of", "isPrototypeOf", "rename the oneof (its name is not on the wire)"),
    ]);
  });

  // Its codec (obj_codec.ts) is emitted all the same, and another file's service may use it: tsc
  // fails on a field of explicit presence, and a field of implicit presence left out of the partial
  // object a client or handler passes is read from Object.prototype by the codec's writer.
  test("a file of messages only is refused too, saying that its codec is what the field breaks", () => {
    const files = {
      "demo/v1/obj.proto": `syntax = "proto3";
package demo.v1;
message Owner { string id = 1; }
message A { Owner has_own_property = 1; string is_prototype_of = 2; oneof pick { string to_locale_string = 3; } }
`,
    };
    const err = failure("", files) as ModelError;
    expect(err.problems).toEqual([problem("field demo.v1.A.has_own_property", "hasOwnProperty", rename), problem("field demo.v1.A.is_prototype_of", "isPrototypeOf", rename)]);
  });

  test("a member of a oneof is no property of the message, and is served", () => {
    const files = {
      "demo/v1/obj.proto": `syntax = "proto3";
package demo.v1;
message Req { oneof pick { string has_own_property = 1; string is_prototype_of = 2; } }
service Svc { rpc Get(Req) returns (Req); }
`,
    };
    expect(() => generate(files)).not.toThrow();
  });
});

describe("several problems in one run", () => {
  test("every problem of a service, in method order, duplicates last", () => {
    const rpcs = [
      rpc(`get: "/a/**/b"`, "A"),
      rpc(`get: "/b/{nope}"`, "B"),
      "  rpc C(stream Req) returns (stream Res);",
      rpc(`get: "/d/{id}"`, "D"),
      rpc(`get: "/d/{tenant}"`, "E"),
      rpc(`get: "/f" body: "*"`, "F"),
    ].join("\n");
    const err = failure(rpcs) as ModelError;
    const problems = [
      `${at("A")}: get "/a/**/b": "**" must be the last segment of the path at offset 3`,
      `${at("B")}: get "/b/{nope}": variable "nope" names no field of demo.v1.Req`,
      `${at("C")}: bidi streaming RPCs cannot be served over JSON-RPC or HTTP+JSON; A2A bindings serve unary and server-streaming RPCs only`,
      `${at("F")}: get "/f": a GET rule cannot have a body (body: "*"); remove it or use another method`,
      `${at("E")}: get "/d/{tenant}": same HTTP method and path pattern as get "/d/{id}" of rpc D; no request could tell them apart, change one of the paths`,
    ];
    expect(err).toBeInstanceOf(ModelError);
    expect(err.problems).toEqual(problems);
    expect(err.message).toBe(`5 problems:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  });

  test("every problem of one rule: each variable, then body, then response_body", () => {
    const err = failure(rpc(`post: "/x/{nope}/{ids}" body: "zz" response_body: "yy"`)) as ModelError;
    const where = `${at("Get")}: post "/x/{nope}/{ids}"`;
    expect(err.message).toBe(
      [
        "4 problems:",
        `  - ${where}: variable "nope" names no field of demo.v1.Req`,
        `  - ${where}: variable "ids" binds repeated field "ids"; path variables bind singular fields only`,
        `  - ${where}: body "zz" names no field of demo.v1.Req (fields: id, tenant, inner, ids, labels, leaf, count, leaf_list)`,
        `  - ${where}: response_body "yy" names no field of demo.v1.Res (fields: id, leaf)`,
      ].join("\n"),
    );
  });

  test("problems of several files are reported together, each naming its file", () => {
    const other = "demo/v1/other.proto";
    const otherSource = `syntax = "proto3";
package demo.v1;
import "demo/v1/svc.proto";
service Other {
  rpc Up(stream Req) returns (Res);
}
`;
    const err = failure("", { [file]: proto(rpc(`get: "a/b"`)), [other]: otherSource });
    expect(err.message).toBe(
      [
        "2 problems:",
        `  - ${at("Get")}: get "a/b": a template must start with "/" at offset 0`,
        `  - ${other}: rpc demo.v1.Other.Up: client streaming RPCs cannot be served over JSON-RPC or HTTP+JSON; ` +
          "A2A bindings serve unary and server-streaming RPCs only",
      ].join("\n"),
    );
  });
});

// ---------------------------------------------------------------------------
// What is legal.
// ---------------------------------------------------------------------------

describe("legal rules", () => {
  const route = (r: { httpMethod: string; template: { text: string } }) => `${r.httpMethod} ${r.template.text}`;

  test.each<[string, string, string[]]>([
    [
      "rules overlapping only in part: /tasks/{id} and /{tenant}/tasks",
      [rpc(`get: "/tasks/{id}"`, "A"), rpc(`get: "/{tenant}/tasks"`, "B")].join("\n"),
      ["GET /tasks/{id}", "GET /{tenant}/tasks"],
    ],
    [
      "rules overlapping only in part: /x/{id} and /{tenant}/y within one method",
      rpc(`get: "/x/{id}" additional_bindings { get: "/{tenant}/y" }`),
      ["GET /x/{id}", "GET /{tenant}/y"],
    ],
    [
      "the same template with different HTTP methods",
      [
        rpc(`get: "/x/{id}"`, "A"),
        rpc(`delete: "/x/{id}"`, "B"),
        rpc(`post: "/x/{id}" body: "*"`, "C"),
        rpc(`put: "/x/{id}" body: "leaf"`, "D"),
        rpc(`patch: "/x/{id}" body: "inner"`, "E"),
        rpc(`custom: { kind: "PURGE" path: "/x/{id}" }`, "F"),
      ].join("\n"),
      ["DELETE /x/{id}", "GET /x/{id}", "PATCH /x/{id}", "POST /x/{id}", "PURGE /x/{id}", "PUT /x/{id}"],
    ],
    [
      "the same path with and without a custom verb, and with two verbs",
      [
        rpc(`get: "/x/{id}"`, "A"),
        rpc(`get: "/x/{id}:watch"`, "B"),
        rpc(`get: "/x/{id}:peek"`, "C"),
      ].join("\n"),
      ["GET /x/{id}:peek", "GET /x/{id}:watch", "GET /x/{id}"],
    ],
    [
      "* and ** at the same position",
      [rpc(`get: "/x/{id}"`, "A"), rpc(`get: "/x/{tenant=**}"`, "B")].join("\n"),
      ["GET /x/{id}", "GET /x/{tenant=**}"],
    ],
    [
      "a string field bound with literals and several segments, an int field bound as {count=*}",
      [rpc(`get: "/v1/{id=shelves/*/books/*}"`, "A"), rpc(`get: "/v2/{count=*}"`, "B"), rpc(`get: "/v3/{tenant=**}"`, "C")].join("\n"),
      ["GET /v1/{id=shelves/*/books/*}", "GET /v2/{count=*}", "GET /v3/{tenant=**}"],
    ],
    [
      "variables binding nested scalars and an int field, with a response_body",
      rpc(`get: "/x/{inner.leaf.v}/{inner.name}/{count}" response_body: "leaf"`),
      ["GET /x/{inner.leaf.v}/{inner.name}/{count}"],
    ],
  ])("%s", (_name, rpcs, routes) => {
    const [m] = model(rpcs);
    expect(m?.services[0]?.routes.map(route)).toEqual(routes);
    // And the plugin itself accepts it.
    expect(() => generate({ [file]: proto(rpcs) })).not.toThrow();
  });

  test("a method with no google.api.http option has no HTTP rules and no error", () => {
    const [m] = model("  rpc Get(Req) returns (Res);");
    expect(m?.services[0]?.methods[0]?.http).toEqual([]);
    expect(m?.services[0]?.routes).toEqual([]);
  });
});

// ---------------------------------------------------------------------------
// End to end: a failure through `buf generate` with the built plugin.
// ---------------------------------------------------------------------------

describe("buf generate reports the plugin's message", () => {
  const bin = join(projectRoot, "bin/protoc-gen-a2a.js");

  test("non-zero exit and the model error on stderr", () => {
    // `npm test` builds dist/ first (pretest); bin/ imports the built plugin.
    expect(existsSync(join(projectRoot, "dist/plugin/plugin.js"))).toBe(true);
    const { dir, done } = scratchDir("validation-e2e");
    try {
      writeModule(dir, { [file]: proto(rpc(`get: "/x/{nope}"`)) });
      writeFileSync(
        join(dir, "buf.gen.yaml"),
        ["version: v2", "plugins:", `  - local: ["node", ${JSON.stringify(bin)}]`, "    out: gen", "    opt: [target=ts]", ""].join("\n"),
      );
      const result = spawnSync(bufBin, ["generate", "--path", file], { cwd: dir, encoding: "utf8" });
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain(
        `protoc-gen-a2a: ${at("Get")}: get "/x/{nope}": variable "nope" names no field of demo.v1.Req`,
      );
      expect(existsSync(join(dir, "gen"))).toBe(false);
    } finally {
      done();
    }
  });

  test("the same module without the bad rule generates (the failure is the rule's)", () => {
    const { dir, done } = scratchDir("validation-e2e-ok");
    try {
      writeModule(dir, { [file]: proto(rpc(`get: "/x/{id}"`)) });
      writeFileSync(
        join(dir, "buf.gen.yaml"),
        ["version: v2", "plugins:", `  - local: ["node", ${JSON.stringify(bin)}]`, "    out: gen", "    opt: [target=ts]", ""].join("\n"),
      );
      const result = spawnSync(bufBin, ["generate", "--path", file], { cwd: dir, encoding: "utf8" });
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      expect(existsSync(join(dir, "gen/demo/v1/svc_methods.ts"))).toBe(true);
    } finally {
      done();
    }
  });
});

// runPlugin is the in-process path every case above takes; keep it referenced
// so a change to its error contract shows up here.
test("runPlugin surfaces the ModelError itself", () => {
  const req = createRequest({ [file]: proto(rpc(`get: "a/b"`)) });
  expect(() => runPlugin(req)).toThrow(ModelError);
});

test("an lf.a2a.v1.A2AService whose messages lack what the task runtime needs is reported, naming each missing part", () => {
  const a2a = `syntax = "proto3";
package lf.a2a.v1;
message Message { string message_id = 1; }
message Task { string id = 1; }
message SendMessageRequest { Message message = 1; }
message SendMessageResponse { oneof payload { Task task = 1; Message msg = 2; } }
service A2AService {
  rpc SendMessage(SendMessageRequest) returns (SendMessageResponse);
}
`;
  expect(() => generate({ "lf/a2a/v1/a2a.proto": a2a })).toThrow(
    "lf/a2a/v1/a2a.proto: service lf.a2a.v1.A2AService: the task runtime (createA2AServiceTaskHandler) needs " +
      "rpc SendStreamingMessage, rpc CreateTaskPushNotificationConfig, message field lf.a2a.v1.Task.status, " +
      "message field lf.a2a.v1.Task.artifacts, enum field lf.a2a.v1.Message.role, which this proto does not have",
  );
});
