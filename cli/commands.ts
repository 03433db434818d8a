/**
 * The CLI's commands. Each is its spec (what the parser and `--help` read)
 * and a runner, imported only when that command runs.
 */
import type { CommandSpec, ParsedArgs } from "./args.js";
import type { CliIo } from "./io.js";
import { initSpec } from "./init-command.js";
import { pullSpec } from "./pull-command.js";
import { upgradeSpec } from "./upgrade-command.js";

export interface Command {
  readonly spec: CommandSpec;
  run(args: ParsedArgs, io: CliIo): Promise<void>;
}

export const commands: readonly Command[] = [
  { spec: initSpec, run: async (args, io) => (await import("./init-command.js")).runInit(args, io) },
  { spec: pullSpec, run: async (args, io) => (await import("./pull-command.js")).runPull(args, io) },
  { spec: upgradeSpec, run: async (args, io) => (await import("./upgrade-command.js")).runUpgrade(args, io) },
];
