/** What a command reads and writes besides files: passed in, so tests run commands in-process. */
export interface CliIo {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  out(text: string): void;
  err(text: string): void;
}

export function processIo(): CliIo {
  // Output piped into `head` that closes early: the reader has what it wanted, not a crash.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
    process.exit(process.exitCode ?? 0);
  });
  return {
    cwd: process.cwd(),
    env: process.env,
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
  };
}
