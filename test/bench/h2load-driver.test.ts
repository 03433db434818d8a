/**
 * The opt-in gRPC load driver of bench/tasks.mjs (BENCH_GRPC_DRIVER=h2load,
 * bench/lib/load-h2load.mjs) against a node:http2 server that answers like a
 * gRPC server: h2load sees only HTTP statuses, so the driver must tell calls
 * answered with their message from trailers-only gRPC errors by the DATA
 * they brought. Needs nghttp2's h2load (.ci/run installs nghttp2-client).
 */
import { jest } from "@jest/globals";
import { fork, spawnSync, type ChildProcess } from "node:child_process";
import { createServer, constants, type Http2Server, type Http2Session, type ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { projectRoot } from "../support/protos.js";

jest.setTimeout(30_000);

const answerBytes = 61;
const answer = Buffer.alloc(5 + answerBytes, 0x61);
answer[0] = 0;
answer.writeUInt32BE(answerBytes, 1);

interface DriverResult {
  requests: number;
  duration: number;
  wallMs: number;
  non2xx: number;
  errors: number;
  bytesPerRequest: number;
  p50: number;
  p99: number;
  cpuMs: number;
  failedLabel?: string;
  firstFailure?: string;
}

let server: Http2Server;
let driver: ChildProcess;
let calls = 0;
/** Calls per session, for the paths that close one. */
const served = new WeakMap<Http2Session, number>();
const sessions: Http2Session[] = [];
/** A client killed mid-run (the disconnect test) resets its connection: its session and its streams in flight hear it. */
const killedClient = (err: Error & { code?: string }) => err.code === "ECONNRESET";
/** Errors the test server met that no test caused on purpose. */
const unexpected: Error[] = [];

function ok(stream: ServerHttp2Stream): void {
  stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
  stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
  stream.end(answer);
}

/** A gRPC error as servers send one: trailers only, no message. */
function refuse(stream: ServerHttp2Stream): void {
  stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "12", "grpc-message": "no such method" }, { endStream: true });
}

beforeAll(async () => {
  if (spawnSync("h2load", ["--version"], { stdio: "ignore" }).status !== 0) {
    throw new Error("h2load is not installed (apt-get install nghttp2-client; .ci/run installs it)");
  }
  server = createServer();
  server.on("session", (session) => {
    sessions.push(session);
    session.on("error", (err: Error & { code?: string }) => {
      if (!killedClient(err)) unexpected.push(err);
    });
  });
  server.on("stream", (stream, headers) => {
    // A stream this server resets emits the reset as an error: that one is expected, anything else is kept.
    stream.on("error", (err: Error & { code?: string }) => {
      if (killedClient(err)) return;
      if (!(headers[":path"] === "/pkg.Service/OneInTenReset" && /NGHTTP2_INTERNAL_ERROR/.test(err.message))) unexpected.push(err);
    });
    stream.resume();
    stream.on("end", () => {
      const path = headers[":path"];
      const session = stream.session!;
      const n = (served.get(session) ?? 0) + 1;
      served.set(session, n);
      if (path === "/pkg.Service/Ok") ok(stream);
      else if (path === "/pkg.Service/OneInTenFails") (calls++ % 10 === 9 ? refuse : ok)(stream);
      else if (path === "/pkg.Service/OneInTen500") {
        if (calls++ % 10 === 9) stream.respond({ ":status": 500 }, { endStream: true });
        else ok(stream);
      } else if (path === "/pkg.Service/OneInTenReset") {
        if (calls++ % 10 === 9) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
        else ok(stream);
      } else if (path === "/pkg.Service/GoAwaySoon") {
        ok(stream);
        // Every connection is sent away after 300 calls; h2load does not reconnect.
        if (n === 300) session.goaway();
      } else refuse(stream);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  driver = fork(join(projectRoot, "bench", "lib", "load-h2load.mjs"), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
});

afterAll(async () => {
  // Gone before the worker ends, so its IPC channel keeps nothing open.
  if (driver !== undefined && driver.exitCode === null && driver.signalCode === null) {
    const exited = new Promise((resolve) => driver.once("exit", resolve));
    driver.kill();
    await exited;
  }
  for (const session of sessions) session.destroy();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
});

function run(method: string): Promise<DriverResult> {
  const { port } = server.address() as AddressInfo;
  driver.send({ run: { url: `http://127.0.0.1:${port}/pkg.Service/${method}`, headers: { "x-extra": "1" }, body: Buffer.from([10, 1, 120]).toString("base64"), sessions: 2, streams: 4, duration: 1, answerBytes } });
  return new Promise((resolve) => driver.once("message", (msg: { result: DriverResult }) => resolve(msg.result)));
}

test("calls answered with their message count, with latencies and h2load's own CPU", async () => {
  const r = await run("Ok");
  expect(r.requests).toBeGreaterThan(100);
  expect(r.duration).toBe(1);
  // h2load's CPU, from the driver's reaped children's: some, and no more than the time it ran.
  expect(r.cpuMs).toBeGreaterThan(0);
  expect(r.cpuMs).toBeLessThanOrEqual(r.wallMs + 10);
  expect({ non2xx: r.non2xx, errors: r.errors, firstFailure: r.firstFailure }).toEqual({ non2xx: 0, errors: 0, firstFailure: undefined });
  // Every DATA byte belongs to a completed call's answer, or to one still in flight when the run ended.
  expect(r.bytesPerRequest).toBeGreaterThanOrEqual(answer.length);
  expect(r.bytesPerRequest).toBeLessThan(answer.length * 1.01);
  expect(r.p50).toBeGreaterThan(0);
  expect(r.p99).toBeGreaterThanOrEqual(r.p50);
});

test("trailers-only gRPC errors (HTTP 200 to h2load) make the run fail", async () => {
  const r = await run("Missing");
  expect(r.requests).toBeGreaterThan(0);
  expect(r.non2xx).toBe(r.requests);
  expect(r.failedLabel).toMatch(/without their answer/);
  expect(r.firstFailure).toMatch(/^0\.0 bytes of DATA per call, at least 63 expected$/);
});

test("one call in ten failing is seen too", async () => {
  const r = await run("OneInTenFails");
  expect(r.non2xx).toBe(r.requests);
  expect(r.bytesPerRequest).toBeLessThan(answer.length * 0.95);
});

/** One call in ten failed one way: counted once, under `counted` and not under `other`, at 9 OK calls for each. */
function expectOneInTen(r: DriverResult, counted: "non2xx" | "errors", other: "non2xx" | "errors"): void {
  expect(r[counted]).toBeGreaterThan(0);
  expect(r[other]).toBe(0);
  expect(r.requests / r[counted]).toBeGreaterThan(8);
  expect(r.requests / r[counted]).toBeLessThan(10);
}

test("HTTP errors count once, as non-2xx, and not among the calls", async () => {
  const r = await run("OneInTen500");
  expectOneInTen(r, "non2xx", "errors");
  expect(r.bytesPerRequest).toBeGreaterThanOrEqual(answer.length);
  expect(r.bytesPerRequest).toBeLessThan(answer.length * 1.01);
});

test("reset streams count once, as errors", async () => {
  expectOneInTen(await run("OneInTenReset"), "errors", "non2xx");
});

test("connections the server closed midway fail the run, though h2load reports no failure", async () => {
  const r = await run("GoAwaySoon");
  expect(r.errors).toBeGreaterThan(0);
  expect(r.firstFailure).toMatch(/^calls stopped completing \d+ ms into the 1000 ms run/);
});

test("the harness going away mid-run takes h2load with it", async () => {
  const { port } = server.address() as AddressInfo;
  // An odd duration marks this run's h2load in the process list, whatever its parent.
  const marker = "h2load -D 19123ms";
  const h2load = () => spawnSync("pgrep", ["-f", marker], { encoding: "utf8" }).stdout.trim();
  const child = fork(join(projectRoot, "bench", "lib", "load-h2load.mjs"), [], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  try {
    await new Promise<void>((resolve) => child.once("spawn", () => resolve()));
    child.send({ run: { url: `http://127.0.0.1:${port}/pkg.Service/Ok`, body: "", sessions: 1, streams: 1, duration: 19.123, answerBytes } });
    for (let i = 0; i < 100 && h2load() === ""; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h2load()).not.toBe("");
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.disconnect();
    await exited;
    // Gone with the driver, not left to run out its 19 s under init.
    for (let i = 0; i < 100 && h2load() !== ""; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(h2load()).toBe("");
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await gone;
    }
    spawnSync("pkill", ["-KILL", "-f", marker]);
  }
});

test("the test server met no error that a test did not cause", () => {
  expect(unexpected.map((e) => e.message)).toEqual([]);
});

test("a reaped child's CPU is read from a stat line whatever the command name holds, and h2load's summary in ms or s", async () => {
  const { childCpuMs, parseH2loadOutput } = (await import(join(projectRoot, "bench", "lib", "h2load-output.mjs"))) as {
    childCpuMs(line: string): number;
    parseH2loadOutput(text: string): { seconds?: number };
  };
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
  expect(childCpuMs("4242 (a) b) S 1 4242 4242 0 -1 4194304 100 200 0 0 3 4 22 30 20 0 1 0")).toBe(520);
  expect(parseH2loadOutput("finished in 500.93ms, 10 req/s").seconds).toBeCloseTo(0.50093, 5);
  expect(parseH2loadOutput("finished in 2.01s, 10 req/s").seconds).toBe(2.01);
});
