/**
 * Pulls a2a.proto at a pinned version, and the googleapis protos it imports,
 * into a folder: one implementation for the project's own `npm run
 * pull-proto` (scripts/pull-proto.mjs) and the CLI's `pull` (and `init`,
 * and `upgrade`, which call `pullProto`; D41). a2a.proto is taken by version and
 * checked against the sha256 of proto/a2a-versions.json, whatever its source:
 *
 *   1. each of `specDirs` (laid out as `<version>/a2a.proto`) that has it;
 *   2. a shallow git fetch of the pinned ref (tag, or commit for main) from
 *      `gitUrl` (the pin's repository by default).
 *
 * The googleapis protos come from the npm package google-proto-files, a
 * dependency of this package: no network beyond npm.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { CliError } from "./errors.js";
import { packageRoot } from "./package-root.js";
import { pinnedVersion, pinPath, readPin, type Pin, type PinnedVersion } from "./pin.js";

export interface PullOptions {
  /** A pinned version (`v1.0.1`, `main`, ...); default the pin's default. */
  readonly version?: string;
  /** Where a2a.proto is written (as `<protoDir>/a2a.proto`). */
  readonly protoDir: string;
  /** Where the googleapis protos are written (as `<googleapisDir>/google/api/...`); default `protoDir`. */
  readonly googleapisDir?: string;
  /** Called with the checked a2a.proto before anything is written; it throws to refuse it. */
  readonly accept?: (proto: Uint8Array, version: string) => void;
  /** Local folders laid out as `<version>/a2a.proto`, tried in order before git. */
  readonly specDirs?: readonly string[];
  /** The repository git fetches the pinned ref from; default the pin's. */
  readonly gitUrl?: string;
  /** A lock file recording what was pulled (see `PullLock`); none when left out. */
  readonly lockFile?: string;
}

export interface PullResult {
  readonly version: string;
  readonly sha256: string;
  /** Where a2a.proto's bytes came from: a file, a git ref, or the copy already in place. */
  readonly from: string;
  /** Every file written or found intact, a2a.proto first. */
  readonly files: readonly string[];
}

/** The lock file: what `pull` wrote, read back by `pull` (its default version) and `upgrade`. */
export interface PullLock {
  /** The a2a.proto version pulled. */
  readonly version: string;
  readonly sha256: string;
  /** Folders relative to the lock file's. */
  readonly protoDir: string;
  readonly googleapisDir: string;
}

/** The lock file's name in an agent repo. */
export const lockFileName = "a2a.lock.json";

export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Reads a lock file; undefined when there is none. */
export function readLock(file: string): PullLock | undefined {
  if (!existsSync(file)) return undefined;
  let lock: Partial<PullLock>;
  try {
    lock = JSON.parse(readFileSync(file, "utf8")) as Partial<PullLock>;
  } catch (err) {
    throw new CliError(`${file} is not JSON (${(err as Error).message}); delete it and pull again`);
  }
  if (typeof lock !== "object" || lock === null || Array.isArray(lock)) throw new CliError(`${file} is not a JSON object; delete it and pull again`);
  for (const key of ["version", "sha256", "protoDir", "googleapisDir"] as const) {
    if (typeof lock[key] !== "string") throw new CliError(`${file} has no "${key}"; delete it and pull again`);
  }
  return lock as PullLock;
}

export function pullProto(options: PullOptions): PullResult {
  const pin = readPin();
  const version = options.version ?? pin.default;
  const entry = pinnedVersion(pin, version);
  const protoFile = join(options.protoDir, "a2a.proto");
  let from = `${protoFile} (already in place)`;
  // Already pulled and intact: no folder lookup, no network.
  const inPlace = existsSync(protoFile) ? readFileSync(protoFile) : undefined;
  let bytes: Uint8Array;
  if (inPlace !== undefined && sha256(inPlace) === entry.sha256) {
    bytes = inPlace;
  } else {
    const fetched = fetchProto(pin, version, entry, options);
    const actual = sha256(fetched.bytes);
    if (actual !== entry.sha256) {
      throw new CliError(
        `checksum mismatch for ${fetched.from} (a2a.proto ${version}):\n` +
          `  expected sha256 ${entry.sha256} (${pinPath})\n` +
          `  actual   sha256 ${actual}`,
      );
    }
    bytes = fetched.bytes;
    from = fetched.from;
  }
  options.accept?.(bytes, version);
  writeIfChanged(protoFile, bytes);
  const googleapisDir = options.googleapisDir ?? options.protoDir;
  const files = [protoFile, ...pullGoogleapis(pin, googleapisDir)];
  if (options.lockFile !== undefined) {
    const base = dirname(resolve(options.lockFile));
    const lock: PullLock = {
      version,
      sha256: entry.sha256,
      protoDir: relative(base, resolve(options.protoDir)) || ".",
      googleapisDir: relative(base, resolve(googleapisDir)) || ".",
    };
    writeIfChanged(options.lockFile, Buffer.from(`${JSON.stringify(lock, null, 2)}\n`));
  }
  return { version, sha256: entry.sha256, from, files };
}

function fetchProto(pin: Pin, version: string, entry: PinnedVersion, options: PullOptions): { bytes: Buffer; from: string } {
  const folders = options.specDirs ?? [];
  for (const folder of folders) {
    const file = resolve(folder, version, "a2a.proto");
    if (existsSync(file)) return { bytes: readFileSync(file), from: file };
  }
  const url = options.gitUrl ?? pin.repository;
  const work = mkdtempSync(join(tmpdir(), "a2a-spec-"));
  try {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: work, stdio: ["ignore", "ignore", "pipe"] });
    git("init", "-q");
    git("fetch", "-q", "--depth", "1", url, entry.ref);
    const bytes = execFileSync("git", ["show", `FETCH_HEAD:${entry.path}`], { cwd: work, maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "pipe"] });
    return { bytes, from: `${url} ${entry.ref} (${entry.commit}) ${entry.path}` };
  } catch (err) {
    const detail = (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
    const looked = folders.length === 0 ? "no local folder was given" : `not in ${folders.map((f) => resolve(f, version)).join(" or ")}`;
    throw new CliError(
      `cannot find a2a.proto ${version}: ${looked}, and git could not fetch it from ${url}: ${detail}\n` +
        `Set A2A_SPEC_DIR to a folder that holds ${version}/a2a.proto.`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function pullGoogleapis(pin: Pin, dir: string): string[] {
  const require = createRequire(join(packageRoot(), "package.json"));
  let pkgRoot: string;
  try {
    pkgRoot = dirname(require.resolve(`${pin.googleapis.package}/package.json`));
  } catch {
    throw new CliError(`cannot find the npm package ${pin.googleapis.package} beside protoc-gen-a2a; reinstall protoc-gen-a2a (it is a dependency)`);
  }
  return pin.googleapis.files.map((file) => {
    const source = join(pkgRoot, file);
    if (!existsSync(source)) throw new CliError(`${pin.googleapis.package} has no ${file}`);
    const target = join(dir, file);
    writeIfChanged(target, readFileSync(source));
    return target;
  });
}

export function writeIfChanged(file: string, bytes: Uint8Array): void {
  if (existsSync(file) && readFileSync(file).equals(bytes)) return;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, bytes);
}
