/**
 * What the fuzz campaign (`npm run fuzz`, fuzz/) found, each as a
 * regression test over real sockets against serveA2AService over the
 * reference agent: the request the campaign minimized, and the answer a
 * client mistake should get (never Internal, never a crash), with the
 * server's onError never called.
 */
import { connect } from "node:http2";
import { jest } from "@jest/globals";
import type { AgentServer, FailureInfo } from "protoc-gen-a2a/runtime/server";
import { serveA2AService } from "../../generated/a2a_server.js";
import { createReferenceAgent } from "../../examples/reference-agent/handler.js";
import { referenceCard, referenceExtendedCard } from "../../examples/reference-agent/config.js";

const onError = jest.fn<(error: unknown, info: FailureInfo) => void>();
let server: AgentServer;
const agent = createReferenceAgent(referenceExtendedCard);
beforeAll(async () => {
  server = await serveA2AService(agent, referenceCard, { port: 0, grpcPort: 0, onError });
});
afterAll(() => server.close());
beforeEach(() => onError.mockClear());

const headers = { "content-type": "application/json", "a2a-version": "1.0" };
/** `depth` arrays nested around one string, as JSON text (JSON.stringify itself overflows at such depths). */
const nestedArrays = (depth: number) => `${"[".repeat(depth)}"x"${"]".repeat(depth)}`;

describe("deeply nested arrays in a Struct or Value (found by the campaign: a stack overflow answered -32603)", () => {
  // The fast ProtoJSON reader counted objects towards its depth bound but not arrays, so
  // nested arrays recursed until the stack ran out: RangeError, onError, Internal.
  test.each([200, 5000, 50_000])("JSON-RPC: %i levels in metadata or Part.data is -32602", async (depth) => {
    for (const params of [
      `{"id":"t","metadata":{"a":${nestedArrays(depth)}}}`,
      `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"data":${nestedArrays(depth)}}]}}`,
    ]) {
      const method = params.startsWith('{"id"') ? "CancelTask" : "SendMessage";
      const res = await fetch(server.jsonRpcUrl as string, { method: "POST", headers, body: `{"jsonrpc":"2.0","id":7,"method":"${method}","params":${params}}` });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { id: number; error?: { code: number } };
      expect(body).toMatchObject({ id: 7, error: { code: -32602 } });
    }
    expect(onError).not.toHaveBeenCalled();
  });

  test("HTTP+JSON: nested arrays in a message's metadata are 400 INVALID_ARGUMENT", async () => {
    const body = `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":{"a":${nestedArrays(5000)}}}}`;
    const res = await fetch(`${server.httpJsonUrl}/message:send`, { method: "POST", headers, body });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { status: string } }).error.status).toBe("INVALID_ARGUMENT");
    expect(onError).not.toHaveBeenCalled();
  });
});

describe("a deeply nested array for a path-bound field in an HTTP+JSON body (found by the campaign: HTTP 500)", () => {
  // The check that a body's value for a path-bound field agrees with the path ran String() and
  // JSON.stringify over the body's value: nested arrays overflowed the stack.
  test.each([
    ["taskId", "/tasks/t-1/pushNotificationConfigs", `{"taskId":${nestedArrays(5000)},"url":"https://203.0.113.5/cb"}`],
    ["tenant", "/t1/tasks/t-1/pushNotificationConfigs", `{"taskId":"t-1","url":"https://203.0.113.5/cb","tenant":${nestedArrays(5000)}}`],
    ["id", "/tasks/t-1:cancel", `{"id":${nestedArrays(5000)}}`],
    ["id (an object)", "/tasks/t-1:cancel", `{"id":{"a":1}}`],
  ])("%s: 400 INVALID_ARGUMENT naming the field", async (field, path, body) => {
    const res = await fetch(`${server.httpJsonUrl}${path}`, { method: "POST", headers, body });
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { error: { status: string; message: string } };
    expect(answer.error.status).toBe("INVALID_ARGUMENT");
    expect(answer.error.message).toContain(field.split(" ")[0]);
    expect(onError).not.toHaveBeenCalled();
  });
});

/** One gRPC call over a raw HTTP/2 client: `message` in one length-prefixed frame; the status and message it ends with. */
function rawGrpc(path: string, message: Buffer): Promise<{ status: number; message: string }> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://${server.grpcAddress}`);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", "a2a-version": "1.0" });
    const header = Buffer.alloc(5);
    header.writeUInt32BE(message.length, 1);
    let status = -1;
    let text = "";
    const read = (h: Record<string, unknown>) => {
      if (h["grpc-status"] !== undefined) {
        status = Number(h["grpc-status"]);
        text = decodeURIComponent(String(h["grpc-message"] ?? ""));
      }
    };
    stream.on("response", read);
    stream.on("trailers", read);
    stream.on("data", () => undefined);
    stream.on("error", reject);
    stream.on("close", () => {
      session.close();
      resolve({ status, message: text });
    });
    stream.end(Buffer.concat([header, message]));
  });
}

describe("protobuf bytes that are not a message of the method's type (found by the campaign: gRPC INTERNAL)", () => {
  // grpc-js answers INTERNAL "Error deserializing request" when the request deserializer
  // throws; the binding now answers InvalidParams (INVALID_ARGUMENT, D90), as the JSON
  // bindings answer a body that does not decode.
  test.each([
    ["a field without its length (the minimized one)", "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig", "1a"],
    ["a length past the end", "/lf.a2a.v1.A2AService/GetTask", "12ffffffff0f"],
    ["wire type 7", "/lf.a2a.v1.A2AService/SendMessage", "0f"],
    ["a varint that never ends", "/lf.a2a.v1.A2AService/ListTasks", "20ffffffffffffffffffff"],
    ["on a streaming method", "/lf.a2a.v1.A2AService/SubscribeToTask", "1a"],
  ])("%s: INVALID_ARGUMENT naming the type", async (_, path, hex) => {
    const answer = await rawGrpc(path, Buffer.from(hex, "hex"));
    expect(answer.status).toBe(3);
    expect(answer.message).toMatch(/^invalid params: the request is not a lf\.a2a\.v1\.\w+ in protobuf binary: /);
    expect(onError).not.toHaveBeenCalled();
  });

  test("messages nested past the decoder's recursion limit are INVALID_ARGUMENT too", async () => {
    // Part.data's google.protobuf.Value: a list_value (field 6) in a list_value ... 200 deep.
    let value = Buffer.from([0x1a, 0x01, 0x78]); // string_value "x"
    for (let i = 0; i < 200; i++) {
      const list = Buffer.concat([Buffer.from([0x0a]), varint(value.length), value]); // ListValue.values
      value = Buffer.concat([Buffer.from([0x32]), varint(list.length), list]); // Value.list_value
    }
    const part = Buffer.concat([Buffer.from([0x22]), varint(value.length), value]); // Part.data
    const msg = Buffer.concat([Buffer.from([0x0a, 0x01, 0x6d, 0x20, 0x01, 0x2a]), varint(part.length), part]); // message_id, role, parts
    const request = Buffer.concat([Buffer.from([0x12]), varint(msg.length), msg]); // SendMessageRequest.message
    const answer = await rawGrpc("/lf.a2a.v1.A2AService/SendMessage", request);
    expect(answer.status).toBe(3);
    expect(onError).not.toHaveBeenCalled();
  });
});

describe("a google.protobuf.Value that ProtoJSON cannot write, sent on gRPC (found by the campaign: the task's push notification failed, and JSON reads of it would answer Internal)", () => {
  /** SendMessageRequest bytes whose message has one part whose data is `value` (google.protobuf.Value bytes). */
  const withData = (value: Buffer) => {
    const part = Buffer.concat([Buffer.from([0x22]), varint(value.length), value]); // Part.data
    const msg = Buffer.concat([Buffer.from([0x0a, 0x01, 0x6d, 0x20, 0x01, 0x2a]), varint(part.length), part]); // message_id, role, parts
    return Buffer.concat([Buffer.from([0x12]), varint(msg.length), msg]); // SendMessageRequest.message
  };
  const nan = Buffer.from([0x11, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f]); // number_value NaN
  // A text part "x", and the message's metadata (a google.protobuf.Struct) { "k": NaN }.
  const nanInMetadata = (() => {
    const entry = Buffer.concat([Buffer.from([0x0a, 0x01, 0x6b, 0x12, nan.length]), nan]); // fields { key "k", value }
    const struct = Buffer.concat([Buffer.from([0x0a, entry.length]), entry]);
    const msg = Buffer.concat([Buffer.from([0x0a, 0x01, 0x6d, 0x20, 0x01, 0x2a, 0x03, 0x0a, 0x01, 0x78, 0x32, struct.length]), struct]);
    return Buffer.concat([Buffer.from([0x12, msg.length]), msg]);
  })();
  test.each([
    ["a Value with no kind", withData(Buffer.alloc(0)), /message\.parts\[0\]\.data: a google\.protobuf\.Value must have a value/],
    // struct_value { fields { "k": Value {} } }
    ["one inside a struct", withData(Buffer.from([0x2a, 0x07, 0x0a, 0x05, 0x0a, 0x01, 0x6b, 0x12, 0x00])), /data\["k"\]: a google\.protobuf\.Value must have a value/],
    ["a NaN", withData(nan), /parts\[0\]\.data: a number in a google\.protobuf\.Value cannot be NaN or infinite/],
    // list_value { values: [ "x", NaN ] }
    ["a NaN inside a list", withData(Buffer.concat([Buffer.from([0x32, 0x10, 0x0a, 0x03, 0x1a, 0x01, 0x78, 0x0a, 0x09]), nan])), /data\[1\]: a number in a google\.protobuf\.Value cannot be NaN or infinite/],
    ["a NaN in a Struct field (the message's metadata)", nanInMetadata, /message\.metadata\["k"\]: a number in a google\.protobuf\.Value cannot be NaN or infinite/],
  ])("%s: INVALID_ARGUMENT, before the handler", async (_, request, reason) => {
    const answer = await rawGrpc("/lf.a2a.v1.A2AService/SendMessage", request);
    expect(answer.status).toBe(3);
    expect(answer.message).toMatch(/^invalid params: the request holds what its JSON form cannot: lf\.a2a\.v1\.SendMessageRequest\.message/);
    expect(answer.message).toMatch(reason);
    expect(onError).not.toHaveBeenCalled();
  });

  // Part.data is any JSON, null included (checklist part 4): only a Value with no kind at all has no JSON form.
  test.each([
    ["a string", Buffer.from([0x1a, 0x01, 0x78])], // string_value "x"
    ["null", Buffer.from([0x08, 0x00])], // null_value NULL_VALUE
  ])("a Value ProtoJSON can write passes: %s", async (_, value) => {
    const answer = await rawGrpc("/lf.a2a.v1.A2AService/SendMessage", withData(value));
    expect(answer.status).toBe(0);
    expect(onError).not.toHaveBeenCalled();
  });
});

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

describe("a finished task whose metadata nests deeper than the binary decoder's bound (found by the campaign: -32603 on every later read)", () => {
  // A finished task is kept as its protobuf bytes; a Struct or Value nests two messages per JSON
  // level, so metadata ProtoJSON accepted (here 60 levels) was past the binary decoder's bound of
  // 100 when read back: GetTask, ListTasks and anything else that met the task failed Internal.
  test("JSON-RPC: the task is sent, finishes, and GetTask and ListTasks still read it", async () => {
    const rpc = async (method: string, params: string) => {
      const res = await fetch(server.jsonRpcUrl as string, { method: "POST", headers, body: `{"jsonrpc":"2.0","id":1,"method":"${method}","params":${params}}` });
      return (await res.json()) as { result?: Record<string, unknown> & { task?: { id: string; status: { state: string } } }; error?: { code: number } };
    };
    const contextId = `deep-${Date.now()}`;
    const sent = await rpc("SendMessage", `{"message":{"messageId":"m-deep","contextId":"${contextId}","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":{"deep":${nestedArrays(60)}}}}`);
    expect(sent.error).toBeUndefined();
    const id = sent.result?.task?.id as string;
    expect(sent.result?.task?.status.state).toBe("TASK_STATE_COMPLETED");
    const got = await rpc("GetTask", `{"id":"${id}"}`);
    expect(got.error).toBeUndefined();
    expect(got.result?.id).toBe(id);
    const listed = await rpc("ListTasks", `{"contextId":"${contextId}"}`);
    expect(listed.error).toBeUndefined();
    expect((listed.result?.tasks as { id: string }[]).map((t) => t.id)).toEqual([id]);
    expect(onError).not.toHaveBeenCalled();
  });
});
