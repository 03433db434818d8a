/**
 * `grpc=false` (D43): no `_grpc.ts`, and a server module that names no gRPC
 * file; with gRPC (the default) the server imports its definition only when
 * gRPC is served, addressed as protoplugin addresses every relative import.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generate, projectRoot } from "../support/protos.js";

const files = { "a2a.proto": readFileSync(join(projectRoot, "vendor/a2a/current/a2a.proto"), "utf8") };

test.each<[string, string]>([
  ["target=ts", "./a2a_grpc"],
  ["target=ts,import_extension=js", "./a2a_grpc.js"],
  ["target=ts,import_extension=ts,grpc=true", "./a2a_grpc.ts"],
])("%s: the server imports the gRPC definition when it serves gRPC", (parameter, path) => {
  const out = generate(files, parameter);
  expect(out.has("a2a_grpc.ts")).toBe(true);
  const server = out.get("a2a_server.ts") ?? "";
  expect(server).toContain(`loadGrpcDefinition: () => import("${path}").then((m) => m.A2AServiceGrpcDefinition),`);
  expect(server).not.toMatch(/^import .*_grpc/m);
});

test("grpc=false: no _grpc.ts, nothing names it, the other files are the same", () => {
  const withGrpc = generate(files, "target=ts");
  const without = generate(files, "target=ts,grpc=false");
  expect([...without.keys()].sort()).toEqual([...withGrpc.keys()].filter((f) => f !== "a2a_grpc.ts").sort());
  for (const [name, content] of without) {
    expect(content).not.toMatch(/grpc-js|a2a_grpc|runtime\/grpc/);
    if (name !== "a2a_server.ts") expect(content.replace('parameter "target=ts,grpc=false"', 'parameter "target=ts"')).toBe(withGrpc.get(name));
  }
});

test("grpc takes true or false", () => {
  expect(() => generate(files, "target=ts,grpc=no")).toThrow('grpc takes true or false, not "no"');
});
