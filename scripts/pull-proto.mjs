#!/usr/bin/env node
// Pulls the pinned versions of a2a.proto, and the googleapis protos it imports,
// into the ignored vendor/ folder. a2a.proto is never committed to this repo:
// it is taken by version and checked against the sha256 in proto/a2a-versions.json.
// The work is the CLI's `pullProto` (cli/pull.ts, run from dist/: `npm run
// pull-proto` builds first), the same code an agent repo's `protoc-gen-a2a pull` runs.
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

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const built = join(root, "dist/cli/pull.js");
if (!existsSync(built)) {
  process.stderr.write(`pull-proto: ${built} is missing; run \`npm run build\` first (\`npm run pull-proto\` does)\n`);
  process.exit(1);
}
const { pullProto, writeIfChanged } = await import(built);
const pin = JSON.parse(readFileSync(join(root, "proto/a2a-versions.json"), "utf8"));
const vendor = resolve(process.env.A2A_VENDOR_DIR ?? join(root, "vendor"));
const specDirs = [process.env.A2A_SPEC_DIR, process.env.A2A_SHARED_SPEC_DIR ?? join(root, "../shared/a2a-spec")].filter(Boolean);

function fail(message) {
  process.stderr.write(`pull-proto: ${message}\n`);
  process.exit(1);
}

const requested = process.argv.slice(2);
const versions = requested.length > 0 ? requested : Object.keys(pin.versions);
const current = process.env.A2A_VERSION || pin.default;
if (!pin.versions[current]) {
  fail(`A2A_VERSION="${current}" is not pinned; pinned versions: ${Object.keys(pin.versions).join(", ")}`);
}
if (!versions.includes(current)) versions.push(current);

try {
  for (const version of versions) {
    const protoDir = join(vendor, "a2a", version);
    pullProto({
      version,
      protoDir,
      googleapisDir: join(vendor, "googleapis"),
      specDirs,
      ...(process.env.A2A_SPEC_GIT_URL ? { gitUrl: process.env.A2A_SPEC_GIT_URL } : {}),
    });
    if (version === current) writeIfChanged(join(vendor, "a2a", "current", "a2a.proto"), readFileSync(join(protoDir, "a2a.proto")));
  }
} catch (err) {
  if (err?.name === "CliError") fail(err.message);
  throw err;
}
process.stdout.write(`pull-proto: a2a.proto ${versions.join(", ")} in ${vendor}/a2a (current: ${current})\n`);
