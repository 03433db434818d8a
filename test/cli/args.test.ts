/**
 * The CLI's command lines: node's parseArgs underneath, each command's help
 * printed from the table the parser reads, and errors that name what to fix.
 */
import { commandHelp, parseCommand, type CommandSpec } from "../../cli/args.js";
import { UsageError } from "../../cli/errors.js";
import { main, programHelp } from "../../cli/main.js";
import { packageManifest } from "../../cli/package-root.js";
import { captureIo } from "./io.js";

const spec: CommandSpec = {
  name: "demo",
  summary: "A demo command",
  positionals: [
    { name: "dir", description: "where", required: true },
    { name: "extra", description: "more", required: false },
  ],
  options: {
    store: { type: "string", value: "<kind>", description: "The store", choices: ["memory"], default: "memory" },
    name: { type: "string", short: "n", description: "A name" },
    grpc: { type: "boolean", negatable: true, description: "Without gRPC" },
    force: { type: "boolean", description: "Overwrite" },
  },
};

function usageError(argv: string[]): string {
  try {
    parseCommand(spec, argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`parsed: ${argv.join(" ")}`);
}

test("options, defaults, negatable booleans and positionals", () => {
  expect(parseCommand(spec, ["out"])).toEqual({
    positionals: ["out"],
    strings: { store: "memory", name: undefined },
    flags: { grpc: true, force: false },
    help: false,
  });
  expect(parseCommand(spec, ["-n", "x", "--no-grpc", "out", "--force", "more", "--store=memory"])).toEqual({
    positionals: ["out", "more"],
    strings: { store: "memory", name: "x" },
    flags: { grpc: false, force: true },
    help: false,
  });
});

test("--help needs no positionals", () => {
  expect(parseCommand(spec, ["--help"]).help).toBe(true);
  expect(parseCommand(spec, ["-h"]).help).toBe(true);
});

test("errors name the option or argument to fix", () => {
  expect(usageError(["out", "--bogus"])).toBe("protoc-gen-a2a demo: Unknown option '--bogus'\nRun `protoc-gen-a2a demo --help` for its options.");
  expect(usageError(["out", "--store", "redis"])).toBe('protoc-gen-a2a demo: --store must be one of memory, not "redis"');
  expect(usageError([])).toBe("protoc-gen-a2a demo: missing <dir> (where)\nUsage: protoc-gen-a2a demo [options] <dir> [extra]");
  expect(usageError(["a", "b", "c"])).toBe('protoc-gen-a2a demo: unexpected argument "c"\nUsage: protoc-gen-a2a demo [options] <dir> [extra]');
  expect(usageError(["out", "--name"])).toContain("--name");
});

test("a command's help lists every option the parser takes", () => {
  const help = commandHelp(spec);
  expect(help).toContain("Usage: protoc-gen-a2a demo [options] <dir> [extra]");
  for (const flag of ["--store <kind>", "-n, --name", "--no-grpc", "--force", "-h, --help", "(one of: memory)", "[default: memory]"]) {
    expect(help).toContain(flag);
  }
});

describe("main", () => {
  test("--help and help <command> print help; no arguments prints it and fails", async () => {
    const io = captureIo("/");
    expect(await main(["--help"], io)).toBe(0);
    expect(io.stdout.join("")).toBe(programHelp());
    expect(programHelp()).toContain("  pull ");
    expect(programHelp()).toContain("  init ");
    const pull = captureIo("/");
    expect(await main(["help", "pull"], pull)).toBe(0);
    expect(pull.stdout.join("")).toContain("Usage: protoc-gen-a2a pull [options] [version]");
    const none = captureIo("/");
    expect(await main([], none)).toBe(2);
    expect(none.stdout.join("")).toBe(programHelp());
  });

  test("--version prints the package's version", async () => {
    const io = captureIo("/");
    expect(await main(["--version"], io)).toBe(0);
    expect(io.stdout.join("")).toBe(`protoc-gen-a2a v${packageManifest().version}\n`);
  });

  test("an unknown command or option exits 2 and lists the commands", async () => {
    const io = captureIo("/");
    expect(await main(["frobnicate"], io)).toBe(2);
    expect(io.stderr.join("")).toMatch(/^protoc-gen-a2a: unknown command "frobnicate"; commands: .*pull.*\nRun `protoc-gen-a2a --help` for usage.\n$/);
    const opt = captureIo("/");
    expect(await main(["pull", "--frob"], opt)).toBe(2);
    expect(opt.stderr.join("")).toBe("protoc-gen-a2a pull: Unknown option '--frob'\nRun `protoc-gen-a2a pull --help` for its options.\n");
  });
});
