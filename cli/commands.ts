/**
 * The CLI's commands. Each is its spec (what the parser and `--help` read)
 * and a runner, imported only when that command runs.
 */
import type { CommandSpec, ParsedArgs } from "./args.js";
import type { CliIo } from "./io.js";
import { pullSpec } from "./pull-command.js";

export interface Command {
  readonly spec: CommandSpec;
  run(args: ParsedArgs, io: CliIo): Promise<void>;
}

export const commands: readonly Command[] = [
  { spec: pullSpec, run: async (args, io) => (await import("./pull-command.js")).runPull(args, io) },
];
