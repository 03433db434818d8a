// Preloaded with `node --import` by test/cli/upgrade/ts-morph-missing.test.ts: makes the
// package "ts-morph" unresolvable, as in an agent repo that did not install it.
import { register } from "node:module";

register(
  "data:text/javascript," +
    encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if (specifier === "ts-morph" || specifier.startsWith("ts-morph/")) {
    const err = new Error("Cannot find package 'ts-morph' (hidden by without-ts-morph.mjs)");
    err.code = "ERR_MODULE_NOT_FOUND";
    throw err;
  }
  return next(specifier, context);
}`),
);
