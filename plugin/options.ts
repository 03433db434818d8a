/**
 * The plugin's own options. Standard options (target, import_extension,
 * js_import_style, keep_empty_files, ...) are parsed by protoplugin exactly as
 * in protoc-gen-es; only the keys it does not know arrive here.
 */
export interface Options {
  /** Module that generated code imports the runtime from. */
  readonly runtimeImport: string;
  /** Whether `_grpc.ts` is emitted (and `serve<Service>` can serve gRPC): `grpc=false` for agents without @grpc/grpc-js (D43). */
  readonly grpc: boolean;
}

const standardOptions = [
  "target",
  "import_extension",
  "js_import_style",
  "keep_empty_files",
  "ts_nocheck",
  "elide_plugin_version",
  "rewrite_imports",
  "map_imports",
];

const ownOptions: Record<string, { readonly help: string; readonly parse: (value: string, into: { -readonly [K in keyof Options]: Options[K] }) => void }> = {
  runtime_import: {
    help: "runtime_import=<module> (default protoc-gen-a2a/runtime)",
    parse(value, into) {
      if (value === "") throw new Error("runtime_import needs a module name, e.g. runtime_import=protoc-gen-a2a/runtime");
      into.runtimeImport = value;
    },
  },
  grpc: {
    help: "grpc=true|false (default true; false emits no _grpc.ts, for agents without @grpc/grpc-js)",
    parse(value, into) {
      if (value !== "true" && value !== "false") throw new Error(`grpc takes true or false, not "${value}"`);
      into.grpc = value === "true";
    },
  },
};

export function parseOptions(raw: readonly { key: string; value: string }[]): Options {
  const options = { runtimeImport: "protoc-gen-a2a/runtime", grpc: true };
  for (const { key, value } of raw) {
    // Own keys only: "toString" or "__proto__" would find the table's prototype.
    const own = Object.hasOwn(ownOptions, key) ? ownOptions[key] : undefined;
    if (own === undefined) {
      throw new Error(
        `unknown option "${key}". Valid options: ${Object.values(ownOptions).map((o) => o.help).join(", ")}; ` +
          `and the standard ones: ${standardOptions.join(", ")}`,
      );
    }
    own.parse(value, options);
  }
  return options;
}
