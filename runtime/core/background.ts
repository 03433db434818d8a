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
import type * as AsyncHooks from "node:async_hooks";
import type { TracingApi } from "./tracing.js";

/**
 * Node's async_hooks, taken from the running process rather than imported: the runtime's main
 * and adapters entries import no `node:` module, so the fetch adapter runs where there is none
 * (a worker without Node compatibility), and there background work simply runs where it is
 * called, OpenTelemetry's root context still set over it.
 */
const hooks = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.("node:async_hooks") as typeof AsyncHooks | undefined;

/**
 * Made as this module loads: what every AsyncLocalStorage holds then (for OpenTelemetry, nothing:
 * the root context). Load the runtime at start-up, as a static import does: loaded inside a
 * request (a lazy import in a handler), it would keep that request's own stores for background
 * work, and OpenTelemetry's alone is reset below.
 */
const atLoad = hooks === undefined ? undefined : new hooks.AsyncResource("a2a.background");

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
  const run = (): T => {
    const api = tracing;
    const root = api?.ROOT_CONTEXT;
    if (api === undefined || root === undefined) return fn();
    // The runtime's modules loaded inside a span (a dynamic import in a call) would have it here:
    // OpenTelemetry's root context is set over it.
    return api.context.with(root, fn);
  };
  return atLoad === undefined ? run() : atLoad.runInAsyncScope(run);
}

/** `fn`, bound to the background context: it runs there whoever calls it (an event of a connection another caller opened). */
export function boundToBackground<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
  if (hooks === undefined) return (...args: A) => inBackground(() => fn(...args));
  const { AsyncResource } = hooks;
  return inBackground(() => AsyncResource.bind(fn));
}
