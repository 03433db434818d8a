// The module hooks of ts-loader.mjs.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = new URL("../../", import.meta.url);
const entries = {
  "protoc-gen-a2a/runtime": "runtime/index.ts",
  "protoc-gen-a2a/runtime/internal": "runtime/internal.ts",
  "protoc-gen-a2a/runtime/grpc": "runtime/grpc.ts",
  "protoc-gen-a2a/runtime/adapters": "runtime/adapters/frameworks.ts",
  "protoc-gen-a2a/runtime/server": "runtime/server.ts",
  "protoc-gen-a2a/runtime/tasks": "runtime/tasks.ts",
};

export async function resolve(specifier, context, next) {
  const entry = entries[specifier];
  if (entry !== undefined) return { url: new URL(entry, root).href, shortCircuit: true };
  if ((specifier.startsWith("./") || specifier.startsWith("../")) && specifier.endsWith(".js") && context.parentURL?.endsWith(".ts")) {
    const js = new URL(specifier, context.parentURL);
    const tsUrl = new URL(specifier.replace(/\.js$/, ".ts"), context.parentURL);
    if (!existsSync(fileURLToPath(js)) && existsSync(fileURLToPath(tsUrl))) return { url: tsUrl.href, shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return next(url, context);
  const source = readFileSync(fileURLToPath(url), "utf8");
  const { outputText } = ts.transpileModule(source, {
    fileName: fileURLToPath(url),
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true, sourceMap: false, inlineSourceMap: true },
  });
  return { format: "module", source: outputText, shortCircuit: true };
}

