/**
 * The README's error table is written for readers; this keeps it equal to the
 * one table the runtime holds, so the two cannot drift apart.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { A2AErrorTable } from "../../runtime/a2a/errors.js";
import { projectRoot } from "../support/protos.js";

test("the README lists every error with the codes of runtime/a2a/errors.ts", () => {
  const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
  const rows = [...readme.matchAll(/^\| (\w+) \| ([A-Z_]+) \| (-?\d+) \| ([A-Z_]+) \| (\d+)[^|]*\|$/gm)].map((m) => ({
    name: m[1],
    reason: m[2],
    jsonRpcCode: Number(m[3]),
    grpcStatus: m[4],
    httpStatus: Number(m[5]),
  }));
  expect(rows).toEqual(
    Object.values(A2AErrorTable).map(({ name, reason, jsonRpcCode, grpcStatus, httpStatus }) => ({ name, reason, jsonRpcCode, grpcStatus, httpStatus })),
  );
});
