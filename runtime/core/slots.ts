/**
 * Collections for what comes and goes with every call (the calls in
 * flight, the tasks running, the bodies being read), kept in the slots of
 * an array instead of a Map's or Set's hash table (D116).
 *
 * Why not a Map or a Set: when V8 rehashes one (every few dozen calls for a
 * collection that gains and loses a member per call) it keeps the old table,
 * entries and all, so that live iterators can move over. Once the
 * collection's table is in the old generation (after any full collection,
 * or a quiet spell), each rehash leaves a dead old table whose entries the
 * next scavenge takes for live: every call in flight at a rehash is
 * promoted, with everything it holds, and collected only by the next full
 * collection. Under load that was every call: in the task runtime's
 * benchmark, 2.2 MB survived each scavenge instead of 0.2 MB, and
 * SendMessage cost about twice as much from the first full collection on.
 *
 * Here a member leaving clears its slot: an old array that once held it
 * holds it no more. The index maps of `SlotMap` hold numbers, so its rehashed
 * tables keep only keys alive.
 */

/** A set of objects; `add` gives the slot that `delete` takes back. */
export class SlotSet<T> {
  #members: (T | undefined)[] = [];
  /** Cleared slots, reused last-cleared first so the array stays dense. */
  #free: number[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds `member` (not already in) and returns its slot. */
  add(member: T): number {
    const slot = this.#free.pop() ?? this.#members.length;
    this.#members[slot] = member;
    this.#size++;
    return slot;
  }

  /** Removes `member` from `slot`; false (and nothing changes) when it is not there. */
  delete(slot: number, member: T): boolean {
    if (this.#members[slot] !== member || member === undefined) return false;
    this.#members[slot] = undefined;
    this.#free.push(slot);
    if (--this.#size === 0) this.#shrink();
    return true;
  }

  /**
   * The members, in slot order. One removed before the loop reaches it is not met; one added
   * meanwhile may not be (it can take a freed slot the loop has passed), where a Set's iterator
   * would meet it: no caller adds while it iterates.
   */
  *[Symbol.iterator](): IterableIterator<T> {
    const members = this.#members;
    for (let i = 0; i < members.length; i++) {
      const member = members[i];
      if (member !== undefined) yield member;
    }
  }

  clear(): void {
    this.#members = [];
    this.#free = [];
    this.#size = 0;
  }

  /** Empty: a burst's high-water mark is not kept for ever. */
  #shrink(): void {
    if (this.#members.length > shrinkOver) this.clear();
  }
}

/** Past this many slots an emptied collection gives its arrays back. */
const shrinkOver = 1024;

/**
 * A map from strings to values (anything but undefined), the values in slots
 * and the keys mapped to slot numbers.
 */
export class SlotMap<V> {
  readonly #index = new Map<string, number>();
  #values: (V | undefined)[] = [];
  #keys: (string | undefined)[] = [];
  #free: number[] = [];

  get size(): number {
    return this.#index.size;
  }

  get(key: string): V | undefined {
    const slot = this.#index.get(key);
    return slot === undefined ? undefined : this.#values[slot];
  }

  set(key: string, value: V): void {
    const slot = this.#index.get(key);
    if (slot !== undefined) {
      this.#values[slot] = value;
      return;
    }
    const free = this.#free.pop() ?? this.#values.length;
    this.#values[free] = value;
    this.#keys[free] = key;
    this.#index.set(key, free);
  }

  delete(key: string): boolean {
    const slot = this.#index.get(key);
    if (slot === undefined) return false;
    this.#index.delete(key);
    this.#values[slot] = undefined;
    this.#keys[slot] = undefined;
    this.#free.push(slot);
    if (this.#index.size === 0 && this.#values.length > shrinkOver) this.clear();
    return true;
  }

  /** The values, in slot order; as with SlotSet's iterator, one added meanwhile may not be met. */
  *values(): IterableIterator<V> {
    const values = this.#values;
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (value !== undefined) yield value;
    }
  }

  /** Each value with its key, in slot order (as `values`). */
  forEach(fn: (value: V, key: string) => void): void {
    const values = this.#values;
    const keys = this.#keys;
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (value !== undefined) fn(value, keys[i] as string);
    }
  }

  clear(): void {
    this.#index.clear();
    this.#values = [];
    this.#keys = [];
    this.#free = [];
  }
}
