#!/usr/bin/env node
// One binary, two uses. buf and protoc start a plugin with no arguments and a
// CodeGeneratorRequest on stdin (a pipe): that is the plugin. A person runs it
// with a command (`init`, `pull`, `--help`), or with none at a terminal: that
// is the CLI (dist/cli/main.js; D40). Modules are imported, not loaded up front, so
// that what runs decides what loads (plugin/protoplugin.ts: no TypeScript
// compiler unless a request asks for js or dts; the CLI never loads for buf).
// `--version` alone stays protoplugin's answer ("protoc-gen-a2a v0.1.0"), as it was before there
// was a CLI, and what bench/plugin-time.mjs times as the plugin's loading.
const args = process.argv.slice(2);
if ((args.length === 0 && !process.stdin.isTTY) || (args.length === 1 && args[0] === "--version")) {
  const [{ runNodeJs }, { protocGenA2a }] = await Promise.all([
    import("../dist/plugin/protoplugin.js"),
    import("../dist/plugin/plugin.js"),
  ]);
  runNodeJs(protocGenA2a);
} else {
  const [{ main }, { processIo }] = await Promise.all([import("../dist/cli/main.js"), import("../dist/cli/io.js")]);
  process.exitCode = await main(args, processIo());
}
