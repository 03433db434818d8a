/**
 * The pull step: a2a.proto comes by version from a local folder or git, and
 * nothing with the wrong checksum ever reaches vendor/.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot, scratchDir } from "../support/protos.js";

const pin = JSON.parse(readFileSync(join(projectRoot, "proto/a2a-versions.json"), "utf8")) as {
  default: string;
  versions: Record<string, { sha256: string }>;
};
const realProto = readFileSync(join(projectRoot, "vendor/a2a/v1.0.1/a2a.proto"));
const scratch = scratchDir("pull");
afterAll(() => scratch.done());

function pull(env: Record<string, string>, ...versions: string[]) {
  return spawnSync("node", [join(projectRoot, "scripts/pull-proto.mjs"), ...versions], {
    env: { ...process.env, A2A_VERSION: "", ...env },
    encoding: "utf8",
  });
}

function specDir(name: string, bytes: Buffer): string {
  const dir = join(scratch.dir, name);
  mkdirSync(join(dir, "v1.0.1"), { recursive: true });
  writeFileSync(join(dir, "v1.0.1", "a2a.proto"), bytes);
  return dir;
}

test("the pin names the four known versions with v1.0.1 as default", () => {
  expect(Object.keys(pin.versions).sort()).toEqual(["main", "v0.3.0", "v1.0.0", "v1.0.1"]);
  expect(pin.default).toBe("v1.0.1");
});

test("a folder named by A2A_SPEC_DIR is used first, and the default version becomes current", () => {
  const vendor = join(scratch.dir, "vendor-ok");
  const result = pull({ A2A_SPEC_DIR: specDir("spec-ok", realProto), A2A_VENDOR_DIR: vendor }, "v1.0.1");
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  expect(readFileSync(join(vendor, "a2a/v1.0.1/a2a.proto"))).toEqual(realProto);
  expect(readFileSync(join(vendor, "a2a/current/a2a.proto"))).toEqual(realProto);
  expect(existsSync(join(vendor, "googleapis/google/api/http.proto"))).toBe(true);
  expect(existsSync(join(vendor, "googleapis/google/rpc/status.proto"))).toBe(true);
});

test("a wrong checksum stops with a message naming the file and both sums, and writes nothing", () => {
  const tampered = Buffer.concat([realProto, Buffer.from("\n// tampered\n")]);
  const dir = specDir("spec-bad", tampered);
  const vendor = join(scratch.dir, "vendor-bad");
  const result = pull({ A2A_SPEC_DIR: dir, A2A_VENDOR_DIR: vendor }, "v1.0.1");
  expect(result.status).toBe(1);
  const actual = execFileSync("sha256sum", [join(dir, "v1.0.1/a2a.proto")], { encoding: "utf8" }).split(" ")[0];
  expect(result.stderr).toBe(
    `pull-proto: checksum mismatch for ${join(dir, "v1.0.1/a2a.proto")} (a2a.proto v1.0.1):\n` +
      `  expected sha256 ${pin.versions["v1.0.1"]?.sha256} (proto/a2a-versions.json)\n` +
      `  actual   sha256 ${actual}\n`,
  );
  expect(existsSync(join(vendor, "a2a/v1.0.1/a2a.proto"))).toBe(false);
});

test("an unknown version is refused with the list of pinned ones", () => {
  const result = pull({ A2A_VENDOR_DIR: join(scratch.dir, "vendor-unknown") }, "v9.9.9");
  expect(result.status).toBe(1);
  expect(result.stderr).toBe('pull-proto: unknown version "v9.9.9"; pinned versions: v0.3.0, v1.0.0, v1.0.1, main\n');
});

test("without a local folder the proto is fetched from git by its pinned ref", () => {
  // A local repository standing in for upstream, with the real file at the pinned path and tag.
  const repo = join(scratch.dir, "upstream");
  mkdirSync(join(repo, "specification"), { recursive: true });
  writeFileSync(join(repo, "specification/a2a.proto"), realProto);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "ignore" });
  git("init", "-q");
  git("add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "spec");
  git("tag", "v1.0.1");
  const vendor = join(scratch.dir, "vendor-git");
  const result = pull(
    {
      A2A_SPEC_DIR: join(scratch.dir, "nowhere"),
      A2A_SHARED_SPEC_DIR: join(scratch.dir, "nowhere"),
      A2A_SPEC_GIT_URL: repo,
      A2A_VENDOR_DIR: vendor,
    },
    "v1.0.1",
  );
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  expect(readFileSync(join(vendor, "a2a/v1.0.1/a2a.proto"))).toEqual(realProto);
});

test("when git cannot fetch either, the message says where it looked and what to set", () => {
  const result = pull(
    {
      A2A_SPEC_DIR: join(scratch.dir, "nowhere"),
      A2A_SHARED_SPEC_DIR: join(scratch.dir, "nowhere"),
      A2A_SPEC_GIT_URL: join(scratch.dir, "no-such-repo"),
      A2A_VENDOR_DIR: join(scratch.dir, "vendor-none"),
    },
    "v1.0.1",
  );
  expect(result.status).toBe(1);
  expect(result.stderr).toContain("pull-proto: cannot find a2a.proto v1.0.1: not in ");
  expect(result.stderr).toContain(`git could not fetch it from ${join(scratch.dir, "no-such-repo")}`);
  expect(result.stderr).toContain("Set A2A_SPEC_DIR to a folder that holds v1.0.1/a2a.proto.");
});
