/**
 * A2A 0.3's gRPC service (`a2a.v1.A2AService`, D113) served beside
 * `lf.a2a.v1.A2AService` on the same port, called by a Python client on
 * Debian's python3-grpcio with classes that Debian's protoc writes from the
 * v0.3.0 a2a.proto (vendor/a2a/v0.3.0, pulled by `npm run pull-proto`):
 * send, stream, get, cancel, subscribe, push config CRUD, the card and an
 * error, with no a2a-version metadata, as a 0.3 client sends. A 1.0 gRPC
 * client on the same port is answered as before. Skipped with a notice
 * without the Debian packages, as test/grpc/grpc-extras.test.ts is.
 */
import { execFile, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { textOf } from "protoc-gen-a2a/runtime";
import type { AgentServer } from "protoc-gen-a2a/runtime/server";
import { echoWords } from "../../examples/reference-agent/agent.js";
import { referenceCard } from "../../examples/reference-agent/config.js";
import { createA2AServiceGrpcClient } from "../../generated/a2a_grpc.js";
import { Role, TaskState } from "../../generated/a2a_pb.js";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { Receiver } from "../support/task-clients.js";

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const BUF = join(ROOT, "node_modules/.bin/buf");
const python = process.env.A2A_PYTHON ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
const missing = `needs Debian packages python3-grpcio, python3-protobuf and protobuf-compiler for ${python} (.ci/run installs them)`;
const required = process.env.A2A_REQUIRE_PYTHON === "1";
const present = spawnSync(python, ["-c", "import grpc, google.protobuf"]).status === 0 && spawnSync("protoc", ["--version"]).status === 0;
if (!present && !required) process.stderr.write(`\nNOTICE: skipping the Python 0.3 gRPC client test, which ${missing}. Set A2A_REQUIRE_PYTHON=1 to make it fail instead.\n\n`);
const pythonTest = present || required ? test : test.skip;

// The reference agent's executor; "hold ..." waits until the task is canceled.
const executor: A2AServiceExecutor = async function* (context) {
  if (textOf(context.message).startsWith("hold")) {
    yield { state: TaskState.WORKING };
    await new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
    return;
  }
  yield* echoWords(context);
};

let server: AgentServer;
let pbDir = "";
const receiver = new Receiver();

beforeAll(async () => {
  await receiver.start();
  const handler = createA2AServiceTaskHandler(executor, { push: { allow: ["127.0.0.1"] } });
  server = await serveA2AService(handler, referenceCard, { port: 0, grpcPort: 0, drainMs: 200, compat: { v0_3: true }, grpc: { health: true, reflection: true } });
});

afterAll(async () => {
  await server.close();
  await receiver.stop();
  if (pbDir !== "") rmSync(pbDir, { recursive: true, force: true });
});

/** Python classes of the v0.3.0 a2a.proto (as a2a_pb2) and google/rpc: buf builds the descriptor set, Debian's protoc writes them. */
async function generatePython(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "a2a-v03-py-"));
  const ws = join(dir, "ws");
  mkdirSync(join(ws, "a2a"), { recursive: true });
  cpSync(join(ROOT, "vendor/a2a/v0.3.0/a2a.proto"), join(ws, "a2a/a2a.proto"));
  cpSync(join(ROOT, "vendor/googleapis"), join(ws, "googleapis"), { recursive: true });
  writeFileSync(join(ws, "buf.yaml"), "version: v2\nmodules:\n  - path: a2a\n  - path: googleapis\n");
  await run(BUF, ["build", ws, "-o", join(dir, "a2a.binpb")]);
  const files = ["a2a.proto", "google/api/annotations.proto", "google/api/http.proto", "google/api/client.proto", "google/api/field_behavior.proto", "google/api/launch_stage.proto", "google/rpc/status.proto", "google/rpc/error_details.proto"];
  await run("protoc", [`--descriptor_set_in=${join(dir, "a2a.binpb")}`, `--python_out=${dir}`, ...files]);
  return dir;
}

pythonTest("a Python 0.3 client runs every a2a.v1.A2AService RPC, and 1.0's service answers on the same port", async () => {
  pbDir = await generatePython();
  const script = join(ROOT, "test/compat/python/a2a_v03_client.py");
  const address = server.grpcAddress!;
  const { stdout } = await run(python, [script, "--target", address, "--pb", pbDir, "--push-url", receiver.url("/py")], { timeout: 30_000 });
  const steps = Object.fromEntries(stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>).map((l) => [l.step, l]));
  expect(steps.send).toEqual({ step: "send", kind: "task", state: "TASK_STATE_COMPLETED", text: "hello from python" });
  expect(steps.stream).toEqual({ step: "stream", kinds: ["task", "status_update", "artifact_update", "artifact_update", "status_update"], last: "TASK_STATE_COMPLETED", final: true });
  expect(steps.get).toEqual({ step: "get", id: true, state: "TASK_STATE_COMPLETED", history: 1, text: "hello from python" });
  expect(steps.cancel).toEqual({ step: "cancel", before: "TASK_STATE_WORKING", after: "TASK_STATE_CANCELLED" });
  expect(steps.subscribe).toEqual({ step: "subscribe", first: "task", firstId: true, last: "TASK_STATE_CANCELLED", final: true });
  expect(steps.push).toEqual({ step: "push", created: true, url: true, schemes: ["Bearer"], got: "tok", listed: [true], after: 0 });
  expect(steps.card).toEqual({ step: "card", name: referenceCard.name, protocolVersion: "0.3.0", preferredTransport: "JSONRPC", transports: ["JSONRPC", "HTTP+JSON", "GRPC"] });
  expect(steps.error).toEqual({ step: "error", code: "NOT_FOUND", reason: "TASK_NOT_FOUND" });

  // 1.0 on the same port, as before.
  const client = createA2AServiceGrpcClient(address);
  const answer = await client.sendMessage({ message: { messageId: "m", role: Role.USER, parts: [{ content: { case: "text", value: "still 1.0" } }] } });
  expect(answer.payload.case === "task" && answer.payload.value.status?.state).toBe(TaskState.COMPLETED);
  client.close();
}, 60_000);

test("health reports 0.3's service and reflection describes it, so a reflecting client calls it with no schema of its own", async () => {
  // From a folder with no buf.yaml: the schema can only come from the server.
  const curl = (...args: string[]) => run(BUF, ["curl", "--protocol", "grpc", "--http2-prior-knowledge", "--reflect", ...args], { cwd: tmpdir(), timeout: 30_000 });
  const origin = `http://${server.grpcAddress!}`;
  const services = (await curl("--list-services", origin)).stdout.trim().split("\n");
  expect(services.sort()).toEqual(["a2a.v1.A2AService", "grpc.health.v1.Health", "lf.a2a.v1.A2AService"]);
  expect(JSON.parse((await curl("--data", '{"service":"a2a.v1.A2AService"}', `${origin}/grpc.health.v1.Health/Check`)).stdout)).toEqual({ status: "SERVING" });
  // 0.3's SendMessage in 0.3's ProtoJSON (`content`, ROLE_USER; blocking, which 0.3 leaves off by default), with no a2a-version.
  const body = JSON.stringify({ request: { messageId: "m-reflect", role: "ROLE_USER", content: [{ text: "via reflection" }] }, configuration: { blocking: true } });
  const answer = JSON.parse((await curl("--data", body, `${origin}/a2a.v1.A2AService/SendMessage`)).stdout) as { task?: { status?: { state?: string } } };
  expect(answer.task?.status?.state).toBe("TASK_STATE_COMPLETED");
}, 60_000);
