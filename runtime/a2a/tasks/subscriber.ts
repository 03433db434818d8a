/**
 * One stream following a task (the SendStreamingMessage that started it, or
 * a SubscribeToTask): an async iterator over the task's events that the
 * binding pulls as its socket drains. Its backlog is bounded: the task's
 * executor waits while a subscriber is `highWater` events behind, and a
 * subscriber that stays there past its grace time is cut with an error, so
 * one reader that never reads neither stalls the task nor grows the heap.
 */
import type { ErrorTableEntry } from "../../core/errors.js";
import { A2AError } from "../errors.js";

/**
 * A stream cut for falling behind (D24): RESOURCE_EXHAUSTED, HTTP 429, and on
 * JSON-RPC -31429, by the rule of A2A's -31401 and -31403, since the core's
 * `-32000 - code` (-32008) is A2A's ExtensionSupportRequired.
 */
const streamCut: ErrorTableEntry = {
  name: "ResourceExhausted",
  reason: "RESOURCE_EXHAUSTED",
  domain: "",
  jsonRpcCode: -31429,
  grpcStatus: "RESOURCE_EXHAUSTED",
  httpStatus: 429,
  defaultMessage: "Resource exhausted",
};

const done: IteratorReturnResult<undefined> = { value: undefined, done: true };

export class Subscriber<E> implements AsyncIterableIterator<E> {
  #queue: (E | undefined)[] = [];
  #head = 0;
  #pending: { resolve(r: IteratorResult<E>): void; reject(e: unknown): void } | undefined;
  #ended = false;
  #error: unknown;
  #finished = false;
  /** The runs waiting for this stream to drain (one, or two while one takes over from another, D77). */
  #waiters: (() => void)[] = [];
  /** Since the stream reached its high-water mark with a run waiting: cuts it when it fires. */
  #grace: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly highWater: number,
    private readonly signal: AbortSignal,
    private readonly onFinish: (s: Subscriber<E>) => void,
  ) {
    // The caller went away: end now, whatever is queued (D14).
    signal.addEventListener("abort", this.#abort, { once: true });
  }

  readonly #abort = () => this.#finish();

  /** Events queued and not yet read. */
  get backlog(): number {
    return this.#queue.length - this.#head;
  }

  get finished(): boolean {
    return this.#finished || this.#ended;
  }

  push(event: E): void {
    if (this.#ended || this.#finished) return;
    const pending = this.#pending;
    if (pending !== undefined) {
      this.#pending = undefined;
      pending.resolve({ value: event, done: false });
      return;
    }
    this.#queue.push(event);
  }

  /** Ends the stream after what is queued; with `error`, that is thrown last. */
  end(error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    // Nothing more is pushed to it: the executor waiting for it to catch up goes on, and its grace
    // timer is cleared (left running, it would cut what the stream still has to read, its end included).
    this.#drained();
    if (this.backlog === 0) this.#settlePending();
  }

  /** Ends the stream now, dropping what is queued: the subscriber stayed too far behind. */
  cut(): void {
    if (this.#ended || this.#finished) return;
    this.#queue = [];
    this.#head = 0;
    this.end(new A2AError(streamCut, `this stream stayed ${this.highWater} events behind the task for too long and was closed; SubscribeToTask to follow it again`));
  }

  /**
   * Resolves when the backlog is down to half the high-water mark, or the stream ends; cuts it once
   * it has stayed behind for `graceMs`, counted from when the first run began to wait, whichever
   * runs wait (a run that takes over from one waiting here waits beside it: each let the other go on
   * before, and the one replaced left its timer to cut a stream that had caught up since).
   */
  whenDrained(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      this.#grace ??= setTimeout(() => {
        this.#grace = undefined;
        this.cut();
        this.#drained();
      }, graceMs);
    });
  }

  /** The waiting runs go on, and the grace timer stops. */
  #drained(): void {
    if (this.#grace !== undefined) clearTimeout(this.#grace);
    this.#grace = undefined;
    if (this.#waiters.length === 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }

  next(): Promise<IteratorResult<E>> {
    if (this.backlog > 0) {
      const event = this.#queue[this.#head] as E;
      this.#queue[this.#head++] = undefined;
      if (this.#head === this.#queue.length) {
        this.#queue = [];
        this.#head = 0;
      } else if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      if (this.#waiters.length > 0 && this.backlog <= this.highWater / 2) this.#drained();
      return Promise.resolve({ value: event, done: false });
    }
    if (this.#ended || this.#finished) {
      const error = this.#error;
      this.#error = undefined;
      this.#finish();
      return error === undefined ? Promise.resolve(done) : Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<E>> {
    this.#finish();
    return Promise.resolve(done);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  #settlePending(): void {
    const pending = this.#pending;
    if (pending === undefined) return;
    this.#pending = undefined;
    const error = this.#error;
    this.#error = undefined;
    this.#finish();
    if (error === undefined) pending.resolve(done);
    else pending.reject(error);
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#queue = [];
    this.#head = 0;
    this.signal.removeEventListener("abort", this.#abort);
    this.#drained();
    const pending = this.#pending;
    this.#pending = undefined;
    pending?.resolve(done);
    this.onFinish(this);
  }
}
