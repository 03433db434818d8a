/**
 * A jest reporter that keeps a test run from hanging in silence. Jest's own timeouts run on the
 * worker's event loop: a suite blocked in a synchronous call (a spawnSync whose child never
 * exits) or spinning in JavaScript never times out, and the run never ends. This one watches from
 * the parent process: a suite still running after half of `A2A_SUITE_LIMIT_S` (900 s) is named
 * with what its worker is doing (CPU it used since, the processes it started); after the whole
 * limit the processes a blocked worker waits on are killed, or a spinning worker itself once its
 * stack was printed, and jest reports the suite as failed. Linux only (it reads /proc); elsewhere
 * it only names the suite.
 */
import { mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { WebSocket } from "undici";
import { watchDir } from "./watch-dir.mjs";

const limitMs = limitOf(process.env.A2A_SUITE_LIMIT_S);
const TICKS_PER_SECOND = 100;

/** A2A_SUITE_LIMIT_S in ms: 900 s when unset; anything but a positive number is refused. */
function limitOf(text) {
  if (text === undefined || text === "") return 900_000;
  const seconds = Number(text);
  if (!(seconds > 0)) throw new Error(`A2A_SUITE_LIMIT_S must be a positive number of seconds, not "${text}"`);
  return seconds * 1000;
}

function stat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]), startTicks: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim().slice(0, 300);
  } catch {
    return "?";
  }
}

function uptimeTicks() {
  return Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]) * TICKS_PER_SECOND;
}

/** Every process below `root`, with its age in seconds. */
function descendants(root) {
  const parents = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(entry);
    if (s !== undefined) parents.set(Number(entry), s);
  }
  const now = uptimeTicks();
  const found = [];
  const walk = (pid) => {
    for (const [child, s] of parents) {
      if (s.ppid !== pid) continue;
      found.push({ pid: child, ageS: Math.round((now - s.startTicks) / TICKS_PER_SECOND), command: commandLine(child) });
      walk(child);
    }
  };
  walk(root);
  return found;
}

export default class SuiteWatchdog {
  #running = new Map();
  #timer;
  #dir = watchDir(process.pid);

  onRunStart() {
    // A folder left by an earlier run of the same pid (killed before onRunComplete) names other
    // processes. One that cannot be cleared or made (another user's) leaves the watchdog blind to
    // workers: it still names a suite past its limit, and acts on no pid.
    try {
      rmSync(this.#dir, { recursive: true, force: true });
      mkdirSync(this.#dir, { recursive: true });
    } catch {
      this.#dir = join(this.#dir, "unusable");
    }
    this.#timer = setInterval(() => this.#check(), Math.min(30_000, limitMs / 4));
    this.#timer.unref();
  }

  onTestFileStart(test) {
    this.#running.set(test.path, { since: Date.now(), warned: false, cpu: undefined, killedAt: undefined, workerKilled: false });
  }

  onTestFileResult(test) {
    this.#running.delete(test.path);
  }

  onRunComplete() {
    clearInterval(this.#timer);
    rmSync(this.#dir, { recursive: true, force: true });
  }

  /** The worker pid that runs `path`, as its setup file wrote it: only a child of this process. */
  #workerOf(path) {
    try {
      for (const pid of readdirSync(this.#dir)) {
        if (readFileSync(join(this.#dir, pid), "utf8") === path && stat(pid)?.ppid === process.pid) return Number(pid);
      }
    } catch {
      // Not on this platform, or no suite started yet.
    }
    return undefined;
  }

  #check() {
    const now = Date.now();
    for (const [path, state] of this.#running) {
      const ranMs = now - state.since;
      const pid = this.#workerOf(path);
      const worker = pid === undefined ? undefined : stat(pid);
      // CPU since the check before: all of it and no end is a loop in JavaScript, none a blocking call.
      const before = state.cpu;
      if (worker !== undefined) state.cpu = { ticks: worker.cpuTicks, at: now };
      if (ranMs < limitMs / 2) continue;
      if (state.killedAt !== undefined) {
        // Its processes were killed and it still runs: the worker goes too.
        if (worker !== undefined && !state.workerKilled && now - state.killedAt >= limitMs / 4) {
          state.workerKilled = true;
          process.stderr.write(`\nWATCHDOG: ${path} still runs after its processes were killed: killing its worker (${pid}).\n`);
          kill(pid);
        }
        continue;
      }
      const lines = [`\nWATCHDOG: ${path} has run for ${Math.round(ranMs / 1000)} s (limit ${limitMs / 1000} s, A2A_SUITE_LIMIT_S).`];
      if (worker === undefined) {
        lines.push("  its worker is not known (run in band, or not on Linux): nothing more to tell.");
        if (!state.warned) process.stderr.write(`${lines.join("\n")}\n`);
        state.warned = true;
        continue;
      }
      if (state.warned && ranMs < limitMs) continue;
      state.warned = true;
      const children = descendants(pid);
      // Busy for most of the last interval with no process started within it: a loop in JavaScript
      // (whatever it started before); else it waits on its processes (busy until it started one).
      let spinning = children.length === 0;
      if (before !== undefined) {
        const cpuS = (worker.cpuTicks - before.ticks) / TICKS_PER_SECOND;
        const wallS = (now - before.at) / 1000;
        if (wallS > 0 && children.every((c) => c.ageS >= wallS)) spinning ||= cpuS / wallS > 0.5;
        lines.push(`  worker ${pid}: ${cpuS.toFixed(1)} s of CPU in the last ${Math.round(wallS)} s`);
      }
      lines.push(children.length === 0 ? "  it started no process that is still running" : "  processes it started, still running:");
      for (const c of children) lines.push(`    ${c.pid} (${c.ageS} s old): ${c.command}`);
      if (ranMs >= limitMs) {
        state.killedAt = now;
        if (!spinning) {
          // The processes it waits on: a spawnSync then returns, and the test fails with its own message.
          lines.push(`  killing the processes it waits on (${children.map((c) => c.pid).join(", ")}): the suite fails instead of hanging the run`);
          for (const c of children) kill(c.pid);
        } else {
          // JavaScript that never yields: where it runs, then the worker goes (and what it started with it).
          state.workerKilled = true;
          lines.push(`  killing the worker (${pid}): the suite fails instead of hanging the run`);
          void stackOf(pid).then((stack) => {
            process.stderr.write(`  where its JavaScript ran (the inspector, paused):\n${(stack ?? ["    (the inspector did not answer)"]).join("\n")}\n`);
            // Read again: a pid of the list read before the stack may have ended and been reused since.
            const started = descendants(pid);
            kill(pid);
            for (const c of started) kill(c.pid);
          });
        }
      }
      process.stderr.write(`${lines.join("\n")}\n`);
    }
  }
}

/**
 * The JavaScript stack of `pid`, through its inspector: SIGUSR1 opens it (on 127.0.0.1:9229 by
 * default) even while the process runs a loop that never yields, and Debugger.pause stops that
 * loop where it is (or between two of its microtasks: then a step into the next one).
 */
async function stackOf(pid) {
  try {
    const before = listeningPorts(pid);
    process.kill(pid, "SIGUSR1");
    // The port it opens (9229 unless --inspect-port says otherwise; the watchdog's own test picks
    // 0), found among its own sockets: this process's inspector, whatever else listens here.
    let url;
    for (let tries = 0; tries < 50 && url === undefined; tries++) {
      await sleep(200);
      for (const port of listeningPorts(pid)) {
        if (before.has(port)) continue;
        const targets = await fetch(`http://127.0.0.1:${port}/json/list`).then((r) => r.json()).catch(() => undefined);
        url = targets?.[0]?.webSocketDebuggerUrl ?? url;
      }
    }
    if (url === undefined) return undefined;
    const ws = new WebSocket(url);
    return await new Promise((resolve) => {
      const done = (stack) => {
        clearTimeout(timer);
        ws.close();
        resolve(stack);
      };
      const timer = setTimeout(() => done(undefined), 10_000);
      ws.onopen = () => {
        ws.send(JSON.stringify({ id: 1, method: "Debugger.enable" }));
        // Promises made from now on remember who awaited them: the frames that keep a loop of microtasks going.
        ws.send(JSON.stringify({ id: 2, method: "Debugger.setAsyncCallStackDepth", params: { maxDepth: 8 } }));
        setTimeout(() => ws.send(JSON.stringify({ id: 4, method: "Debugger.pause" })), 100);
      };
      // A frame of a vm module (every test and module jest loads) has no url: its script's announcement has it.
      const scripts = new Map();
      // A loop of microtasks is paused mostly in Node's own frames: a few pauses, the distinct stacks.
      const samples = new Set();
      ws.onmessage = (event) => {
        try {
          sample(JSON.parse(String(event.data)));
        } catch {
          done(undefined);
        }
      };
      const sample = (message) => {
        if (message.method === "Debugger.scriptParsed") scripts.set(message.params.scriptId, message.params.url);
        if (message.method !== "Debugger.paused") return;
        // Debugger frames keep their position in `location`, async ones (Runtime frames) on themselves.
        const where = (f) => {
          const at = f.location ?? f;
          return `${f.functionName || "(anonymous)"} ${f.url || scripts.get(at.scriptId) || "?"}:${at.lineNumber + 1}:${at.columnNumber + 1}`;
        };
        const frames = message.params.callFrames.map(where);
        for (let parent = message.params.asyncStackTrace; parent !== undefined; parent = parent.parent) {
          const awaited = parent.callFrames.map(where);
          if (awaited.some(outsideNode)) frames.push(`-- awaited in ${parent.description ?? "async"}:`, ...awaited);
        }
        // Only stacks that reach code outside Node's own.
        if (frames.some((f) => outsideNode(f) && !f.startsWith("-- "))) samples.add(frames.slice(0, 30).map((f) => `    ${f}`).join("\n"));
        if (samples.size >= 3 || ++pauses >= 40) return done(samples.size === 0 ? ["    (only Node's own frames were seen)"] : [...samples].join("\n    --\n").split("\n"));
        if (message.params.callFrames.length === 1 && !outsideNode(frames[0])) {
          // Paused in the loop that runs microtasks itself, between two of them: a step goes into
          // the next one. Node 24 takes every pause of a loop of microtasks there (Node 20 and 22
          // took most in their promise hooks, JavaScript then, some of them called from the loop's code).
          ws.send(JSON.stringify({ id: 5, method: "Debugger.stepInto" }));
          return;
        }
        ws.send(JSON.stringify({ id: 3, method: "Debugger.resume" }));
        setTimeout(() => ws.send(JSON.stringify({ id: 4, method: "Debugger.pause" })), 20);
      };
      let pauses = 0;
      ws.onerror = () => done(undefined);
    });
  } catch {
    return undefined;
  }
}

/** A frame (as stackOf writes it) of code that is not Node's own. */
const outsideNode = (frame) => !/ node:/.test(frame);

/** The TCP ports `pid` listens on (IPv4), from its sockets' inodes in /proc/net/tcp. */
function listeningPorts(pid) {
  const inodes = new Set();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      let link = "";
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        // Closed since the listing.
      }
      const socket = /^socket:\[(\d+)\]$/.exec(link);
      if (socket) inodes.add(socket[1]);
    }
  } catch {
    return new Set();
  }
  const ports = new Set();
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    // State 0A is LISTEN; the local address is HEXIP:HEXPORT.
    if (f[3] === "0A" && inodes.has(f[9])) ports.add(parseInt(f[1].split(":")[1], 16));
  }
  return ports;
}

function kill(pid) {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}
