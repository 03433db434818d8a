/**
 * `pull` in an agent repo: a2a.proto by pinned version into the proto folder,
 * the googleapis protos beside it, a lock file recording the version, and
 * nothing written when the bytes are not the pinned ones.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../cli/main.js";
import { readPin } from "../../cli/pin.js";
import { pullProto, readLock, sha256 } from "../../cli/pull.js";
import { projectRoot, scratchDir } from "../support/protos.js";
import { captureIo } from "./io.js";

const pin = readPin();
const scratch = scratchDir("cli-pull");
afterAll(() => scratch.done());

/** A spec folder holding the pinned v0.3.0, v1.0.0 and v1.0.1 (from the project's vendor/, pulled by `npm run generate`). */
const specDir = join(scratch.dir, "spec");
for (const version of ["v0.3.0", "v1.0.0", "v1.0.1"]) {
  mkdirSync(join(specDir, version), { recursive: true });
  writeFileSync(join(specDir, version, "a2a.proto"), readFileSync(join(projectRoot, "vendor/a2a", version, "a2a.proto")));
}

test("pullProto writes a2a.proto, the googleapis protos and the lock, and reports its source", () => {
  const repo = join(scratch.dir, "direct");
  const result = pullProto({ version: "v1.0.0", protoDir: join(repo, "p"), googleapisDir: join(repo, "g"), specDirs: [join(scratch.dir, "nowhere"), specDir], lockFile: join(repo, "a2a.lock.json") });
  expect(result.version).toBe("v1.0.0");
  expect(result.from).toBe(join(specDir, "v1.0.0/a2a.proto"));
  expect(sha256(readFileSync(join(repo, "p/a2a.proto")))).toBe(pin.versions["v1.0.0"]?.sha256);
  expect(result.files.slice(1).map((f) => f.slice(join(repo, "g").length + 1))).toEqual(pin.googleapis.files);
  for (const file of pin.googleapis.files) {
    expect(readFileSync(join(repo, "g", file))).toEqual(readFileSync(join(projectRoot, "node_modules/google-proto-files", file)));
  }
  expect(readLock(join(repo, "a2a.lock.json"))).toEqual({ version: "v1.0.0", sha256: pin.versions["v1.0.0"]?.sha256, protoDir: "p", googleapisDir: "g" });
  // Pulled again with no source at all: the copy in place is intact, so nothing is fetched.
  const again = pullProto({ version: "v1.0.0", protoDir: join(repo, "p"), googleapisDir: join(repo, "g"), gitUrl: join(scratch.dir, "no-repo") });
  expect(again.from).toBe(`${join(repo, "p/a2a.proto")} (already in place)`);
});

test("the pull command: default version, then the lock's version and folders", async () => {
  const repo = join(scratch.dir, "repo");
  mkdirSync(repo);
  const io = captureIo(repo, { A2A_SPEC_DIR: specDir });
  expect(await main(["pull"], io)).toBe(0);
  expect(io.stderr).toEqual([]);
  expect(io.stdout.join("")).toBe(
    `a2a.proto ${pin.default} (sha256 ${pin.versions[pin.default]?.sha256}) from ${join(specDir, pin.default, "a2a.proto")}\n` +
      `  wrote proto/a2a/a2a.proto, ${pin.googleapis.files.length} googleapis protos, a2a.lock.json\n`,
  );
  expect(existsSync(join(repo, "proto/googleapis/google/api/annotations.proto"))).toBe(true);

  // Another version and folder, then a bare `pull` keeps both from the lock.
  expect(await main(["pull", "v1.0.0", "--proto-dir", "api/a2a", "--dir", repo], captureIo("/", { A2A_SPEC_DIR: specDir }))).toBe(0);
  expect(readLock(join(repo, "a2a.lock.json"))).toMatchObject({ version: "v1.0.0", protoDir: "api/a2a", googleapisDir: "proto/googleapis" });
  const bare = captureIo(repo, {});
  expect(await main(["pull"], bare)).toBe(0);
  expect(bare.stdout.join("")).toContain(`a2a.proto v1.0.0 (sha256 ${pin.versions["v1.0.0"]?.sha256}) from ${join(repo, "api/a2a/a2a.proto")} (already in place)`);
});

test("--spec-dir is tried before A2A_SPEC_DIR", async () => {
  const repo = join(scratch.dir, "spec-first");
  const io = captureIo(scratch.dir, { A2A_SPEC_DIR: join(scratch.dir, "nowhere") });
  expect(await main(["pull", "v1.0.1", "--dir", repo, "--spec-dir", specDir], io)).toBe(0);
  expect(io.stdout.join("")).toContain(`from ${join(specDir, "v1.0.1/a2a.proto")}`);
});

test("a wrong checksum stops with both sums and writes nothing; an unknown version lists the pinned ones", async () => {
  const bad = join(scratch.dir, "bad-spec");
  mkdirSync(join(bad, "v1.0.1"), { recursive: true });
  const tampered = Buffer.concat([readFileSync(join(specDir, "v1.0.1/a2a.proto")), Buffer.from("// tampered\n")]);
  writeFileSync(join(bad, "v1.0.1/a2a.proto"), tampered);
  const repo = join(scratch.dir, "bad");
  const io = captureIo(repo, { A2A_SPEC_DIR: bad });
  expect(await main(["pull", "v1.0.1"], io)).toBe(1);
  expect(io.stderr.join("")).toBe(
    `protoc-gen-a2a pull: checksum mismatch for ${join(bad, "v1.0.1/a2a.proto")} (a2a.proto v1.0.1):\n` +
      `  expected sha256 ${pin.versions["v1.0.1"]?.sha256} (proto/a2a-versions.json)\n` +
      `  actual   sha256 ${sha256(tampered)}\n`,
  );
  expect(existsSync(repo)).toBe(false);

  const unknown = captureIo(scratch.dir);
  expect(await main(["pull", "v9"], unknown)).toBe(1);
  expect(unknown.stderr.join("")).toBe(`protoc-gen-a2a pull: unknown version "v9"; pinned versions: ${Object.keys(pin.versions).join(", ")}\n`);
});

test("--list prints the pinned versions, the default marked", async () => {
  const io = captureIo("/");
  expect(await main(["pull", "--list"], io)).toBe(0);
  const lines = io.stdout.join("").trimEnd().split("\n");
  expect(lines.map((l) => l.split(" ")[0])).toEqual(Object.keys(pin.versions));
  expect(lines.find((l) => l.includes("(default)"))?.startsWith(pin.default)).toBe(true);
});

test("mistakes a person can fix get a message, never a stack: a version named like an Object key, a lock that is null, a repo whose protos are gone", async () => {
  for (const version of ["constructor", "__proto__", "toString"]) {
    const io = captureIo(scratch.dir, { A2A_SPEC_DIR: specDir });
    expect(await main(["pull", version], io)).toBe(1);
    expect(io.stderr.join("")).toBe(`protoc-gen-a2a pull: unknown version "${version}"; pinned versions: ${Object.keys(pin.versions).join(", ")}\n`);
  }
  const nullLock = join(scratch.dir, "null-lock");
  mkdirSync(nullLock);
  writeFileSync(join(nullLock, "a2a.lock.json"), "null\n");
  const pulled = captureIo(nullLock, { A2A_SPEC_DIR: specDir });
  expect(await main(["pull"], pulled)).toBe(1);
  expect(pulled.stderr.join("")).toBe(`protoc-gen-a2a pull: ${join(nullLock, "a2a.lock.json")} is not a JSON object; delete it and pull again\n`);

  const gone = join(scratch.dir, "protos-gone");
  expect(await main(["pull", "v1.0.0", "--dir", gone], captureIo(scratch.dir, { A2A_SPEC_DIR: specDir }))).toBe(0);
  const lock = readLock(join(gone, "a2a.lock.json"))!;
  rmSync(join(gone, lock.protoDir), { recursive: true });
  const upgraded = captureIo(scratch.dir, { A2A_SPEC_DIR: specDir });
  expect(await main(["upgrade", "--to", "v1.0.1", "--dir", gone], upgraded)).toBe(1);
  expect(upgraded.stderr.join("")).toMatch(/^protoc-gen-a2a upgrade: the repo's a2a\.proto \(.+ in a2a\.lock\.json\) could not be read: .+ is not a folder\nRun `protoc-gen-a2a pull` in the repo to restore it, then upgrade\.\n$/);
});

test("upgrade --json prints the report alone, so that it parses", async () => {
  const repo = join(scratch.dir, "json-upgrade");
  expect(await main(["pull", "v1.0.0", "--dir", repo], captureIo(scratch.dir, { A2A_SPEC_DIR: specDir }))).toBe(0);
  const io = captureIo(scratch.dir, { A2A_SPEC_DIR: specDir });
  expect(await main(["upgrade", "--to", "v1.0.1", "--dir", repo, "--json", "--no-generate"], io)).toBe(0);
  const report = JSON.parse(io.stdout.join("")) as { from?: string; to?: string };
  expect([report.from, report.to]).toEqual(["v1.0.0", "v1.0.1"]);
  expect(readLock(join(repo, "a2a.lock.json"))?.version).toBe("v1.0.1");
});

test("upgrade refuses a repo whose a2a.proto is not the version its lock records (edited by hand, or the lock relabelled), before anything changes", async () => {
  const repo = join(scratch.dir, "mislabelled");
  expect(await main(["pull", "v1.0.0", "--dir", repo], captureIo(scratch.dir, { A2A_SPEC_DIR: specDir }))).toBe(0);
  const lockFile = join(repo, "a2a.lock.json");
  const lock = readLock(lockFile)!;
  const protoFile = join(repo, lock.protoDir, "a2a.proto");
  const original = readFileSync(protoFile);

  writeFileSync(protoFile, Buffer.concat([original, Buffer.from("// edited\n")]));
  const edited = captureIo(scratch.dir, { A2A_SPEC_DIR: specDir });
  expect(await main(["upgrade", "--to", "v1.0.1", "--dir", repo, "--no-generate"], edited)).toBe(1);
  expect(edited.stderr.join("")).toContain(`is not the a2a.proto v1.0.0 that a2a.lock.json records`);
  writeFileSync(protoFile, original);

  writeFileSync(lockFile, JSON.stringify({ ...lock, version: "v1.0.1" }));
  const relabelled = captureIo(scratch.dir, { A2A_SPEC_DIR: specDir });
  expect(await main(["upgrade", "--to", "main", "--dir", repo, "--no-generate"], relabelled)).toBe(1);
  expect(relabelled.stderr.join("")).toContain("a2a.lock.json says v1.0.1, but its sha256 is not that version's");
  expect(readLock(lockFile)?.version).toBe("v1.0.1");
});

test("pull refuses an a2a.proto of another A2A line over the repo's, and writes nothing (D61)", async () => {
  const repo = join(scratch.dir, "other-line");
  expect(await main(["pull", "v1.0.0", "--dir", repo], captureIo(scratch.dir, { A2A_SPEC_DIR: specDir }))).toBe(0);
  const lockFile = join(repo, "a2a.lock.json");
  const lockBefore = readFileSync(lockFile);
  const protoFile = join(repo, readLock(lockFile)!.protoDir, "a2a.proto");
  const protoBefore = readFileSync(protoFile);
  const io = captureIo(scratch.dir, { A2A_SPEC_DIR: specDir });
  expect(await main(["pull", "v0.3.0", "--dir", repo], io)).toBe(1);
  expect(io.stderr.join("")).toBe(
    "protoc-gen-a2a pull: a2a.proto v0.3.0 is A2A 0.3 (package a2a.v1), another line than the repo's a2a.proto v1.0.0, A2A 1.x (package lf.a2a.v1); " +
      "regenerating from it would leave your handler without the API it implements. To answer 0.3 clients as well, keep this proto and serve with " +
      "`compat: { v0_3: true }` (D110). Pull a version of the repo's line (see `pull --list`). Nothing was changed.\n",
  );
  expect(readFileSync(lockFile)).toEqual(lockBefore);
  expect(readFileSync(protoFile)).toEqual(protoBefore);
  // The same line is still pulled over it.
  expect(await main(["pull", "v1.0.1", "--dir", repo], captureIo(scratch.dir, { A2A_SPEC_DIR: specDir }))).toBe(0);
  expect(readLock(lockFile)?.version).toBe("v1.0.1");
});

test("upgrade writes its edits and report before `buf generate`, so a generation that fails leaves only `npm run generate` to do", async () => {
  // A repo with a2a.proto but no buf.gen.yaml: the buf the project installed fails in it.
  const repo = join(scratch.dir, "generate-fails");
  expect(await main(["pull", "v1.0.0", "--dir", repo], captureIo(scratch.dir, { A2A_SPEC_DIR: specDir }))).toBe(0);
  const io = captureIo(scratch.dir, { A2A_SPEC_DIR: specDir });
  expect(await main(["upgrade", "--to", "v1.0.1", "--dir", repo], io)).toBe(1);
  expect(io.stdout.join("")).toContain("a2a.lock.json: v1.0.0 -> v1.0.1\n");
  expect(io.stderr.join("")).toMatch(/^protoc-gen-a2a upgrade: the new proto is in place, but `buf generate` failed:\n[^]+\nFix that and run `npm run generate`\.\n$/);
  expect(readLock(join(repo, "a2a.lock.json"))?.version).toBe("v1.0.1");
});
