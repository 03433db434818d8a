/**
 * `protoc-gen-a2a upgrade --to <version>`: moves an agent repo to another
 * pinned a2a.proto. The new proto is pulled into a scratch folder first and
 * compared with the repo's (cli/upgrade/, D60 to D63), so a proto that is
 * refused (another major line, D61) changes nothing; then it replaces the
 * repo's, the handler edits are written, and the code is regenerated
 * (`buf generate`).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { CommandSpec, ParsedArgs } from "./args.js";
import { CliError, UsageError } from "./errors.js";
import type { CliIo } from "./io.js";
import { pullIntoRepo } from "./pull-command.js";
import { pinnedVersion, readPin } from "./pin.js";
import { lockFileName, pullProto, readLock, sha256 } from "./pull.js";

export const upgradeSpec: CommandSpec = {
  name: "upgrade",
  summary: "Move the repo to another pinned a2a.proto: a report of what changed, regenerated code, stubs for new RPCs",
  positionals: [],
  options: {
    to: { type: "string", value: "<version>", description: "The pinned version to move to (see `pull --list`)" },
    dir: { type: "string", value: "<dir>", description: "The agent repo", default: "." },
    "spec-dir": { type: "string", value: "<dir>", description: "A folder laid out as <version>/a2a.proto, tried before $A2A_SPEC_DIR and git" },
    "dry-run": { type: "boolean", description: "Print the report and what would be edited; change nothing" },
    json: { type: "boolean", description: "Print the report as JSON instead of text" },
    "no-generate": { type: "boolean", description: "Do not run `buf generate` after pulling" },
  },
  details:
    `Compares the repo's a2a.proto (as ${lockFileName} records it) with the one of --to, prints which RPCs, fields,\n` +
    "enum values, oneofs, field behaviours and HTTP rules were added, removed, renamed or changed, and whom each\n" +
    "change breaks (servers, clients). Then it pulls the new proto, regenerates with `buf generate`, adds a typed\n" +
    "stub throwing UnsupportedOperationError for each new RPC to a handler written by hand, and marks removed ones\n" +
    "with a comment; no other line of your code changes. An agent on the task runtime needs no stubs. A proto of\n" +
    "another A2A major line (v0.3.0) is refused before anything is written.",
};

export async function runUpgrade(args: ParsedArgs, io: CliIo): Promise<void> {
  const to = args.strings.to;
  if (to === undefined) throw new UsageError("say which version to move to, e.g. --to v1.0.1 (see `protoc-gen-a2a pull --list`)");
  const dir = resolve(io.cwd, args.strings.dir ?? ".");
  const lock = readLock(join(dir, lockFileName));
  if (lock === undefined) throw new CliError(`${join(dir, lockFileName)} not found: run \`protoc-gen-a2a pull\` in the repo first`);
  const specDir = args.strings["spec-dir"] === undefined ? undefined : resolve(io.cwd, args.strings["spec-dir"]);
  const specDirs = [specDir, io.env.A2A_SPEC_DIR].filter((d): d is string => d !== undefined && d !== "");
  const gitUrl = io.env.A2A_SPEC_GIT_URL;
  const dryRun = args.flags["dry-run"] === true;
  const protoDir = resolve(dir, lock.protoDir);
  const googleapisDir = resolve(dir, lock.googleapisDir);
  // The report names the version the lock records: the repo's a2a.proto must be that version's bytes,
  // or it would call the diff of a hand-edited or relabelled proto "v1.0.0 -> v1.0.1".
  const protoFile = join(protoDir, "a2a.proto");
  const actual = existsSync(protoFile) ? sha256(readFileSync(protoFile)) : undefined;
  if (actual !== undefined && actual !== lock.sha256) {
    throw new CliError(`${protoFile} is not the a2a.proto ${lock.version} that ${lockFileName} records (sha256 ${actual}, the lock says ${lock.sha256}); run \`protoc-gen-a2a pull ${lock.version}\` to restore it, then upgrade`);
  }
  if (actual !== undefined && pinnedVersion(readPin(), lock.version).sha256 !== lock.sha256) {
    throw new CliError(`${lockFileName} says ${lock.version}, but its sha256 is not that version's; run \`protoc-gen-a2a pull\` with the version the repo is on, then upgrade`);
  }

  // The library (and ts-morph, if edits are needed) only now: `--help` and mistakes above load nothing.
  const { buildDescriptors, runUpgrade: upgrade } = await import("./upgrade/index.js");
  let oldDescriptors: ReturnType<typeof buildDescriptors>;
  try {
    oldDescriptors = buildDescriptors([protoDir, googleapisDir]);
  } catch (err) {
    // The repo's own protos, as its lock names them: missing, or not building, is the repo's to fix.
    throw new CliError(`the repo's a2a.proto (${lock.protoDir}, ${lock.googleapisDir} in ${lockFileName}) could not be read: ${(err as Error).message.replace(/^buildDescriptors: /, "")}
Run \`protoc-gen-a2a pull\` in the repo to restore it, then upgrade.`);
  }
  const scratch = mkdtempSync(join(tmpdir(), "a2a-upgrade-"));
  try {
    const pulled = pullProto({ version: to, protoDir: join(scratch, "a2a"), googleapisDir: join(scratch, "googleapis"), specDirs, ...(gitUrl ? { gitUrl } : {}) });
    const newProtoDir = [join(scratch, "a2a"), join(scratch, "googleapis")];
    const refusedAsCliError = (err: unknown): never => {
      // A refused proto and a missing ts-morph say what to do: printed as they are, without a stack.
      if (err instanceof Error && (err.name === "UpgradeRefusedError" || err.name === "TsMorphMissingError")) throw new CliError(err.message);
      throw err;
    };
    const print = (result: { readonly text: string; readonly jsonText: string }) =>
      io.out(args.flags.json === true ? `${result.jsonText}\n` : result.text.endsWith("\n") ? result.text : `${result.text}\n`);
    // First without writing: a refused proto, or edits that cannot be made, stop it before the repo changes at all.
    const planned = await upgrade({ repoDir: dir, oldDescriptors, newProtoDir, from: lock.version, to: pulled.version, dryRun: true }).catch(refusedAsCliError);
    if (dryRun) {
      print(planned);
      return;
    }
    pullIntoRepo({ dir, version: pulled.version, ...(specDir === undefined ? {} : { specDir }), env: io.env });
    // The handler edits before `buf generate`: they read the user's code, not the generated code, so a
    // generation that fails (the user fixes it and runs `npm run generate`) leaves nothing undone.
    const done = await upgrade({ repoDir: dir, oldDescriptors, newProtoDir, from: lock.version, to: pulled.version }).catch(refusedAsCliError);
    print(done);
    // --json prints the report alone, so that it parses.
    if (args.flags.json !== true) io.out(`${lockFileName}: ${lock.version} -> ${pulled.version}\n`);
    if (args.flags["no-generate"] !== true) generate(dir);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** `buf generate` in the repo, with the buf the repo installed (the one its own scripts run). */
function generate(dir: string): void {
  try {
    execFileSync("npx", ["--no-install", "buf", "generate"], { cwd: dir, stdio: ["ignore", "inherit", "pipe"] });
  } catch (err) {
    const detail = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new CliError(`the new proto is in place, but \`buf generate\` failed${detail ? `:\n${detail}` : ""}\nFix that and run \`npm run generate\`.`);
  }
}
