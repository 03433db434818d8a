/**
 * One ListTasks page of the in-memory store, chosen in one pass over the
 * tasks: the `size` first of those after the cursor, newest first
 * (compareNewestFirst), kept in a bounded heap whose top is the last of
 * them so far. Sorting every matching task for each page made a page of
 * 10,000 tasks of one owner take about 5 ms, all of it with the event loop
 * held; a candidate here costs a comparison, and only the ones kept an
 * object.
 */
import { compareNewestFirst, type TaskCursor } from "./page-token.js";

interface Entry<T> extends TaskCursor {
  readonly value: T;
}

export class NewestFirstPage<T> {
  readonly #size: number;
  readonly #after: TaskCursor | undefined;
  /** A max-heap by compareNewestFirst: the entry that would be answered last is at 0. */
  readonly #heap: Entry<T>[] = [];
  /** Candidates after the cursor, kept or not: more than `size` means another page. */
  #candidates = 0;

  constructor(size: number, after: TaskCursor | undefined) {
    this.#size = size;
    this.#after = after;
  }

  /** A task the query matches; a page after `after` takes only those that come after it. */
  offer(timeMs: number, id: string, value: T): void {
    const after = this.#after;
    if (after !== undefined && (timeMs > after.timeMs || (timeMs === after.timeMs && id >= after.id))) return;
    this.#candidates++;
    const heap = this.#heap;
    if (heap.length < this.#size) {
      heap.push({ timeMs, id, value });
      this.#up(heap.length - 1);
      return;
    }
    const last = heap[0];
    // Not before the last one kept (newest first, then by id descending): no object made for it.
    if (last === undefined || timeMs < last.timeMs || (timeMs === last.timeMs && id <= last.id)) return;
    heap[0] = { timeMs, id, value };
    this.#down(0);
  }

  /** The page, newest first, and the cursor of its last task when more come after it. */
  /** The page in order; `cursors[i]`, the position values[i] was listed at (a page cut after it goes on from there). */
  take(): { readonly values: T[]; readonly cursors: TaskCursor[]; readonly next: TaskCursor | undefined } {
    const page = this.#heap.slice().sort(compareNewestFirst);
    const last = page.at(-1);
    return {
      values: page.map((e) => e.value),
      cursors: page.map((e) => ({ timeMs: e.timeMs, id: e.id })),
      next: this.#candidates > page.length && last !== undefined ? { timeMs: last.timeMs, id: last.id } : undefined,
    };
  }

  #up(i: number): void {
    const heap = this.#heap;
    const entry = heap[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (compareNewestFirst(heap[parent]!, entry) >= 0) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  #down(i: number): void {
    const heap = this.#heap;
    const entry = heap[i]!;
    const n = heap.length;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && compareNewestFirst(heap[child + 1]!, heap[child]!) > 0) child++;
      if (compareNewestFirst(heap[child]!, entry) <= 0) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = entry;
  }
}
