/**
 * Compares two sets of descriptors (the old and new a2a.proto with their
 * imports) into a typed change list, A2A-aware: each change says whether it
 * breaks servers (agents), clients (callers), both or neither, and why (D60).
 *
 * Elements are matched by full name; what is left over on each side is
 * paired as a rename when exactly one old and one new element have the same
 * shape (D62), else reported as removed and added.
 */
import { create, createFileRegistry, getOption, hasOption, ScalarType, type DescEnum, type DescEnumValue, type DescField, type DescFile, type DescMessage, type DescMethod, type DescOneof, type DescService } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence, FileDescriptorSetSchema, type FileDescriptorProto, type FileDescriptorSet } from "@bufbuild/protobuf/wkt";
import { http } from "../../runtime/gen/google/api/annotations_pb.js";
import { FieldBehavior, field_behavior } from "../../runtime/gen/google/api/field_behavior_pb.js";
import type { HttpRule } from "../../runtime/gen/google/api/http_pb.js";
import { patternOf } from "../../plugin/model/http-binding.js";
import { names } from "../../plugin/names.js";
import { isRequired } from "../../runtime/core/codec/field-behavior.js";
import { PathTemplateError, parsePathTemplate, templateKey, type PathTemplate } from "../../runtime/core/http/path-template.js";
import { a2aLineOf, type A2ALine } from "./line.js";

/** Who has to do something about a change: servers (agents), clients (callers), both, or neither. */
export type Breaking = "none" | "servers" | "clients" | "both";

export type Subject = "file" | "service" | "rpc" | "message" | "field" | "oneof" | "enum" | "enum-value" | "http-rule";
export type Action = "added" | "removed" | "renamed" | "changed";
/** What changed, for `changed`. */
export type Aspect =
  | "package"
  | "imports"
  | "input"
  | "output"
  | "streaming"
  | "number"
  | "type"
  | "label"
  | "presence"
  | "json-name"
  | "oneof"
  | "field-behavior"
  | "http-route"
  | "http-body"
  | "http-response-body"
  | "deprecated"
  | "comments";

export type ChangeKind = `${Subject}.${Exclude<Action, "changed">}` | `${Subject}.changed.${Aspect}`;

export interface Change {
  /** `subject.action` or `subject.changed.aspect`, e.g. `rpc.added`, `field.changed.json-name`. */
  readonly kind: ChangeKind;
  readonly subject: Subject;
  readonly action: Action;
  readonly aspect?: Aspect;
  /**
   * The element, by full name as the new proto has it (the old one's for a
   * removal): `lf.a2a.v1.Task.id`, `lf.a2a.v1.A2AService.GetTask`, an enum
   * value as `lf.a2a.v1.TaskState.TASK_STATE_WORKING`, an HTTP rule as
   * `lf.a2a.v1.A2AService.GetTask GET /tasks/{id=*}`, a file by its path.
   */
  readonly element: string;
  /** The old full name, for a rename. */
  readonly oldElement?: string;
  /** What it was and is, in words (a type, a number, a route, a comment). */
  readonly before?: string;
  readonly after?: string;
  readonly breaking: Breaking;
  /** Why it breaks whom, or why it does not. */
  readonly reason: string;
}

/** A message an RPC takes or returns, with what protoc-gen-es names it. */
export interface MessageRef {
  readonly typeName: string;
  /** The proto file that declares it, e.g. `a2a.proto`, `google/protobuf/empty.proto`. */
  readonly protoFile: string;
  /** protoc-gen-es's TypeScript name of the message type, e.g. `Task`, `Outer_Inner`; its schema is `<shape>Schema`. */
  readonly shape: string;
}

/** An RPC as the generated handler sees it. */
export interface RpcInfo {
  /** The service's full name, e.g. `lf.a2a.v1.A2AService`. */
  readonly service: string;
  /** The RPC's name, e.g. `SendMessage`. */
  readonly name: string;
  /** The handler method's name, e.g. `sendMessage`. */
  readonly method: string;
  readonly kind: DescMethod["methodKind"];
  readonly input: MessageRef;
  readonly output: MessageRef;
}

/** What changed in one service's RPCs, for the handler edits. */
export interface ServiceDelta {
  /** Full name in the new proto (the old one's when the service is gone). */
  readonly service: string;
  /** Its short name: the handler interface is `<name>Handler`. */
  readonly name: string;
  /** The proto file that declares it (new proto, else old). */
  readonly protoFile: string;
  /** True for A2A's own service (`lf.a2a.v1.A2AService`), which has `serve<name>` and the task runtime. */
  readonly a2a: boolean;
  readonly added: readonly RpcInfo[];
  readonly removed: readonly RpcInfo[];
  readonly renamed: readonly { readonly from: RpcInfo; readonly to: RpcInfo }[];
  /** RPCs whose request, response or streaming changed, as the new proto has them, with the old. */
  readonly changed: readonly { readonly rpc: RpcInfo; readonly before: RpcInfo; readonly aspects: readonly Aspect[] }[];
}

export interface ProtoDiff {
  /** The A2A line of both sides (undefined when neither declares A2AService); `checkSameLine` refuses two lines. */
  readonly line: A2ALine | undefined;
  /** Every change, in a stable order: by element, then kind. */
  readonly changes: readonly Change[];
  /** Per service with RPC changes, sorted by name. */
  readonly services: readonly ServiceDelta[];
  /** Nothing changed at all. */
  readonly identical: boolean;
  /** Something changed, and all of it is comments. */
  readonly commentOnly: boolean;
}

// ---------------------------------------------------------------------------
// One side of the comparison

interface Side {
  readonly files: Map<string, DescFile>;
  readonly services: Map<string, DescService>;
  readonly messages: Map<string, DescMessage>;
  readonly enums: Map<string, DescEnum>;
  /** Per file: source path (joined with `,`) -> the comments there, normalised. */
  readonly comments: Map<DescFile, Map<string, string>>;
  /** Messages an RPC reads (its request, and every message reachable from it), and those it writes. */
  readonly requestSide: Set<string>;
  readonly responseSide: Set<string>;
}

/** The set's files with every file after those it imports, as createFileRegistry needs them (buf and protoc write them so; a set put together by hand may not be). */
function dependencyOrder(set: FileDescriptorSet): FileDescriptorSet {
  const byName = new Map(set.file.map((f) => [f.name ?? "", f]));
  const out: FileDescriptorProto[] = [];
  const seen = new Set<string>();
  const visit = (f: FileDescriptorProto) => {
    const name = f.name ?? "";
    if (seen.has(name)) return;
    seen.add(name);
    for (const dep of f.dependency) {
      const d = byName.get(dep);
      if (d !== undefined) visit(d);
    }
    out.push(f);
  };
  set.file.forEach(visit);
  return create(FileDescriptorSetSchema, { file: out });
}

function readSide(set: FileDescriptorSet): Side {
  const registry = createFileRegistry(dependencyOrder(set));
  const side: Side = {
    files: new Map(),
    services: new Map(),
    messages: new Map(),
    enums: new Map(),
    comments: new Map(),
    requestSide: new Set(),
    responseSide: new Set(),
  };
  const addMessage = (m: DescMessage) => {
    side.messages.set(m.typeName, m);
    m.nestedMessages.forEach(addMessage);
    for (const e of m.nestedEnums) side.enums.set(e.typeName, e);
  };
  for (const file of registry.files) {
    side.files.set(fileName(file), file);
    file.messages.forEach(addMessage);
    for (const e of file.enums) side.enums.set(e.typeName, e);
    for (const s of file.services) side.services.set(s.typeName, s);
    const byPath = new Map<string, string>();
    for (const loc of file.proto.sourceCodeInfo?.location ?? []) {
      const text = [...loc.leadingDetachedComments, loc.leadingComments ?? "", loc.trailingComments ?? ""]
        .map((c) => c.replace(/\r\n?/g, "\n"))
        .join("\n\u0000\n");
      if (text.replace(/[\n\u0000]/g, "") !== "") byPath.set(loc.path.join(","), text);
    }
    side.comments.set(file, byPath);
  }
  const reach = (m: DescMessage, into: Set<string>) => {
    if (into.has(m.typeName)) return;
    into.add(m.typeName);
    for (const f of m.fields) {
      const target = f.fieldKind === "message" ? f.message : (f.fieldKind === "list" || f.fieldKind === "map") && f.message !== undefined ? f.message : undefined;
      if (target !== undefined) reach(target, into);
    }
  };
  for (const s of side.services.values()) {
    for (const m of s.methods) {
      reach(m.input, side.requestSide);
      reach(m.output, side.responseSide);
    }
  }
  return side;
}

const fileName = (f: DescFile) => f.proto.name;

type Described = DescMessage | DescEnum | DescField | DescOneof | DescEnumValue | DescService | DescMethod;

/** The source path of an element, as protoc records it in SourceCodeInfo. */
function sourcePath(d: Described): number[] {
  switch (d.kind) {
    case "message":
      return d.parent ? [...sourcePath(d.parent), 3, d.parent.proto.nestedType.indexOf(d.proto)] : [4, d.file.proto.messageType.indexOf(d.proto)];
    case "enum":
      return d.parent ? [...sourcePath(d.parent), 4, d.parent.proto.enumType.indexOf(d.proto)] : [5, d.file.proto.enumType.indexOf(d.proto)];
    case "field":
      return [...sourcePath(d.parent), 2, d.parent.proto.field.indexOf(d.proto)];
    case "oneof":
      return [...sourcePath(d.parent), 8, d.parent.proto.oneofDecl.indexOf(d.proto)];
    case "enum_value":
      return [...sourcePath(d.parent), 2, d.parent.proto.value.indexOf(d.proto)];
    case "service":
      return [6, d.file.proto.service.indexOf(d.proto)];
    case "rpc":
      return [...sourcePath(d.parent), 2, d.parent.proto.method.indexOf(d.proto)];
  }
}

function fileOf(d: Described): DescFile {
  switch (d.kind) {
    case "field":
    case "oneof":
      return d.parent.file;
    case "enum_value":
      return d.parent.file;
    case "rpc":
      return d.parent.file;
    default:
      return d.file;
  }
}

/** A comment as the reader wrote it: the blocks joined, one leading space dropped per line (after `//`), trimmed. */
function commentText(raw: string): string {
  return raw
    .replace(/\n\u0000\n/g, "\n")
    .split("\n")
    .map((l) => (l.startsWith(" ") ? l.slice(1) : l))
    .join("\n")
    .trim();
}

function commentsOf(side: Side, d: Described): string {
  return side.comments.get(fileOf(d))?.get(sourcePath(d).join(",")) ?? "";
}

// ---------------------------------------------------------------------------
// Describing elements

function scalarName(t: ScalarType): string {
  return ScalarType[t].toLowerCase();
}

/** The field's value type: a scalar, an enum or message full name, or `K, V` for a map. */
function fieldType(f: DescField): string {
  switch (f.fieldKind) {
    case "scalar":
      return scalarName(f.scalar);
    case "enum":
      return f.enum.typeName;
    case "message":
      return f.message.typeName;
    case "list":
      return f.listKind === "scalar" ? scalarName(f.scalar) : f.listKind === "enum" ? f.enum.typeName : f.message.typeName;
    case "map":
      return `${scalarName(f.mapKey)}, ${f.mapKind === "scalar" ? scalarName(f.scalar) : f.mapKind === "enum" ? f.enum.typeName : f.message.typeName}`;
  }
}

function fieldLabel(f: DescField): string {
  return f.fieldKind === "list" ? "repeated" : f.fieldKind === "map" ? "map" : "singular";
}

function describeField(f: DescField): string {
  const t = fieldType(f);
  const shown = f.fieldKind === "list" ? `repeated ${t}` : f.fieldKind === "map" ? `map<${t}>` : t;
  return `${shown} ${f.name} = ${f.number}`;
}

function presenceOf(f: DescField): string {
  if (f.fieldKind === "list" || f.fieldKind === "map") return "repeated";
  if (f.oneof !== undefined) return "explicit (oneof member)";
  switch (f.presence) {
    case FeatureSet_FieldPresence.EXPLICIT:
      return f.fieldKind === "message" ? "explicit (message)" : "explicit (optional)";
    case FeatureSet_FieldPresence.LEGACY_REQUIRED:
      return "required (proto2)";
    default:
      return "implicit";
  }
}

function behaviorsOf(f: DescField): string[] {
  if (!hasOption(f, field_behavior)) return [];
  return [...new Set(getOption(f, field_behavior).map((b) => FieldBehavior[b] ?? String(b)))].sort();
}


interface RuleInfo {
  readonly verb: string;
  readonly path: string;
  /** The path parsed by the runtime's own template parser; undefined for one it refuses. */
  readonly template: PathTemplate | undefined;
  readonly body: string;
  readonly responseBody: string;
  readonly additional: boolean;
  readonly index: number;
}

function rulesOf(m: DescMethod): RuleInfo[] {
  if (!hasOption(m, http)) return [];
  const top = getOption(m, http);
  const out: RuleInfo[] = [];
  const add = (rule: HttpRule, additional: boolean, index: number) => {
    const pattern = patternOf(rule);
    if (pattern === undefined) return;
    out.push({ verb: pattern.httpMethod, path: pattern.path, template: parsedOrUndefined(pattern.path), body: rule.body, responseBody: rule.responseBody, additional, index });
  };
  add(top, false, 0);
  top.additionalBindings.forEach((r, i) => add(r, true, i + 1));
  return out;
}

function parsedOrUndefined(path: string): PathTemplate | undefined {
  try {
    return parsePathTemplate(path);
  } catch (err) {
    if (err instanceof PathTemplateError) return undefined;
    throw err;
  }
}

const routeOf = (r: RuleInfo) => `${r.verb} ${r.path}`;
/** The template as its parse reads it: `{x}` and `{x=*}`, two spellings of one template, compare equal. */
const normalRoute = (r: RuleInfo) =>
  r.template === undefined ? routeOf(r) : `${routeShape(r)} ${r.template.variables.map((v) => `${v.fieldPath.join(".")}@${v.start}-${v.end}`).join(",")}`;
/** The URL shape a caller sends: the route without its variables' names (`/tasks/{id}` and `/{name=tasks/*}` alike). */
const routeShape = (r: RuleInfo) => (r.template === undefined ? routeOf(r) : `${r.verb} ${templateKey(r.template)}`);
const routeVariables = (r: RuleInfo) => (r.template === undefined ? [] : r.template.variables.map((v) => v.fieldPath.join(".")));

/** The field numbers from `m` down to the field a path variable (`item.id`) binds; undefined when there is none. */
function numberPath(m: DescMessage, dotted: string): string | undefined {
  const numbers: number[] = [];
  let at: DescMessage | undefined = m;
  for (const name of dotted.split(".")) {
    const f: DescField | undefined = at?.fields.find((x) => x.name === name);
    if (f === undefined) return undefined;
    numbers.push(f.number);
    at = f.fieldKind === "message" ? f.message : undefined;
  }
  return numbers.join(".");
}
const describeRule = (r: RuleInfo) => `${routeOf(r)}${r.body === "" ? "" : ` body "${r.body}"`}${r.responseBody === "" ? "" : ` response_body "${r.responseBody}"`}`;

function shapeOf(m: DescMessage): string {
  const pkg = m.file.proto.package ?? "";
  const local = pkg === "" ? m.typeName : m.typeName.slice(pkg.length + 1);
  return local.split(".").join("_");
}

function messageRef(m: DescMessage): MessageRef {
  return { typeName: m.typeName, protoFile: fileName(m.file), shape: shapeOf(m) };
}

function rpcInfo(m: DescMethod): RpcInfo {
  // The handler's method as the generated interface names it (`close$` for an RPC Close, D118).
  return { service: m.parent.typeName, name: m.name, method: names.handlerMethod(m), kind: m.methodKind, input: messageRef(m.input), output: messageRef(m.output) };
}

const kindWords: Record<DescMethod["methodKind"], string> = {
  unary: "unary",
  server_streaming: "server-streaming",
  client_streaming: "client-streaming",
  bidi_streaming: "bidirectional streaming",
};

// ---------------------------------------------------------------------------
// Matching

/**
 * Pairs the elements of two maps: same key first, then (D62) a left-over old
 * and new element whose signatures are equal and unique on both sides.
 */
function pairUp<T>(
  olds: ReadonlyMap<string, T>,
  news: ReadonlyMap<string, T>,
  signature: (t: T) => string | undefined,
): { same: [T, T][]; renamed: [T, T][]; removed: T[]; added: T[] } {
  const same: [T, T][] = [];
  const leftOld: [string, T][] = [];
  for (const [k, o] of olds) {
    const n = news.get(k);
    if (n !== undefined) same.push([o, n]);
    else leftOld.push([k, o]);
  }
  const leftNew = [...news].filter(([k]) => !olds.has(k));
  const bySig = <U>(list: [string, U][], sig: (u: U) => string | undefined) => {
    const m = new Map<string, U[]>();
    for (const [, u] of list) {
      const s = sig(u);
      if (s === undefined) continue;
      m.set(s, [...(m.get(s) ?? []), u]);
    }
    return m;
  };
  const oldSigs = bySig(leftOld, signature);
  const newSigs = bySig(leftNew, signature);
  const renamed: [T, T][] = [];
  const pairedOld = new Set<T>();
  const pairedNew = new Set<T>();
  for (const [s, os] of oldSigs) {
    const ns = newSigs.get(s);
    if (os.length === 1 && ns?.length === 1) {
      renamed.push([os[0] as T, ns[0] as T]);
      pairedOld.add(os[0] as T);
      pairedNew.add(ns[0] as T);
    }
  }
  return {
    same,
    renamed,
    removed: leftOld.map(([, o]) => o).filter((o) => !pairedOld.has(o)),
    added: leftNew.map(([, n]) => n).filter((n) => !pairedNew.has(n)),
  };
}

const parentScope = (typeName: string) => typeName.slice(0, Math.max(0, typeName.lastIndexOf(".")));

// ---------------------------------------------------------------------------
// The comparison

class Differ {
  readonly changes: Change[] = [];
  /** Old full type name -> new, for messages and enums found renamed. */
  readonly typeRenames = new Map<string, string>();
  readonly deltas = new Map<string, { service: string; name: string; protoFile: string; a2a: boolean; added: RpcInfo[]; removed: RpcInfo[]; renamed: { from: RpcInfo; to: RpcInfo }[]; changed: { rpc: RpcInfo; before: RpcInfo; aspects: Aspect[] }[] }>();

  constructor(
    readonly a: Side,
    readonly b: Side,
  ) {}

  add(c: Omit<Change, "kind">): void {
    const kind = (c.action === "changed" ? `${c.subject}.changed.${c.aspect ?? "comments"}` : `${c.subject}.${c.action}`) as ChangeKind;
    const change: Change = { kind, ...c };
    this.changes.push(change);
  }

  /** An old type name as the new proto calls it (through renames). */
  canonical(typeName: string): string {
    return this.typeRenames.get(typeName) ?? typeName;
  }

  canonicalFieldType(f: DescField): string {
    return fieldType(f)
      .split(", ")
      .map((t) => this.canonical(t))
      .join(", ");
  }

  comments(subject: Subject, element: string, oldD: Described, newD: Described): void {
    const before = commentsOf(this.a, oldD);
    const after = commentsOf(this.b, newD);
    if (before === after) return;
    this.add({
      subject,
      action: "changed",
      aspect: "comments",
      element,
      before: commentText(before),
      after: commentText(after),
      breaking: "none",
      reason: "Only the comment changed: nothing on the wire or in the generated API, only the generated doc comments.",
    });
  }

  deprecated(subject: Subject, element: string, before: boolean, after: boolean): void {
    if (before === after) return;
    this.add({
      subject,
      action: "changed",
      aspect: "deprecated",
      element,
      before: before ? "deprecated" : "not deprecated",
      after: after ? "deprecated" : "not deprecated",
      breaking: "none",
      reason: after ? "Marked deprecated: it still works; the generated code marks it @deprecated, so plan to stop using it." : "No longer deprecated.",
    });
  }

  side(typeName: string, from: Side): { request: boolean; response: boolean } {
    return { request: from.requestSide.has(typeName), response: from.responseSide.has(typeName) };
  }

  run(): void {
    this.files();
    this.enums();
    this.messages();
    this.services();
  }

  files(): void {
    const { same, removed, added } = pairUp(this.a.files, this.b.files, () => undefined);
    for (const f of added) {
      this.add({ subject: "file", action: "added", element: fileName(f), breaking: "none", reason: "A new file; what it declares is listed on its own." });
    }
    for (const f of removed) {
      this.add({ subject: "file", action: "removed", element: fileName(f), breaking: "none", reason: "The file is gone; what it declared is listed on its own." });
    }
    for (const [o, n] of same) {
      const name = fileName(n);
      if ((o.proto.package ?? "") !== (n.proto.package ?? "")) {
        this.add({
          subject: "file",
          action: "changed",
          aspect: "package",
          element: name,
          before: o.proto.package ?? "",
          after: n.proto.package ?? "",
          breaking: "both",
          reason: "Every full name in the file changes: gRPC paths, Any type URLs and the generated names; servers and clients of the two packages do not talk.",
        });
      }
      const before = [...o.proto.dependency].sort().join(", ");
      const after = [...n.proto.dependency].sort().join(", ");
      if (before !== after) {
        this.add({ subject: "file", action: "changed", aspect: "imports", element: name, before, after, breaking: "none", reason: "Imports changed; what they bring in is compared element by element." });
      }
    }
  }

  enums(): void {
    const sig = (e: DescEnum) => `${parentScope(e.typeName)}|${e.values.map((v) => `${v.number}:${v.name}`).join(",")}`;
    const { same, renamed, removed, added } = pairUp(this.a.enums, this.b.enums, sig);
    for (const [o, n] of renamed) this.typeRenames.set(o.typeName, n.typeName);
    for (const e of added) {
      this.add({ subject: "enum", action: "added", element: e.typeName, breaking: "none", reason: "A new enum; nothing used it before." });
    }
    for (const e of removed) {
      this.add({
        subject: "enum",
        action: "removed",
        element: e.typeName,
        breaking: "both",
        reason: `The generated enum ${e.name} is gone: code on either side that names it no longer compiles (the fields that used it are listed on their own).`,
      });
    }
    for (const [o, n] of renamed) {
      this.add({
        subject: "enum",
        action: "renamed",
        element: n.typeName,
        oldElement: o.typeName,
        before: o.typeName,
        after: n.typeName,
        breaking: "both",
        reason: `Same values under a new name: the wire (numbers, and value names in JSON) is unchanged, but the generated enum is now ${n.name}, so code that names ${o.name} no longer compiles.`,
      });
    }
    for (const [o, n] of [...same, ...renamed]) this.enumValues(o, n);
  }

  enumValues(o: DescEnum, n: DescEnum): void {
    this.comments("enum", n.typeName, o, n);
    this.deprecated("enum", n.typeName, o.deprecated, n.deprecated);
    const byName = (e: DescEnum) => new Map(e.values.map((v) => [v.name, v]));
    const { same, renamed, removed, added } = pairUp(byName(o), byName(n), (v) => String(v.number));
    const el = (v: DescEnumValue) => `${v.parent.typeName}.${v.name}`;
    for (const v of added) {
      this.add({
        subject: "enum-value",
        action: "added",
        element: el(v),
        after: `${v.name} = ${v.number}`,
        breaking: "none",
        reason:
          "A new value. Peers on the old proto do not know it: a client reads it as an unknown value (D29), and a server refuses it by name in JSON (D10), so send it only to agents that have upgraded; a switch over the enum may want a case for it.",
      });
    }
    for (const v of removed) {
      this.add({
        subject: "enum-value",
        action: "removed",
        element: el(v),
        before: `${v.name} = ${v.number}`,
        breaking: "both",
        reason: `Code that names ${v.parent.name}.${v.localName} no longer compiles, and a peer on the old proto that still sends ${v.name} is refused in JSON (D10) or read as an unknown number.`,
      });
    }
    for (const [ov, nv] of renamed) {
      this.add({
        subject: "enum-value",
        action: "renamed",
        element: el(nv),
        oldElement: el(ov),
        before: ov.name,
        after: nv.name,
        breaking: "both",
        reason: `Same number (${nv.number}), new name: binary and gRPC are unchanged, but JSON sends names, so a JSON peer on the old proto sends or expects "${ov.name}" and the other side refuses it (D10); code that names it no longer compiles.`,
      });
    }
    for (const [ov, nv] of same) {
      if (ov.number !== nv.number) {
        this.add({
          subject: "enum-value",
          action: "changed",
          aspect: "number",
          element: el(nv),
          before: String(ov.number),
          after: String(nv.number),
          breaking: "both",
          reason: "The value's number changed: binary and gRPC peers on the old proto read it as another value or an unknown one; JSON (by name) is unaffected.",
        });
      }
      this.comments("enum-value", el(nv), ov, nv);
      this.deprecated("enum-value", el(nv), ov.deprecated, nv.deprecated);
    }
    for (const [ov, nv] of renamed) this.comments("enum-value", el(nv), ov, nv);
  }

  messages(): void {
    const sig = (m: DescMessage) =>
      m.fields.length === 0
        ? undefined
        : `${parentScope(m.typeName)}|${[...m.fields]
            .sort((x, y) => x.number - y.number)
            .map((f) => `${f.number}:${f.name}:${fieldLabel(f)}:${fieldType(f).split(".").pop() ?? ""}`)
            .join(",")}`;
    const { same, renamed, removed, added } = pairUp(this.a.messages, this.b.messages, sig);
    for (const [o, n] of renamed) this.typeRenames.set(o.typeName, n.typeName);
    for (const m of added) {
      this.add({ subject: "message", action: "added", element: m.typeName, breaking: "none", reason: "A new message; nothing sent it before." });
    }
    for (const m of removed) {
      this.add({
        subject: "message",
        action: "removed",
        element: m.typeName,
        breaking: "both",
        reason: `The generated type ${shapeOf(m)} is gone: code on either side that names it no longer compiles (the fields and RPCs that used it are listed on their own).`,
      });
    }
    for (const [o, n] of renamed) {
      this.add({
        subject: "message",
        action: "renamed",
        element: n.typeName,
        oldElement: o.typeName,
        before: o.typeName,
        after: n.typeName,
        breaking: "both",
        reason: `Same fields under a new name: binary and JSON are unchanged (except google.protobuf.Any type URLs, which name it), but the generated type is now ${shapeOf(n)}, so code that names ${shapeOf(o)} no longer compiles.`,
      });
    }
    for (const [o, n] of [...same, ...renamed]) this.message(o, n);
  }

  message(o: DescMessage, n: DescMessage): void {
    this.comments("message", n.typeName, o, n);
    this.deprecated("message", n.typeName, o.deprecated, n.deprecated);
    const byName = (m: DescMessage) => new Map(m.fields.map((f) => [f.name, f]));
    const { same, renamed, removed, added } = pairUp(byName(o), byName(n), (f) => String(f.number));
    const el = (f: DescField) => `${f.parent.typeName}.${f.name}`;
    const sideNew = this.side(n.typeName, this.b);
    const sideOld = this.side(o.typeName, this.a);
    const oneofRenames = this.oneofs(o, n);
    for (const f of added) {
      const required = isRequired(f);
      const { breaking, reason } = required
        ? requiredAdded(sideNew, true)
        : { breaking: "none" as Breaking, reason: "A new field: peers on the old proto skip it (§5.7, D10) and it reads as unset from them." };
      this.add({ subject: "field", action: "added", element: el(f), after: describeField(f) + (required ? " [REQUIRED]" : ""), breaking, reason });
    }
    for (const f of removed) {
      this.add({
        subject: "field",
        action: "removed",
        element: el(f),
        before: describeField(f),
        breaking: "both",
        reason: `Code that reads or sets ${f.localName} no longer compiles, and what peers on the old proto send in it is dropped unread${sideOld.request ? " (it was in a request: the agent no longer sees it)" : ""}${sideOld.response ? " (it was in a response: callers no longer get it)" : ""}.`,
      });
    }
    for (const [of, nf] of renamed) {
      this.add({
        subject: "field",
        action: "renamed",
        element: el(nf),
        oldElement: el(of),
        before: `${of.name} (JSON ${of.jsonName})`,
        after: `${nf.name} (JSON ${nf.jsonName})`,
        breaking: "both",
        reason:
          of.jsonName === nf.jsonName
            ? `Same number (${nf.number}) and JSON name: the wire is unchanged, but the generated property is now ${nf.localName}, so code that uses ${of.localName} no longer compiles.`
            : `Same number (${nf.number}): binary and gRPC are unchanged, but JSON now says "${nf.jsonName}" instead of "${of.jsonName}", so a JSON peer on the old proto sends a field the other side ignores as unknown (D10), and code that uses ${of.localName} no longer compiles.`,
      });
    }
    for (const [of, nf] of [...same, ...renamed]) this.field(of, nf, renamed.some(([x]) => x === of), sideNew, oneofRenames);
  }

  field(of: DescField, nf: DescField, wasRenamed: boolean, sideNew: { request: boolean; response: boolean }, oneofRenames: ReadonlyMap<string, string>): void {
    const el = `${nf.parent.typeName}.${nf.name}`;
    if (of.number !== nf.number) {
      this.add({
        subject: "field",
        action: "changed",
        aspect: "number",
        element: el,
        before: String(of.number),
        after: String(nf.number),
        breaking: "both",
        reason: "The field number is its identity in binary and gRPC: a peer on the old proto writes it where the new one does not look. JSON (by name) is unaffected.",
      });
    }
    if (fieldLabel(of) !== fieldLabel(nf)) {
      this.add({
        subject: "field",
        action: "changed",
        aspect: "label",
        element: el,
        before: fieldLabel(of),
        after: fieldLabel(nf),
        breaking: "both",
        reason: "Singular, repeated and map fields have different JSON shapes and TypeScript types: peers on the old proto are refused or misread, and code that uses the field no longer compiles.",
      });
    } else if (this.canonicalFieldType(of) !== fieldType(nf)) {
      this.add({
        subject: "field",
        action: "changed",
        aspect: "type",
        element: el,
        before: fieldType(of),
        after: fieldType(nf),
        breaking: "both",
        reason: "A new value type: peers on the old proto send or expect the old one (refused as a wrong value, D10, or misread in binary), and code that uses the field no longer compiles.",
      });
    } else if (presenceOf(of) !== presenceOf(nf) && (of.oneof === undefined) === (nf.oneof === undefined)) {
      this.add({
        subject: "field",
        action: "changed",
        aspect: "presence",
        element: el,
        before: presenceOf(of),
        after: presenceOf(nf),
        breaking: "both",
        reason:
          "Presence decides whether a default value is sent and whether the generated property is optional (`x?: T` or `x: T`): code on both sides that reads or sets it may no longer compile, and an explicitly sent default is now read differently.",
      });
    }
    if (!wasRenamed && of.jsonName !== nf.jsonName) {
      this.add({
        subject: "field",
        action: "changed",
        aspect: "json-name",
        element: el,
        before: of.jsonName,
        after: nf.jsonName,
        breaking: "both",
        reason: `JSON-RPC and HTTP+JSON now say "${nf.jsonName}": a JSON peer on the old proto sends "${of.jsonName}", which the other side ignores as unknown (D10). Binary and gRPC are unchanged.`,
      });
    }
    const oo = of.oneof?.name;
    const no = nf.oneof?.name;
    // A member of a renamed oneof has not moved: the oneof's rename is the change.
    if ((oo === undefined ? undefined : (oneofRenames.get(oo) ?? oo)) !== no) {
      this.add({
        subject: "field",
        action: "changed",
        aspect: "oneof",
        element: el,
        before: oo === undefined ? "not in a oneof" : `oneof ${oo}`,
        after: no === undefined ? "not in a oneof" : `oneof ${no}`,
        breaking: "both",
        reason:
          "A oneof member is set through the oneof (`{ case, value }`) in the generated code, and setting one member clears the others: code on both sides that uses the field no longer compiles, and a peer on the old proto may send combinations the new one keeps only one of.",
      });
    }
    const bo = behaviorsOf(of);
    const bn = behaviorsOf(nf);
    if (bo.join(",") !== bn.join(",")) {
      const was = bo.includes("REQUIRED");
      const is = bn.includes("REQUIRED");
      const { breaking, reason } =
        was === is
          ? { breaking: "none" as Breaking, reason: "Only behaviours other than REQUIRED changed; the generated code does not act on them." }
          : is
            ? requiredAdded(sideNew, false)
            : requiredRemoved(sideNew);
      this.add({
        subject: "field",
        action: "changed",
        aspect: "field-behavior",
        element: el,
        before: bo.length === 0 ? "(none)" : bo.join(", "),
        after: bn.length === 0 ? "(none)" : bn.join(", "),
        breaking,
        reason,
      });
    }
    this.comments("field", el, of, nf);
    this.deprecated("field", el, of.deprecated, nf.deprecated);
  }

  /** Reports the oneofs' changes; returns old name -> new name of the oneofs renamed. */
  oneofs(o: DescMessage, n: DescMessage): Map<string, string> {
    const byName = (m: DescMessage) => new Map(m.oneofs.map((x) => [x.name, x]));
    const sig = (x: DescOneof) => (x.fields.length === 0 ? undefined : x.fields.map((f) => f.number).sort((p, q) => p - q).join(","));
    const { same, renamed, removed, added } = pairUp(byName(o), byName(n), sig);
    const el = (x: DescOneof) => `${x.parent.typeName}.${x.name}`;
    for (const x of added) {
      this.add({ subject: "oneof", action: "added", element: el(x), after: x.fields.map((f) => f.name).join(", "), breaking: "none", reason: "A new oneof; its members are listed on their own." });
    }
    for (const x of removed) {
      this.add({
        subject: "oneof",
        action: "removed",
        element: el(x),
        before: x.fields.map((f) => f.name).join(", "),
        breaking: "both",
        reason: `The generated property ${x.localName} is gone: code that uses it no longer compiles (its members are listed on their own).`,
      });
    }
    for (const [ox, nx] of renamed) {
      this.add({
        subject: "oneof",
        action: "renamed",
        element: el(nx),
        oldElement: el(ox),
        before: ox.name,
        after: nx.name,
        breaking: "both",
        reason: `Same members under a new name: the wire is unchanged (a oneof has no name on it), but the generated property is now ${nx.localName}, so code that uses ${ox.localName} no longer compiles.`,
      });
    }
    for (const [ox, nx] of [...same, ...renamed]) this.comments("oneof", el(nx), ox, nx);
    return new Map(renamed.map(([ox, nx]) => [ox.name, nx.name]));
  }

  services(): void {
    const sig = (s: DescService) =>
      s.methods.length === 0 ? undefined : `${parentScope(s.typeName)}|${s.methods.map((m) => `${m.name}:${m.methodKind}:${this.canonical(m.input.typeName)}:${this.canonical(m.output.typeName)}`).sort().join(",")}`;
    // Old services' signatures are compared through the type renames; new ones name the new types already.
    const { same, renamed, removed, added } = pairUp(this.a.services, this.b.services, sig);
    for (const s of added) {
      this.add({
        subject: "service",
        action: "added",
        element: s.typeName,
        breaking: "none",
        reason: `A new service with its own handler interface (${s.name}Handler); nothing served or called it before.`,
      });
      this.delta(s).added.push(...s.methods.map(rpcInfo));
    }
    for (const s of removed) {
      this.add({
        subject: "service",
        action: "removed",
        element: s.typeName,
        breaking: "both",
        reason: `Every RPC of ${s.name} is gone: its handler interface and clients are no longer generated, and callers on the old proto get MethodNotFound / UNIMPLEMENTED.`,
      });
      this.delta(s).removed.push(...s.methods.map(rpcInfo));
    }
    for (const [o, n] of renamed) {
      this.add({
        subject: "service",
        action: "renamed",
        element: n.typeName,
        oldElement: o.typeName,
        before: o.typeName,
        after: n.typeName,
        breaking: "both",
        reason: `Same RPCs under a new name: gRPC paths (/${n.typeName}/...) change, so gRPC peers on the old proto get UNIMPLEMENTED, and the handler interface is now ${n.name}Handler.`,
      });
    }
    for (const [o, n] of [...same, ...renamed]) this.service(o, n);
  }

  delta(s: DescService) {
    let d = this.deltas.get(s.typeName);
    if (d === undefined) {
      d = { service: s.typeName, name: s.name, protoFile: fileName(s.file), a2a: s.typeName === "lf.a2a.v1.A2AService", added: [], removed: [], renamed: [], changed: [] };
      this.deltas.set(s.typeName, d);
    }
    return d;
  }

  service(o: DescService, n: DescService): void {
    this.comments("service", n.typeName, o, n);
    this.deprecated("service", n.typeName, o.deprecated, n.deprecated);
    const byName = (s: DescService) => new Map(s.methods.map((m) => [m.name, m]));
    const sig = (m: DescMethod) => `${m.methodKind}:${this.canonical(m.input.typeName)}:${this.canonical(m.output.typeName)}`;
    const { same, renamed, removed, added } = pairUp(byName(o), byName(n), sig);
    const el = (m: DescMethod) => `${m.parent.typeName}.${m.name}`;
    const bindings = (m: DescMethod) => {
      const routes = rulesOf(m).map(routeOf);
      return `JSON-RPC method ${m.name}, gRPC /${m.parent.typeName}/${m.name}${routes.length === 0 ? "" : ` and HTTP ${routes.join(", ")}`}`;
    };
    const a2a = n.typeName === "lf.a2a.v1.A2AService";
    for (const m of added) {
      this.add({
        subject: "rpc",
        action: "added",
        element: el(m),
        after: `${kindWords[m.methodKind]} ${m.name}(${m.input.typeName}) returns (${m.methodKind === "server_streaming" || m.methodKind === "bidi_streaming" ? "stream " : ""}${m.output.typeName})`,
        breaking: "none",
        reason:
          `New: ${bindings(m)}. The handler method ${names.handlerMethod(m)} is optional: until it is written the bindings answer it with the spec's error (upgrade adds a stub that throws UnsupportedOperationError)` +
          `${a2a ? ", and the task runtime does not implement it either" : ""}. Agents on the old proto answer it MethodNotFound / UNIMPLEMENTED, so call it only on agents that have upgraded.`,
      });
      this.delta(n).added.push(rpcInfo(m));
    }
    for (const m of removed) {
      this.add({
        subject: "rpc",
        action: "removed",
        element: el(m),
        before: `${kindWords[m.methodKind]} ${m.name}(${m.input.typeName})`,
        breaking: "both",
        reason: `Gone: ${bindings(m)}. Callers on the old proto get MethodNotFound / UNIMPLEMENTED from an upgraded agent; the generated client no longer has ${names.handlerMethod(m)}, and the handler's ${names.handlerMethod(m)} is no longer called (upgrade marks it; an object literal typed as the handler no longer compiles with it).`,
      });
      this.delta(o).removed.push(rpcInfo(m));
    }
    for (const [om, nm] of renamed) {
      this.add({
        subject: "rpc",
        action: "renamed",
        element: el(nm),
        oldElement: el(om),
        before: om.name,
        after: nm.name,
        breaking: "both",
        reason: `Same request, response and streaming under a new name: JSON-RPC method ${om.name} -> ${nm.name} and gRPC /${nm.parent.typeName}/${nm.name}, so callers on the old proto get MethodNotFound / UNIMPLEMENTED there; the handler method is now ${names.handlerMethod(nm)} (upgrade marks ${names.handlerMethod(om)}: rename it).`,
      });
      this.delta(n).renamed.push({ from: rpcInfo(om), to: rpcInfo(nm) });
    }
    for (const [om, nm] of [...same, ...renamed]) this.rpc(om, nm);
  }

  rpc(om: DescMethod, nm: DescMethod): void {
    const el = `${nm.parent.typeName}.${nm.name}`;
    const aspects: Aspect[] = [];
    if (this.canonical(om.input.typeName) !== nm.input.typeName) {
      aspects.push("input");
      this.add({
        subject: "rpc",
        action: "changed",
        aspect: "input",
        element: el,
        before: om.input.typeName,
        after: nm.input.typeName,
        breaking: "both",
        reason: "A new request message: callers on the old proto send the old one (read as the new one, fields matched by number or JSON name), and the handler's and client's signatures change.",
      });
    }
    if (this.canonical(om.output.typeName) !== nm.output.typeName) {
      aspects.push("output");
      this.add({
        subject: "rpc",
        action: "changed",
        aspect: "output",
        element: el,
        before: om.output.typeName,
        after: nm.output.typeName,
        breaking: "both",
        reason: "A new response message: callers on the old proto read the new one as the old, and the handler's and client's signatures change.",
      });
    }
    if (om.methodKind !== nm.methodKind) {
      aspects.push("streaming");
      this.add({
        subject: "rpc",
        action: "changed",
        aspect: "streaming",
        element: el,
        before: kindWords[om.methodKind],
        after: kindWords[nm.methodKind],
        breaking: "both",
        reason: "Unary and streaming RPCs are served and called differently on every binding (SSE, gRPC streams): peers on the old proto fail, and the handler method must return a Promise or an AsyncIterable accordingly.",
      });
    }
    if (aspects.length > 0) this.delta(nm.parent).changed.push({ rpc: rpcInfo(nm), before: rpcInfo(om), aspects });
    this.httpRules(om, nm);
    this.comments("rpc", el, om, nm);
    this.deprecated("rpc", el, om.deprecated, nm.deprecated);
  }

  httpRules(om: DescMethod, nm: DescMethod): void {
    const base = `${nm.parent.typeName}.${nm.name}`;
    const olds = rulesOf(om);
    const news = rulesOf(nm);
    const matchedOld = new Set<RuleInfo>();
    const matchedNew = new Set<RuleInfo>();
    const pairs: [RuleInfo, RuleInfo][] = [];
    // Same verb and path (`{x}` and `{x=*}` alike): the same route.
    for (const r of news) {
      const o = olds.find((x) => !matchedOld.has(x) && normalRoute(x) === normalRoute(r));
      if (o === undefined) continue;
      matchedOld.add(o);
      matchedNew.add(r);
      pairs.push([o, r]);
    }
    // Same URL shape, other variable names (D62): renamed when each variable binds the field of the
    // same number (the field was renamed, the URL is unchanged), else the route binds other fields.
    for (const r of news) {
      if (matchedNew.has(r)) continue;
      const o = olds.find((x) => !matchedOld.has(x) && routeShape(x) === routeShape(r));
      if (o === undefined) continue;
      matchedOld.add(o);
      matchedNew.add(r);
      pairs.push([o, r]);
      const ov = routeVariables(o);
      const nv = routeVariables(r);
      const same = ov.length === nv.length && ov.every((v, i) => {
        const a = numberPath(om.input, v);
        return a !== undefined && a === numberPath(nm.input, nv[i] ?? "");
      });
      if (same) {
        this.add({
          subject: "http-rule",
          action: "renamed",
          element: `${base} ${routeOf(r)}`,
          oldElement: `${base} ${routeOf(o)}`,
          before: routeOf(o),
          after: routeOf(r),
          breaking: "none",
          reason: "Only the path variables' names changed, with the fields they bind (same numbers): callers send the same URL and it fills the same fields. The field renames are listed on their own.",
        });
      } else {
        this.add({
          subject: "http-rule",
          action: "changed",
          aspect: "http-route",
          element: `${base} ${routeOf(r)}`,
          before: describeRule(o),
          after: describeRule(r),
          breaking: "both",
          reason: `The URL has the same shape but its variables now bind other fields (${ov.join(", ")} -> ${nv.join(", ")}): a caller on the old proto puts values where an upgraded agent reads something else. JSON-RPC and gRPC are unaffected.`,
        });
      }
    }
    // A left-over old and new rule at the same position: that rule, moved.
    for (const r of news) {
      if (matchedNew.has(r)) continue;
      const o = olds.find((x) => !matchedOld.has(x) && x.index === r.index);
      if (o === undefined) continue;
      matchedOld.add(o);
      matchedNew.add(r);
      pairs.push([o, r]);
      this.add({
        subject: "http-rule",
        action: "changed",
        aspect: "http-route",
        element: `${base} ${routeOf(r)}`,
        before: describeRule(o),
        after: describeRule(r),
        breaking: "both",
        reason: `The ${r.additional ? "additional binding" : "default HTTP binding"} moved from ${routeOf(o)} to ${routeOf(r)}: HTTP+JSON callers on the old proto get 404 or 405 from an upgraded agent, and upgraded callers get the same from agents that have not upgraded. JSON-RPC and gRPC are unaffected.`,
      });
    }
    for (const [o, r] of pairs) {
      if (o.body !== r.body) {
        this.add({
          subject: "http-rule",
          action: "changed",
          aspect: "http-body",
          element: `${base} ${routeOf(r)}`,
          before: o.body === "" ? "(no body)" : `"${o.body}"`,
          after: r.body === "" ? "(no body)" : `"${r.body}"`,
          breaking: "both",
          reason: "The request body now binds other fields: an HTTP+JSON caller on the old proto puts fields where an upgraded agent no longer reads them (or the reverse). JSON-RPC and gRPC are unaffected.",
        });
      }
      if (o.responseBody !== r.responseBody) {
        this.add({
          subject: "http-rule",
          action: "changed",
          aspect: "http-response-body",
          element: `${base} ${routeOf(r)}`,
          before: o.responseBody === "" ? "(whole response)" : `"${o.responseBody}"`,
          after: r.responseBody === "" ? "(whole response)" : `"${r.responseBody}"`,
          breaking: "both",
          reason: "The HTTP response body is now another part of the response: HTTP+JSON callers on the old proto misread it. JSON-RPC and gRPC are unaffected.",
        });
      }
    }
    for (const r of news.filter((x) => !matchedNew.has(x))) {
      this.add({
        subject: "http-rule",
        action: "added",
        element: `${base} ${routeOf(r)}`,
        after: describeRule(r),
        breaking: "none",
        reason: `A new HTTP+JSON route for ${nm.name}; its other routes still work. Agents on the old proto answer it 404.`,
      });
    }
    for (const o of olds.filter((x) => !matchedOld.has(x))) {
      this.add({
        subject: "http-rule",
        action: "removed",
        element: `${base} ${routeOf(o)}`,
        before: describeRule(o),
        breaking: "both",
        reason: `HTTP+JSON callers on the old proto that use ${routeOf(o)} get 404 or 405 from an upgraded agent${o.additional ? "" : ", and upgraded callers use another route, which agents on the old proto may not serve"}. JSON-RPC and gRPC are unaffected.`,
      });
    }
  }

  result(line: A2ALine | undefined): ProtoDiff {
    const changes = [...this.changes].sort((x, y) => compare(x.element, y.element) || compare(x.kind, y.kind) || compare(x.before ?? "", y.before ?? ""));
    const byName = (x: RpcInfo, y: RpcInfo) => compare(x.name, y.name);
    const services = [...this.deltas.values()]
      .filter((d) => d.added.length + d.removed.length + d.renamed.length + d.changed.length > 0)
      .map((d) => ({
        ...d,
        added: [...d.added].sort(byName),
        removed: [...d.removed].sort(byName),
        renamed: [...d.renamed].sort((x, y) => byName(x.to, y.to)),
        changed: [...d.changed].sort((x, y) => byName(x.rpc, y.rpc)),
      }))
      .sort((x, y) => compare(x.service, y.service));
    return {
      line,
      changes,
      services,
      identical: changes.length === 0,
      commentOnly: changes.length > 0 && changes.every((c) => c.aspect === "comments"),
    };
  }
}

/** Code-point order, never the locale's: the report must be the same everywhere. */
function compare(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

function requiredAdded(side: { request: boolean; response: boolean }, newField: boolean): { breaking: Breaking; reason: string } {
  const what = newField ? "A new field marked REQUIRED" : "Now REQUIRED";
  if (side.request) {
    return {
      breaking: "both",
      reason: `${what}, in a request: an upgraded agent refuses a request without it with InvalidParams (D11), so callers on the old proto that leave it out are refused, and callers must now set it.${side.response ? " It is in responses too: the agent must now set it there (JSON writes it even at its default)." : ""}`,
    };
  }
  if (side.response) {
    return {
      breaking: "servers",
      reason: `${what}, in a response: the agent must now set it; the JSON bindings write it even at its default (D11). Callers are not affected.`,
    };
  }
  return { breaking: "none", reason: `${what}, in a message no RPC sends or returns.` };
}

function requiredRemoved(side: { request: boolean; response: boolean }): { breaking: Breaking; reason: string } {
  const parts: string[] = [];
  let servers = false;
  let clients = false;
  if (side.request) {
    servers = true;
    parts.push("in a request, upgraded callers may now leave it out: the handler can no longer count on it being set (D11 no longer checks it)");
  }
  if (side.response) {
    clients = true;
    parts.push("in a response, agents may now leave it out: callers can no longer count on it (JSON no longer writes it at its default)");
  }
  if (parts.length === 0) return { breaking: "none", reason: "No longer REQUIRED, in a message no RPC sends or returns." };
  return { breaking: servers && clients ? "both" : servers ? "servers" : "clients", reason: `No longer REQUIRED: ${parts.join("; ")}.` };
}

/**
 * Compares two descriptor sets. Does not refuse anything: call
 * `checkSameLine` first (runUpgrade does) to refuse protos of two A2A lines.
 */
export function diffDescriptors(oldSet: FileDescriptorSet, newSet: FileDescriptorSet): ProtoDiff {
  const d = new Differ(readSide(oldSet), readSide(newSet));
  d.run();
  return d.result(a2aLineOf(newSet) ?? a2aLineOf(oldSet));
}
