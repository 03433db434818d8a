/** A CliIo that keeps what a command printed, for running commands in-process. */
import type { CliIo } from "../../cli/io.js";

export interface CapturedIo extends CliIo {
  readonly stdout: string[];
  readonly stderr: string[];
}

export function captureIo(cwd: string, env: Record<string, string | undefined> = {}): CapturedIo {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { cwd, env, stdout, stderr, out: (t) => void stdout.push(t), err: (t) => void stderr.push(t) };
}
