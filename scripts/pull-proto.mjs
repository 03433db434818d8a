#!/usr/bin/env node
// Pulls the pinned versions of a2a.proto, and the googleapis protos it imports,
// into the ignored vendor/ folder. a2a.proto is never committed to this repo:
// it is taken by version and checked against the sha256 in proto/a2a-versions.json.
//
// Usage: node scripts/pull-proto.mjs [version ...]   (default: every pinned version)
//
// Where a2a.proto comes from, first match wins:
//   1. $A2A_SPEC_DIR, a folder laid out as <version>/a2a.proto
//   2. ../shared/a2a-spec beside the project root, same layout
//      ($A2A_SHARED_SPEC_DIR overrides where that is)
//   3. a shallow git fetch of the pinned ref (tag, or commit for main) from the
//      upstream repository ($A2A_SPEC_GIT_URL overrides the pin's repository);
//      the sha256 check is what vouches for the bytes, whatever the source
// The version named by $A2A_VERSION (else the pin's default) is also written to
// vendor/a2a/current/, the module buf.yaml builds.
// $A2A_VENDOR_DIR moves the output folder (tests use it).

import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const pin = JSON.parse(readFileSync(join(root, "proto/a2a-versions.json"), "utf8"));
const vendor = resolve(process.env.A2A_VENDOR_DIR ?? join(root, "vendor"));

function sha256(bytes) {
  return createHash("sha256").update(bytes).digest("hex");
}

function fail(message) {
  process.stderr.write(`pull-proto: ${message}\n`);
  process.exit(1);
}

/** Returns the bytes of a2a.proto at `version` and a description of where they came from. */
function fetchProto(version, entry) {
  const shared = process.env.A2A_SHARED_SPEC_DIR ?? join(root, "../shared/a2a-spec");
  const folders = [process.env.A2A_SPEC_DIR, shared].filter(Boolean);
  for (const folder of folders) {
    const file = resolve(folder, version, "a2a.proto");
    if (existsSync(file)) return { bytes: readFileSync(file), from: file };
  }
  const url = process.env.A2A_SPEC_GIT_URL ?? pin.repository;
  const work = mkdtempSync(join(tmpdir(), "a2a-spec-"));
  try {
    const git = (...args) => execFileSync("git", args, { cwd: work, stdio: ["ignore", "ignore", "pipe"] });
    git("init", "-q");
    git("fetch", "-q", "--depth", "1", url, entry.ref);
    const bytes = execFileSync("git", ["show", `FETCH_HEAD:${entry.path}`], { cwd: work, maxBuffer: 64 << 20 });
    return { bytes, from: `${url} ${entry.ref} (${entry.commit}) ${entry.path}` };
  } catch (err) {
    const detail = err.stderr?.toString().trim() || err.message;
    fail(
      `cannot find a2a.proto ${version}: not in ${folders.map((f) => resolve(f, version)).join(" or ")}, ` +
        `and git could not fetch it from ${url}: ${detail}\n` +
        `Set A2A_SPEC_DIR to a folder that holds ${version}/a2a.proto.`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function writeIfChanged(file, bytes) {
  if (existsSync(file) && readFileSync(file).equals(bytes)) return;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, bytes);
}

function pullVersion(version) {
  const entry = pin.versions[version];
  if (!entry) fail(`unknown version "${version}"; pinned versions: ${Object.keys(pin.versions).join(", ")}`);
  // Already pulled and intact: no folder lookup, no network.
  const pulled = join(vendor, "a2a", version, "a2a.proto");
  if (existsSync(pulled)) {
    const bytes = readFileSync(pulled);
    if (sha256(bytes) === entry.sha256) return bytes;
  }
  const { bytes, from } = fetchProto(version, entry);
  const actual = sha256(bytes);
  if (actual !== entry.sha256) {
    fail(
      `checksum mismatch for ${from} (a2a.proto ${version}):\n` +
        `  expected sha256 ${entry.sha256} (proto/a2a-versions.json)\n` +
        `  actual   sha256 ${actual}`,
    );
  }
  writeIfChanged(join(vendor, "a2a", version, "a2a.proto"), bytes);
  return bytes;
}

function pullGoogleapis() {
  const require = createRequire(join(root, "package.json"));
  const pkgRoot = dirname(require.resolve(`${pin.googleapis.package}/package.json`));
  for (const file of pin.googleapis.files) {
    const source = join(pkgRoot, file);
    if (!existsSync(source)) fail(`${pin.googleapis.package} has no ${file}`);
    writeIfChanged(join(vendor, "googleapis", file), readFileSync(source));
  }
}

const requested = process.argv.slice(2);
const versions = requested.length > 0 ? requested : Object.keys(pin.versions);
const current = process.env.A2A_VERSION || pin.default;
if (!pin.versions[current]) {
  fail(`A2A_VERSION="${current}" is not pinned; pinned versions: ${Object.keys(pin.versions).join(", ")}`);
}
if (!versions.includes(current)) versions.push(current);

for (const version of versions) {
  const bytes = pullVersion(version);
  if (version === current) writeIfChanged(join(vendor, "a2a", "current", "a2a.proto"), bytes);
}
pullGoogleapis();
process.stdout.write(`pull-proto: a2a.proto ${versions.join(", ")} in ${vendor}/a2a (current: ${current})\n`);

