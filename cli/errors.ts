/**
 * An error a person running the CLI can act on: its message says what to fix,
 * and the CLI prints it without a stack. Anything else is a bug and keeps its
 * stack.
 */
export class CliError extends Error {
  override readonly name = "CliError";
  /** Exit status: 2 for a wrong command line (as getopt tools do), 1 for the rest. */
  readonly exitCode: number;

  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A command line that cannot run: an unknown option, a missing argument. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, 2);
  }
}
