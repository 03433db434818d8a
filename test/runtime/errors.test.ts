/**
 * The generated error table and classes, and recognition across copies: an
 * error raised by one copy of the runtime and generated code (another bundle,
 * a duplicate install) must be recognised by every other copy.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";
import * as generated from "../../runtime/a2a/errors.js";
import { A2AError, isA2AError } from "../../runtime/a2a/errors.js";
import { RpcError } from "../../runtime/core/errors.js";
import { projectRoot, scratchDir } from "../support/protos.js";

const { A2AErrorTable, TaskNotFoundError, TaskNotCancelableError, VersionNotSupportedError } = generated;

// Spec section 5.4 at v1.0.1 (checklist Part B 5.2) and decision D4.
test.each([
  ["TaskNotFound", "TASK_NOT_FOUND", -32001, "NOT_FOUND", 404],
  ["TaskNotCancelable", "TASK_NOT_CANCELABLE", -32002, "FAILED_PRECONDITION", 400],
  ["PushNotificationNotSupported", "PUSH_NOTIFICATION_NOT_SUPPORTED", -32003, "FAILED_PRECONDITION", 400],
  ["UnsupportedOperation", "UNSUPPORTED_OPERATION", -32004, "FAILED_PRECONDITION", 400],
  ["ContentTypeNotSupported", "CONTENT_TYPE_NOT_SUPPORTED", -32005, "INVALID_ARGUMENT", 400],
  ["InvalidAgentResponse", "INVALID_AGENT_RESPONSE", -32006, "INTERNAL", 500],
  ["ExtendedAgentCardNotConfigured", "EXTENDED_AGENT_CARD_NOT_CONFIGURED", -32007, "FAILED_PRECONDITION", 400],
  ["ExtensionSupportRequired", "EXTENSION_SUPPORT_REQUIRED", -32008, "FAILED_PRECONDITION", 400],
  ["VersionNotSupported", "VERSION_NOT_SUPPORTED", -32009, "FAILED_PRECONDITION", 400],
  ["ParseError", "PARSE_ERROR", -32700, "INVALID_ARGUMENT", 400],
  ["InvalidRequest", "INVALID_REQUEST", -32600, "INVALID_ARGUMENT", 400],
  ["MethodNotFound", "METHOD_NOT_FOUND", -32601, "UNIMPLEMENTED", 404],
  ["InvalidParams", "INVALID_PARAMS", -32602, "INVALID_ARGUMENT", 400],
  ["Internal", "INTERNAL", -32603, "INTERNAL", 500],
  ["Unauthenticated", "UNAUTHENTICATED", -31401, "UNAUTHENTICATED", 401],
  ["PermissionDenied", "PERMISSION_DENIED", -31403, "PERMISSION_DENIED", 403],
] as const)("%s: reason %s, JSON-RPC %i, gRPC %s, HTTP %i", (name, reason, jsonRpcCode, grpcStatus, httpStatus) => {
  const entry = A2AErrorTable[name];
  expect(entry).toMatchObject({ name, reason, jsonRpcCode, grpcStatus, httpStatus });
  expect(entry.domain).toBe(jsonRpcCode >= -32009 && jsonRpcCode <= -32001 ? "a2a-protocol.org" : "");
  const ErrorClass = (generated as unknown as Record<string, new (message?: string) => A2AError>)[`${name}Error`];
  expect(ErrorClass).toBeDefined();
  const err = new (ErrorClass as new (message?: string) => A2AError)();
  expect(err.name).toBe(`${name}Error`);
  expect(err.reason).toBe(reason);
  expect(err.message).toBe(entry.defaultMessage);
  expect(err.entry).toBe(entry);
});

test("the table has exactly the errors above", () => {
  expect(Object.keys(A2AErrorTable)).toHaveLength(16);
});

test("instanceof checks the error's reason, not only its class", () => {
  const err = new TaskNotFoundError("no task t-1", { metadata: { taskId: "t-1" } });
  expect(err).toBeInstanceOf(Error);
  expect(err).toBeInstanceOf(A2AError);
  expect(err).toBeInstanceOf(TaskNotFoundError);
  expect(err).not.toBeInstanceOf(TaskNotCancelableError);
  expect(err.message).toBe("no task t-1");
  expect(err.metadata).toEqual({ taskId: "t-1" });
  expect(isA2AError(err)).toBe(true);
  expect(isA2AError(err, "TASK_NOT_FOUND")).toBe(true);
  expect(isA2AError(err, "TASK_NOT_CANCELABLE")).toBe(false);
  expect(isA2AError(new Error("plain"))).toBe(false);
  expect(isA2AError({ reason: "TASK_NOT_FOUND" })).toBe(false);
  expect(isA2AError(null)).toBe(false);
  expect(new Error("plain")).not.toBeInstanceOf(A2AError);
});

test("a cause is kept", () => {
  const cause = new Error("db down");
  expect(new VersionNotSupportedError(undefined, { cause }).cause).toBe(cause);
});

describe("a second copy of the runtime and the generated errors", () => {
  const scratch = scratchDir("errors-copy");
  afterAll(() => scratch.done());

  // Transpile both modules into another folder: a separate module instance
  // with its own A2AError class, as a second bundle or install would have.
  async function loadCopy(): Promise<Record<string, unknown>> {
    const dir = join(scratch.dir, "copy");
    mkdirSync(dir, { recursive: true });
    // The modules keep their relative layout and `.js` specifiers; the folder is ESM.
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
    const emit = (source: string) => {
      const js = ts.transpileModule(readFileSync(join(projectRoot, "runtime", source), "utf8"), {
        compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      const to = join(dir, source.replace(/\.ts$/, ".js"));
      mkdirSync(dirname(to), { recursive: true });
      writeFileSync(to, js);
    };
    for (const source of ["gen/google/rpc/code_pb.ts", "core/errors.ts", "a2a/errors.ts"]) emit(source);
    return (await import(pathToFileURL(join(dir, "a2a/errors.js")).href)) as Record<string, unknown>;
  }

  test("errors raised by the copy are recognised here, and the other way round", async () => {
    const copy = await loadCopy();
    const CopyTaskNotFound = copy.TaskNotFoundError as new () => Error;
    // A real second class hierarchy, not the one imported above.
    expect(CopyTaskNotFound).not.toBe(TaskNotFoundError);
    expect(Object.getPrototypeOf(CopyTaskNotFound)).not.toBe(A2AError);

    const foreign = new CopyTaskNotFound();
    expect(foreign instanceof A2AError).toBe(true);
    expect(foreign instanceof TaskNotFoundError).toBe(true);
    expect(foreign instanceof TaskNotCancelableError).toBe(false);
    expect(isA2AError(foreign, "TASK_NOT_FOUND")).toBe(true);

    const local = new TaskNotFoundError();
    expect(local instanceof CopyTaskNotFound).toBe(true);
  });
});

test("an RpcError with code OK, or a name that is no google.rpc.Code, is refused when made: the three bindings answered it three ways", () => {
  expect(() => new RpcError("OK")).toThrow(new TypeError('RpcError needs a google.rpc.Code name other than OK (CANCELLED, NOT_FOUND, ...), got "OK"'));
  for (const bogus of ["BOGUS", "toString", "__proto__", ""]) expect(() => new RpcError(bogus as never)).toThrow(TypeError);
  expect(new RpcError("NOT_FOUND").entry.httpStatus).toBe(404);
});
