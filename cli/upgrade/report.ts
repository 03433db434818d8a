/**
 * The upgrade report, as text for a person and as JSON for tools. Both are
 * deterministic: the same two protos (and edits) give the same bytes, in
 * code-point order, never the locale's.
 */
import type { A2ALine } from "./line.js";
import type { Breaking, Change, ProtoDiff, Subject } from "./diff.js";
import type { HandlerResult } from "./stubs.js";

export interface ReportOptions {
  /** Version labels, e.g. `v1.0.1` and `main`. */
  readonly from?: string;
  readonly to?: string;
  /** What was done to the user's code, when the handler was edited. */
  readonly handlers?: HandlerResult;
  /** True when nothing was written (dry run): the edits are what would be made. */
  readonly dryRun?: boolean;
}

export interface ReportSummary {
  readonly total: number;
  /** Changes other than comments, by whom they break. */
  readonly breakingBoth: number;
  readonly breakingServers: number;
  readonly breakingClients: number;
  readonly notBreaking: number;
  readonly comments: number;
}

export interface UpgradeReportJson {
  readonly from: string | null;
  readonly to: string | null;
  readonly line: A2ALine | null;
  readonly identical: boolean;
  readonly commentOnly: boolean;
  readonly summary: ReportSummary;
  readonly changes: readonly Change[];
  readonly handlers: {
    readonly dryRun: boolean;
    readonly edits: HandlerResult["edits"];
    readonly manual: HandlerResult["manual"];
    readonly notes: HandlerResult["notes"];
    readonly files: readonly string[];
  } | null;
}

const isComment = (c: Change) => c.aspect === "comments";

export function summarize(diff: ProtoDiff): ReportSummary {
  const real = diff.changes.filter((c) => !isComment(c));
  const count = (b: Breaking) => real.filter((c) => c.breaking === b).length;
  return {
    total: diff.changes.length,
    breakingBoth: count("both"),
    breakingServers: count("servers"),
    breakingClients: count("clients"),
    notBreaking: count("none"),
    comments: diff.changes.length - real.length,
  };
}

/** The report as a JSON value (stable key order). */
export function reportJson(diff: ProtoDiff, options: ReportOptions = {}): UpgradeReportJson {
  const h = options.handlers;
  return {
    from: options.from ?? null,
    to: options.to ?? null,
    line: diff.line ?? null,
    identical: diff.identical,
    commentOnly: diff.commentOnly,
    summary: summarize(diff),
    changes: diff.changes,
    handlers:
      h === undefined
        ? null
        : { dryRun: options.dryRun === true, edits: h.edits, manual: h.manual, notes: h.notes, files: h.files.map((f) => f.path) },
  };
}

/** The JSON report as text: two-space indented, ending in a newline. */
export function renderJson(diff: ProtoDiff, options: ReportOptions = {}): string {
  return `${JSON.stringify(reportJson(diff, options), null, 2)}\n`;
}

const subjectWords: Record<Subject, string> = {
  file: "file",
  service: "service",
  rpc: "RPC",
  message: "message",
  field: "field",
  oneof: "oneof",
  enum: "enum",
  "enum-value": "enum value",
  "http-rule": "HTTP rule",
};

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function title(c: Change): string {
  const what = subjectWords[c.subject];
  if (c.action === "changed") return `${what} ${c.element}: ${c.aspect === "field-behavior" ? "field_behavior" : (c.aspect ?? "")} changed`;
  if (c.action === "renamed") return `${what} renamed: ${c.oldElement ?? ""} -> ${c.element}`;
  return `${what} ${c.action}: ${c.element}`;
}

function changeLines(c: Change): string[] {
  const lines = [`  - ${title(c)}`];
  if (c.action === "changed") {
    lines.push(`      was: ${c.before ?? ""}`, `      now: ${c.after ?? ""}`);
  } else if (c.action === "added" && c.after !== undefined) {
    lines.push(`      ${c.after}`);
  } else if (c.action === "removed" && c.before !== undefined) {
    lines.push(`      was: ${c.before}`);
  }
  lines.push(`      ${c.reason}`);
  return lines;
}

const groups: readonly { breaking: Breaking; heading: string }[] = [
  { breaking: "both", heading: "Breaking for servers and clients" },
  { breaking: "servers", heading: "Breaking for servers (agents)" },
  { breaking: "clients", heading: "Breaking for clients (callers)" },
  { breaking: "none", heading: "Not breaking" },
];

/** The report as text: a headline, the changes grouped by whom they break, the comment changes, and what was done to the user's code. */
export function renderText(diff: ProtoDiff, options: ReportOptions = {}): string {
  const s = summarize(diff);
  const from = options.from ?? "old";
  const to = options.to ?? "new";
  const line = diff.line === undefined ? "" : ` (A2A ${diff.line.line}, package ${diff.line.package})`;
  const out: string[] = [`a2a.proto ${from} -> ${to}${line}`, ""];
  const comments = diff.changes.filter(isComment);
  const commentOn = (cs: readonly Change[]) => {
    const counts = new Map<string, number>();
    for (const c of cs) counts.set(c.subject, (counts.get(c.subject) ?? 0) + 1);
    return [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([subject, n]) => plural(n, subjectWords[subject as Subject])).join(", ");
  };
  if (diff.identical) {
    out.push("No change: both protos declare the same services, RPCs, messages, fields, enums, oneofs, field_behavior and google.api.http rules, with the same comments. Regenerating changes nothing.");
  } else if (diff.commentOnly) {
    out.push(
      `Only comments changed: ${plural(comments.length, "comment")} (on ${commentOn(comments)}). ` +
        "No service, RPC, message, field, enum, enum value, oneof, field_behavior or google.api.http rule changed, so nothing changes on the wire or in the generated API: " +
        "regenerating changes only the generated doc comments, and your code needs no change.",
    );
  } else {
    const breaking = s.breakingBoth + s.breakingServers + s.breakingClients;
    out.push(
      `${plural(s.total - s.comments, "change")}: ${breaking} breaking (${s.breakingBoth} for servers and clients, ${s.breakingServers} for servers only, ${s.breakingClients} for clients only), ` +
        `${s.notBreaking} not breaking; and ${plural(s.comments, "comment")} changed.`,
    );
    for (const g of groups) {
      const list = diff.changes.filter((c) => !isComment(c) && c.breaking === g.breaking);
      if (list.length === 0) continue;
      out.push("", `${g.heading} (${list.length})`);
      for (const c of list) out.push(...changeLines(c));
    }
  }
  if (comments.length > 0) {
    out.push("", `Comments changed (${comments.length})`);
    for (const c of comments) out.push(`  - ${subjectWords[c.subject]} ${c.element}`);
  }
  const h = options.handlers;
  if (h !== undefined) {
    out.push("", options.dryRun === true ? "Your code (dry run: nothing written)" : "Your code");
    if (h.edits.length === 0 && h.manual.length === 0 && h.notes.length === 0) {
      out.push(`  Nothing to edit in ${plural(h.scanned.length, "file")}.`);
    }
    for (const e of h.edits) {
      const verb =
        e.action === "stub-added"
          ? `${options.dryRun === true ? "would add" : "added"} a stub for ${e.rpc} as ${e.method}`
          : `${options.dryRun === true ? "would mark" : "marked"} ${e.method} (${e.action === "marked-removed" ? "RPC removed" : e.action === "marked-renamed" ? "RPC renamed" : "RPC changed"}: ${e.rpc})`;
      out.push(`  - ${e.file}:${e.line}, ${e.handler}: ${verb}`);
    }
    for (const m of h.manual) {
      out.push(`  - ${m.file}, ${m.handler}: add ${m.method} (${m.rpc}) by hand, because ${m.why}:`);
      for (const l of m.text.replace(/\r?\n$/, "").split(/\r?\n/)) out.push(`      ${l}`);
    }
    for (const n of h.notes) out.push(`  - ${n}`);
  }
  return `${out.join("\n")}\n`;
}
