/**
 * The generated gRPC service on a real grpc-js server, called with a real
 * grpc-js client built from the same generated definition.
 */
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { A2AServiceGrpcDefinition, addA2AServiceToServer } from "../../generated/a2a_grpc.js";
import { TaskNotFoundError } from "../../runtime/a2a/errors.js";
import { CancelTaskRequestSchema, GetTaskRequestSchema, SendMessageRequestSchema, StreamResponseSchema, TaskState, type StreamResponse, type Task } from "../../generated/a2a_pb.js";
import { StatusSchema } from "../../runtime/gen/google/rpc/status_pb.js";
import { ErrorInfoSchema, BadRequestSchema } from "../../runtime/gen/google/rpc/error_details_pb.js";

const seen: { version?: string; extensions?: readonly string[]; tenant?: string | undefined } = {};
const server = new grpc.Server();
addA2AServiceToServer(server, {
  async getTask(request, context) {
    seen.version = context.protocolVersion;
    seen.extensions = context.requestedExtensions;
    seen.tenant = context.tenant;
    context.activatedExtensions.add("urn:ext:a");
    // An extension URI that gRPC metadata cannot carry (not printable ASCII).
    if (request.id.startsWith("odd-ext")) context.activatedExtensions.add("https://example.com/ext/café");
    if (request.id === "odd-ext-fails") throw new TaskNotFoundError("no such task");
    if (request.id === "nope") throw new TaskNotFoundError(`no task ${request.id}`, { metadata: { taskId: request.id } });
    return { id: request.id, contextId: "c1", status: { state: TaskState.WORKING } };
  },
  async *sendStreamingMessage(request) {
    yield create(StreamResponseSchema, { payload: { case: "task", value: { id: "t", contextId: request.message?.contextId ?? "" } } });
    yield create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId: "t", contextId: "c", status: { state: TaskState.COMPLETED } } } });
  },
});
const Client = grpc.makeGenericClientConstructor(A2AServiceGrpcDefinition, "A2AService");
type UnaryFn = (request: unknown, metadata: grpc.Metadata, callback: (error: grpc.ServiceError | null, value: never) => void) => grpc.ClientUnaryCall;
let client: grpc.Client & {
  getTask: UnaryFn;
  cancelTask: UnaryFn;
  sendStreamingMessage: (request: unknown, metadata: grpc.Metadata) => grpc.ClientReadableStream<StreamResponse>;
};

beforeAll(async () => {
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as typeof client;
});
afterAll(() => {
  client.close();
  server.forceShutdown();
});

function metadata(entries: Record<string, string>): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [k, v] of Object.entries(entries)) md.set(k, v);
  return md;
}

function getTask(id: string, md: grpc.Metadata): Promise<{ task?: Task; error?: grpc.ServiceError; headers?: grpc.Metadata }> {
  return new Promise((resolve) => {
    let headers: grpc.Metadata | undefined;
    const call = client.getTask(create(GetTaskRequestSchema, { id, tenant: "acme" }), md, (error, task: Task) =>
      resolve(error === null ? { task, headers } : { error }),
    );
    call.on("metadata", (m: grpc.Metadata) => (headers = m));
  });
}

test("a unary call carries metadata into the context and extensions back", async () => {
  const r = await getTask("t1", metadata({ "a2a-version": "1.0", "a2a-extensions": "urn:ext:a, urn:ext:b" }));
  expect(r.error).toBeUndefined();
  expect(r.task).toMatchObject({ id: "t1", contextId: "c1", status: { state: TaskState.WORKING } });
  expect(seen).toEqual({ version: "1.0", extensions: ["urn:ext:a", "urn:ext:b"], tenant: "acme" });
  expect(r.headers?.get("a2a-extensions")).toEqual(["urn:ext:a"]);
});

test("an A2A error is its status code with ErrorInfo in grpc-status-details-bin", async () => {
  const r = await getTask("nope", metadata({ "a2a-version": "1.0" }));
  expect(r.error?.code).toBe(grpc.status.NOT_FOUND);
  expect(r.error?.details).toBe("no task nope");
  const bin = r.error?.metadata.get("grpc-status-details-bin")[0] as Buffer;
  const status = fromBinary(StatusSchema, bin);
  expect(status.code).toBe(grpc.status.NOT_FOUND);
  const info = anyUnpack(status.details[0]!, ErrorInfoSchema);
  expect(info).toMatchObject({ reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { taskId: "nope" } });
  // The extension the handler activated before it failed comes back with the error, as on the JSON bindings.
  expect(r.error?.metadata.get("a2a-extensions")).toEqual(["urn:ext:a"]);
});

test("a missing version is VersionNotSupported (FAILED_PRECONDITION)", async () => {
  const r = await getTask("t1", metadata({}));
  expect(r.error?.code).toBe(grpc.status.FAILED_PRECONDITION);
  expect(r.error?.details).toBe("Protocol version 0.3 is not supported. Supported: 1.0. Send A2A-Version: 1.0 with each request");
});

test("a missing REQUIRED field is INVALID_ARGUMENT with a BadRequest", async () => {
  const r = await getTask("", metadata({ "a2a-version": "1.0" }));
  expect(r.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
  const status = fromBinary(StatusSchema, r.error?.metadata.get("grpc-status-details-bin")[0] as Buffer);
  expect(anyUnpack(status.details[0]!, BadRequestSchema)?.fieldViolations).toMatchObject([{ field: "id" }]);
});

test("a left-out method is its D18 error", async () => {
  const error = await new Promise<grpc.ServiceError>((resolve) =>
    client.cancelTask(create(CancelTaskRequestSchema, { id: "x" }), metadata({ "a2a-version": "1.0" }), (e) => resolve(e as grpc.ServiceError)),
  );
  expect(error.code).toBe(grpc.status.FAILED_PRECONDITION);
  expect(error.details).toBe("CancelTask is not supported by this agent");
});

test("a method the service does not have is UNIMPLEMENTED, D4's MethodNotFound (JSON-RPC -32601, HTTP 404)", async () => {
  const error = await new Promise<grpc.ServiceError | null>((resolve) => {
    client.makeUnaryRequest(
      "/lf.a2a.v1.A2AService/NoSuchMethod",
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.alloc(0),
      metadata({ "a2a-version": "1.0" }),
      (err) => resolve(err),
    );
  });
  expect(error?.code).toBe(grpc.status.UNIMPLEMENTED);
});

test("a server stream delivers every event then OK", async () => {
  const call = client.sendStreamingMessage(
    create(SendMessageRequestSchema, { message: { messageId: "m", role: 1, contextId: "c9", parts: [{ content: { case: "text", value: "x" } }] } }),
    metadata({ "a2a-version": "1.0" }),
  );
  const events: string[] = [];
  for await (const e of call) events.push((e as StreamResponse).payload.case ?? "");
  expect(events).toEqual(["task", "statusUpdate"]);
});

test("an activated extension metadata cannot carry is left out, and the call is answered either way", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown) => unhandled.push(err);
  process.on("unhandledRejection", onUnhandled);
  try {
    const ok = await getTask("odd-ext", metadata({ "a2a-version": "1.0" }));
    expect(ok.task?.id).toBe("odd-ext");
    const failed = await getTask("odd-ext-fails", metadata({ "a2a-version": "1.0" }));
    expect(failed.error?.code).toBe(grpc.status.NOT_FOUND);
    // The one that can be sent is, without the other (D19).
    expect(failed.error?.metadata.get("a2a-extensions")).toEqual(["urn:ext:a"]);
    // A turn for a rejection to be reported.
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});
