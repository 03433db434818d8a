/**
 * A real nginx (Debian's `nginx` package) in front of an agent, for the proxy
 * tests: started as the current user, in the foreground (`daemon off`), with
 * everything it writes (pid, error and access logs, the five temp paths) in
 * a temp folder of its own given as its prefix (`-p`), on loopback ports
 * picked free, and stopped by its process id. No system service, no file
 * outside that folder.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

/** Where Debian installs nginx; NGINX overrides it. */
export const nginxBin = process.env.NGINX ?? "/usr/sbin/nginx";

/** Whether nginx can be run here (apt-get install nginx; .ci/run does). */
export function nginxAvailable(): boolean {
  return spawnSync(nginxBin, ["-v"], { stdio: "ignore" }).status === 0;
}

export interface Nginx {
  /** The folder nginx runs in (config, pid, logs, temp paths). */
  readonly dir: string;
  /** The error log so far: what to look at when a test fails. */
  errorLog(): string;
  /** Stops nginx (SIGQUIT, a graceful stop, then SIGKILL after 5 s) and removes its folder. */
  stop(): Promise<void>;
}

/** `count` loopback ports free right now (bound to 0 together, then let go). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve(server));
    })),
  );
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/**
 * Starts nginx with `http` as the body of its `http { }` block (its server
 * blocks), and resolves once it listens on every port they name. A config
 * nginx refuses, or a port taken in between, rejects with nginx's error log.
 */
export async function startNginx(http: string): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-nginx-"));
  const path = (name: string) => join(dir, name);
  // As root, nginx would run its workers as `nobody`, who cannot write here: keep them as us.
  const user = process.getuid?.() === 0 ? `user ${userInfo().username};\n` : "";
  const conf = `${user}daemon off;
master_process on;
worker_processes 1;
pid ${path("nginx.pid")};
error_log ${path("error.log")} info;
events { worker_connections 1024; }
http {
  access_log ${path("access.log")};
  client_body_temp_path ${path("client_body")};
  proxy_temp_path ${path("proxy")};
  fastcgi_temp_path ${path("fastcgi")};
  uwsgi_temp_path ${path("uwsgi")};
  scgi_temp_path ${path("scgi")};
${http}
}
`;
  writeFileSync(path("nginx.conf"), conf);
  const errorLog = () => (existsSync(path("error.log")) ? readFileSync(path("error.log"), "utf8") : "");
  // -e: the log nginx writes before it has read error_log; -p: relative paths resolve here.
  const child = spawn(nginxBin, ["-p", dir, "-c", path("nginx.conf"), "-e", path("error.log")], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const failed = (why: string) => new Error(`nginx ${why}\n${stderr}${errorLog()}`);

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGQUIT");
      const force = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(force);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const watching = new AbortController();
  try {
    await Promise.race([
      pidFile(dir, "nginx.pid", watching.signal),
      exited.then((code) => Promise.reject(failed(`exited (${code}) before listening`))),
      new Promise((_, reject) => setTimeout(() => reject(failed("wrote no pid file in 10 s")), 10_000).unref()),
    ]);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    watching.abort();
  }
  return { dir, errorLog, stop };
}

/**
 * Resolves once nginx has written its pid file: it does so after binding
 * and listening on every port of its config (a port it cannot bind makes it
 * exit instead), so from then on connections are accepted.
 */
function pidFile(dir: string, name: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    watch(dir, { signal }, () => {
      if (existsSync(join(dir, name))) resolve();
    });
    // Written before the watch began.
    if (existsSync(join(dir, name))) resolve();
  });
}
