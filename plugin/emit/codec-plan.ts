import type { DescField, DescFile, DescMessage } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import { names } from "../names.js";
import { isDelimited } from "./codec-context.js";

/** What one message's codec is called in its codec file. */
export type CodecNames = ReturnType<typeof names.codecFunctions>;

/** One `<file>_codec.ts`. */
export interface CodecFilePlan {
  readonly file: DescFile;
  /** The messages it has codecs for, in declaration order (nested ones after their parent). */
  readonly messages: readonly DescMessage[];
  /** Its list of codecs: `a2aCodecs`. */
  readonly list: string;
  /** The codec files whose messages its messages hold, whose lists its list includes. */
  readonly imports: readonly CodecFilePlan[];
}

/**
 * Which codecs the run emits, and where.
 *
 * Scope: every message that a service of the run reads or writes, directly
 * or through fields, transitively. Each such message gets its codec in the
 * codec file of the proto file that declares it, and only there: the codec
 * of a message from another proto file is imported from that file's codec.
 * That holds for files outside the run too (google/protobuf/struct.proto,
 * googleapis): their codec files are emitted beside where protoc-gen-es
 * puts (or, for the well-known types, would put) their `_pb.ts`, importing
 * the schemas from where protoc-gen-es's code imports them, so a message
 * the runtime reaches is never left to reflection. A proto file none of
 * whose messages a service reaches gets no codec file.
 */
export interface CodecPlan {
  readonly files: readonly CodecFilePlan[];
  /** The codec file of a message the plan covers. */
  fileOf(message: DescMessage): CodecFilePlan;
  /**
   * The names of a message's codec, from protoc-gen-es's name of its shape
   * (which `f`, any generated file, resolves; the same in every file).
   */
  namesOf(message: DescMessage, f: GeneratedFile): CodecNames;
  /** Whether some field of a covered message holds `message` as a group (delimited): it then gets a group reader. */
  isGroup(message: DescMessage): boolean;
  /** The codec files whose lists `roots` need registered: the files of the roots themselves (their lists include what they hold). */
  listsFor(roots: Iterable<DescMessage>): readonly CodecFilePlan[];
}

/** The message a field holds (singular, list item or map value), if any. */
export function messageOf(field: DescField): DescMessage | undefined {
  switch (field.fieldKind) {
    case "message":
      return field.message;
    case "list":
      return field.listKind === "message" ? field.message : undefined;
    case "map":
      return field.mapKind === "message" ? field.message : undefined;
    default:
      return undefined;
  }
}

/**
 * Plans the codecs of `files` (the files to generate), whose services are
 * the roots; `allFiles` (every file of the request, in its order) decides
 * the order of codec files.
 */
export function planCodecs(files: readonly DescFile[], allFiles: readonly DescFile[]): CodecPlan {
  const reached = new Set<DescMessage>();
  const groups = new Set<DescMessage>();
  const pending: DescMessage[] = [];
  for (const file of files) {
    for (const service of file.services) {
      for (const method of service.methods) pending.push(method.input, method.output);
    }
  }
  for (let m = pending.pop(); m !== undefined; m = pending.pop()) {
    if (reached.has(m)) continue;
    reached.add(m);
    for (const field of m.fields) {
      const child = messageOf(field);
      if (child === undefined) continue;
      if (isDelimited(field)) groups.add(child);
      pending.push(child);
    }
  }

  const plans: CodecFilePlan[] = [];
  const byMessage = new Map<DescMessage, CodecFilePlan>();
  const messageNames = new Map<DescMessage, CodecNames>();
  for (const file of orderedFiles(files, allFiles)) {
    const messages = [...nestedTypes(file)].filter((t): t is DescMessage => t.kind === "message" && reached.has(t));
    if (messages.length === 0) continue;
    const plan: CodecFilePlan & { imports: CodecFilePlan[] } = { file, messages, list: names.codecList(file), imports: [] };
    plans.push(plan);
    for (const message of messages) byMessage.set(message, plan);
  }
  // Imports, now that every file has its plan; in plan order, without itself.
  for (const plan of plans as (CodecFilePlan & { imports: CodecFilePlan[] })[]) {
    const used = new Set<CodecFilePlan>();
    for (const message of plan.messages) {
      for (const field of message.fields) {
        const child = messageOf(field);
        const other = child === undefined ? undefined : byMessage.get(child);
        if (other !== undefined && other !== plan) used.add(other);
      }
    }
    plan.imports.push(...plans.filter((p) => used.has(p)));
  }

  // Names are unique within a file: a clash (a message `FooGroup` beside
  // `Foo`'s group reader) takes a `$n` suffix, as protoplugin's aliases do
  // (`$` is not a proto identifier character).
  const nameFile = (plan: CodecFilePlan, f: GeneratedFile) => {
    // The list's name is taken first: other files import it without naming this one.
    const taken = new Set<string>([plan.list]);
    const unique = (name: string) => {
      let candidate = name;
      for (let i = 1; taken.has(candidate); i++) candidate = `${name}$${i}`;
      taken.add(candidate);
      return candidate;
    };
    for (const message of plan.messages) {
      const assigned: Record<string, string> = {};
      for (const [key, name] of Object.entries(names.codecFunctions(f.importShape(message).name))) assigned[key] = unique(name);
      messageNames.set(message, assigned as CodecNames);
    }
  };
  const fileOf = (message: DescMessage): CodecFilePlan => {
    const plan = byMessage.get(message);
    if (plan === undefined) throw new Error(`protoc-gen-a2a: no codec planned for ${message.typeName}`);
    return plan;
  };
  return {
    files: plans,
    fileOf,
    namesOf: (message, f) => {
      let found = messageNames.get(message);
      if (found === undefined) {
        nameFile(fileOf(message), f);
        found = messageNames.get(message) as CodecNames;
      }
      return found;
    },
    isGroup: (message) => groups.has(message),
    listsFor: (roots) => {
      const wanted = new Set<CodecFilePlan>();
      for (const root of roots) wanted.add(fileOf(root));
      return plans.filter((p) => wanted.has(p));
    },
  };
}

/** The request's files in its order (dependencies first, as protoc and buf send them), then any file to generate it lacks. */
function orderedFiles(files: readonly DescFile[], allFiles: readonly DescFile[]): DescFile[] {
  const out = [...allFiles];
  for (const f of files) if (!out.includes(f)) out.push(f);
  return out;
}
