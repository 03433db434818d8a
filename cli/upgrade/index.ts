/**
 * The library behind `protoc-gen-a2a upgrade --to <version>` (issue 16):
 * compare the old and new a2a.proto, report what changed and whom it breaks,
 * and edit the user's handler (stubs for new RPCs, comments on removed ones).
 * The command glue pulls the new proto, calls `runUpgrade`, then runs
 * `buf generate`.
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { FileDescriptorSet } from "@bufbuild/protobuf/wkt";
import { loadDescriptors, type DescriptorSource } from "./descriptors.js";
import { diffDescriptors, type ProtoDiff } from "./diff.js";
import { checkSameLine } from "./line.js";
import { renderJson, renderText, reportJson, type UpgradeReportJson } from "./report.js";
import { editHandlers, type FileChange, type HandlerResult } from "./stubs.js";

export { buildDescriptors, findBuf, loadDescriptors, type DescriptorSource } from "./descriptors.js";
export { diffDescriptors } from "./diff.js";
export type { Action, Aspect, Breaking, Change, ChangeKind, MessageRef, ProtoDiff, RpcInfo, ServiceDelta, Subject } from "./diff.js";
export { a2aLineOf, checkSameLine, UpgradeRefusedError, type A2ALine } from "./line.js";
export { renderJson, renderText, reportJson, summarize, type ReportOptions, type ReportSummary, type UpgradeReportJson } from "./report.js";
export { editHandlers, findSourceFiles, loadTsMorph, onlyLinesInserted, TsMorphMissingError } from "./stubs.js";
export type { EditHandlersOptions, FileChange, HandlerEdit, HandlerResult, ManualStep } from "./stubs.js";

export interface UpgradeOptions {
  /** The agent's repo: where handler files are looked for, and what edited paths are relative to. */
  readonly repoDir: string;
  /** The current proto: its descriptors, or its folder(s) (built with buf). One of the two. */
  readonly oldDescriptors?: FileDescriptorSet | Uint8Array;
  readonly oldProtoDir?: string | readonly string[];
  /** The proto upgraded to, likewise. */
  readonly newDescriptors?: FileDescriptorSet | Uint8Array;
  readonly newProtoDir?: string | readonly string[];
  /** Files that may hold the handler (relative to repoDir or absolute); default every .ts file of the repo but node_modules, build output and generated code. */
  readonly handlerFiles?: readonly string[];
  /** Version labels for the report and the comments, e.g. `v1.0.1` and `main`. */
  readonly from?: string;
  readonly to?: string;
  /** Compute everything, write nothing: the report says what would be edited, and `files` holds the would-be texts. */
  readonly dryRun?: boolean;
  /** False: report only, never load ts-morph nor read the user's code. Default true. */
  readonly editHandlers?: boolean;
  /** Where stubs import UnsupportedOperationError and the call context from, when the file does not import them yet; default `protoc-gen-a2a/runtime`. */
  readonly runtimeImport?: string;
}

export interface UpgradeResult {
  readonly diff: ProtoDiff;
  /** The report as text (for the terminal) and as JSON (for tools). */
  readonly text: string;
  readonly json: UpgradeReportJson;
  readonly jsonText: string;
  /** What was done to the user's code; undefined with `editHandlers: false`. */
  readonly handlers: HandlerResult | undefined;
  /** The files edited (or, in a dry run, that would be), with their text before and after. */
  readonly files: readonly FileChange[];
  /** True when `files` were written. */
  readonly written: boolean;
}

function source(descriptors: FileDescriptorSet | Uint8Array | undefined, protoDir: string | readonly string[] | undefined, which: string): DescriptorSource {
  if ((descriptors === undefined) === (protoDir === undefined)) {
    throw new Error(`runUpgrade: give exactly one of ${which}Descriptors and ${which}ProtoDir`);
  }
  return descriptors !== undefined ? { descriptors } : { protoDir: protoDir as string | readonly string[] };
}

/**
 * Compares the old and new proto, refuses another A2A major line
 * (UpgradeRefusedError, before anything is read or written in the repo),
 * edits the handler unless `editHandlers: false`, and writes the edits
 * unless `dryRun`. Throws TsMorphMissingError, before writing anything, when
 * edits are wanted and ts-morph is not installed.
 */
export async function runUpgrade(options: UpgradeOptions): Promise<UpgradeResult> {
  const oldSet = loadDescriptors(source(options.oldDescriptors, options.oldProtoDir, "old"));
  const newSet = loadDescriptors(source(options.newDescriptors, options.newProtoDir, "new"));
  checkSameLine(oldSet, newSet, options.from, options.to);
  const diff = diffDescriptors(oldSet, newSet);
  const handlers =
    options.editHandlers === false
      ? undefined
      : await editHandlers({
          repoDir: options.repoDir,
          diff,
          ...(options.handlerFiles === undefined ? {} : { handlerFiles: options.handlerFiles }),
          ...(options.runtimeImport === undefined ? {} : { runtimeImport: options.runtimeImport }),
          ...(options.from === undefined ? {} : { from: options.from }),
          ...(options.to === undefined ? {} : { to: options.to }),
        });
  const files = handlers?.files ?? [];
  const dryRun = options.dryRun === true;
  if (!dryRun) {
    for (const f of files) writeFileSync(join(resolve(options.repoDir), f.path), f.after);
  }
  const reportOptions = {
    ...(options.from === undefined ? {} : { from: options.from }),
    ...(options.to === undefined ? {} : { to: options.to }),
    ...(handlers === undefined ? {} : { handlers }),
    dryRun,
  };
  return {
    diff,
    text: renderText(diff, reportOptions),
    json: reportJson(diff, reportOptions),
    jsonText: renderJson(diff, reportOptions),
    handlers,
    files,
    written: !dryRun && files.length > 0,
  };
}
