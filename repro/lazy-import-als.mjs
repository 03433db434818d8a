// A runtime loaded lazily inside a request (serverless first invocation, Next.js route modules):
// background.ts's atLoad AsyncResource captures that request's AsyncLocalStorage stores for good,
// and every background job (store sweeps, push lanes, LISTEN notices) runs with them.
import { AsyncLocalStorage } from "node:async_hooks";
const als = new AsyncLocalStorage();
const bg = await als.run({ requestId: "first-request" }, () => import("../runtime/core/background.ts"));
console.log("outside any request, background work sees:", bg.inBackground(() => als.getStore()));
