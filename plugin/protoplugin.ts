/**
 * What the plugin runs of @bufbuild/protoplugin, each part imported from its own module rather
 * than through the package's index. The index exports createEcmaScriptPlugin, whose module
 * imports the TypeScript compiler at load time for target=js and dts: as ESM that import was
 * ~0.6 s of a ~0.9 s process, paid on every target=ts run. Here the compiler is loaded by
 * transpile(), on the first request that asks for js or dts.
 *
 * These modules are protoplugin's internals, so package.json pins its version, and
 * test/plugin/protoplugin.test.ts fails when an upgrade changes them: what they export, what
 * createEcmaScriptPlugin answers that ours does not, or TypeScript loading for target=ts.
 */
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type { CodeGeneratorRequest, Edition } from "@bufbuild/protobuf/wkt";
import type { EcmaScriptPluginOptions, FileInfo, Plugin, Schema, Target } from "@bufbuild/protoplugin";

/** protoplugin's `ParsedParameter` (parameter.ts). */
export interface ParsedParameter<Options extends object> {
  readonly parsed: Options & EcmaScriptPluginOptions;
  readonly sanitized: string;
}

/** protoplugin's `SchemaController` (schema.ts): the schema a generator sees, and what run() does with it. */
export interface SchemaController<Options extends object> extends Schema<Options> {
  getFileInfo(): FileInfo[];
  prepareGenerate(target: Target): void;
}

type JsImportStyle = EcmaScriptPluginOptions["jsImportStyle"];

interface Parts {
  createSchema<Options extends object>(
    request: CodeGeneratorRequest,
    parameter: ParsedParameter<Options>,
    pluginName: string,
    pluginVersion: string | undefined,
    minimumEdition: Edition,
    maximumEdition: Edition,
  ): SchemaController<Options>;
  parseParameter<Options extends object>(
    parameter: string,
    parseOptions: ((raw: { key: string; value: string }[]) => Options) | undefined,
  ): ParsedParameter<Options>;
  runNodeJs(plugin: Plugin): void;
  getComments: typeof import("@bufbuild/protoplugin").getComments;
  createImportSymbol: typeof import("@bufbuild/protoplugin").createImportSymbol;
  safeIdentifier: typeof import("@bufbuild/protoplugin").safeIdentifier;
}

// The module beside which the others are, as this process resolves the package (ESM in node).
const index = import.meta.resolve("@bufbuild/protoplugin");

async function partsOf(module: string, names: readonly (keyof Parts)[]): Promise<Partial<Parts>> {
  const exports = (await import(new URL(module, index).href)) as Record<string, unknown>;
  for (const name of names) {
    if (typeof exports[name] !== "function") {
      throw new Error(`protoc-gen-a2a: ${new URL(module, index).href} exports no function ${name}: @bufbuild/protoplugin is not the version protoc-gen-a2a pins`);
    }
  }
  return exports as Partial<Parts>;
}

const parts = Object.assign(
  {},
  ...(await Promise.all([
    partsOf("./schema.js", ["createSchema"]),
    partsOf("./parameter.js", ["parseParameter"]),
    partsOf("./run-node.js", ["runNodeJs"]),
    partsOf("./source-code-info.js", ["getComments"]),
    partsOf("./import-symbol.js", ["createImportSymbol"]),
    partsOf("./safe-identifier.js", ["safeIdentifier"]),
  ])),
) as Parts;

export const { createSchema, parseParameter, runNodeJs, getComments, createImportSymbol, safeIdentifier } = parts;

let transpiler: typeof transpile | undefined;

/**
 * protoplugin's own transpile (the one createEcmaScriptPlugin calls), from its CommonJS build:
 * run() is synchronous, and require() loads TypeScript in about half the time an ESM import does.
 */
export function transpile(files: FileInfo[], js: boolean, dts: boolean, jsImportStyle: JsImportStyle): FileInfo[] {
  if (transpiler === undefined) {
    const require = createRequire(import.meta.url);
    const fromProtoplugin = createRequire(require.resolve("@bufbuild/protoplugin"));
    useOwnTypeScriptLibs(fromProtoplugin);
    const exports = fromProtoplugin("./transpile.js") as { transpile?: unknown };
    if (typeof exports.transpile !== "function") {
      throw new Error("protoc-gen-a2a: @bufbuild/protoplugin's transpile.js exports no function transpile: it is not the version protoc-gen-a2a pins");
    }
    transpiler = exports.transpile as typeof transpile;
  }
  return transpiler(files, js, dts, jsImportStyle);
}

/**
 * protoplugin compiles with its own TypeScript (it pins 5.4.5), but @typescript/vfs, which hands
 * that compiler the standard library (`lib.*.d.ts`, every one a root file), reads them from
 * whichever `typescript` it resolves itself: the project's. TypeScript 7's package ships no
 * `lib.*.d.ts` beside its entry, so under it the compiler saw no Promise or AsyncIterable and
 * target=dts failed (TS4057, "Contact the plugin author"). vfs takes the folder as an argument
 * protoplugin does not pass; this makes it default to the folder of the compiler that runs.
 */
function useOwnTypeScriptLibs(fromProtoplugin: NodeJS.Require): void {
  const libDir = dirname(fromProtoplugin.resolve("typescript"));
  const vfs = fromProtoplugin("@typescript/vfs") as { createDefaultMapFromNodeModules: (options: object, ts?: object, libDir?: string) => Map<string, string> };
  const original = vfs.createDefaultMapFromNodeModules;
  if ((original as { ownLibs?: true }).ownLibs === true) return;
  const withOwnLibs = Object.assign((options: object, ts?: object, dir?: string) => original(options, ts, dir ?? libDir), { ownLibs: true as const });
  vfs.createDefaultMapFromNodeModules = withOwnLibs;
}
