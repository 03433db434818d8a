/**
 * Exported lists longer than 64 entries (a file's codecs, a service's HTTP rules) are printed
 * in parts of 16 spread into the list (printList in plugin/emit/shared.ts), so that tsc checks
 * them in time that grows with their length; at about 1,000 entries a single array literal is
 * more than tsc can check at all (bench/plugin-scale.mjs). The parts must add up to the list,
 * in order, and type-check.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { bufBin, generate, projectRoot, scratchDir, writeModule } from "../support/protos.js";

const rpcs = 70;
const proto = [
  'syntax = "proto3";',
  "package long.v1;",
  'import "google/api/annotations.proto";',
  'import "google/api/field_behavior.proto";',
  "service LongService {",
  ...Array.from({ length: rpcs }, (_, i) => `  rpc Get${i}(Get${i}Request) returns (Get${i}Response) { option (google.api.http) = { get: "/v1/items${i}/{id}" }; }`),
  "}",
  ...Array.from({ length: rpcs }, (_, i) => [`message Get${i}Request { string id = 1 [(google.api.field_behavior) = REQUIRED]; }`, `message Get${i}Response { string id = 1; }`]).flat(),
  "",
].join("\n");
const files = { "long/v1/long.proto": proto };
const out = generate(files, "target=ts,import_extension=js");

/** The entries of each `const <name>_<i>` part, in order, and the parts the exported list spreads. */
function partsOf(content: string, name: string): { parts: string[][]; spread: string[] } {
  const parts = [...content.matchAll(new RegExp(`^const ${name}_(\\d+): readonly \\w+\\[\\] = \\[\\n([\\s\\S]*?)^\\];`, "gm"))].map((m, i) => {
    expect(m[1]).toBe(String(i));
    return (m[2] as string).split("\n").filter((l) => /^ {2}[^ ]/.test(l)).map((l) => l.trim());
  });
  const list = new RegExp(`^export const ${name}: readonly \\w+\\[\\] = \\[\\n([\\s\\S]*?)^\\];`, "m").exec(content);
  return { parts, spread: (list?.[1] ?? "").split("\n").filter(Boolean).map((l) => l.trim()) };
}

test("a file's codecs: parts of 16, spread in order, every codec once", () => {
  const codec = out.get("long/v1/long_codec.ts") as string;
  const { parts, spread } = partsOf(codec, "longCodecs");
  const declared = [...codec.matchAll(/^export const (\w+Codec): GenCodec</gm)].map((m) => `${m[1]},`);
  expect(declared.length).toBe(2 * rpcs);
  expect(parts.map((p) => p.length)).toEqual([...Array(Math.floor(declared.length / 16)).fill(16), declared.length % 16]);
  expect(parts.flat()).toEqual(declared);
  expect(spread).toEqual(parts.map((_, i) => `...longCodecs_${i},`));
});

test("a service's HTTP rules: parts of 16 holding every rule once", () => {
  const methods = out.get("long/v1/long_methods.ts") as string;
  const { parts, spread } = partsOf(methods, "LongServiceHttpRules");
  const rules = parts.flat().filter((l) => l.startsWith("{")).length;
  expect(rules).toBe(rpcs);
  expect(parts.every((p) => p.filter((l) => l.startsWith("{")).length <= 16)).toBe(true);
  expect(spread).toEqual(parts.map((_, i) => `...LongServiceHttpRules_${i},`));
  const paths = [...methods.matchAll(/^ {4}path: "(\/v1\/items\d+\/\{id\})",$/gm)].map((m) => m[1]);
  expect(new Set(paths).size).toBe(rpcs);
});

test("the parts type-check under tsc --strict beside protoc-gen-es's output", () => {
  const { dir, done } = scratchDir("long-lists");
  try {
    writeModule(dir, files);
    writeFileSync(
      join(dir, "buf.gen.yaml"),
      ["version: v2", "plugins:", `  - local: ["node", ${JSON.stringify(join(projectRoot, "node_modules/@bufbuild/protoc-gen-es/bin/protoc-gen-es"))}]`, "    out: gen", "    opt: [target=ts, import_extension=js]", "    include_imports: true", ""].join("\n"),
    );
    execFileSync(bufBin, ["generate", "--path", "long"], { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    for (const [name, content] of out) {
      mkdirSync(dirname(join(dir, "gen", name)), { recursive: true });
      writeFileSync(join(dir, "gen", name), content);
    }
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noUncheckedIndexedAccess: true, skipLibCheck: true, noEmit: true, types: ["node"] },
        include: ["gen/**/*.ts"],
      }),
    );
    // The generated code imports protoc-gen-a2a/runtime: inside this package it resolves to dist/runtime's types, as in a user's project.
    const tsc = spawnSync(join(projectRoot, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], { cwd: dir, encoding: "utf8" });
    expect({ status: tsc.status, output: `${tsc.stdout}${tsc.stderr}` }).toEqual({ status: 0, output: "" });
  } finally {
    done();
  }
}, 60_000);
