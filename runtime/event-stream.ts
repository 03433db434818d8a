import { sseFrame, type EventSource } from "./binding-core.js";

/**
 * Turns a handler's stream into an EventSource after its first event was
 * already pulled (the cores pull it before answering, so an error before the
 * first event is still a plain error response, D14).
 *
 * After the first event, an error from the handler (or from serializing one
 * of its events) becomes one last event (`serializeError`) and the stream
 * ends. `cancel()` aborts the handler's signal, which is what releases a
 * handler blocked in an await, and asks the iterator to `return()`, which a
 * generator runs its `finally` for once it reaches its next `yield`.
 */
export function createEventSource<T>(options: {
  /** The first event's payload, already serialized by the caller. */
  readonly first: string;
  readonly iterator: AsyncIterator<T>;
  readonly serialize: (event: T) => string;
  readonly serializeError: (err: unknown) => string;
  /** SSE event name of the final error frame; none by default (plain `data:`). */
  readonly errorEvent?: string;
  readonly abort: () => void;
  readonly heartbeatMs: number;
}): EventSource {
  const { iterator, serialize, serializeError, abort } = options;
  let pendingFirst: string | undefined = options.first;
  let done = false;
  const stop = () => {
    abort();
    // return() may reject or never settle for a generator stuck in an
    // await; either way nothing waits on it.
    void Promise.resolve()
      .then(() => iterator.return?.())
      .catch(() => undefined);
  };
  // Made once per stream, not per pull: a pending pull holds nothing new.
  const onError = (err: unknown): string | undefined => {
    if (done) return undefined;
    done = true;
    // The handler may still be suspended (an event it yielded failed to
    // encode): release it as a disconnect would.
    stop();
    return sseFrame(serializeError(err), options.errorEvent);
  };
  const onResult = (r: IteratorResult<T>): string | undefined => {
    if (done) return undefined;
    if (r.done === true) {
      done = true;
      return undefined;
    }
    try {
      return sseFrame(serialize(r.value));
    } catch (err) {
      return onError(err);
    }
  };
  return {
    heartbeatMs: options.heartbeatMs,
    // A promise chain, not an async function: an idle stream then holds the
    // handler's pending next() and nothing of ours suspended around it.
    next() {
      if (done) return Promise.resolve(undefined);
      if (pendingFirst !== undefined) {
        const first = pendingFirst;
        pendingFirst = undefined;
        return Promise.resolve(sseFrame(first));
      }
      let pending: Promise<IteratorResult<T>>;
      try {
        pending = iterator.next();
      } catch (err) {
        return Promise.resolve(onError(err));
      }
      return pending.then(onResult, onError);
    },
    cancel() {
      if (done) return;
      done = true;
      stop();
    },
  };
}
