import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where each worker of the jest run `jestPid` writes the suite it runs: a file per worker pid. */
export const watchDir = (jestPid) => join(tmpdir(), `a2a-jest-watch-${jestPid}`);
