#!/usr/bin/env node
// Regenerates runtime/gen/a2a/v0_3/a2a_pb.ts: the message types and the
// A2AService descriptor of A2A v0.3.0's a2a.proto (package a2a.v1), which the
// runtime's 0.3 gRPC service is served with (D113). Output is committed, as
// runtime/gen/google is; run `npm run gen:a2a-v03` after the v0.3.0 pin moves.
//
// The proto is the one `npm run pull-proto` put in vendor/a2a/v0.3.0 (checked
// against its pinned sha256), placed at a2a/v0_3/a2a.proto so its descriptor
// never shares a file name with 1.0's a2a.proto in one registry. It is built
// with --exclude-source-info, so the generated file carries the schema and no
// comment of the proto's.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const buf = join(root, "node_modules/.bin/buf");
const work = mkdtempSync(join(tmpdir(), "a2a-v03-"));
try {
  mkdirSync(join(work, "a2a-v03/a2a/v0_3"), { recursive: true });
  cpSync(join(root, "vendor/a2a/v0.3.0/a2a.proto"), join(work, "a2a-v03/a2a/v0_3/a2a.proto"));
  cpSync(join(root, "vendor/googleapis"), join(work, "googleapis"), { recursive: true });
  writeFileSync(join(work, "buf.yaml"), "version: v2\nmodules:\n  - path: a2a-v03\n  - path: googleapis\n");
  const image = join(work, "image.binpb");
  execFileSync(buf, ["build", work, "--path", join(work, "a2a-v03/a2a/v0_3/a2a.proto"), "--exclude-source-info", "-o", image], { stdio: "inherit" });
  const template = {
    version: "v2",
    plugins: [{ local: ["node", join(root, "node_modules/@bufbuild/protoc-gen-es/bin/protoc-gen-es")], out: join(root, "runtime/gen"), opt: ["target=ts", "import_extension=js"] }],
  };
  execFileSync(buf, ["generate", image, "--template", JSON.stringify(template)], { stdio: "inherit", cwd: root });
  process.stdout.write("gen-a2a-v03: runtime/gen/a2a/v0_3/a2a_pb.ts\n");
} finally {
  rmSync(work, { recursive: true, force: true });
}
