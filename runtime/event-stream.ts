import type { EventSource } from "./binding-core.js";

/**
 * Turns a handler's stream into an EventSource after its first event was
 * already pulled (the cores pull it before answering, so an error before the
 * first event is still a plain error response, D14).
 *
 * After the first event, an error from the handler becomes one last event
 * (`serializeError`) and the stream ends. `cancel()` aborts the handler's
 * signal and calls the iterator's `return()` at once, even while a `next()`
 * is pending, so a handler blocked on the client is released.
 */
export function createEventSource<T>(options: {
  readonly first: T;
  readonly iterator: AsyncIterator<T>;
  readonly serialize: (event: T) => string;
  readonly serializeError: (err: unknown) => string;
  readonly abort: () => void;
  readonly heartbeatMs: number;
}): EventSource {
  const { iterator, serialize, serializeError, abort } = options;
  let pendingFirst: T | undefined = options.first;
  let done = false;
  return {
    heartbeatMs: options.heartbeatMs,
    async next() {
      if (done) return undefined;
      if (pendingFirst !== undefined) {
        const first = pendingFirst;
        pendingFirst = undefined;
        return serialize(first);
      }
      try {
        const r = await iterator.next();
        if (done) return undefined;
        if (r.done === true) {
          done = true;
          return undefined;
        }
        return serialize(r.value);
      } catch (err) {
        if (done) return undefined;
        done = true;
        return serializeError(err);
      }
    },
    cancel() {
      if (done) return;
      done = true;
      abort();
      // return() may reject or never settle for a generator stuck in an
      // await; either way the client is gone and nothing waits on it.
      void Promise.resolve()
        .then(() => iterator.return?.())
        .catch(() => undefined);
    },
  };
}
