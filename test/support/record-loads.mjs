// Preloaded with `node --import` by test/plugin/protoplugin.test.ts: appends to the file
// $RECORD_LOADS every module the process loads, ESM through a load hook (which sees
// every import, whatever its format) and CommonJS from require.cache at exit (require()
// does not pass through the hooks on Node 20).
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";

const out = process.env.RECORD_LOADS;
if (out === undefined) throw new Error("record-loads.mjs needs RECORD_LOADS, the file to append to");
register("./record-loads-hooks.mjs", import.meta.url, { data: { out } });
const require = createRequire(import.meta.url);
process.on("exit", () => {
  appendFileSync(out, Object.keys(require.cache).map((path) => `require ${path}\n`).join(""));
});
