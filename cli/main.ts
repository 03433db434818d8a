/**
 * The CLI, for a person running `protoc-gen-a2a <command>` (bin/protoc-gen-a2a.js
 * runs the buf plugin instead (D40) when it gets no arguments and stdin is not a
 * terminal, which is how buf and protoc start a plugin).
 */
import { commandHelp, parseCommand, program } from "./args.js";
import { commands } from "./commands.js";
import { CliError } from "./errors.js";
import type { CliIo } from "./io.js";
import { packageManifest } from "./package-root.js";

export function programHelp(): string {
  const width = Math.max(...commands.map((c) => c.spec.name.length));
  return [
    `Usage: ${program} <command> [options]`,
    "",
    "As a buf plugin (buf.gen.yaml `local: protoc-gen-a2a`) it reads a CodeGeneratorRequest on stdin and",
    "generates the A2A binding layer. As a command:",
    "",
    ...commands.map((c) => `  ${c.spec.name.padEnd(width)}  ${c.spec.summary.split("\n")[0]}`),
    "",
    "Options:",
    "  -h, --help     Show this help (`<command> --help` for a command's)",
    "  -v, --version  Print the version",
    "",
  ].join("\n");
}

/** Runs one command line; returns the exit status. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const named = first === "help" ? rest[0] : undefined;
    const command = commands.find((c) => c.spec.name === named);
    if (named !== undefined && command === undefined) return usage(io, `unknown command "${named}"`);
    io.out(command === undefined ? programHelp() : commandHelp(command.spec));
    // No command at all is a mistake (a person at a terminal with no arguments); asking for help is not.
    return first === undefined ? 2 : 0;
  }
  if (first === "--version" || first === "-v") {
    // As the plugin answers it (protoplugin's runNodeJs), which is what the binary runs for `--version`.
    io.out(`${program} v${packageManifest().version}\n`);
    return 0;
  }
  const command = commands.find((c) => c.spec.name === first);
  if (command === undefined) {
    return usage(io, first.startsWith("-") ? `unknown option "${first}"` : `unknown command "${first}"`);
  }
  try {
    const args = parseCommand(command.spec, rest);
    if (args.help) {
      io.out(commandHelp(command.spec));
      return 0;
    }
    await command.run(args, io);
    return 0;
  } catch (err) {
    if (err instanceof CliError) {
      io.err(`${err.message.startsWith(program) ? "" : `${program} ${first}: `}${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

function usage(io: CliIo, problem: string): number {
  io.err(`${program}: ${problem}; commands: ${commands.map((c) => c.spec.name).join(", ")}\nRun \`${program} --help\` for usage.\n`);
  return 2;
}
