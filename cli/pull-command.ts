/** `protoc-gen-a2a pull [version]`: a2a.proto and its googleapis imports into an agent repo. */
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { CommandSpec, ParsedArgs } from "./args.js";
import { CliError } from "./errors.js";
import type { CliIo } from "./io.js";
import { readPin } from "./pin.js";
import { lockFileName, pullProto, readLock, type PullLock, type PullResult } from "./pull.js";
import { a2aLineOfPackage } from "./upgrade/line.js";

export const defaultProtoDir = "proto/a2a";
export const defaultGoogleapisDir = "proto/googleapis";

export const pullSpec: CommandSpec = {
  name: "pull",
  summary: "Pull a2a.proto at a pinned version, and the googleapis protos it imports, into the repo",
  positionals: [{ name: "version", description: `a pinned version (see --list); default the one in ${lockFileName}, else the pin's default`, required: false }],
  options: {
    dir: { type: "string", value: "<dir>", description: "The agent repo", default: "." },
    "proto-dir": { type: "string", value: "<dir>", description: `Where a2a.proto goes, in the repo [default: the lock's, else ${defaultProtoDir}]` },
    "googleapis-dir": { type: "string", value: "<dir>", description: `Where google/api/*.proto go [default: the lock's, else ${defaultGoogleapisDir}]` },
    "spec-dir": { type: "string", value: "<dir>", description: "A folder laid out as <version>/a2a.proto, tried before $A2A_SPEC_DIR and git" },
    list: { type: "boolean", description: "List the pinned versions and exit" },
  },
  details:
    "Writes a2a.proto, checked against its pinned sha256, and the google/api and google/rpc protos it imports (from\n" +
    `the npm package google-proto-files) into the repo's proto folders, and records the version in ${lockFileName}.\n` +
    "a2a.proto comes from --spec-dir, else $A2A_SPEC_DIR (same layout), else a shallow git fetch of the pinned tag\n" +
    "from the upstream repository ($A2A_SPEC_GIT_URL overrides it). Whatever the source, a file whose sha256 is not\n" +
    "the pinned one is refused and nothing is written.",
};

export interface RepoPullOptions {
  /** The agent repo. */
  readonly dir: string;
  readonly version?: string;
  readonly protoDir?: string;
  readonly googleapisDir?: string;
  readonly specDir?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** `pull` in an agent repo: the lock's folders and version unless told otherwise, sources from options and env. */
export function pullIntoRepo(options: RepoPullOptions): PullResult {
  const lockFile = join(options.dir, lockFileName);
  const lock = readLock(lockFile);
  const specDirs = [options.specDir, options.env.A2A_SPEC_DIR].filter((d): d is string => d !== undefined && d !== "");
  const gitUrl = options.env.A2A_SPEC_GIT_URL;
  const version = options.version ?? lock?.version;
  return pullProto({
    ...(version === undefined ? {} : { version }),
    protoDir: resolve(options.dir, options.protoDir ?? lock?.protoDir ?? defaultProtoDir),
    googleapisDir: resolve(options.dir, options.googleapisDir ?? lock?.googleapisDir ?? defaultGoogleapisDir),
    specDirs,
    ...(gitUrl === undefined || gitUrl === "" ? {} : { gitUrl }),
    lockFile,
    accept: (proto, pulled) => sameLine(options.dir, lock, proto, pulled),
  });
}

/** The package an a2a.proto declares. */
function packageOf(proto: Uint8Array | string): string {
  return /^\s*package\s+([A-Za-z_][\w.]*)\s*;/m.exec(typeof proto === "string" ? proto : Buffer.from(proto).toString("utf8"))?.[1] ?? "";
}

/**
 * A repo's a2a.proto is replaced only by one of the same A2A line (D61): a 0.3 proto over a 1.x one
 * would regenerate the agent as a plain service that no longer compiles against its handler.
 */
function sameLine(dir: string, lock: PullLock | undefined, proto: Uint8Array, version: string): void {
  if (lock === undefined) return;
  const repoFile = resolve(dir, lock.protoDir, "a2a.proto");
  if (!existsSync(repoFile)) return;
  const was = a2aLineOfPackage(packageOf(readFileSync(repoFile, "utf8")));
  const now = a2aLineOfPackage(packageOf(proto));
  if (was === undefined || was.line === now?.line) return;
  const nowText = now === undefined ? "not an A2A proto" : `A2A ${now.line} (package ${now.package})`;
  throw new CliError(
    `a2a.proto ${version} is ${nowText}, another line than the repo's a2a.proto ${lock.version}, A2A ${was.line} (package ${was.package}); ` +
      `regenerating from it would leave your handler without the API it implements. ` +
      (now?.line === "0.3" ? "To answer 0.3 clients as well, keep this proto and serve with `compat: { v0_3: true }` (D110). " : "") +
      "Pull a version of the repo's line (see `pull --list`). Nothing was changed.",
  );
}

export async function runPull(args: ParsedArgs, io: CliIo): Promise<void> {
  if (args.flags.list === true) {
    const pin = readPin();
    for (const [version, entry] of Object.entries(pin.versions)) {
      io.out(`${version}${version === pin.default ? " (default)" : ""}  ${entry.ref === version ? "" : `${entry.ref.slice(0, 12)} `}sha256 ${entry.sha256}\n`);
    }
    return;
  }
  const dir = resolve(io.cwd, args.strings.dir ?? ".");
  const result = pullIntoRepo({
    dir,
    ...optional("version", args.positionals[0]),
    ...optional("protoDir", args.strings["proto-dir"]),
    ...optional("googleapisDir", args.strings["googleapis-dir"]),
    ...optional("specDir", args.strings["spec-dir"] === undefined ? undefined : resolve(io.cwd, args.strings["spec-dir"])),
    env: io.env,
  });
  const [proto, ...imports] = result.files.map((f) => relative(dir, f));
  io.out(`a2a.proto ${result.version} (sha256 ${result.sha256}) from ${result.from}\n`);
  io.out(`  wrote ${proto}, ${imports.length} googleapis protos, ${lockFileName}\n`);
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}
