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
  /** Loops over the slots under way: the arrays are not swapped under them. */
  #iterating = 0;

  get size(): number {
    return this.#index.size;
  }

  /** How many slots the arrays hold, filled or not: what a loop over the values walks. For tests and diagnostics. */
  get capacity(): number {
    return this.#values.length;
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
    if (this.#values.length > shrinkOver) {
      if (this.#index.size === 0) this.clear();
      // A quarter full, after a burst: one value that stays (a task waiting for input) kept every
      // later loop (ListTasks) walking the burst's slots.
      else if (this.#index.size * 4 < this.#values.length && this.#iterating === 0) this.#compact();
    }
    return true;
  }

  /** The values moved to the first slots, in order; each halving of the load is paid once. */
  #compact(): void {
    const values: (V | undefined)[] = [];
    const keys: (string | undefined)[] = [];
    const oldValues = this.#values;
    const oldKeys = this.#keys;
    for (let i = 0; i < oldValues.length; i++) {
      const value = oldValues[i];
      if (value === undefined) continue;
      const key = oldKeys[i] as string;
      this.#index.set(key, values.length);
      values.push(value);
      keys.push(key);
    }
    this.#values = values;
    this.#keys = keys;
    this.#free = [];
  }

  /** The values, in slot order; as with SlotSet's iterator, one added meanwhile may not be met. */
  *values(): IterableIterator<V> {
    const values = this.#values;
    this.#iterating++;
    try {
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        if (value !== undefined) yield value;
      }
    } finally {
      this.#iterating--;
    }
  }

  /** Each value with its key, in slot order (as `values`). */
  forEach(fn: (value: V, key: string) => void): void {
    const values = this.#values;
    const keys = this.#keys;
    this.#iterating++;
    try {
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        if (value !== undefined) fn(value, keys[i] as string);
      }
    } finally {
      this.#iterating--;
    }
  }

  clear(): void {
    this.#index.clear();
    this.#values = [];
    this.#keys = [];
    this.#free = [];
  }
}
