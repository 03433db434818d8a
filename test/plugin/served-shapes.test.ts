/**
 * Rules and messages of a service that is not A2A's, generated into a scratch folder, served on
 * real sockets and called with the generated clients: what the model accepts is callable (D7), and
 * what a proto declares required is checked on every binding (D11).
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { generate, projectRoot, scratchDir, writeGenerated } from "../support/protos.js";

const parameter = "target=ts,import_extension=js";

/** Generates `files`, writes `run` beside them and runs it; returns what it printed, as JSON. */
function runGenerated(files: Readonly<Record<string, string>>, run: string): unknown {
  const out = generate(files, parameter);
  const { dir, done } = scratchDir("served");
  try {
    writeGenerated(dir, files, out);
    writeFileSync(join(dir, "run.ts"), run);
    const result = spawnSync(process.execPath, ["--import", join(projectRoot, "test/support/ts-loader.mjs"), "run.ts"], { cwd: dir, encoding: "utf8", timeout: 30_000 });
    expect(result.stderr.split("\n").filter((l) => l !== "" && !l.includes("ExperimentalWarning") && !l.includes("--trace-warnings"))).toEqual([]);
    expect(result.status).toBe(0);
    return JSON.parse(result.stdout);
  } finally {
    done();
  }
}

/** Serves `Service` of gen/`path` on HTTP+JSON and JSON-RPC (node:http), then runs `body` with `rest` and `rpc` (their URLs). */
function serving(path: string, service: string, handler: string, body: string): string {
  return `
import http from "node:http";
import type { AddressInfo } from "node:net";
import { RpcError } from "protoc-gen-a2a/runtime";
import type { ${service}Handler } from "./gen/${path}_handler.js";
import { create${service}HttpJsonListener } from "./gen/${path}_http.js";
import { create${service}JsonRpcListener } from "./gen/${path}_jsonrpc.js";
import { create${service}HttpJsonClient, create${service}JsonRpcClient } from "./gen/${path}_client.js";

const handler: ${service}Handler = ${handler};
const listen = async (listener: http.RequestListener) => {
  const server = http.createServer(listener);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: "http://127.0.0.1:" + (server.address() as AddressInfo).port };
};
const restServer = await listen(create${service}HttpJsonListener(handler));
const rpcServer = await listen(create${service}JsonRpcListener(handler));
const rest = restServer.url;
const rpc = rpcServer.url;
const out: Record<string, unknown> = {};
const attempt = async (f: () => Promise<unknown>) => { try { return await f(); } catch (e) { return (e as Error).message; } };
void create${service}JsonRpcClient;
void RpcError;
${body}
restServer.server.close();
rpcServer.server.close();
console.log(JSON.stringify(out));
`;
}

describe('custom kinds: "*" and HEAD, called with the generated client (D7)', () => {
  const files = {
    "ck/v1/ck.proto": `syntax = "proto3";
package ck.v1;
import "google/api/annotations.proto";
import "google/protobuf/empty.proto";
message Req { string id = 1; string note = 2; }
message Res { string id = 1; string method = 2; }
service Kinds {
  rpc Any(Req) returns (Res) { option (google.api.http) = { custom { kind: "*" path: "/any/{id}" } }; }
  rpc AnyBody(Req) returns (Res) { option (google.api.http) = { custom { kind: "*" path: "/anybody/{id}" } body: "*" }; }
  rpc Check(Req) returns (google.protobuf.Empty) { option (google.api.http) = { custom { kind: "HEAD" path: "/check/{id}" } }; }
}
`,
  };

  test('a "*" rule is called with GET when it has no body and POST when it has one; a HEAD rule returning Empty is answered', () => {
    const run = serving(
      "ck/v1/ck",
      "Kinds",
      `{
  any: async (r) => ({ id: r.id, method: r.note }),
  anyBody: async (r) => ({ id: r.id, method: r.note }),
  check: async (r) => { if (r.id !== "b1") throw new RpcError("NOT_FOUND", "no " + r.id); return {}; },
}`,
      `
const client = createKindsHttpJsonClient(rest);
out.any = await attempt(() => client.any({ id: "a1", note: "q" }));
out.anyBody = await attempt(() => client.anyBody({ id: "a2", note: "b" }));
out.check = await attempt(() => client.check({ id: "b1" }));
out.missing = await attempt(() => client.check({ id: "b2" }));
// What the server takes for a "*" rule: any method.
out.raw = await Promise.all(["GET", "DELETE", "PURGE"].map(async (m) => (await fetch(rest + "/any/x", { method: m })).status));
`,
    );
    expect(runGenerated(files, run)).toEqual({
      any: { $typeName: "ck.v1.Res", id: "a1", method: "q" },
      anyBody: { $typeName: "ck.v1.Res", id: "a2", method: "b" },
      check: { $typeName: "google.protobuf.Empty" },
      missing: expect.stringMatching(/NOT_FOUND|no b2|404/),
      raw: [200, 200, 200],
    });
  }, 60_000);
});

describe("proto2 required and editions LEGACY_REQUIRED fields are required of a request (D11)", () => {
  const files = {
    "p2/v1/p2.proto": `syntax = "proto2";
package p2.v1;
import "google/api/annotations.proto";
message Inner { required string v = 1; optional string note = 2; }
message Req { required string id = 1; optional int32 n = 2 [default = 7]; optional Inner inner = 3; }
message Res { optional string id = 1; optional Req req = 2; }
service P2 {
  rpc Echo(Req) returns (Res) { option (google.api.http) = { post: "/p2" body: "*" }; }
}
`,
    "ed/v1/ed.proto": `edition = "2023";
package ed.v1;
import "google/api/annotations.proto";
message Req { string id = 1 [features.field_presence = LEGACY_REQUIRED]; string other = 2; }
message Res { string id = 1; }
service Ed {
  rpc Get(Req) returns (Res) { option (google.api.http) = { post: "/ed" body: "*" }; }
}
`,
  };

  test("a request without one is InvalidParams naming it, nested ones too, on HTTP+JSON and JSON-RPC; an empty string is present", () => {
    const run = `
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createP2HttpJsonListener } from "./gen/p2/v1/p2_http.js";
import { createP2JsonRpcListener } from "./gen/p2/v1/p2_jsonrpc.js";
import { createEdHttpJsonListener } from "./gen/ed/v1/ed_http.js";
import type { P2Handler } from "./gen/p2/v1/p2_handler.js";
import type { EdHandler } from "./gen/ed/v1/ed_handler.js";

const p2: P2Handler = { echo: async (r) => ({ id: r.id, req: r }) };
const ed: EdHandler = { get: async (r) => ({ id: r.id }) };
const listen = async (listener: http.RequestListener) => {
  const server = http.createServer(listener);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: "http://127.0.0.1:" + (server.address() as AddressInfo).port };
};
const servers = [await listen(createP2HttpJsonListener(p2)), await listen(createP2JsonRpcListener(p2)), await listen(createEdHttpJsonListener(ed))];
const post = async (url: string, body: unknown) => {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = (await r.json()) as Record<string, any>;
  return [r.status, json.error?.message ?? json.result?.id ?? json.id, json.error?.details?.[0]?.fieldViolations ?? json.error?.data?.find?.((d: any) => d.fieldViolations)?.fieldViolations];
};
const rpc = (params: unknown) => ({ jsonrpc: "2.0", id: 1, method: "Echo", params });
const out = {
  restMissing: await post(servers[0]!.url + "/p2", { n: 1 }),
  restNested: await post(servers[0]!.url + "/p2", { id: "a", inner: { note: "x" } }),
  restEmpty: await post(servers[0]!.url + "/p2", { id: "" }),
  rpcMissing: await post(servers[1]!.url, rpc({})),
  rpcFine: await post(servers[1]!.url, rpc({ id: "b", inner: { v: "" } })),
  editions: await post(servers[2]!.url + "/ed", { other: "x" }),
};
for (const s of servers) s.server.close();
console.log(JSON.stringify(out));
`;
    const violation = (field: string) => [{ field, description: "field is required" }];
    expect(runGenerated(files, run)).toEqual({
      restMissing: [400, "missing required field: id", violation("id")],
      restNested: [400, "missing required field: inner.v", violation("inner.v")],
      restEmpty: [200, "", null],
      rpcMissing: [200, "missing required field: id", violation("id")],
      rpcFine: [200, "b", null],
      editions: [400, "missing required field: id", violation("id")],
    });
  }, 60_000);
});
