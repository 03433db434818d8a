/**
 * The pin of a2a.proto versions, proto/a2a-versions.json, shipped with the
 * package: each version's upstream ref, path and sha256, the default version,
 * and the googleapis protos it imports (from the npm package
 * google-proto-files).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CliError } from "./errors.js";
import { packageRoot } from "./package-root.js";

export interface PinnedVersion {
  /** The tag, or commit for `main`, fetched from the repository. */
  readonly ref: string;
  readonly commit: string;
  /** a2a.proto's path inside the repository at that ref. */
  readonly path: string;
  readonly sha256: string;
}

export interface Pin {
  readonly default: string;
  readonly repository: string;
  readonly versions: Readonly<Record<string, PinnedVersion>>;
  readonly googleapis: { readonly package: string; readonly files: readonly string[] };
}

/** Where the pin is, relative to the package root (error messages name it so). */
export const pinPath = "proto/a2a-versions.json";

export function readPin(): Pin {
  return JSON.parse(readFileSync(join(packageRoot(), pinPath), "utf8")) as Pin;
}

/** The pinned entry of `version`, or an error listing the pinned ones. */
export function pinnedVersion(pin: Pin, version: string): PinnedVersion {
  // Own keys only: "constructor" or "__proto__" would find the object's prototype.
  const entry = Object.hasOwn(pin.versions, version) ? pin.versions[version] : undefined;
  if (entry === undefined) throw new CliError(`unknown version "${version}"; pinned versions: ${Object.keys(pin.versions).join(", ")}`);
  return entry;
}
