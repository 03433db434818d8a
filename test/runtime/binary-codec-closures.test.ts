/**
 * The binary codec where code generation from strings is disallowed: the
 * same cases (binary-codec.cases.ts) with codecs built from closures, and a
 * Node process started with --disallow-code-generation-from-strings that
 * falls back to them by itself.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { allowCodeGeneration, codecKind } from "../../runtime/core/codec/binary-codec.js";
import { codecTests, fixtures } from "./binary-codec.cases.js";

// Before any codec is built: codecs are built on first use and kept.
allowCodeGeneration(false);

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

test("codecs are closures when code generation is turned off", () => {
  for (const desc of Object.values(fixtures)) expect([desc.typeName, codecKind(desc)]).toEqual([desc.typeName, { compiled: false, literalZero: false }]);
});

codecTests();

test("a process that disallows code generation from strings gets closure codecs, with protobuf-es's results", () => {
  const codec = join(root, "dist", "runtime", "core", "codec", "binary-codec.js");
  // dist is built by `npm test`'s pretest (npm run generate).
  expect(existsSync(codec)).toBe(true);
  const script = `
    import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
    import { AnySchema, StructSchema, TimestampSchema } from "@bufbuild/protobuf/wkt";
    import { codecKind, decodeBinary, encodeBinary } from ${JSON.stringify(codec)};
    import { isDeepStrictEqual } from "node:util";
    let evalBlocked = false;
    try { new Function("return 1"); } catch (e) { evalBlocked = e instanceof EvalError; }
    const cases = [
      [StructSchema, { fields: { a: { kind: { case: "stringValue", value: "x" } }, n: { kind: { case: "numberValue", value: 2.5 } } } }],
      [TimestampSchema, { seconds: 1700000000n, nanos: 5 }],
      [AnySchema, { typeUrl: "type.googleapis.com/google.protobuf.Timestamp", value: new Uint8Array([8, 1]) }],
    ];
    const results = cases.map(([desc, init]) => {
      const expected = toBinary(desc, create(desc, init));
      const bytes = encodeBinary(desc, init);
      return {
        type: desc.typeName,
        kind: codecKind(desc),
        sameBytes: Buffer.compare(Buffer.from(bytes), Buffer.from(expected)) === 0,
        sameMessage: isDeepStrictEqual(decodeBinary(desc, expected), fromBinary(desc, expected)),
      };
    });
    process.stdout.write(JSON.stringify({ evalBlocked, results }));
  `;
  const out = execFileSync(process.execPath, ["--disallow-code-generation-from-strings", "--input-type=module", "-e", script], { cwd: root, encoding: "utf8" });
  const { evalBlocked, results } = JSON.parse(out) as { evalBlocked: boolean; results: { type: string; kind: unknown; sameBytes: boolean; sameMessage: boolean }[] };
  expect(evalBlocked).toBe(true);
  expect(results).toEqual(
    ["google.protobuf.Struct", "google.protobuf.Timestamp", "google.protobuf.Any"].map((type) => ({
      type,
      kind: { compiled: false, literalZero: false },
      sameBytes: true,
      sameMessage: true,
    })),
  );
});
