/**
 * The runtime's two entries stay small and used: every name the agents'
 * entry (runtime/index.ts) exports is documented in the README or used by
 * an example, and every name generated code's entry (runtime/internal.ts)
 * exports is imported by generated code (or, for a codec helper only some
 * field kinds need, named by the codec emitter).
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Project } from "ts-morph";
import { projectRoot } from "../support/protos.js";

const project = new Project({ skipAddingFilesFromTsConfig: true });
const exportsOf = (entry: string) => [...project.addSourceFileAtPath(join(projectRoot, entry)).getExportedDeclarations().keys()].sort();

function textsUnder(dir: string): string[] {
  return readdirSync(join(projectRoot, dir), { recursive: true, encoding: "utf8" })
    .filter((p) => p.endsWith(".ts"))
    .map((p) => readFileSync(join(projectRoot, dir, p), "utf8"));
}

const mentions = (texts: readonly string[], name: string) => texts.some((t) => new RegExp(`\\b${name}\\b`).test(t));

test("every name of protoc-gen-a2a/runtime is in the README or an example, and there are few", () => {
  const names = exportsOf("runtime/index.ts");
  const texts = [readFileSync(join(projectRoot, "README.md"), "utf8"), ...textsUnder("examples")];
  expect(names.filter((n) => !mentions(texts, n))).toEqual([]);
  expect(names.length).toBeGreaterThanOrEqual(20);
  expect(names.length).toBeLessThanOrEqual(36);
});

test("every name of protoc-gen-a2a/runtime/tasks is in the README", () => {
  const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
  expect(exportsOf("runtime/tasks.ts").filter((n) => !mentions([readme], n))).toEqual([]);
});

test("what an app mounting an agent itself uses is in the README: the adapters, and the card endpoint and 0.3 option of .../server", () => {
  const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
  const adapters = exportsOf("runtime/adapters/frameworks.ts").filter((n) => /^create|^passThroughParser$|^continueOnRead$/.test(n));
  const mounting = ["createAgentCardEndpoint", "AgentCardEndpoint", "AgentCardEndpointOptions", "MountedCardSigning", "MountedInterface", "CompatOptions"];
  expect(mounting.filter((n) => !exportsOf("runtime/server.ts").includes(n))).toEqual([]);
  expect([...adapters, ...mounting].filter((n) => !mentions([readme], n))).toEqual([]);
});

test("every name of protoc-gen-a2a/runtime/internal is imported by generated code", () => {
  const names = exportsOf("runtime/internal.ts");
  // generated/ holds a2a.proto's output and the fixtures' (plain services); test/golden the fixtures' too.
  const generated = [...textsUnder("generated"), ...textsUnder("test/golden")].filter((t) => t.includes("protoc-gen-a2a/runtime/internal"));
  expect(generated.length).toBeGreaterThan(0);
  const imported = (name: string) => generated.some((t) => new RegExp(`import (type )?\\{[^}]*\\b${name}\\b[^}]*\\} from "protoc-gen-a2a/runtime/internal"`).test(t));
  // A codec helper only some field kinds need (a map with bool keys, a closed enum) is
  // imported where a proto has one; the codec emitter names each as ctx.rt("name").
  const emitters = textsUnder("plugin/emit");
  const named = (name: string) => emitters.some((t) => t.includes(`rt("${name}")`));
  expect(names.filter((n) => !imported(n) && !named(n))).toEqual([]);
});
