/**
 * Which A2A major line a set of descriptors is, and the refusal to move
 * between lines (D61): `upgrade` compares protos of one line; A2A 0.3
 * (package `a2a.v1`) and 1.x (package `lf.a2a.v1`) share names but not a
 * wire format, and protoc-gen-a2a serves 1.x only.
 */
import type { FileDescriptorSet } from "@bufbuild/protobuf/wkt";

/** The A2A lines by the package of their `A2AService`. */
const lines: Readonly<Record<string, A2ALine>> = {
  "lf.a2a.v1": { line: "1.x", package: "lf.a2a.v1" },
  "a2a.v1": { line: "0.3", package: "a2a.v1" },
};

export interface A2ALine {
  /** `1.x` (served by protoc-gen-a2a) or `0.3`. */
  readonly line: "1.x" | "0.3";
  readonly package: string;
}

/** The A2A line of a proto package (`lf.a2a.v1`, `a2a.v1`); undefined for any other. */
export function a2aLineOfPackage(pkg: string): A2ALine | undefined {
  return Object.hasOwn(lines, pkg) ? lines[pkg] : undefined;
}

/** The A2A line of a descriptor set: the package of its `A2AService`; undefined when it has none (any other service). */
export function a2aLineOf(set: FileDescriptorSet): A2ALine | undefined {
  for (const file of set.file) {
    if (!file.service.some((s) => s.name === "A2AService")) continue;
    const known = lines[file.package ?? ""];
    if (known !== undefined) return known;
  }
  return undefined;
}

/** Thrown by `checkSameLine` / `runUpgrade` for protos of two A2A major lines; `message` says what to do instead. */
export class UpgradeRefusedError extends Error {
  override readonly name = "UpgradeRefusedError";
  constructor(
    message: string,
    readonly from: A2ALine | undefined,
    readonly to: A2ALine | undefined,
  ) {
    super(message);
  }
}

const label = (v: string | undefined, fallback: string) => (v === undefined || v === "" ? fallback : `a2a.proto ${v}`);

/**
 * Refuses a pair of protos of different A2A major lines, with what to do
 * instead. `from`/`to` are version labels for the message (e.g. `v1.0.1`).
 */
export function checkSameLine(oldSet: FileDescriptorSet, newSet: FileDescriptorSet, from?: string, to?: string): void {
  const a = a2aLineOf(oldSet);
  const b = a2aLineOf(newSet);
  if (a?.line === b?.line) return;
  const oldName = label(from, "the current a2a.proto");
  const newName = label(to, "the new a2a.proto");
  if (b?.line === "0.3") {
    throw new UpgradeRefusedError(
      `${newName} is A2A 0.3 (package a2a.v1), another major line than ${a === undefined ? "your proto" : `your A2A ${a.line} (package ${a.package})`}. ` +
        `protoc-gen-a2a generates and serves A2A 1.x only: code generated from a 0.3 proto would claim protocol 1.0 and not compile against its own runtime. ` +
        `Stay on 1.x: upgrade to a 1.x version instead (v1.0.1, or main). To answer 0.3 clients as well, keep the 1.x proto and serve with \`compat: { v0_3: true }\` (D110). Nothing was changed.`,
      a,
      b,
    );
  }
  if (a?.line === "0.3") {
    throw new UpgradeRefusedError(
      `${oldName} is A2A 0.3 (package a2a.v1), which protoc-gen-a2a never generated for; ${newName} is ${b === undefined ? "not A2A" : `A2A ${b.line} (package ${b.package})`}. ` +
        `Moving from 0.3 to 1.x renames every message and method, so there is nothing to upgrade in place: pull the 1.x proto, regenerate, ` +
        `and implement A2AServiceHandler (or start from \`init\` and move your agent's logic over). Nothing was changed.`,
      a,
      b,
    );
  }
  throw new UpgradeRefusedError(
    `${oldName} is ${a === undefined ? "not an A2A proto (no A2AService)" : `A2A ${a.line} (package ${a.package})`} and ${newName} is ` +
      `${b === undefined ? "not an A2A proto (no A2AService)" : `A2A ${b.line} (package ${b.package})`}: upgrade compares two versions of one proto. ` +
      `Check the proto folder and the version asked for. Nothing was changed.`,
    a,
    b,
  );
}
