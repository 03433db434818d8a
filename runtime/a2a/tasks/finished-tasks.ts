/**
 * The finished tasks of the in-memory store, oldest first (D76). A finished
 * task cannot change any more, and a busy agent keeps thousands of them for
 * as long as their time-to-live: kept as objects of their own, each one was
 * copied by the scavenges it survived, promoted, marked by every full
 * collection and then swept, and that bookkeeping cost every SendMessage
 * more than the task's own work. So nothing of a finished task is an
 * object of its own here:
 * - its protobuf bytes are copied into shared blocks of 64 KB, which are
 *   written into again (two kept aside at most) or left to the collector
 *   once the last task written into them is dropped; as tasks leave in the
 *   order they finished, blocks empty in that order too;
 * - what ListTasks filters and orders by, and what finds the bytes, are
 *   columns (typed arrays, and arrays of the strings the task had anyway)
 *   indexed by the task's place in finishing order, its `seq`: the number
 *   the store's id map holds for it.
 */
import type { StoredTask } from "./task-store.js";

/** A block of kept bytes, and how many kept tasks are in it. */
class Block {
  used = 0;
  live = 0;
  constructor(readonly bytes: Uint8Array) {}
}

const blockSize = 64 * 1024;
/** A task larger than this gets a block of its own, so a large one never wastes the rest of a shared block. */
const ownBlockOver = blockSize / 4;
/** The columns never shrink below this many rows. */
const minRows = 64;
/**
 * Emptied shared blocks kept for the next ones needed. At a steady rate one
 * block empties (its tasks expired) as another fills: taking the emptied one
 * back means no new ArrayBuffer every few hundred tasks. New ones, each
 * dropped when its tasks expired (at the default 10,000 kept, a fraction
 * of a second under load), were external memory for which the collector
 * ran full collections, and from the first of them on each scavenge
 * promoted the objects of every call made since the one before (D76).
 * Let go when no finished task is left.
 */
const spareBlocks = 2;

export class FinishedTasks {
  /** Rows (a power of two): the task of seq `s` is in row `s % rows`. */
  #rows = 0;
  /** Seq of the oldest task kept, and one past the newest. */
  #first = 0;
  #end = 0;
  #ids: (string | undefined)[] = [];
  #contextIds: (string | undefined)[] = [];
  #tenants: (string | undefined)[] = [];
  #owners: (string | undefined)[] = [];
  /** A task kept as the runtime's object: a store no handler attached, so with no message type to encode with. */
  #records: (StoredTask | undefined)[] = [];
  #blocks: (Block | undefined)[] = [];
  #offsets = new Int32Array(0);
  #lengths = new Int32Array(0);
  #states = new Int32Array(0);
  #timeMs = new Float64Array(0);
  #finishedAt = new Float64Array(0);
  /** The block tasks are written into now. */
  #block: Block | undefined;
  /** Emptied shared blocks, written into again before a new one is made. */
  #spare: Block[] = [];
  #blocksMade = 0;
  /** The bytes of the kept tasks, what `expire`'s byte budget counts. */
  #keptBytes = 0;

  /** How many finished tasks are kept. */
  get size(): number {
    return this.#end - this.#first;
  }

  /** How many blocks were ever made (a large task's own included): what the collector is given. */
  /** The bytes of the kept tasks (for tests and metrics). */
  get keptBytes(): number {
    return this.#keptBytes;
  }

  get blocksMade(): number {
    return this.#blocksMade;
  }

  /**
   * Keeps `record`'s task, which finished at `finishedAt` (epoch ms) in
   * `state` with status time `timeMs`: as `bytes[0..length)` (copied; the
   * caller's bytes may be a writer's buffer), or as the record itself when
   * `bytes` is undefined. Its seq.
   */
  push(record: StoredTask, state: number, timeMs: number, finishedAt: number, bytes: Uint8Array | undefined, length: number): number {
    if (this.#end - this.#first === this.#rows) this.#resize(Math.max(minRows, this.#rows * 2));
    const seq = this.#end++;
    const row = seq % this.#rows;
    this.#ids[row] = record.task.id;
    this.#contextIds[row] = record.task.contextId;
    this.#tenants[row] = record.tenant;
    this.#owners[row] = record.owner;
    this.#states[row] = state;
    this.#timeMs[row] = timeMs;
    this.#finishedAt[row] = finishedAt;
    if (bytes === undefined) {
      this.#records[row] = record;
      return seq;
    }
    let block = this.#block;
    if (length > ownBlockOver) {
      block = this.#newBlock(length);
    } else if (block === undefined || block.used + length > blockSize) {
      block = this.#block = this.#spare.pop() ?? this.#newBlock(blockSize);
    }
    block.bytes.set(length === bytes.length ? bytes : bytes.subarray(0, length), block.used);
    this.#blocks[row] = block;
    this.#offsets[row] = block.used;
    this.#lengths[row] = length;
    this.#keptBytes += length;
    block.used += length;
    block.live++;
    return seq;
  }

  /** Whether `seq` is a task kept here (not dropped, not forgotten). */
  has(seq: number): boolean {
    return seq >= this.#first && seq < this.#end && this.#ids[seq % this.#rows] !== undefined;
  }

  idOf(seq: number): string {
    return this.#ids[seq % this.#rows]!;
  }

  contextIdOf(seq: number): string {
    return this.#contextIds[seq % this.#rows]!;
  }

  tenantOf(seq: number): string {
    return this.#tenants[seq % this.#rows]!;
  }

  ownerOf(seq: number): string {
    return this.#owners[seq % this.#rows]!;
  }

  stateOf(seq: number): number {
    return this.#states[seq % this.#rows]!;
  }

  timeMsOf(seq: number): number {
    return this.#timeMs[seq % this.#rows]!;
  }

  /**
   * The status time of task `seq` when ListTasks of `tenant` and `owner`
   * takes it (`contextId` "" and `state` 0 take any, `afterMs` is the
   * earliest time taken), else NaN: one row read for the whole filter, as
   * each of the thousands of tasks a listing walks needs.
   */
  listedTimeMs(seq: number, tenant: string, owner: string, contextId: string, state: number, afterMs: number | undefined): number {
    const row = seq % this.#rows;
    if (this.#tenants[row] !== tenant || this.#owners[row] !== owner) return NaN;
    if (contextId !== "" && this.#contextIds[row] !== contextId) return NaN;
    if (state !== 0 && this.#states[row] !== state) return NaN;
    const timeMs = this.#timeMs[row]!;
    return afterMs !== undefined && timeMs < afterMs ? NaN : timeMs;
  }

  /** The kept task: the record itself, or a new copy of its bytes (in memory of their own: a caller may keep the task) for `decode`. */
  read(seq: number, decode: (bytes: Uint8Array) => StoredTask["task"]): StoredTask {
    const row = seq % this.#rows;
    const record = this.#records[row];
    if (record !== undefined) return record;
    const offset = this.#offsets[row]!;
    const bytes = this.#blocks[row]!.bytes.slice(offset, offset + this.#lengths[row]!);
    return { tenant: this.#tenants[row]!, owner: this.#owners[row]!, task: decode(bytes) };
  }

  /**
   * The task of `id`, if one is kept, is not this store's any more (its id
   * was given to a new task): it is never read or reported dropped again;
   * its bytes go with its block (at once, for a task in a block of its own),
   * its row when its turn comes.
   */
  forgetId(id: string): void {
    for (let seq = this.#first; seq < this.#end; seq++) {
      const row = seq % this.#rows;
      if (this.#ids[row] === id) this.#clear(row);
    }
  }

  /**
   * Drops, oldest first, the tasks that finished `ttlMs` or more before
   * `now` and those beyond the newest `max`, or beyond `maxBytes` of kept
   * bytes, calling `dropped` with the id of each (not of a forgotten one).
   */
  expire(now: number, ttlMs: number, max: number, dropped: (id: string) => void, maxBytes = Infinity): void {
    while (this.#first < this.#end) {
      const row = this.#first % this.#rows;
      if (now - this.#finishedAt[row]! < ttlMs && this.#end - this.#first <= max && this.#keptBytes <= maxBytes) break;
      const id = this.#ids[row];
      this.#first++;
      this.#clear(row);
      if (id !== undefined) dropped(id);
    }
    // The columns a burst grew go back once most of them are empty, and all of it once none is
    // left: an idle agent returns to its baseline (columns of 64 rows and one block excepted).
    const size = this.#end - this.#first;
    if (size === 0) this.#spare.length = 0;
    if (this.#rows > minRows && size <= this.#rows / 4) this.#resize(size === 0 ? 0 : Math.max(minRows, this.#rows / 2));
  }

  #newBlock(size: number): Block {
    this.#blocksMade++;
    return new Block(new Uint8Array(size));
  }

  /** Lets go of everything a row holds. */
  #clear(row: number): void {
    this.#ids[row] = undefined;
    this.#contextIds[row] = undefined;
    this.#tenants[row] = undefined;
    this.#owners[row] = undefined;
    this.#records[row] = undefined;
    const block = this.#blocks[row];
    if (block === undefined) return;
    this.#blocks[row] = undefined;
    this.#keptBytes -= this.#lengths[row]!;
    if (--block.live > 0) return;
    // An emptied block is written into again from its start: the current one at once, another later.
    block.used = 0;
    if (block !== this.#block && block.bytes.length === blockSize && this.#spare.length < spareBlocks) this.#spare.push(block);
  }

  /** New columns of `rows` rows, each kept task at its seq's row in them. */
  #resize(rows: number): void {
    const from = this.#rows;
    const ids = new Array<string | undefined>(rows);
    const contextIds = new Array<string | undefined>(rows);
    const tenants = new Array<string | undefined>(rows);
    const owners = new Array<string | undefined>(rows);
    const records = new Array<StoredTask | undefined>(rows);
    const blocks = new Array<Block | undefined>(rows);
    const offsets = new Int32Array(rows);
    const lengths = new Int32Array(rows);
    const states = new Int32Array(rows);
    const timeMs = new Float64Array(rows);
    const finishedAt = new Float64Array(rows);
    for (let seq = this.#first; seq < this.#end; seq++) {
      const a = seq % from;
      const b = seq % rows;
      ids[b] = this.#ids[a];
      contextIds[b] = this.#contextIds[a];
      tenants[b] = this.#tenants[a];
      owners[b] = this.#owners[a];
      records[b] = this.#records[a];
      blocks[b] = this.#blocks[a];
      offsets[b] = this.#offsets[a]!;
      lengths[b] = this.#lengths[a]!;
      states[b] = this.#states[a]!;
      timeMs[b] = this.#timeMs[a]!;
      finishedAt[b] = this.#finishedAt[a]!;
    }
    this.#rows = rows;
    this.#ids = ids;
    this.#contextIds = contextIds;
    this.#tenants = tenants;
    this.#owners = owners;
    this.#records = records;
    this.#blocks = blocks;
    this.#offsets = offsets;
    this.#lengths = lengths;
    this.#states = states;
    this.#timeMs = timeMs;
    this.#finishedAt = finishedAt;
    if (rows === 0) {
      this.#block = undefined;
      this.#spare = [];
    }
  }
}
