// The module hooks of record-loads.mjs: each module imported is appended to the file as it
// loads (a load hook, not a resolve hook: import.meta.resolve resolves without loading).
import { appendFileSync } from "node:fs";

let out;

export function initialize(data) {
  out = data.out;
}

export async function load(url, context, next) {
  appendFileSync(out, `import ${url}\n`);
  return next(url, context);
}
