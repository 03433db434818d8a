/**
 * Edits the user's handler after a proto upgrade (D63): a typed stub that
 * throws UnsupportedOperationError for each new RPC, and a comment on each
 * method of a removed, renamed or changed RPC. Nothing is deleted or
 * rewritten: every edit inserts whole lines, so every line of the user's
 * file stays byte-identical (checked before anything is handed back).
 *
 * The handler is found with ts-morph, syntactically (no type-checking, so it
 * works before the new code is generated): an object literal typed as
 * `<Service>Handler` (annotation, `satisfies`, `as`, a function's return
 * type), a class that `implements` it, or what is passed to
 * `serve<Service>` and the endpoint factories. ts-morph is an optional peer
 * dependency, loaded only here (D63).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join, posix, relative, resolve, sep } from "node:path";
import type * as TsMorph from "ts-morph";
import type { ProtoDiff, RpcInfo, ServiceDelta } from "./diff.js";

type Morph = typeof TsMorph;

/** Thrown when ts-morph cannot be loaded; the message says how to install it. */
export class TsMorphMissingError extends Error {
  override readonly name = "TsMorphMissingError";
}

let morph: Morph | undefined;

/** Loads ts-morph (an optional peer dependency of protoc-gen-a2a), or throws TsMorphMissingError saying how to get it. */
export async function loadTsMorph(): Promise<Morph> {
  if (morph !== undefined) return morph;
  try {
    morph = (await import("ts-morph")) as Morph;
    return morph;
  } catch (err) {
    throw new TsMorphMissingError(
      "protoc-gen-a2a upgrade edits your handler with ts-morph, which is not installed (it is an optional peer dependency: " +
        "it brings its own TypeScript, which an agent does not need at run time). Install it beside protoc-gen-a2a with " +
        "`npm install --save-dev ts-morph` and run the upgrade again, or run it without handler edits to get only the report.",
      { cause: err },
    );
  }
}

/** One insertion into a user's file. */
export interface HandlerEdit {
  /** The file, relative to the repo folder, with `/`. */
  readonly file: string;
  /** Which handler: `class EchoAgent`, `object literal "handler"`, ... */
  readonly handler: string;
  /** `stub-added` for a new RPC; `marked-*` for a comment on the method of a removed, renamed or changed RPC. */
  readonly action: "stub-added" | "marked-removed" | "marked-renamed" | "marked-changed";
  /** The RPC's full name, e.g. `lf.a2a.v1.A2AService.GetTask`. */
  readonly rpc: string;
  /** The handler method added or marked. */
  readonly method: string;
  /** 1-based line, in the edited file, where the inserted lines start. */
  readonly line: number;
  /** The inserted lines. */
  readonly text: string;
}

/** An edit that could not be made in place, with the text to add by hand. */
export interface ManualStep {
  readonly file: string;
  readonly handler: string;
  readonly rpc: string;
  readonly method: string;
  readonly why: string;
  readonly text: string;
}

export interface FileChange {
  /** Relative to the repo folder, with `/`. */
  readonly path: string;
  readonly before: string;
  readonly after: string;
}

export interface HandlerResult {
  readonly edits: readonly HandlerEdit[];
  readonly manual: readonly ManualStep[];
  /** What the report should say about the user's code beyond the edits (task runtime, no handler found, ...). */
  readonly notes: readonly string[];
  /** The files as they would be after the edits (not written here). */
  readonly files: readonly FileChange[];
  /** The files looked at, relative to the repo folder. */
  readonly scanned: readonly string[];
}

export interface EditHandlersOptions {
  readonly repoDir: string;
  readonly diff: ProtoDiff;
  /** Files to look in (relative to repoDir or absolute); default every .ts/.mts/.cts file under repoDir but node_modules, dist, build and generated code. */
  readonly handlerFiles?: readonly string[];
  /** Where UnsupportedOperationError and the call context come from; default `protoc-gen-a2a/runtime` (or what the file already imports them from). */
  readonly runtimeImport?: string;
  /** Version labels, for the comments. */
  readonly from?: string;
  readonly to?: string;
}

const skippedDirs = new Set(["node_modules", "dist", "build", "out", "coverage", "generated", ".git", ".test-out"]);

/** The TypeScript files under `dir` that are the user's own: no node_modules, build output or generated code. */
export function findSourceFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) {
        if (!skippedDirs.has(e.name) && !e.name.startsWith(".")) walk(join(d, e.name));
      } else if (/\.(m|c)?ts$/.test(e.name) && !e.name.endsWith(".d.ts")) {
        const file = join(d, e.name);
        // The marker comes after the proto's own leading comments: googleapis' licence puts it past
        // 600 characters, and its *_pb.ts files were counted (and parsed) as the user's code.
        const head = readFileSync(file, "utf8").slice(0, 8192);
        if (!/@generated by protoc-gen-/.test(head)) out.push(file);
      }
    }
  };
  walk(dir);
  return out.sort();
}

// ---------------------------------------------------------------------------
// Finding handlers

interface LiteralSite {
  readonly kind: "object";
  readonly node: TsMorph.ObjectLiteralExpression;
  readonly display: string;
  /** TypeScript checks excess properties here (annotation, satisfies, return type, argument): a method of a removed RPC is an error. */
  readonly excessChecked: boolean;
  /** The literal spreads the task runtime's handler. */
  readonly taskRuntime: boolean;
}

interface ClassSite {
  readonly kind: "class";
  readonly node: TsMorph.ClassDeclaration;
  readonly display: string;
}

type Site = LiteralSite | ClassSite;

interface FileScan {
  readonly path: string;
  readonly sf: TsMorph.SourceFile;
  readonly sites: Site[];
  /** The task runtime (`create<Service>TaskHandler`) is the handler, directly. */
  taskRuntime: boolean;
}

const word = (name: string) => new RegExp(`(^|[^\\w$])${name.replace(/[$]/g, "\\$")}($|[^\\w$])`);

function servingCalls(service: string): Map<string, number> {
  return new Map([
    [`serve${service}`, 0],
    [`create${service}JsonRpcEndpoint`, 0],
    [`create${service}JsonRpcListener`, 0],
    [`create${service}HttpJsonEndpoint`, 0],
    [`create${service}HttpJsonListener`, 0],
    [`add${service}ToServer`, 1],
  ]);
}

class Finder {
  readonly scans = new Map<string, FileScan>();

  constructor(
    readonly m: Morph,
    readonly service: ServiceDelta,
  ) {}

  get handlerType() {
    return `${this.service.name}Handler`;
  }
  get taskHandlerType() {
    return `${this.service.name}TaskHandler`;
  }
  get taskFactory() {
    return `create${this.service.name}TaskHandler`;
  }

  isTaskCall(node: TsMorph.Node | undefined): boolean {
    const K = this.m.SyntaxKind;
    if (node === undefined) return false;
    const inner = this.unwrap(node);
    if (inner.getKind() === K.CallExpression) {
      const callee = (inner as TsMorph.CallExpression).getExpression().getText();
      return callee === this.taskFactory || callee.endsWith(`.${this.taskFactory}`);
    }
    if (inner.getKind() === K.Identifier) {
      const decl = this.localVariable(inner.getSourceFile(), inner.getText());
      return decl !== undefined && this.isTaskCall(decl.getInitializer());
    }
    return false;
  }

  unwrap(node: TsMorph.Node): TsMorph.Node {
    const K = this.m.SyntaxKind;
    let n = node;
    for (;;) {
      const k = n.getKind();
      if (k === K.ParenthesizedExpression || k === K.SatisfiesExpression || k === K.AsExpression || k === K.AwaitExpression) {
        n = (n as TsMorph.ParenthesizedExpression).getExpression();
      } else return n;
    }
  }

  localVariable(sf: TsMorph.SourceFile, name: string): TsMorph.VariableDeclaration | undefined {
    return sf.getVariableDeclaration(name);
  }

  scan(path: string, sf: TsMorph.SourceFile): FileScan {
    const K = this.m.SyntaxKind;
    const scan: FileScan = { path, sf, sites: [], taskRuntime: false };
    const mentions = (t: TsMorph.Node | undefined, name: string) => t !== undefined && word(name).test(t.getText());
    const literalSites = new Map<TsMorph.ObjectLiteralExpression, LiteralSite>();
    const addLiteral = (node: TsMorph.ObjectLiteralExpression, display: string, excessChecked: boolean) => {
      if (literalSites.has(node)) return;
      const taskRuntime = node.getProperties().some((p) => p.getKind() === K.SpreadAssignment && this.isTaskCall((p as TsMorph.SpreadAssignment).getExpression()));
      literalSites.set(node, { kind: "object", node, display, excessChecked, taskRuntime });
    };
    const classSites = new Map<TsMorph.ClassDeclaration, ClassSite>();
    const addClass = (node: TsMorph.ClassDeclaration) => {
      if (!classSites.has(node)) classSites.set(node, { kind: "class", node, display: `class ${node.getName() ?? "(anonymous)"}` });
    };
    const describe = (lit: TsMorph.ObjectLiteralExpression) => {
      const v = lit.getFirstAncestorByKind(K.VariableDeclaration);
      return v !== undefined && this.unwrap(v.getInitializer() ?? v) === lit ? `object literal "${v.getName()}"` : `object literal at line ${lit.getStartLineNumber()}`;
    };
    const handlerTypes = [this.handlerType];

    for (const lit of sf.getDescendantsOfKind(K.ObjectLiteralExpression)) {
      // Walk out through parentheses, `satisfies` and `as` to where the literal is typed.
      let n: TsMorph.Node = lit;
      let excess: boolean | undefined;
      for (;;) {
        const p = n.getParent();
        if (p === undefined) break;
        const k = p.getKind();
        if (k === K.ParenthesizedExpression) {
          n = p;
          continue;
        }
        if (k === K.SatisfiesExpression || k === K.AsExpression) {
          const typed = handlerTypes.some((h) => mentions((p as TsMorph.SatisfiesExpression).getTypeNode(), h));
          if (typed) excess = excess ?? k === K.SatisfiesExpression;
          n = p;
          continue;
        }
        if (k === K.VariableDeclaration) {
          if (handlerTypes.some((h) => mentions((p as TsMorph.VariableDeclaration).getTypeNode(), h))) excess = excess ?? true;
        } else if (k === K.ReturnStatement || k === K.ArrowFunction) {
          const fn = k === K.ArrowFunction ? p : p.getFirstAncestor((a) => a.getKind() === K.FunctionDeclaration || a.getKind() === K.ArrowFunction || a.getKind() === K.FunctionExpression || a.getKind() === K.MethodDeclaration);
          const rt = fn === undefined ? undefined : (fn as TsMorph.FunctionDeclaration).getReturnTypeNode();
          if (handlerTypes.some((h) => mentions(rt, h))) excess = excess ?? true;
        }
        break;
      }
      if (excess !== undefined) addLiteral(lit, describe(lit), excess);
    }
    for (const cls of sf.getDescendantsOfKind(K.ClassDeclaration)) {
      if (cls.getImplements().some((i) => mentions(i, this.handlerType))) addClass(cls);
    }
    // What is passed to serve<Service> and the endpoint factories.
    const calls = servingCalls(this.service.name);
    for (const call of sf.getDescendantsOfKind(K.CallExpression)) {
      const callee = call.getExpression().getText().split(".").pop() ?? "";
      const index = calls.get(callee);
      if (index === undefined) continue;
      const arg = call.getArguments()[index];
      if (arg === undefined) continue;
      if (this.isTaskCall(arg)) {
        scan.taskRuntime = true;
        continue;
      }
      const target = this.unwrap(arg);
      if (target.getKind() === K.ObjectLiteralExpression) {
        addLiteral(target as TsMorph.ObjectLiteralExpression, `object literal passed to ${callee}`, true);
      } else if (target.getKind() === K.NewExpression) {
        const cls = sf.getClass((target as TsMorph.NewExpression).getExpression().getText());
        if (cls !== undefined) addClass(cls);
      } else if (target.getKind() === K.Identifier) {
        const v = this.localVariable(sf, target.getText());
        const init = v?.getInitializer();
        if (init !== undefined) {
          const inner = this.unwrap(init);
          if (inner.getKind() === K.ObjectLiteralExpression) addLiteral(inner as TsMorph.ObjectLiteralExpression, `object literal "${v?.getName() ?? ""}"`, v?.getTypeNode() !== undefined);
          else if (inner.getKind() === K.NewExpression) {
            const cls = sf.getClass((inner as TsMorph.NewExpression).getExpression().getText());
            if (cls !== undefined) addClass(cls);
          }
        }
      }
    }
    scan.sites.push(...literalSites.values(), ...classSites.values());
    if (sf.getDescendantsOfKind(K.CallExpression).some((c) => this.isTaskCall(c))) {
      // The task runtime is in use here; it is the handler unless a handler object or class stands beside it.
      scan.taskRuntime = scan.taskRuntime || scan.sites.every((s) => s.kind === "object" && s.taskRuntime);
    }
    return scan;
  }
}

// ---------------------------------------------------------------------------
// Editing

interface Insertion {
  readonly pos: number;
  readonly text: string;
  readonly edit: Omit<HandlerEdit, "line" | "text">;
}

const lineStart = (text: string, pos: number) => text.lastIndexOf("\n", pos - 1) + 1;
const indentAt = (text: string, pos: number) => /^[ \t]*/.exec(text.slice(lineStart(text, pos)))?.[0] ?? "";

function memberName(m: TsMorph.Node, morphMod: Morph): string | undefined {
  const K = morphMod.SyntaxKind;
  const k = m.getKind();
  if (k === K.SpreadAssignment) return undefined;
  if (k === K.ShorthandPropertyAssignment || k === K.PropertyAssignment || k === K.MethodDeclaration || k === K.PropertyDeclaration || k === K.GetAccessor || k === K.SetAccessor) {
    const nameNode = (m as TsMorph.PropertyAssignment).getNameNode();
    const t = nameNode.getText();
    return /^["'`]/.test(t) ? t.slice(1, -1) : t;
  }
  return undefined;
}

/** The import specifier of protoc-gen-es's `_pb` module of `protoFile`, from the file's import of any generated module of the service's proto. */
function pbModuleFor(sf: TsMorph.SourceFile, serviceProto: string, protoFile: string): string | undefined {
  if (protoFile.startsWith("google/protobuf/")) return "@bufbuild/protobuf/wkt";
  const base = posix.basename(serviceProto, ".proto");
  const re = new RegExp(`(^|/)${base.replace(/[.$]/g, "\\$&")}_(handler|server|tasks|pb|client|grpc|jsonrpc|http|methods|codec)(\\.js|\\.ts|\\.mjs)?$`);
  for (const imp of sf.getImportDeclarations()) {
    const spec = imp.getModuleSpecifierValue();
    const m = re.exec(spec);
    if (m === null) continue;
    const ext = m[3] ?? "";
    const specDir = posix.dirname(spec);
    const rel = posix.relative(posix.dirname(serviceProto), posix.dirname(protoFile));
    const target = posix.normalize(`${specDir}/${rel === "" ? "" : `${rel}/`}${posix.basename(protoFile, ".proto")}_pb${ext}`);
    return target.startsWith(".") || target.startsWith("/") || !spec.startsWith(".") ? target : `./${target}`;
  }
  return undefined;
}

/** Binds names in a file through new import lines, reusing what it imports already. */
class Imports {
  private readonly pending = new Map<string, { values: string[]; types: string[] }>();
  private readonly taken: Set<string>;
  private readonly bound = new Map<string, string>();

  constructor(readonly sf: TsMorph.SourceFile) {
    this.taken = new Set<string>();
    for (const imp of sf.getImportDeclarations()) {
      const spec = imp.getModuleSpecifierValue();
      const def = imp.getDefaultImport();
      if (def !== undefined) this.taken.add(def.getText());
      const ns = imp.getNamespaceImport();
      if (ns !== undefined) this.taken.add(ns.getText());
      for (const n of imp.getNamedImports()) {
        const local = n.getAliasNode()?.getText() ?? n.getName();
        this.taken.add(local);
        this.bound.set(`${spec}\u0000${n.getName()}`, local);
      }
    }
    for (const st of sf.getStatements()) {
      const named = st as unknown as { getName?: () => string | undefined };
      const name = typeof named.getName === "function" ? named.getName() : undefined;
      if (name !== undefined) this.taken.add(name);
    }
    for (const v of sf.getVariableDeclarations()) this.taken.add(v.getName());
  }

  /** The local name of `name` from `spec`, importing it (type-only unless `value`) if the file does not yet. */
  use(spec: string, name: string, value: boolean): string {
    const key = `${spec}\u0000${name}`;
    const have = this.bound.get(key);
    if (have !== undefined) return have;
    let local = name;
    if (this.taken.has(local)) local = `${name}FromProto`;
    let i = 2;
    while (this.taken.has(local)) local = `${name}FromProto${i++}`;
    this.taken.add(local);
    this.bound.set(key, local);
    const group = this.pending.get(spec) ?? { values: [], types: [] };
    this.pending.set(spec, group);
    (value ? group.values : group.types).push(local === name ? name : `${name} as ${local}`);
    return local;
  }

  /**
   * How the stub names a global type (`Promise`, `AsyncGenerator`): as itself, or as
   * `globalThis.<name>` where the file binds the name to something else (a message named Promise).
   */
  global(name: string): string {
    return this.taken.has(name) ? `globalThis.${name}` : name;
  }

  /** The new import declarations: per module, in the order first used, one for values and one for types. */
  lines(eol: string): string[] {
    const out: string[] = [];
    for (const [spec, { values, types }] of this.pending) {
      if (values.length > 0) out.push(`import { ${values.join(", ")} } from ${JSON.stringify(spec)};${eol}`);
      if (types.length > 0) out.push(`import type { ${types.join(", ")} } from ${JSON.stringify(spec)};${eol}`);
    }
    return out;
  }
}

function runtimeSpecifier(sf: TsMorph.SourceFile, fallback: string): string {
  for (const imp of sf.getImportDeclarations()) {
    const spec = imp.getModuleSpecifierValue();
    if (imp.getNamedImports().some((n) => n.getName() === "UnsupportedOperationError")) return spec;
  }
  for (const imp of sf.getImportDeclarations()) {
    const spec = imp.getModuleSpecifierValue();
    if (/(^|\/)protoc-gen-a2a\/runtime$/.test(spec)) return spec;
  }
  return fallback;
}

const versionWords = (from?: string, to?: string) => (from !== undefined && to !== undefined ? ` (${from} -> ${to})` : to !== undefined ? ` (-> ${to})` : "");

/** Whether `after` is `before` with whole lines inserted and nothing else changed. */
export function onlyLinesInserted(before: string, after: string): boolean {
  const a = before.split("\n");
  const b = after.split("\n");
  let j = 0;
  for (const line of b) {
    if (j < a.length && line === a[j]) j++;
  }
  return j === a.length && b.length >= a.length;
}

/**
 * Edits the handlers of the services in `diff` that gained, lost, renamed or
 * changed RPCs. Returns the new text of each changed file; writes nothing.
 */
export async function editHandlers(options: EditHandlersOptions): Promise<HandlerResult> {
  const repoDir = resolve(options.repoDir);
  const deltas = options.diff.services;
  const rel = (p: string) => relative(repoDir, p).split(sep).join("/");
  const files = (options.handlerFiles ?? findSourceFiles(repoDir)).map((f) => (isAbsolute(f) ? f : join(repoDir, f)));
  const scanned = files.map(rel);
  if (deltas.length === 0) return { edits: [], manual: [], notes: [], files: [], scanned };
  const m = await loadTsMorph();
  const K = m.SyntaxKind;
  const project = new m.Project({ useInMemoryFileSystem: true, compilerOptions: { allowJs: true } });
  const originals = new Map<string, string>();
  const sources = new Map<string, TsMorph.SourceFile>();
  for (const f of files) {
    if (!existsSync(f) || !statSync(f).isFile()) throw new Error(`editHandlers: ${f} is not a file`);
    const text = readFileSync(f, "utf8");
    originals.set(f, text);
    sources.set(f, project.createSourceFile(`/${rel(f) || "file.ts"}`.replace(/^\/+/, "/"), text.replace(/^\uFEFF/, ""), { overwrite: true }));
  }

  const edits: HandlerEdit[] = [];
  const manual: ManualStep[] = [];
  const notes: string[] = [];
  const insertions = new Map<string, Insertion[]>();
  const importsOf = new Map<string, Imports>();
  const fallbackRuntime = options.runtimeImport ?? "protoc-gen-a2a/runtime";
  const version = versionWords(options.from, options.to);

  for (const delta of deltas) {
    const finder = new Finder(m, delta);
    const scans = files.map((f) => finder.scan(f, sources.get(f) as TsMorph.SourceFile));
    const sites = scans.flatMap((s) => s.sites.map((site) => ({ scan: s, site })));
    const taskFiles = scans.filter((s) => s.taskRuntime).map((s) => rel(s.path));
    const work = delta.added.length + delta.removed.length + delta.renamed.length + delta.changed.length;
    if (work === 0) continue;

    const writable = sites.filter(({ site }) => !(site.kind === "object" && site.taskRuntime));
    if (sites.length === 0 || (writable.length === 0 && delta.added.length > 0)) {
      if (taskFiles.length > 0) {
        notes.push(
          `${taskFiles.join(", ")}: the ${delta.name} handler is the task runtime (${finder.taskFactory}), with no handler object or class of your own: nothing to stub.` +
            (delta.added.length > 0
              ? ` The task runtime does not implement ${delta.added.map((r) => r.name).join(", ")}; until it does, the bindings answer ${delta.added.length === 1 ? "it" : "them"} with the spec's error for a method the agent does not implement.`
              : ""),
        );
      } else if (sites.length === 0) {
        notes.push(
          `No ${delta.name} handler found in ${scanned.length} file${scanned.length === 1 ? "" : "s"} (an object literal or class typed as ${finder.handlerType}, or passed to serve${delta.name}): ` +
            `nothing edited. ${delta.added.length > 0 ? `New RPCs to implement by hand: ${delta.added.map((r) => `${r.method} (${r.name})`).join(", ")}. ` : ""}` +
            `${delta.removed.length > 0 ? `Methods no longer called: ${delta.removed.map((r) => r.method).join(", ")}. ` : ""}`.trimEnd(),
        );
        continue;
      }
    }

    for (const { scan, site } of sites) {
      const sf = scan.sf;
      const text = sf.getFullText();
      const eol = text.includes("\r\n") ? "\r\n" : "\n";
      const file = rel(scan.path);
      let imports = importsOf.get(scan.path);
      if (imports === undefined) {
        imports = new Imports(sf);
        importsOf.set(scan.path, imports);
      }
      const list = insertions.get(scan.path) ?? [];
      insertions.set(scan.path, list);
      const members: TsMorph.Node[] = site.kind === "object" ? site.node.getProperties() : site.node.getMembers();
      const has = new Map<string, TsMorph.Node>();
      for (const mem of members) {
        const name = memberName(mem, m);
        if (name !== undefined && !has.has(name)) has.set(name, mem);
      }
      const container = site.node;
      const containerIndent = indentAt(text, container.getStart());
      const firstMember = members[0];
      const memberIndent = firstMember !== undefined && lineStart(text, firstMember.getStart()) !== lineStart(text, container.getStart()) ? indentAt(text, firstMember.getStart()) : `${containerIndent}  `;
      const unit = memberIndent.length > containerIndent.length && memberIndent.startsWith(containerIndent) ? memberIndent.slice(containerIndent.length) : "  ";

      // Comments on the methods of RPCs that are gone, renamed or changed.
      const mark = (rpcFull: string, method: string, action: HandlerEdit["action"], message: string, expectError: boolean) => {
        const mem = has.get(method);
        if (mem === undefined) return false;
        const nameNode = (mem as TsMorph.PropertyAssignment).getNameNode?.() ?? mem;
        const at = lineStart(text, nameNode.getStart());
        const indent = indentAt(text, at);
        // Marked by an earlier run: the marker (and its @ts-expect-error) are the two lines above.
        const twoAbove = at === 0 ? 0 : lineStart(text, Math.max(0, lineStart(text, at - 1) - 1));
        if (text.slice(twoAbove, at).includes("// protoc-gen-a2a upgrade")) return true;
        const lines = [`${indent}// protoc-gen-a2a upgrade${version}: ${message}${eol}`];
        if (expectError) lines.push(`${indent}// @ts-expect-error -- ${method} is no longer in ${finder.handlerType}: delete or rename this method, then this line.${eol}`);
        list.push({ pos: at, text: lines.join(""), edit: { file, handler: site.display, action, rpc: rpcFull, method } });
        return true;
      };
      // TypeScript reports only the first excess property of an object literal, so only the first of
      // its methods that are gone (removed, or under a renamed RPC's old name) gets @ts-expect-error:
      // on a second one it would be unused, itself an error. Once the first is deleted, the next is reported.
      const gone = [...delta.removed.map((r) => r.method), ...delta.renamed.filter(({ to }) => !has.has(to.method)).map(({ from }) => from.method)];
      const firstGone =
        site.kind === "object" && site.excessChecked
          ? members.find((mem) => {
              const name = memberName(mem, m);
              return name !== undefined && gone.includes(name);
            })
          : undefined;
      const excess = (method: string) => firstGone !== undefined && memberName(firstGone, m) === method;
      for (const r of delta.removed) {
        mark(`${r.service}.${r.name}`, r.method, "marked-removed", `RPC ${r.service}.${r.name} was removed from the proto: nothing calls ${r.method} any more. Delete it when you are ready.`, excess(r.method));
      }
      for (const { from, to } of delta.renamed) {
        if (has.has(to.method)) continue;
        mark(`${to.service}.${to.name}`, from.method, "marked-renamed", `RPC ${from.name} was renamed to ${to.name}: rename this method to ${to.method} (until then ${to.name} is answered as not implemented).`, excess(from.method));
      }
      for (const c of delta.changed) {
        const what = c.aspects
          .map((a) => (a === "input" ? `its request is now ${c.rpc.input.shape} (was ${c.before.input.shape})` : a === "output" ? `its response is now ${c.rpc.output.shape} (was ${c.before.output.shape})` : `it is now ${c.rpc.kind === "unary" ? "unary (return a Promise)" : "streaming (return an AsyncIterable)"}`))
          .join(", ");
        mark(`${c.rpc.service}.${c.rpc.name}`, c.rpc.method, "marked-changed", `RPC ${c.rpc.name} changed: ${what}. Check this method's signature.`, false);
      }

      // Stubs for new RPCs.
      const missing = delta.added.filter((r) => !has.has(r.method));
      if (missing.length === 0 || (site.kind === "object" && site.taskRuntime)) continue;
      const runtime = runtimeSpecifier(sf, fallbackRuntime);
      const stubText = (r: RpcInfo, local: { err: string; ctx: string; input: string; output: string; init?: string }) => {
        const i1 = memberIndent;
        const i2 = memberIndent + unit;
        const streaming = r.kind !== "unary";
        // After the message types are bound: one of them may be named Promise.
        const returns = streaming ? `${imports.global("AsyncGenerator")}<${local.output}>` : `${imports.global("Promise")}<${local.init}<typeof ${local.output}>>`;
        return [
          ...(site.kind === "class" ? [eol] : []),
          `${i1}/** ${r.service}.${r.name}: new in ${options.to === undefined ? "the new a2a.proto" : `a2a.proto ${options.to}`}, added by protoc-gen-a2a upgrade. Until it is written it answers UnsupportedOperation. */${eol}`,
          `${i1}async ${streaming ? "*" : ""}${r.method}(_request: ${local.input}, _context: ${local.ctx}): ${returns} {${eol}`,
          `${i2}throw new ${local.err}(${JSON.stringify(`${r.name} is not implemented by this agent yet`)});${eol}`,
          `${i1}}${site.kind === "object" ? "," : ""}${eol}`,
          ...(site.kind === "object" ? [eol] : []),
        ].join("");
      };
      // Where the stubs go: first in an object literal (no comma to add to another member's line; a spread
      // after them still wins), last in a class. Either way on lines of their own.
      let pos: number | undefined;
      let why = "";
      if (site.kind === "object") {
        const open = container.getStart();
        const eolAt = text.indexOf("\n", open);
        const rest = eolAt < 0 ? "" : text.slice(open + 1, eolAt).trim();
        const closeLine = lineStart(text, container.getEnd() - 1);
        if (eolAt >= 0 && (rest === "" || rest.startsWith("//")) && closeLine > eolAt) pos = eolAt + 1;
        else why = "the object literal opens and closes on one line, or has code after its `{`";
      } else {
        const close = container.getEnd() - 1;
        const at = lineStart(text, close);
        const body = container.getFirstChildByKind(K.OpenBraceToken);
        if (text.slice(at, close).trim() === "" && body !== undefined && lineStart(text, body.getStart()) !== at) pos = at;
        else why = "the class's closing `}` shares its line with other code";
      }
      for (const r of missing) {
        const pb = (ref: RpcInfo["input"]) => pbModuleFor(sf, delta.protoFile, ref.protoFile);
        const inSpec = pb(r.input);
        const outSpec = pb(r.output);
        const rpcFull = `${r.service}.${r.name}`;
        if (pos === undefined || inSpec === undefined || outSpec === undefined) {
          const placeholder = { err: "UnsupportedOperationError", ctx: delta.a2a ? "A2ACallContext" : "CallContext", input: r.input.shape, output: r.kind === "unary" ? `${r.output.shape}Schema` : r.output.shape, init: "MessageInitShape" };
          manual.push({
            file,
            handler: site.display,
            rpc: rpcFull,
            method: r.method,
            why: pos === undefined ? why : "the file imports no generated module of the service, so where the message types are is unknown",
            text: stubText(r, placeholder),
          });
          continue;
        }
        const local = {
          err: imports.use(runtime, "UnsupportedOperationError", true),
          ctx: imports.use(runtime, delta.a2a ? "A2ACallContext" : "CallContext", false),
          input: imports.use(inSpec, r.input.shape, false),
          output: imports.use(outSpec, r.kind === "unary" ? `${r.output.shape}Schema` : r.output.shape, false),
          init: r.kind === "unary" ? imports.use("@bufbuild/protobuf", "MessageInitShape", false) : undefined,
        };
        list.push({ pos, text: stubText(r, local), edit: { file, handler: site.display, action: "stub-added", rpc: rpcFull, method: r.method } });
      }
    }
  }

  // Apply: import lines after the last import, then the insertions, from the end of each file back.
  const changed: FileChange[] = [];
  for (const f of files) {
    const list = insertions.get(f) ?? [];
    const imports = importsOf.get(f);
    const sf = sources.get(f) as TsMorph.SourceFile;
    const text = sf.getFullText();
    const eol = text.includes("\r\n") ? "\r\n" : "\n";
    const importLines = imports?.lines(eol) ?? [];
    if (importLines.length > 0 && list.some((i) => i.edit.action === "stub-added")) {
      const last = sf.getImportDeclarations().at(-1);
      let at = 0;
      if (last !== undefined) {
        const nl = text.indexOf("\n", last.getEnd());
        at = nl < 0 ? text.length : nl + 1;
      }
      const block = importLines.join("");
      list.push({ pos: at, text: at === text.length && !text.endsWith("\n") ? eol + block : block, edit: { file: rel(f), handler: "", action: "stub-added", rpc: "", method: "" } });
    }
    if (list.length === 0) continue;
    // Stable: by position; at one spot imports, then stubs, then marks (a mark, and its @ts-expect-error,
    // must stay right above the member it is about); applied back to front.
    const rank = (ins: Insertion) => (ins.edit.rpc === "" ? 0 : ins.edit.action === "stub-added" ? 1 : 2);
    const ordered = list.map((ins, i) => ({ ins, i })).sort((x, y) => x.ins.pos - y.ins.pos || rank(x.ins) - rank(y.ins) || x.i - y.i);
    let out = text;
    // Spliced as text at the positions ts-morph found: its own manipulation would rewrite the file's line ends.
    for (const { ins } of [...ordered].reverse()) out = out.slice(0, ins.pos) + ins.text + out.slice(ins.pos);
    // Lines, in the edited file, where each insertion starts.
    let shift = 0;
    for (const { ins } of ordered) {
      const line = text.slice(0, ins.pos).split("\n").length + shift;
      shift += ins.text.split("\n").length - 1;
      if (ins.edit.rpc !== "") edits.push({ ...ins.edit, line, text: ins.text });
    }
    const before = originals.get(f) as string;
    const after = (before.startsWith("\uFEFF") ? "\uFEFF" : "") + out;
    if (!onlyLinesInserted(before, after)) throw new Error(`editHandlers: internal error, an edit of ${rel(f)} changed a line of its own; nothing was written`);
    changed.push({ path: rel(f), before, after });
  }
  edits.sort((x, y) => (x.file < y.file ? -1 : x.file > y.file ? 1 : x.line - y.line));
  return { edits, manual, notes, files: changed, scanned };
}
