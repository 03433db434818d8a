/**
 * This package's folder and package.json, for the CLI: found once, by the
 * plugin's own walk up from its module (plugin/package-root.ts), which runs
 * from plugin/ in tests and from dist/plugin/ when installed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot as root } from "../plugin/package-root.js";

export function packageRoot(): string {
  return root;
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
  return JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageManifest;
}
