/**
 * `protoc-gen-a2a init <dir>`: a new agent repo from templates/agent, with
 * a2a.proto pulled at a pinned version (the same pull as `pull`), ready for
 * `npm install && npm start` and `npm test` (D42).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, isAbsolute, relative, resolve } from "node:path";
import type { CommandSpec, ParsedArgs } from "./args.js";
import { UsageError } from "./errors.js";
import type { CliIo } from "./io.js";
import { packageManifest, type PackageManifest } from "./package-root.js";
import { readPin } from "./pin.js";
import { defaultGoogleapisDir, defaultProtoDir, pullIntoRepo } from "./pull-command.js";
import { lockFileName } from "./pull.js";
import { renderTemplates } from "./scaffold.js";
import { parseStoreUrl } from "../runtime/a2a/tasks/store-url.js";

/**
 * What `--store <url>` puts in the agent (D73): the URL, as the default of
 * its A2A_STORE, and the driver its engine needs as a dependency.
 */
export function storeChoice(url: string): StoreChoice {
  const engine = engineChoice(url);
  return { ...engine, testInMemory: engine.testUrl !== url, commentUrl: url.replaceAll("*/", "*\\/") };
}

export interface StoreChoice {
  readonly url: string;
  readonly name: string;
  readonly driver: string | undefined;
  readonly ignore?: string;
  /**
   * The store the repo's test serves the agent on: PGlite in memory for a PGlite agent, whose data
   * folder a second process (the test, while `npm start` runs) would open too and overwrite.
   */
  readonly testUrl: string;
  /** Whether the test's store is not the agent's. */
  readonly testInMemory: boolean;
  /** `url` as it may stand in a comment (a `*\/` in it would end the comment). */
  readonly commentUrl: string;
}

function engineChoice(url: string): Omit<StoreChoice, "testInMemory" | "commentUrl"> {
  let parsed;
  try {
    parsed = parseStoreUrl(url);
  } catch (err) {
    throw new UsageError(`protoc-gen-a2a init: --store: ${(err as Error).message}`);
  }
  switch (parsed.engine) {
    case "memory":
      return { url, name: "in-memory", driver: undefined, testUrl: url };
    case "pglite": {
      const dir = parsed.dataDir;
      const name = `PGlite (embedded${dir === undefined ? ", in memory" : `, in ${dir}`})`;
      // A data directory inside the repo is the agent's state, not its source.
      const inside = dir !== undefined && !isAbsolute(dir) && !dir.startsWith("..");
      return { url, name, driver: "@electric-sql/pglite", testUrl: "pglite:", ...(inside ? { ignore: `${dir.replace(/^\.\//, "").replace(/\/+$/, "")}/` } : {}) };
    }
    case "postgres":
      return { url, name: "Postgres", driver: "pg", testUrl: url };
  }
}

export const initSpec: CommandSpec = {
  name: "init",
  summary: "Create a new agent repo: an agent on the task runtime, its test, a pinned a2a.proto, buf and npm set up",
  positionals: [{ name: "dir", description: "the new repo's folder (created; if it exists it must be empty)", required: true }],
  options: {
    name: { type: "string", value: "<name>", description: "The npm package name [default: the folder's name]" },
    "a2a-version": { type: "string", value: "<version>", description: "The a2a.proto version to pin (see `pull --list`) [default: the pin's default]" },
    store: {
      type: "string",
      value: "<url>",
      description: "Where the agent keeps its tasks: memory:, pglite:<data dir> (embedded, durable) or postgres://user:password@host/db (shared by instances)",
      default: "memory:",
    },
    jsonrpc: { type: "boolean", negatable: true, description: "Do not serve JSON-RPC" },
    "http-json": { type: "boolean", negatable: true, description: "Do not serve HTTP+JSON" },
    grpc: { type: "boolean", negatable: true, description: "Do not serve gRPC (and do not depend on @grpc/grpc-js)" },
    "compat-v0-3": { type: "boolean", description: "Also answer A2A 0.3 clients on the same endpoints (serveA2AService's compat: { v0_3: true }, D110)" },
    "package-spec": { type: "string", value: "<spec>", description: "What the repo's package.json depends on for protoc-gen-a2a: a version range, a tarball or a folder [default: ^<this version>]" },
    "spec-dir": { type: "string", value: "<dir>", description: "A folder laid out as <version>/a2a.proto, tried before $A2A_SPEC_DIR and git (as for pull)" },
  },
  details: "Then: cd <dir> && npm install && npm start (serves the agent), npm test (calls it on every binding).",
};

/** An npm package name from a folder name: lower case, and only the characters npm allows. */
export function packageNameOf(dir: string): string {
  const name = basename(resolve(dir)).toLowerCase().replace(/[^a-z0-9._~-]+/g, "-").replace(/^[._-]+/, "");
  return name === "" ? "a2a-agent" : name;
}

/** Whether npm takes `name` as a new package's name. */
function isPackageName(name: string): boolean {
  return name.length <= 214 && /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/.test(name);
}

/** `--package-spec` as package.json takes it: a path on disk becomes `file:<absolute path>`. */
export function dependencySpec(spec: string | undefined, cwd: string, manifest: PackageManifest): string {
  if (spec === undefined) return `^${manifest.version}`;
  // A `file:` spec is a path too: relative to where init runs (npm would read it relative to the new
  // repo), and it must exist (npm links a missing folder without a word).
  const given = spec.startsWith("file:") ? spec.slice("file:".length) : spec;
  const looksLikePath = given !== spec || given.startsWith(".") || isAbsolute(given) || given.endsWith(".tgz") || given.endsWith(".tar.gz");
  if (looksLikePath) {
    const path = resolve(cwd, given);
    if (!existsSync(path)) throw new UsageError(`protoc-gen-a2a init: --package-spec ${spec}: no such file or folder (${path})`);
    return `file:${path}`;
  }
  return spec;
}

function range(manifest: PackageManifest, name: string): string {
  const found = manifest.dependencies?.[name] ?? manifest.devDependencies?.[name] ?? manifest.peerDependencies?.[name];
  if (found === undefined) throw new Error(`protoc-gen-a2a's package.json names no version of ${name}`);
  return found;
}

export async function runInit(args: ParsedArgs, io: CliIo): Promise<void> {
  const dir = resolve(io.cwd, args.positionals[0] ?? "");
  if (existsSync(dir) && !statSync(dir).isDirectory()) {
    throw new UsageError(`protoc-gen-a2a init: ${dir} is a file, not a folder; name a new folder`);
  }
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new UsageError(`protoc-gen-a2a init: ${dir} is not empty; name a new folder (init never overwrites files)`);
  }
  const bindings = { jsonRpc: args.flags.jsonrpc === true, httpJson: args.flags["http-json"] === true, grpc: args.flags.grpc === true };
  if (!bindings.jsonRpc && !bindings.httpJson && !bindings.grpc) {
    throw new UsageError("protoc-gen-a2a init: --no-jsonrpc, --no-http-json and --no-grpc leave no binding to serve; keep at least one");
  }
  const pin = readPin();
  const version = args.strings["a2a-version"] ?? pin.default;
  if (version.startsWith("v0.")) {
    throw new UsageError(
      `protoc-gen-a2a init: a2a.proto ${version} is A2A 0.x (package a2a.v1), which this plugin serves as a plain service without A2A's rules; ` +
        `start the agent at ${pin.default} (the default) or another 1.x version (see \`protoc-gen-a2a pull --list\`)`,
    );
  }
  const manifest = packageManifest();
  const name = args.strings.name ?? packageNameOf(dir);
  if (!isPackageName(name)) {
    throw new UsageError(`protoc-gen-a2a init: --name ${JSON.stringify(name)} is not an npm package name (lower case letters, digits, - . _ ~, optionally @scope/, at most 214 characters)`);
  }
  const store = storeChoice(args.strings.store ?? "memory:");
  // Every option checked before anything is written: a failure after the pull left a half-made repo.
  const ownSpec = dependencySpec(args.strings["package-spec"], io.cwd, manifest);

  // The proto first: if it cannot be had, nothing else is written.
  const specDir = args.strings["spec-dir"];
  const pulled = pullIntoRepo({ dir, version, ...(specDir === undefined ? {} : { specDir: resolve(io.cwd, specDir) }), env: io.env });

  const dependencies: Record<string, string> = {
    "@bufbuild/protobuf": range(manifest, "@bufbuild/protobuf"),
    ...(bindings.grpc ? { "@grpc/grpc-js": range(manifest, "@grpc/grpc-js") } : {}),
    ...(store.driver === undefined ? {} : { [store.driver]: range(manifest, store.driver) }),
    "protoc-gen-a2a": ownSpec,
  };
  const devDependencies: Record<string, string> = {
    "@bufbuild/buf": range(manifest, "@bufbuild/buf"),
    "@bufbuild/protoc-gen-es": range(manifest, "@bufbuild/protoc-gen-es"),
    "@types/node": range(manifest, "@types/node"),
    typescript: range(manifest, "typescript"),
  };
  const served = [bindings.jsonRpc ? "JSON-RPC" : undefined, bindings.httpJson ? "HTTP+JSON" : undefined, bindings.grpc ? "gRPC" : undefined].filter((b) => b !== undefined);
  const written = renderTemplates("agent", dir, {
    name,
    title: name,
    nodeEngine: manifest.engines?.node ?? ">=20",
    dependencies,
    devDependencies,
    ...bindings,
    v03: args.flags["compat-v0-3"] === true,
    bindingList: served.length === 1 ? served[0] : `${served.slice(0, -1).join(", ")} and ${served[served.length - 1]}`,
    store,
    a2aVersion: pulled.version,
    protoDir: defaultProtoDir,
    googleapisDir: defaultGoogleapisDir,
    genDir: "src/gen",
    pluginOptions: ["target=ts", "import_extension=js", ...(bindings.grpc ? [] : ["grpc=false"])].join(", "),
  });
  const shown = shellWord(relative(io.cwd, dir) || ".");
  io.out(`Created ${shown}: ${[...written, relative(dir, pulled.files[0] ?? ""), lockFileName].join(", ")} (a2a.proto ${pulled.version})\n`);
  io.out(`Next: cd ${shown} && npm install && npm start     (npm test calls the agent on ${served.join(", ")})\n`);
}


/** A word as a POSIX shell reads it back, quoted only when it must be. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}
