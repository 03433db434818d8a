/**
 * The descriptors `upgrade` compares: a FileDescriptorSet of a proto folder
 * (a2a.proto and what it imports), built with the buf CLI, or one the caller
 * already has. Source info is kept: comment changes are part of the report.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fromBinary, isMessage } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema, type FileDescriptorSet } from "@bufbuild/protobuf/wkt";

/** Descriptors as the caller has them: a parsed set, its binary encoding, or proto folders to build. */
export type DescriptorSource =
  | { readonly descriptors: FileDescriptorSet | Uint8Array }
  | { readonly protoDir: string | readonly string[] };

/** Finds the buf binary: `$BUF`, else @bufbuild/buf as this package resolves it, else `buf` on PATH. */
export function findBuf(): string {
  const fromEnv = process.env["BUF"];
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  try {
    const require = createRequire(import.meta.url);
    const pkg = require.resolve("@bufbuild/buf/package.json");
    const bin = join(dirname(pkg), "bin", "buf");
    if (existsSync(bin)) return bin;
  } catch {
    // not installed beside us: fall through to PATH
  }
  return "buf";
}

/** Every `.proto` file below `dir`, as paths relative to it with `/`, sorted. */
function protoFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((p) => p.endsWith(".proto") && statSync(join(dir, p)).isFile())
    .map((p) => p.split(sep).join("/"))
    .sort();
}

/**
 * Builds the FileDescriptorSet of the `.proto` files under `roots` (import
 * roots, e.g. `vendor/a2a/v1.0.1` and `vendor/googleapis`, or one folder that
 * holds a2a.proto and google/api/). The files are copied into a scratch buf
 * module first, so a buf.yaml or buf.work.yaml around the folders (the user's
 * repo has one) cannot change what is built; a path in an earlier root wins
 * over the same path in a later one. About 0.2 s for a2a.proto.
 */
export function buildDescriptors(roots: string | readonly string[]): FileDescriptorSet {
  const list = typeof roots === "string" ? [roots] : roots;
  if (list.length === 0) throw new Error("buildDescriptors: no proto folder given");
  const work = mkdtempSync(join(tmpdir(), "a2a-upgrade-"));
  try {
    const seen = new Set<string>();
    for (const root of list) {
      const abs = resolve(root);
      if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new Error(`buildDescriptors: ${root} is not a folder`);
      for (const file of protoFiles(abs)) {
        if (seen.has(file)) continue;
        seen.add(file);
        mkdirSync(dirname(join(work, file)), { recursive: true });
        copyFileSync(join(abs, file), join(work, file));
      }
    }
    if (seen.size === 0) throw new Error(`buildDescriptors: no .proto file under ${list.join(", ")}`);
    writeFileSync(join(work, "buf.yaml"), "version: v2\n");
    let bytes: Buffer;
    try {
      bytes = execFileSync(findBuf(), ["build", "--as-file-descriptor-set", "-o", "-#format=binpb"], {
        cwd: work,
        stdio: ["ignore", "pipe", "pipe"],
        maxBuffer: 256 << 20,
      });
    } catch (err) {
      const e = err as { stderr?: Buffer; message: string };
      const detail = (e.stderr?.toString() ?? e.message).split(work + sep).join("").trim();
      throw new Error(`buf build failed for ${list.map((r) => relative(process.cwd(), resolve(r)) || ".").join(", ")}:\n${detail}`);
    }
    return fromBinary(FileDescriptorSetSchema, bytes);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The FileDescriptorSet of a source: parsed as given, decoded, or built. */
export function loadDescriptors(source: DescriptorSource): FileDescriptorSet {
  if ("protoDir" in source) return buildDescriptors(source.protoDir);
  const d = source.descriptors;
  if (isMessage(d, FileDescriptorSetSchema)) return d;
  return fromBinary(FileDescriptorSetSchema, d);
}
