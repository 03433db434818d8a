/**
 * A Postgres server of the test's own: `initdb` in a temporary directory,
 * `pg_ctl start` on a free loopback port, stopped and removed by `stop()`.
 * Nothing assumes a system service; the binaries are Debian's `postgresql`
 * package (.ci/run installs it). Postgres refuses to run as root, so as root
 * (CI, these machines) the directory is given to the `postgres` user the
 * package creates and the server runs as that user.
 *
 * Tuned for tests, not durability: fsync off (`-F`); a crash of the machine
 * loses nothing a test needs.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface TestPostgres {
  /** `postgres://a2a@127.0.0.1:<port>/postgres`, trust authentication. */
  readonly url: string;
  readonly port: number;
  /** The server's data directory (its postmaster.pid names the server's main process). */
  readonly dataDir: string;
  /** Stops the server (fast shutdown) and removes its directory. */
  stop(): Promise<void>;
}

/** The newest installed server's bin directory: Debian puts each major version in its own. */
function binDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions[0] === undefined) {
    throw new Error("no Postgres server binaries in /usr/lib/postgresql/*/bin: install Debian's postgresql package (.ci/run does)");
  }
  return join(root, versions[0], "bin");
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** `fsync`: durable commits, as a production server makes them (the benchmarks); the tests leave it off. */
export async function startPostgres(options: { readonly fsync?: boolean } = {}): Promise<TestPostgres> {
  const bin = binDir();
  const dir = await mkdtemp(join(tmpdir(), "a2a-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  // As root, every command runs as the package's postgres user, who owns the directory.
  const pgRun = async (cmd: string, args: string[]) => {
    const file = join(bin, cmd);
    return asRoot ? run("runuser", ["-u", "postgres", "--", file, ...args]) : run(file, args);
  };
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  try {
    await pgRun("initdb", ["-D", data, "-U", "a2a", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync", "--no-instructions"]);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  // A port found free may be taken before the server binds it: try a few.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      // -w: pg_ctl returns once the server accepts connections. The socket directory is ours too.
      await pgRun("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-w", "-t", "60", "-o", `${options.fsync === true ? "" : "-F "}-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, "start"]);
    } catch (err) {
      if (attempt < 3) continue;
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    let stopped = false;
    return {
      url: `postgres://a2a@127.0.0.1:${port}/postgres`,
      port,
      dataDir: data,
      async stop() {
        if (stopped) return;
        stopped = true;
        try {
          await pgRun("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      },
    };
  }
}
