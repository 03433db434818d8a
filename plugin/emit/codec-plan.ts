import type { DescFile, DescMessage } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import { names } from "../names.js";
import { messageOf } from "../model/required-fields.js";
import { isDelimited } from "./codec-context.js";
import { importShape } from "./type-imports.js";

/** What one message's codec is called in a codec file. */
export type CodecNames = ReturnType<typeof names.codecFunctions>;

/** One `<file>_codec.ts`. */
export interface CodecFilePlan {
  readonly file: DescFile;
  /** Every message the proto file declares, in declaration order (nested ones after their parent). */
  readonly own: readonly DescMessage[];
  /**
   * Messages of files this run generates no code for (the well-known types,
   * googleapis) that its messages or services reach: their codecs are
   * emitted here too, after its own.
   */
  readonly foreign: readonly DescMessage[];
  /** Its list of codecs: `a2aCodecs`. */
  readonly list: string;
  /** The codec files whose messages its messages hold, whose lists its list includes. */
  readonly imports: readonly CodecFilePlan[];
}

/**
 * Which codecs a run emits, and where.
 *
 * Every proto file the run generates that declares messages gets a codec
 * file with a codec for each of them, as protoc-gen-es gives it a `_pb.ts`:
 * so a message of another file of the same `buf generate` (buf may run the
 * plugin once per directory) is always found in that file's codec, which
 * is imported. A message of a file the run generates nothing for (the
 * well-known types, googleapis: their `_pb.ts` comes from
 * @bufbuild/protobuf/wkt or from protoc-gen-es's include_imports) gets its
 * codec emitted in each codec file that reaches it, from its messages'
 * fields or its services' requests and responses: the same emitted code,
 * never reflection, and never a file that another run of the plugin could
 * also write.
 */
export interface CodecPlan {
  readonly files: readonly CodecFilePlan[];
  /** The codec file `from` finds a message's codec in: the message's file's, or `from` itself for a foreign message. */
  homeOf(message: DescMessage, from: CodecFilePlan | undefined): CodecFilePlan;
  /** The codec file of a proto file of the run, if it has one. */
  planOf(file: DescFile): CodecFilePlan | undefined;
  /**
   * The names of a message's codec in `home` (see homeOf), from
   * protoc-gen-es's name of its shape (which `f`, any generated file,
   * resolves: the same in every file; or `shapeName`, the same resolved once).
   */
  namesOf(message: DescMessage, home: CodecFilePlan, f: GeneratedFile, shapeName?: (message: DescMessage) => string): CodecNames;
  /** Whether some field of an emitted message holds `message` as a group (delimited): it then gets a group reader. */
  isGroup(message: DescMessage): boolean;
  /** The codec lists `file`'s method table registers for `roots`, its services' requests and responses: where their codecs are (their lists include what they hold). */
  listsFor(file: DescFile, roots: Iterable<DescMessage>): readonly CodecFilePlan[];
}

/**
 * Plans the codecs of `files` (the files to generate), in the order of their names: the order of
 * the codec files, of the lists a list includes and of those a method table registers. The
 * request's order is not used (D22): two requests listing independent files the other way round
 * (protoFile need only put a file after its imports) give the same bytes.
 */
export function planCodecs(files: readonly DescFile[]): CodecPlan {
  const generated = new Set(files);
  const ordered = [...generated].sort(byName);
  const plans: (CodecFilePlan & { imports: CodecFilePlan[] })[] = [];
  const byFile = new Map<DescFile, CodecFilePlan>();
  for (const file of ordered) {
    const own = [...nestedTypes(file)].filter((t): t is DescMessage => t.kind === "message");
    const roots = [...own.flatMap((m) => m.fields.map(messageOf)), ...file.services.flatMap((s) => s.methods.flatMap((m) => [m.input, m.output]))];
    const foreign = foreignClosure(roots, generated);
    if (own.length === 0 && foreign.length === 0) continue;
    const plan = { file, own, foreign, list: names.codecList(file), imports: [] };
    plans.push(plan);
    byFile.set(file, plan);
  }
  // Imports, now that every file has its plan; in plan order, without itself.
  for (const plan of plans) {
    const used = new Set<CodecFilePlan>();
    for (const message of [...plan.own, ...plan.foreign]) {
      for (const field of message.fields) {
        const child = messageOf(field);
        const other = child === undefined ? undefined : byFile.get(child.file);
        if (other !== undefined && other !== plan) used.add(other);
      }
    }
    plan.imports.push(...plans.filter((p) => used.has(p)));
  }
  const groups = new Set<DescMessage>();
  for (const plan of plans) {
    for (const message of [...plan.own, ...plan.foreign]) {
      for (const field of message.fields) {
        const child = messageOf(field);
        if (child !== undefined && isDelimited(field)) groups.add(child);
      }
    }
  }

  const homeOf = (message: DescMessage, from: CodecFilePlan | undefined): CodecFilePlan => {
    const home = byFile.get(message.file) ?? (from?.foreign.includes(message) === true ? from : undefined);
    if (home === undefined) throw new Error(`protoc-gen-a2a: no codec of ${message.typeName} planned for ${from?.file.name ?? "this run"}`);
    return home;
  };
  // Names are unique within a codec file: a clash (a message `FooGroup`
  // beside `Foo`'s group reader, a foreign message of the same name as an
  // own one) takes a `$n` suffix, as protoplugin's aliases do (`$` is not a
  // proto identifier character). The list's name is taken first: other
  // files import it without naming this one.
  const named = new Map<CodecFilePlan, Map<DescMessage, CodecNames>>();
  const nameFile = (plan: CodecFilePlan, shapeName: (message: DescMessage) => string): Map<DescMessage, CodecNames> => {
    const taken = new Set<string>([plan.list]);
    const unique = (name: string) => {
      let candidate = name;
      for (let i = 1; taken.has(candidate); i++) candidate = `${name}$${i}`;
      taken.add(candidate);
      return candidate;
    };
    const out = new Map<DescMessage, CodecNames>();
    for (const message of [...plan.own, ...plan.foreign]) {
      const assigned: Record<string, string> = {};
      for (const [key, name] of Object.entries(names.codecFunctions(shapeName(message)))) assigned[key] = unique(name);
      out.set(message, assigned as CodecNames);
    }
    named.set(plan, out);
    return out;
  };
  return {
    files: plans,
    homeOf,
    planOf: (file) => byFile.get(file),
    namesOf(message, home, f, shapeName = (m) => importShape(f, m).name) {
      const found = (named.get(home) ?? nameFile(home, shapeName)).get(message);
      if (found === undefined) throw new Error(`protoc-gen-a2a: no codec of ${message.typeName} in ${home.file.name}`);
      return found;
    },
    isGroup: (message) => groups.has(message),
    listsFor(file, roots) {
      const from = byFile.get(file);
      const wanted = new Set<CodecFilePlan>();
      for (const root of roots) {
        const home = byFile.get(root.file) ?? from;
        if (home === undefined) throw new Error(`protoc-gen-a2a: no codec of ${root.typeName} planned for ${file.name}`);
        wanted.add(home);
      }
      return plans.filter((p) => wanted.has(p));
    },
  };
}

/**
 * The messages of files not generated (`generated` holds the generated
 * ones) that `roots` reach, through the fields of such messages; in the
 * order of their files in the request, then of declaration.
 */
function foreignClosure(roots: readonly (DescMessage | undefined)[], generated: ReadonlySet<DescFile>): DescMessage[] {
  const found = new Set<DescMessage>();
  const pending = roots.filter((m): m is DescMessage => m !== undefined && !generated.has(m.file));
  for (let m = pending.pop(); m !== undefined; m = pending.pop()) {
    if (found.has(m)) continue;
    found.add(m);
    for (const field of m.fields) {
      const child = messageOf(field);
      if (child !== undefined && !generated.has(child.file)) pending.push(child);
    }
  }
  // A deterministic order whatever the walk's: by file name, then as declared.
  const files = [...new Set([...found].map((m) => m.file))].sort(byName);
  return files.flatMap((file) => [...nestedTypes(file)].filter((t): t is DescMessage => t.kind === "message" && found.has(t)));
}

function byName(a: DescFile, b: DescFile): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
