/**
 * The tasks of the in-memory store that wait for their client
 * (INPUT_REQUIRED, AUTH_REQUIRED), in the order they began to wait: the
 * line `maxWaitingTasks` drops from the front of and `interruptedTtlMs`
 * sweeps (D76). A task that waits again (a new interrupted status, or a
 * message that continues it) goes to the back with its new idle start.
 *
 * Every change is O(1) amortised and makes no object: a task's place is a
 * number in a SlotMap (D116), the line is a ring of two columns (the ids the
 * tasks have anyway, and a Float64Array). A task that leaves the line, or
 * moves to its back, leaves an empty row; the front skips them, and the
 * ring is compacted once half its rows are empty (each paid for by the
 * change that emptied it) and shrinks once mostly empty, as FinishedTasks'
 * columns do.
 */
import { SlotMap } from "../../core/slots.js";

/** The ring never shrinks below this many rows (but to none, once empty). */
const minRows = 64;

export class WaitingTasks {
  /** Per waiting task, the seq of its row: row `seq % rows`. */
  readonly #seqOf = new SlotMap<number>();
  /** Rows, a power of two (or 0). */
  #rows = 0;
  /** Seq of the front row, and one past the back one. */
  #first = 0;
  #end = 0;
  #ids: (string | undefined)[] = [];
  /** When each task began to wait (epoch ms): what its idle time counts from. */
  #since = new Float64Array(0);

  /** How many tasks wait. */
  get size(): number {
    return this.#seqOf.size;
  }

  /** How many rows the ring holds, empty or not: for tests. */
  get capacity(): number {
    return this.#rows;
  }

  /** `id` waits from `sinceMs` on, at the back of the line (out of its place, if it had one). */
  wait(id: string, sinceMs: number): void {
    const had = this.#seqOf.get(id);
    if (had !== undefined) this.#ids[had % this.#rows] = undefined;
    const used = this.#end - this.#first;
    // Full: twice the rows when at least half are tasks, else the same rows without the empty ones.
    if (used === this.#rows) this.#resize(this.#rows === 0 ? minRows : this.#seqOf.size * 2 >= this.#rows ? this.#rows * 2 : this.#rows);
    const seq = this.#end++;
    const row = seq % this.#rows;
    this.#ids[row] = id;
    this.#since[row] = sinceMs;
    this.#seqOf.set(id, seq);
    if (had !== undefined) this.#trim();
  }

  /** Moves `id` to the back from `sinceMs` on if it waits (a message continued it); false if it does not. */
  touch(id: string, sinceMs: number): boolean {
    if (this.#seqOf.get(id) === undefined) return false;
    this.wait(id, sinceMs);
    return true;
  }

  /** `id` waits no more (it is worked on, finished or dropped); false if it did not wait. */
  leave(id: string): boolean {
    const seq = this.#seqOf.get(id);
    if (seq === undefined) return false;
    this.#seqOf.delete(id);
    this.#ids[seq % this.#rows] = undefined;
    this.#trim();
    return true;
  }

  /** The task that has waited longest, if any. */
  oldest(): string | undefined {
    return this.#first < this.#end ? this.#ids[this.#first % this.#rows] : undefined;
  }

  /** Each waiting task with when it began to wait, front first. `fn` must not change the line. */
  forEach(fn: (id: string, sinceMs: number) => void): void {
    for (let seq = this.#first; seq < this.#end; seq++) {
      const row = seq % this.#rows;
      const id = this.#ids[row];
      if (id !== undefined) fn(id, this.#since[row]!);
    }
  }

  /** Skips the empty rows at the front; gives rows back once a quarter or less are tasks. */
  #trim(): void {
    while (this.#first < this.#end && this.#ids[this.#first % this.#rows] === undefined) this.#first++;
    const size = this.#seqOf.size;
    if (size === 0) {
      // Nothing waits: the ring starts over (a burst's rows go back at once).
      if (this.#rows > minRows) this.#resize(0);
      else this.#first = this.#end = 0;
    } else if (this.#rows > minRows && size * 4 <= this.#rows) {
      this.#resize(this.#rows / 2);
    }
  }

  /** A ring of `rows` rows holding the waiting tasks in their order, from row 0; empty rows dropped. */
  #resize(rows: number): void {
    const from = this.#rows;
    const ids = new Array<string | undefined>(rows);
    const since = new Float64Array(rows);
    let n = 0;
    for (let seq = this.#first; seq < this.#end; seq++) {
      const row = seq % from;
      const id = this.#ids[row];
      if (id === undefined) continue;
      ids[n] = id;
      since[n] = this.#since[row]!;
      this.#seqOf.set(id, n);
      n++;
    }
    this.#rows = rows;
    this.#ids = ids;
    this.#since = since;
    this.#first = 0;
    this.#end = n;
  }
}
