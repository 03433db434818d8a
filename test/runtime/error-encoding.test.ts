/**
 * One A2AError, three wire encodings (D2, D3, D4; Part B 5.1-5.3, 15 #3-#5):
 * JSON-RPC error object, HTTP+JSON AIP-193 body, gRPC google.rpc.Status.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { DurationSchema, anyUnpack } from "@bufbuild/protobuf/wkt";
import {
  A2AErrorTable,
  InternalError,
  InvalidParamsError,
  MethodNotFoundError,
  TaskNotCancelableError,
  TaskNotFoundError,
} from "../../runtime/a2a/errors.js";
import { A2AServiceRequiredFields } from "../../generated/a2a_methods.js";
import { SendMessageRequestSchema } from "../../generated/a2a_pb.js";
import {
  badRequest,
  errorDetailsJson,
  grpcMessageLimit,
  grpcStatusDetailsLimit,
  grpcStatusOf,
  grpcStatusParts,
  httpErrorBody,
  jsonRpcErrorObject,
  rpcCode,
} from "../../runtime/core/error-encoding.js";
import { A2AError, isA2AError } from "../../runtime/a2a/errors.js";
import { toRpcError, type RpcCodeName } from "../../runtime/core/errors.js";
import { findMissingRequired } from "../../runtime/core/codec/required-fields.js";
import { Code } from "../../runtime/gen/google/rpc/code_pb.js";
import { BadRequestSchema, ErrorInfoSchema } from "../../runtime/gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../runtime/gen/google/rpc/status_pb.js";

const errorInfoType = "type.googleapis.com/google.rpc.ErrorInfo";
const badRequestType = "type.googleapis.com/google.rpc.BadRequest";

const violations = [
  { field: "message.role", description: "field is required" },
  { field: "message.parts", description: "field is required" },
];

describe("toRpcError", () => {
  test("an A2AError from the generated classes passes through unchanged", () => {
    const err = new TaskNotFoundError("no task t-1", { metadata: { taskId: "t-1" } });
    expect(toRpcError(err, A2AErrorTable.Internal)).toBe(err);
  });

  test("a thrown TypeError becomes Internal with the default message; the original is only the cause", () => {
    const thrown = new TypeError("cannot read secretToken of undefined");
    const err = toRpcError(thrown, A2AErrorTable.Internal);
    expect(isA2AError(err, "INTERNAL")).toBe(true);
    expect(err).toBeInstanceOf(InternalError);
    expect(err.message).toBe("Internal error");
    expect(err.cause).toBe(thrown);
    expect(err.stack ?? "").not.toContain("secretToken");
    for (const encoded of [jsonRpcErrorObject(err), httpErrorBody(err), grpcStatusOf(err).message]) {
      expect(JSON.stringify(encoded)).not.toContain("secretToken");
    }
    expect(jsonRpcErrorObject(err)).toStrictEqual({ code: -32603, message: "Internal error" });
  });

  test("non-Error throws are wrapped too", () => {
    const fromString = toRpcError("boom", A2AErrorTable.Internal);
    expect(fromString).toBeInstanceOf(A2AError);
    expect(fromString.message).toBe("Internal error");
    expect(fromString.cause).toBe("boom");
    // A look-alike without the brand is not trusted.
    const lookAlike = { entry: A2AErrorTable.TaskNotFound, message: "leak" };
    expect(toRpcError(lookAlike, A2AErrorTable.Internal).entry).toBe(A2AErrorTable.Internal);
  });
});

describe("errorDetailsJson", () => {
  test("ErrorInfo with metadata for an A2A error", () => {
    const err = new TaskNotFoundError(undefined, { metadata: { taskId: "t-1" } });
    expect(errorDetailsJson(err)).toStrictEqual([
      { "@type": errorInfoType, reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { taskId: "t-1" } },
    ]);
  });

  test("metadata is omitted when empty", () => {
    expect(errorDetailsJson(new TaskNotCancelableError())).toStrictEqual([
      { "@type": errorInfoType, reason: "TASK_NOT_CANCELABLE", domain: "a2a-protocol.org" },
    ]);
  });

  test("ErrorInfo first, then the error's details as ProtoJSON Any", () => {
    const err = new TaskNotFoundError(undefined, { details: [badRequest(violations)] });
    expect(errorDetailsJson(err)).toStrictEqual([
      { "@type": errorInfoType, reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" },
      { "@type": badRequestType, fieldViolations: violations },
    ]);
  });

  test("generic errors carry no ErrorInfo (empty domain)", () => {
    expect(errorDetailsJson(new MethodNotFoundError())).toStrictEqual([]);
    expect(errorDetailsJson(new InvalidParamsError(undefined, { details: [badRequest(violations)] }))).toStrictEqual([
      { "@type": badRequestType, fieldViolations: violations },
    ]);
  });

  test("a well-known type with its own JSON form goes under value", () => {
    const retry = { desc: DurationSchema, value: create(DurationSchema, { seconds: 1n, nanos: 500_000_000 }) };
    expect(errorDetailsJson(new MethodNotFoundError(undefined, { details: [retry] }))).toStrictEqual([
      { "@type": "type.googleapis.com/google.protobuf.Duration", value: "1.500s" },
    ]);
  });
});

describe("jsonRpcErrorObject", () => {
  test("A2A error: code, message and ErrorInfo in data (D3)", () => {
    const err = new TaskNotFoundError("Task t-1 not found", { metadata: { taskId: "t-1" } });
    expect(jsonRpcErrorObject(err)).toStrictEqual({
      code: -32001,
      message: "Task t-1 not found",
      data: [
        { "@type": errorInfoType, reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { taskId: "t-1" } },
      ],
    });
  });

  test("data is omitted when there are no details", () => {
    const obj = jsonRpcErrorObject(new MethodNotFoundError());
    expect(obj).toStrictEqual({ code: -32601, message: "Method not found" });
    expect("data" in obj).toBe(false);
  });
});

describe("httpErrorBody", () => {
  test("AIP-193 shape with HTTP status and google.rpc.Code name (D2)", () => {
    expect(httpErrorBody(new TaskNotCancelableError("Task t-1 is completed", { metadata: { taskId: "t-1" } }))).toStrictEqual({
      error: {
        code: 400,
        status: "FAILED_PRECONDITION",
        message: "Task t-1 is completed",
        details: [
          {
            "@type": errorInfoType,
            reason: "TASK_NOT_CANCELABLE",
            domain: "a2a-protocol.org",
            metadata: { taskId: "t-1" },
          },
        ],
      },
    });
  });

  test("details are always present, possibly empty", () => {
    expect(httpErrorBody(new InternalError())).toStrictEqual({
      error: { code: 500, status: "INTERNAL", message: "Internal error", details: [] },
    });
  });

  test("missing REQUIRED fields as InvalidParams with a BadRequest (D11)", () => {
    const req = create(SendMessageRequestSchema, { message: { messageId: "m-1" } });
    const missing = findMissingRequired(SendMessageRequestSchema, req, A2AServiceRequiredFields);
    const err = new InvalidParamsError(undefined, { details: [badRequest(missing)] });
    const body = httpErrorBody(err);
    expect(body).toStrictEqual({
      error: {
        code: 400,
        status: "INVALID_ARGUMENT",
        message: "Invalid params",
        details: [{ "@type": badRequestType, fieldViolations: violations }],
      },
    });
    // Plain JSON all the way down.
    expect(JSON.parse(JSON.stringify(body))).toStrictEqual(body);
  });
});

describe("grpcStatusOf", () => {
  test("round-trips through the wire with ErrorInfo first, then the details", () => {
    const err = new TaskNotFoundError("Task t-1 not found", {
      metadata: { taskId: "t-1" },
      details: [badRequest(violations)],
    });
    const status = fromBinary(StatusSchema, toBinary(StatusSchema, grpcStatusOf(err)));
    expect(status.code).toBe(5);
    expect(status.message).toBe("Task t-1 not found");
    expect(status.details.map((d) => d.typeUrl)).toStrictEqual([errorInfoType, badRequestType]);

    const info = status.details[0] && anyUnpack(status.details[0], ErrorInfoSchema);
    expect(info).toStrictEqual(
      create(ErrorInfoSchema, { reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: { taskId: "t-1" } }),
    );
    const bad = status.details[1] && anyUnpack(status.details[1], BadRequestSchema);
    expect(bad?.fieldViolations.map(({ field, description }) => ({ field, description }))).toStrictEqual(violations);
  });

  test("generic error: code from the table, no ErrorInfo", () => {
    const status = grpcStatusOf(new MethodNotFoundError());
    expect(status.code).toBe(12);
    expect(status.message).toBe("Method not found");
    expect(status.details).toStrictEqual([]);
  });

  test("every table entry maps to its gRPC code number", () => {
    for (const entry of Object.values(A2AErrorTable)) {
      expect(grpcStatusOf(new A2AError(entry)).code).toBe(Code[entry.grpcStatus]);
    }
  });
});

describe("rpcCode", () => {
  test.each([
    ["OK", 0],
    ["CANCELLED", 1],
    ["UNKNOWN", 2],
    ["INVALID_ARGUMENT", 3],
    ["DEADLINE_EXCEEDED", 4],
    ["NOT_FOUND", 5],
    ["ALREADY_EXISTS", 6],
    ["PERMISSION_DENIED", 7],
    ["RESOURCE_EXHAUSTED", 8],
    ["FAILED_PRECONDITION", 9],
    ["ABORTED", 10],
    ["OUT_OF_RANGE", 11],
    ["UNIMPLEMENTED", 12],
    ["INTERNAL", 13],
    ["UNAVAILABLE", 14],
    ["DATA_LOSS", 15],
    ["UNAUTHENTICATED", 16],
  ] satisfies [RpcCodeName, number][])("%s is %i", (name, code) => {
    expect(rpcCode(name)).toBe(code);
  });
});

describe("badRequest", () => {
  test("builds a google.rpc.BadRequest detail", () => {
    const detail = badRequest(violations);
    expect(detail.desc).toBe(BadRequestSchema);
    expect(detail.value).toStrictEqual(create(BadRequestSchema, { fieldViolations: violations }));
  });
});

describe("a gRPC status within its trailers (D19)", () => {
  const infoOf = (status: ReturnType<typeof fromBinary<typeof StatusSchema>>) => anyUnpack(status.details[0]!, ErrorInfoSchema);

  test("a short error is sent whole, as grpcStatusOf has it", () => {
    const err = new TaskNotFoundError("no task t1", { metadata: { taskId: "t1" } });
    const sent = grpcStatusParts(err);
    expect(sent.message).toBe("no task t1");
    expect(Buffer.from(sent.details)).toEqual(Buffer.from(toBinary(StatusSchema, grpcStatusOf(err))));
  });

  test("a long value of the caller is cut, keeping code, reason and domain; grpc-message fits grpc-js's encoding, and the Status says the same message", () => {
    for (const [unit, n] of [["x", 70_000], ["x", 1_500], ["é", 30_000], ["名", 200], ["😀", 30_000], ["%", 30_000]] as const) {
      const id = unit.repeat(n);
      const err = new TaskNotFoundError(`no task ${id}`, { metadata: { taskId: id }, details: [badRequest([{ field: "id", description: id }])] });
      const sent = grpcStatusParts(err);
      expect(encodeURI(sent.message).length).toBeLessThanOrEqual(grpcMessageLimit);
      expect(sent.message).toMatch(/^no task .+…$/u);
      expect(sent.details.length).toBeLessThanOrEqual(grpcStatusDetailsLimit);
      const status = fromBinary(StatusSchema, sent.details);
      // grpc-core clients (Python's rpc_status.from_call) refuse a status whose two messages differ.
      expect(status.message).toBe(sent.message);
      expect(status.code).toBe(Code.NOT_FOUND);
      expect(infoOf(status)).toMatchObject({ reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" });
      // The metadata is cut only when the whole Status would not fit.
      const taskId = infoOf(status)?.metadata.taskId ?? "";
      if (taskId !== id) expect([Buffer.byteLength(taskId) <= 256, taskId.endsWith("…")]).toEqual([true, true]);
    }
  });

  test("a lone surrogate, which grpc-js's encodeURI refuses, is sent as U+FFFD, in both places", () => {
    const sent = grpcStatusParts(new TaskNotFoundError("bad \uD800 and \uDC00 here, \uD83D\uDE00 kept"));
    expect(sent.message).toBe("bad \uFFFD and \uFFFD here, \uD83D\uDE00 kept");
    expect(fromBinary(StatusSchema, sent.details).message).toBe(sent.message);
  });

  test("metadata too large in count is dropped before the reason is", () => {
    const metadata = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`key${i}`, "v".repeat(200)]));
    const status = fromBinary(StatusSchema, grpcStatusParts(new TaskNotFoundError("no task", { metadata })).details);
    expect(infoOf(status)).toMatchObject({ reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org", metadata: {} });
  });
});
