/**
 * Tells the watchdog reporter (reporter.mjs) which suite this worker runs: a file named for the
 * worker's pid, in a folder named for jest's own (this worker's parent).
 */
import { writeFileSync } from "node:fs";
import { watchDir } from "./watch-dir.mjs";

try {
  writeFileSync(`${watchDir(process.ppid)}/${process.pid}`, expect.getState().testPath ?? "");
} catch {
  // In band (the reporter's folder is then named for this process's parent): the watchdog only names the suite.
}
