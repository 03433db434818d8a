/**
 * `init` writes a new agent repo from templates/agent: the files, the
 * options' effect on them, and refusals that say what to do instead. The
 * repo is installed, tested and started by test/cli/agent-repo.test.ts.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../cli/main.js";
import { packageManifest } from "../../cli/package-root.js";
import { readPin } from "../../cli/pin.js";
import { readLock } from "../../cli/pull.js";
import { projectRoot, scratchDir } from "../support/protos.js";
import { captureIo } from "./io.js";

const pin = readPin();
const manifest = packageManifest();
const scratch = scratchDir("cli-init");
afterAll(() => scratch.done());
const env = { A2A_SPEC_DIR: join(projectRoot, "vendor/a2a") };

async function init(...argv: string[]) {
  const io = captureIo(scratch.dir, env);
  const status = await main(["init", ...argv], io);
  return { status, stdout: io.stdout.join(""), stderr: io.stderr.join("") };
}

const read = (dir: string, file: string) => readFileSync(join(scratch.dir, dir, file), "utf8");

test("a repo with every binding, the pinned proto and the lock", async () => {
  const result = await init("My Agent");
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  expect(result.stdout).toContain("Next: cd 'My Agent' && npm install && npm start");
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)).map((f) => `${e.name}/${f}`) : [e.name]));
  expect(files(join(scratch.dir, "My Agent")).sort()).toEqual(
    [
      ".gitignore", "README.md", "a2a.lock.json", "buf.gen.yaml", "buf.yaml", "package.json", "tsconfig.json",
      "proto/a2a/a2a.proto", ...pin.googleapis.files.map((f) => `proto/googleapis/${f}`),
      "src/agent.ts", "src/main.ts", "test/agent.test.ts",
    ].sort(),
  );
  const pkg = JSON.parse(read("My Agent", "package.json")) as { name: string; dependencies: Record<string, string>; devDependencies: Record<string, string>; scripts: Record<string, string> };
  expect(pkg.name).toBe("my-agent");
  expect(pkg.dependencies).toEqual({
    "@bufbuild/protobuf": manifest.dependencies?.["@bufbuild/protobuf"],
    "@grpc/grpc-js": manifest.devDependencies?.["@grpc/grpc-js"],
    "protoc-gen-a2a": `^${manifest.version}`,
  });
  expect(Object.keys(pkg.devDependencies).sort()).toEqual(["@bufbuild/buf", "@bufbuild/protoc-gen-es", "@types/node", "typescript"]);
  expect(readLock(join(scratch.dir, "My Agent", "a2a.lock.json"))?.version).toBe(pin.default);
  expect(read("My Agent", "buf.gen.yaml")).toContain("opt: [target=ts, import_extension=js]\n");
  expect(read("My Agent", "src/agent.ts")).toContain('export const storeUrl = process.env.A2A_STORE ?? "memory:";');
  expect(read("My Agent", "src/agent.ts")).toContain("{ store });");
  expect(read("My Agent", "src/main.ts")).toContain("grpcPort: Number(process.env.GRPC_PORT ?? 50051),");
  expect(read("My Agent", "src/main.ts")).not.toContain("compat");
  expect(read("My Agent", "test/agent.test.ts")).toContain('gRPC: createA2AServiceGrpcClient(server.grpcAddress ?? ""),');
  expect(read("My Agent", "README.md")).toContain("npm install && npm start");
  expect(read("My Agent", "README.md")).toContain("npm test ");
});

test("--no-grpc: no gRPC in the agent, its test, the plugin's options or the dependencies", async () => {
  const tarball = join(scratch.dir, "pkg.tgz");
  writeFileSync(tarball, "");
  const result = await init("json-only", "--no-grpc", "--a2a-version", "v1.0.0", "--package-spec", "./pkg.tgz", "--name", "@me/json-agent");
  expect(result.stderr).toBe("");
  const pkg = JSON.parse(read("json-only", "package.json")) as { name: string; dependencies: Record<string, string> };
  expect(pkg.name).toBe("@me/json-agent");
  expect(pkg.dependencies["protoc-gen-a2a"]).toBe(`file:${tarball}`);
  expect(pkg.dependencies["@grpc/grpc-js"]).toBeUndefined();
  // A relative file: spec is made absolute: npm would read it relative to the new repo.
  expect((await init("file-relative", "--package-spec", "file:./pkg.tgz")).stderr).toBe("");
  expect((JSON.parse(read("file-relative", "package.json")) as { dependencies: Record<string, string> }).dependencies["protoc-gen-a2a"]).toBe(`file:${tarball}`);
  expect(read("json-only", "buf.gen.yaml")).toContain("opt: [target=ts, import_extension=js, grpc=false]\n");
  expect(read("json-only", "src/main.ts")).toContain("grpcPort: false,");
  expect(read("json-only", "test/agent.test.ts")).not.toMatch(/grpc(?!Port: false)/i);
  expect(readLock(join(scratch.dir, "json-only", "a2a.lock.json"))?.version).toBe("v1.0.0");
});

test("--compat-v0-3: the agent also answers A2A 0.3 clients", async () => {
  const result = await init("old-clients", "--compat-v0-3");
  expect(result.stderr).toBe("");
  expect(read("old-clients", "src/main.ts")).toContain("  compat: { v0_3: true },\n});");
});

test("--store <url>: the URL is the agent's default store, and its engine's driver a dependency (D73)", async () => {
  for (const [dir, url, driver] of [
    ["on-pglite", "pglite:./data", "@electric-sql/pglite"],
    ["on-postgres", "postgres://a2a:secret@db.internal:5432/agents", "pg"],
  ] as const) {
    const result = await init(dir, "--store", url);
    expect(result.stderr).toBe("");
    expect(read(dir, "src/agent.ts")).toContain(`export const storeUrl = process.env.A2A_STORE ?? ${JSON.stringify(url)};`);
    const pkg = JSON.parse(read(dir, "package.json")) as { dependencies: Record<string, string> };
    expect(pkg.dependencies[driver]).toBe(manifest.devDependencies?.[driver]);
    expect(Object.keys(pkg.dependencies).filter((d) => d === "pg" || d === "@electric-sql/pglite")).toEqual([driver]);
    expect(read(dir, "README.md")).toContain(`\`${url}\``);
  }
  expect(read("on-pglite", ".gitignore")).toBe("node_modules/\ndist/\nsrc/gen/\ndata/\n");
  expect(read("on-postgres", ".gitignore")).toBe("node_modules/\ndist/\nsrc/gen/\n");
  // The test of a PGlite agent keeps its tasks in memory: the data folder is the running agent's,
  // which a second process would open and overwrite. Postgres is shared by design.
  expect(read("on-pglite", "test/agent.test.ts")).toContain('serveA2AService(createAgent("pglite:"), card,');
  expect(read("on-postgres", "test/agent.test.ts")).toContain("serveA2AService(createAgent(), card,");
});

test("a store URL with */ in it does not end the comment it is quoted in", async () => {
  const url = "postgres://a2a@127.0.0.1:5432/agents?application_name=a*/b";
  expect((await init("comment-url", "--store", url)).stderr).toBe("");
  const agent = read("comment-url", "src/agent.ts");
  expect(agent).toContain("application_name=a*\\/b");
  expect(agent).toContain(`export const storeUrl = process.env.A2A_STORE ?? ${JSON.stringify(url)};`);
  // The raw URL is only in the string literal.
  expect(agent.split("a*/b")).toHaveLength(2);
});

test("refusals name what to fix and write nothing", async () => {
  mkdirSync(join(scratch.dir, "taken"));
  writeFileSync(join(scratch.dir, "taken", "x"), "");
  expect(await init("taken")).toEqual({ status: 2, stdout: "", stderr: `protoc-gen-a2a init: ${join(scratch.dir, "taken")} is not empty; name a new folder (init never overwrites files)\n` });
  const none = await init("none", "--no-jsonrpc", "--no-http-json", "--no-grpc");
  expect(none.stderr).toBe("protoc-gen-a2a init: --no-jsonrpc, --no-http-json and --no-grpc leave no binding to serve; keep at least one\n");
  const old = await init("old", "--a2a-version", "v0.3.0");
  expect(old.status).toBe(2);
  expect(old.stderr).toContain(`a2a.proto v0.3.0 is A2A 0.x (package a2a.v1)`);
  expect(old.stderr).toContain(`start the agent at ${pin.default}`);
  const store = await init("store", "--store", "redis://localhost");
  expect(store.stderr).toBe(
    'protoc-gen-a2a init: --store: unknown task store URL "redis://localhost": use memory:, pglite:<data dir> (or pglite: for an in-memory database) or postgres://user:password@host:port/database\n',
  );
  const missing = await init();
  expect(missing.stderr).toBe("protoc-gen-a2a init: missing <dir> (the new repo's folder (created; if it exists it must be empty))\nUsage: protoc-gen-a2a init [options] <dir>\n");
  // A file where the folder would go, a bad package name, a package spec that is not there: no
  // stack, and (the last two found after the pull once) nothing written.
  writeFileSync(join(scratch.dir, "a-file"), "");
  expect(await init("a-file")).toEqual({ status: 2, stdout: "", stderr: `protoc-gen-a2a init: ${join(scratch.dir, "a-file")} is a file, not a folder; name a new folder\n` });
  const named = await init("named", "--name", "Bad Name/../X");
  expect([named.status, named.stderr]).toEqual([2, 'protoc-gen-a2a init: --name "Bad Name/../X" is not an npm package name (lower case letters, digits, - . _ ~, optionally @scope/, at most 214 characters)\n']);
  const spec = await init("spec", "--package-spec", "./no-such.tgz");
  expect([spec.status, spec.stderr]).toEqual([2, `protoc-gen-a2a init: --package-spec ./no-such.tgz: no such file or folder (${join(scratch.dir, "no-such.tgz")})\n`]);
  // A file: spec is checked the same way (npm links a missing folder without a word).
  const fileSpec = await init("file-spec", "--package-spec", "file:/no/such/folder");
  expect([fileSpec.status, fileSpec.stderr]).toEqual([2, "protoc-gen-a2a init: --package-spec file:/no/such/folder: no such file or folder (/no/such/folder)\n"]);
  for (const dir of ["none", "old", "store", "named", "spec", "file-spec"]) expect(existsSync(join(scratch.dir, dir))).toBe(false);
});
