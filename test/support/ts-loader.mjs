// Preloaded with `node --import` into child processes that run this project's TypeScript
// (the test agent of test/grpc/http2-floods.test.ts): .ts modules are compiled as they load by
// TypeScript's transpileModule, "protoc-gen-a2a/runtime..." resolves to runtime/ as in
// jest.config.js, and "./x.js" to "./x.ts" when only that exists. Type-checking is tsc's job.
import { register } from "node:module";

register("./ts-loader-hooks.mjs", import.meta.url);
