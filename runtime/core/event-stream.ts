import { sseFrame, type EventSource } from "./transport.js";

/** How one stream's events become SSE payloads; the dispatcher makes one per stream. */
export interface EventEncoder<T> {
  /** The `data:` payload of one event; throws when the event may not or cannot be sent. */
  event(value: T): string;
  /** The `data:` payload of the error that ends the stream. */
  error(err: unknown): string;
  /** SSE event name of that error frame; undefined for a plain `data:` frame. */
  readonly errorEvent: string | undefined;
  /** Aborts the handler's signal; `failed`: because the stream failed on the server's side, not because the client left. */
  abort(failed?: boolean): void;
}

/**
 * Turns a handler's stream into an EventSource after its first event was
 * already pulled (the cores pull it before answering, so an error before the
 * first event is still a plain error response, D14).
 *
 * After the first event, an error from the handler (or from encoding one
 * of its events) becomes one last event and the stream ends. `cancel()`
 * aborts the handler's signal, which is what releases a handler blocked in
 * an await, and asks the iterator to `return()`, which a generator runs its
 * `finally` for once it reaches its next `yield`.
 */
export function createEventSource<T>(iterator: AsyncIterator<T>, first: string | undefined, encoder: EventEncoder<T>, heartbeatMs: number): EventSource {
  return new HandlerEvents(iterator, first, encoder, heartbeatMs);
}

/**
 * The same, opened while the first pull (`pending`) is still under way: it
 * took longer than a heartbeat period (D14). Its failure is then the
 * stream's last event, as any later one; `ended` runs if the handler's
 * stream turns out to end without an event, and may throw the error to end
 * it with (a profile's stream rules).
 */
export function createOpenedEventSource<T>(iterator: AsyncIterator<T>, pending: Promise<IteratorResult<T>>, encoder: EventEncoder<T>, heartbeatMs: number, ended: () => void): EventSource {
  const events = new HandlerEvents(iterator, undefined, encoder, heartbeatMs);
  events.awaitFirst(pending, ended);
  return events;
}

// A class, not an object of closures: an idle stream holds this object, its
// two callbacks and the handler's pending next(), nothing of ours suspended.
class HandlerEvents<T> implements EventSource {
  readonly heartbeatMs: number;
  readonly #iterator: AsyncIterator<T>;
  readonly #encoder: EventEncoder<T>;
  #first: string | undefined;
  /** The first pull, when the stream opened before it answered; taken by the first next(). */
  #pending: Promise<IteratorResult<T>> | undefined;
  #ended: (() => void) | undefined;
  #done = false;
  // Made once per stream, not per pull.
  readonly #onResult = (r: IteratorResult<T>): string | undefined => this.#result(r);
  readonly #onError = (err: unknown): string | undefined => this.#fail(err);

  /** `first` undefined: the handler's stream ended before its first event (a profile without stream rules allows that). */
  constructor(iterator: AsyncIterator<T>, first: string | undefined, encoder: EventEncoder<T>, heartbeatMs: number) {
    this.#iterator = iterator;
    this.#first = first;
    this.#done = first === undefined;
    this.#encoder = encoder;
    this.heartbeatMs = heartbeatMs;
  }

  /** The stream opens before its first event: `pending` is that pull; `ended` checks a stream that had none. */
  awaitFirst(pending: Promise<IteratorResult<T>>, ended: () => void): void {
    this.#done = false;
    this.#pending = pending;
    this.#ended = ended;
  }

  next(): Promise<string | undefined> {
    if (this.#done) return Promise.resolve(undefined);
    const opening = this.#pending;
    if (opening !== undefined) {
      this.#pending = undefined;
      return opening.then((r) => (r.done === true ? this.#endFirst() : this.#result(r)), this.#onError);
    }
    const first = this.#first;
    if (first !== undefined) {
      this.#first = undefined;
      return Promise.resolve(sseFrame(first));
    }
    let pending: Promise<IteratorResult<T>>;
    try {
      pending = this.#iterator.next();
    } catch (err) {
      return Promise.resolve(this.#fail(err));
    }
    return pending.then(this.#onResult, this.#onError);
  }

  cancel(): void {
    if (this.#done) return;
    this.#done = true;
    this.#stop();
  }

  #result(r: IteratorResult<T>): string | undefined {
    if (this.#done) return undefined;
    if (r.done === true) {
      this.#done = true;
      return undefined;
    }
    try {
      return sseFrame(this.#encoder.event(r.value));
    } catch (err) {
      return this.#fail(err);
    }
  }

  /** The stream ended before its first event, which the binding could not refuse any more: its rules may make that an error. */
  #endFirst(): string | undefined {
    if (this.#done) return undefined;
    try {
      this.#ended?.();
    } catch (err) {
      return this.#fail(err);
    }
    this.#done = true;
    return undefined;
  }

  #fail(err: unknown): string | undefined {
    if (this.#done) return undefined;
    this.#done = true;
    // Framed (and reported) before the call's signal fires below: a failure
    // reported after it would read as the abort's and be dropped.
    const encoder = this.#encoder;
    const frame = sseFrame(encoder.error(err), encoder.errorEvent);
    // The handler may still be suspended (an event it yielded failed to
    // encode): release it as a disconnect would, as failed.
    this.#stop(true);
    return frame;
  }

  #stop(failed = false): void {
    this.#encoder.abort(failed);
    releaseIterator(this.#iterator);
  }
}

/**
 * Asks a handler's iterator to `return()`, which a generator runs its
 * `finally` for once it reaches its next `yield`. Nothing waits on it: it
 * may reject, or never settle for a generator stuck in an await.
 */
export function releaseIterator(iterator: AsyncIterator<unknown> | undefined): void {
  void Promise.resolve()
    .then(() => iterator?.return?.())
    .catch(() => undefined);
}
