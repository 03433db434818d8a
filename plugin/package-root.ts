import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The folder of this package (where package.json is), found
 * by walking up from this module, which runs from plugin/ in tests and from
 * dist/plugin/ when installed.
 */
export const packageRoot: string = (() => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "protoc-gen-a2a") {
      return dir;
    }
    if (dirname(dir) === dir) throw new Error("protoc-gen-a2a: cannot find its package.json");
  }
})();

export const packageVersion: string = (
  JSON.parse(readFileSync(join(packageRoot, "package.json"), "utf8")) as { version: string }
).version;
