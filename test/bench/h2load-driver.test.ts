/**
 * The opt-in gRPC load driver of bench/tasks.mjs (BENCH_GRPC_DRIVER=h2load,
 * bench/lib/load-h2load.mjs) against a node:http2 server that answers like a
 * gRPC server: h2load sees only HTTP statuses, so the driver must tell calls
 * answered with their message from trailers-only gRPC errors by the DATA
 * they brought. Needs nghttp2's h2load (.ci/run installs nghttp2-client).
 */
import { jest } from "@jest/globals";
import { fork, spawnSync, type ChildProcess } from "node:child_process";
import { createServer, type Http2Server, type ServerHttp2Stream } from "node:http2";
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
  server.on("stream", (stream, headers) => {
    stream.resume();
    stream.on("end", () => {
      const path = headers[":path"];
      if (path === "/pkg.Service/Ok") ok(stream);
      else if (path === "/pkg.Service/OneInTenFails") (calls++ % 10 === 9 ? refuse : ok)(stream);
      else refuse(stream);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  driver = fork(join(projectRoot, "bench", "lib", "load-h2load.mjs"), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
});

afterAll(async () => {
  driver?.kill();
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
  expect({ non2xx: r.non2xx, errors: r.errors, firstFailure: r.firstFailure }).toEqual({ non2xx: 0, errors: 0, firstFailure: undefined });
  // Every DATA byte belongs to a completed call's answer, or to one still in flight when the run ended.
  expect(r.bytesPerRequest).toBeGreaterThanOrEqual(answer.length);
  expect(r.bytesPerRequest).toBeLessThan(answer.length * 1.01);
  expect(r.p50).toBeGreaterThan(0);
  expect(r.p99).toBeGreaterThanOrEqual(r.p50);
  expect(r.cpuMs).toBeGreaterThan(0);
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
