/**
 * Where this package is installed: the folder of its package.json, found by
 * walking up from this module. The same code runs from `cli/` (ts-jest) and
 * from `dist/cli/` (the built package), so no fixed number of `..` fits both.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let found: string | undefined;

export function packageRoot(): string {
  if (found !== undefined) return found;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === "protoc-gen-a2a") {
      found = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("protoc-gen-a2a: cannot find the package's own package.json above " + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/** This package's package.json. */
export interface PackageManifest {
  readonly name: string;
  readonly version: string;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly engines?: Readonly<Record<string, string>>;
}

export function packageManifest(): PackageManifest {
  return JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as PackageManifest;
}
