/**
 * Custom pattern kinds and body/path overlap: rules a router could not serve
 * unambiguously are refused while the model is built.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createFileModels } from "../../plugin/model/service-model.js";
import { createRequest, runPlugin } from "../support/protos.js";
import { createFileRegistry, create } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

function proto(rpcs: string): Record<string, string> {
  return {
    "k/v1/k.proto": `syntax = "proto3";
package k.v1;
import "google/api/annotations.proto";
service K {
${rpcs}
}
message Leaf { string v = 1; }
message Req { string id = 1; Leaf leaf = 2; }
message Res {}
`,
  };
}

function problemOf(rpcs: string): string {
  try {
    runPlugin(createRequest(proto(rpcs)));
  } catch (err) {
    return (err as Error).message;
  }
  return "no problem";
}

function routesOf(rpcs: string): string[] {
  const req = createRequest(proto(rpcs));
  const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: req.protoFile }));
  const file = registry.getFile("k/v1/k.proto");
  if (file === undefined) throw new Error("no file");
  const [model] = createFileModels([file]);
  return (model?.services[0]?.routes ?? []).map((r) => `${r.httpMethod} ${r.template.text} ${r.method.name}`);
}

test('a custom kind "*" sorts after the specific methods of the same path', () => {
  expect(
    routesOf(`
  rpc Any(Req) returns (Res) { option (google.api.http) = { custom: { kind: "*" path: "/a/{id}" } }; }
  rpc Get(Req) returns (Res) { option (google.api.http) = { get: "/b/{id}" }; }
  rpc Purge(Req) returns (Res) { option (google.api.http) = { custom: { kind: "purge" path: "/c/{id}" } }; }`),
  ).toEqual(["* /a/{id} Any", "GET /b/{id} Get", "PURGE /c/{id} Purge"]);
});

test('a custom kind "*" clashes with any method on the same path', () => {
  expect(
    problemOf(`
  rpc Get(Req) returns (Res) { option (google.api.http) = { get: "/a/{id}" }; }
  rpc Any(Req) returns (Res) { option (google.api.http) = { custom: { kind: "*" path: "/a/{id}" } }; }`),
  ).toBe(
    'k/v1/k.proto: rpc k.v1.K.Any: custom "*" "/a/{id}": same HTTP method and path pattern as get "/a/{id}" of rpc Get; no request could tell them apart, change one of the paths',
  );
});

test("a lower-case custom kind is the same method as its upper-case form", () => {
  expect(
    problemOf(`
  rpc Get(Req) returns (Res) { option (google.api.http) = { get: "/a/{id}" }; }
  rpc Get2(Req) returns (Res) { option (google.api.http) = { custom: { kind: "get" path: "/a/{id}" } }; }`),
  ).toBe(
    'k/v1/k.proto: rpc k.v1.K.Get2: custom "get" "/a/{id}": same HTTP method and path pattern as get "/a/{id}" of rpc Get; no request could tell them apart, change one of the paths',
  );
});

test("a custom kind that is not an HTTP token is refused", () => {
  expect(
    problemOf(`  rpc Get(Req) returns (Res) { option (google.api.http) = { custom: { kind: "GE T" path: "/a" } }; }`),
  ).toBe('k/v1/k.proto: rpc k.v1.K.Get: custom "GE T" "/a": custom kind "GE T" is not an HTTP method name (a token such as PURGE, or "*")');
});

test("a body field that a path variable also sets is refused", () => {
  expect(problemOf(`  rpc Put(Req) returns (Res) { option (google.api.http) = { patch: "/leaves/{id}" body: "id" }; }`)).toBe(
    'k/v1/k.proto: rpc k.v1.K.Put: patch "/leaves/{id}": body "id" is also set by path variable "id"; a field comes from the path or the body, not both',
  );
});

test("a path variable inside the body message is the usual update pattern, and legal", () => {
  expect(problemOf(`  rpc Put(Req) returns (Res) { option (google.api.http) = { patch: "/leaves/{leaf.v}" body: "leaf" }; }`)).toBe(
    "no problem",
  );
});

// D7: a rule no call could go through is refused, not generated.
test("a HEAD rule is refused unless the RPC answers a message without fields: a HEAD answer has no body", () => {
  expect(problemOf(`  rpc Head(Req) returns (Req) { option (google.api.http) = { custom: { kind: "HEAD" path: "/a/{id}" } }; }`)).toBe(
    'k/v1/k.proto: rpc k.v1.K.Head: custom "HEAD" "/a/{id}": a HEAD answer has no body, so the RPC\'s response k.v1.Req could never reach the caller; return google.protobuf.Empty or use GET',
  );
  expect(problemOf(`  rpc Head(Req) returns (stream Res) { option (google.api.http) = { custom: { kind: "head" path: "/a/{id}" } }; }`)).toBe(
    'k/v1/k.proto: rpc k.v1.K.Head: custom "head" "/a/{id}": a HEAD answer has no body, so no message of the stream could reach the caller; use GET',
  );
  expect(routesOf(`  rpc Head(Req) returns (Res) { option (google.api.http) = { custom: { kind: "HEAD" path: "/a/{id}" } }; }`)).toEqual(["HEAD /a/{id} Head"]);
});

test("a CONNECT rule is refused: node:http never hands a CONNECT request to a handler", () => {
  expect(problemOf(`  rpc Tunnel(Req) returns (Res) { option (google.api.http) = { custom: { kind: "CONNECT" path: "/a/{id}" } }; }`)).toBe(
    'k/v1/k.proto: rpc k.v1.K.Tunnel: custom "CONNECT" "/a/{id}": CONNECT asks for a tunnel, which node:http never hands to a request handler; use another method',
  );
});

test.each(["TRACE", "trace", "TRACK"])("a %s rule is refused: fetch never sends one", (kind) => {
  expect(problemOf(`  rpc Echo(Req) returns (Res) { option (google.api.http) = { custom: { kind: "${kind}" path: "/a/{id}" } }; }`)).toBe(
    `k/v1/k.proto: rpc k.v1.K.Echo: custom "${kind}" "/a/{id}": ${kind.toUpperCase()} is a forbidden method of the Fetch standard: fetch, which the generated client and browsers send with, refuses to send it, and a TRACE request may carry no content (RFC 9110 9.3.8); use another method`,
  );
});

test("the reason: fetch refuses TRACE and TRACK before sending anything, and sends another custom method", async () => {
  let seen: string[] = [];
  const server = createServer((req, res) => {
    seen = [...seen, req.method ?? ""];
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a/1`;
  try {
    for (const method of ["TRACE", "trace", "TRACK"]) await expect(fetch(url, { method })).rejects.toThrow(`'${method}' HTTP method is unsupported.`);
    expect((await fetch(url, { method: "PURGE" })).status).toBe(200);
    expect(seen).toEqual(["PURGE"]);
  } finally {
    server.close();
  }
});

test.each([".", "..", "%2E", "%2e%2E", ".%2e"])("a literal dot segment %s is refused: URL parsing removes it before a request is sent", (dots) => {
  expect(problemOf(`  rpc Up(Req) returns (Res) { option (google.api.http) = { get: "/v1/${dots}/{id}" }; }`)).toBe(
    `k/v1/k.proto: rpc k.v1.K.Up: get "/v1/${dots}/{id}": the literal segment "${dots}" is a dot segment, which URL parsing removes before a request is sent, so no client could reach the rule; use another literal`,
  );
});

test("a dot segment inside a variable's pattern is refused too; dots within a literal are fine", () => {
  expect(problemOf(`  rpc Up(Req) returns (Res) { option (google.api.http) = { get: "/v1/{id=../*}" }; }`)).toBe(
    'k/v1/k.proto: rpc k.v1.K.Up: get "/v1/{id=../*}": the literal segment ".." is a dot segment, which URL parsing removes before a request is sent, so no client could reach the rule; use another literal',
  );
  expect(problemOf(`  rpc Up(Req) returns (Res) { option (google.api.http) = { get: "/v1/.well-known/.../{id}:a.b" }; }`)).toBe("no problem");
});
