/**
 * Nothing is compiled at run time: the built runtime (dist/, built by
 * `npm test`'s pretest) and the generated code (generated/, transpiled here)
 * run in a Node process that disallows code generation from strings, and
 * give protobuf-es's bytes, messages and ProtoJSON.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { projectRoot, scratchDir } from "../support/protos.js";

/** generated/**\/*.ts transpiled into `dir` (type-free, as bench/lib/harness.mjs does). */
function transpileGenerated(dir: string): void {
  const generated = join(projectRoot, "generated");
  const compilerOptions = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true };
  for (const entry of readdirSync(generated, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = join(entry.parentPath, entry.name);
    const dest = join(dir, relative(generated, file)).replace(/\.ts$/, ".js");
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, ts.transpileModule(readFileSync(file, "utf8"), { compilerOptions, fileName: file }).outputText);
  }
}

test("generated code and the built runtime run where code generation from strings is disallowed", () => {
  const runtime = join(projectRoot, "dist", "runtime");
  expect(existsSync(join(runtime, "internal.js"))).toBe(true);
  const { dir, done } = scratchDir("no-codegen");
  try {
    transpileGenerated(dir);
    const script = `
      import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
      import { isDeepStrictEqual } from "node:util";
      import { SendMessageRequestSchema, SendMessageResponseSchema, TaskSchema } from "./a2a_pb.js";
      import { A2AServiceRequiredFields } from "./a2a_methods.js";
      import { SendMessageResponseCodec } from "./a2a_codec.js";
      import { decodeBinary, deserializeMessage, serializeMessage } from "protoc-gen-a2a/runtime/grpc";
      import { toJsonWithRequired } from ${JSON.stringify(join(runtime, "core", "codec", "required-fields.js"))};
      import { jsonWriter } from ${JSON.stringify(join(runtime, "core", "codec", "json-writer.js"))};
      import { decodeJson } from ${JSON.stringify(join(runtime, "core", "codec", "proto-json.js"))};
      let evalBlocked = false;
      try { new Function("return 1"); } catch (e) { evalBlocked = e instanceof EvalError; }
      const answer = {
        payload: {
          case: "task",
          value: {
            id: "task-1",
            contextId: "ctx-1",
            status: { state: 3, timestamp: { seconds: 1700000000n, nanos: 5 } },
            artifacts: [{ artifactId: "a", parts: [{ content: { case: "text", value: "hi" } }] }],
            metadata: { k: [1, "two", null, { three: true }] },
          },
        },
      };
      const expected = toBinary(SendMessageResponseSchema, create(SendMessageResponseSchema, answer));
      const bytes = serializeMessage(SendMessageResponseCodec, answer);
      const request = { message: { messageId: "m-1", role: 1, parts: [{ content: { case: "text", value: "hello" } }] } };
      const requestBytes = toBinary(SendMessageRequestSchema, create(SendMessageRequestSchema, request));
      const json = jsonWriter(SendMessageResponseSchema, A2AServiceRequiredFields)(answer);
      const results = {
        evalBlocked,
        sameBytes: Buffer.compare(bytes, Buffer.from(expected)) === 0,
        sameMessage: isDeepStrictEqual(deserializeMessage(SendMessageResponseCodec, expected), fromBinary(SendMessageResponseSchema, expected)),
        sameRequest: isDeepStrictEqual(decodeBinary(SendMessageRequestSchema, requestBytes), fromBinary(SendMessageRequestSchema, requestBytes)),
        sameJson: isDeepStrictEqual(json, toJsonWithRequired(SendMessageResponseSchema, create(SendMessageResponseSchema, answer), A2AServiceRequiredFields)),
        jsonRead: isDeepStrictEqual(decodeJson(TaskSchema, { id: "t", status: { state: "TASK_STATE_WORKING" } }), create(TaskSchema, { id: "t", status: { state: 2 } })),
      };
      process.stdout.write(JSON.stringify(results));
    `;
    const out = execFileSync(process.execPath, ["--disallow-code-generation-from-strings", "--input-type=module", "-e", script], { cwd: dir, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({ evalBlocked: true, sameBytes: true, sameMessage: true, sameRequest: true, sameJson: true, jsonRead: true });
  } finally {
    done();
  }
});
