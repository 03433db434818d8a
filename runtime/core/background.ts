/**
 * The async context of the work a component does on its own, for no call: a store's timers and
 * its LISTEN connection, the rows it takes over from a dead instance, push delivery's lanes (D35).
 *
 * Node gives a timer, a promise or a socket the async context active when it was made, and keeps
 * it for as long as that lives: background work started from the context current at the time (the
 * code that made the component, the first call that needed a connection) ran as that caller, so
 * its OpenTelemetry spans were the caller's children, and the caller's span (with all its
 * attributes and events) was kept for the life of the process. Started here, it runs in the
 * context this module was loaded in (the runtime's import: no call's), with OpenTelemetry's root
 * context made explicit once the API is known, so no span is ever its parent.
 */
import { AsyncResource } from "node:async_hooks";
import type { TracingApi } from "./tracing.js";

/** Made as this module loads: what every AsyncLocalStorage holds then (for OpenTelemetry, nothing: the root context). */
const atLoad = new AsyncResource("a2a.background");

/** The API whose root context background work starts in: the one loaded by default (tracing.ts), or the first given. */
let tracing: TracingApi | undefined;

/** Known from now on (tracing.ts, once `@opentelemetry/api` has loaded; a component given the module). */
export function backgroundTracing(api: TracingApi): void {
  tracing ??= api;
}

/**
 * Runs `fn` in the background context: what it starts (timers, promises, connections, and the
 * callbacks they run) is no caller's, whoever called this.
 */
export function inBackground<T>(fn: () => T): T {
  return atLoad.runInAsyncScope(() => {
    const api = tracing;
    const root = api?.ROOT_CONTEXT;
    if (api === undefined || root === undefined) return fn();
    // The runtime's modules loaded inside a span (a dynamic import in a call) would have it here:
    // OpenTelemetry's root context is set over it.
    return api.context.with(root, fn);
  });
}

/** `fn`, bound to the background context: it runs there whoever calls it (an event of a connection another caller opened). */
export function boundToBackground<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  return inBackground(() => AsyncResource.bind(fn));
}
