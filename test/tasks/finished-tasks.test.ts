/**
 * The in-memory store's finished tasks (runtime/a2a/tasks/finished-tasks.ts,
 * D76): columns indexed by finishing order, bytes in shared blocks. Checked
 * against a plain list of what was pushed, through growth, wrap-around,
 * expiry, forgetting and shrinking; the store's own suite holds the store
 * to its behaviour over the task handler.
 */
import { FinishedTasks } from "../../runtime/a2a/tasks/finished-tasks.js";
import type { StoredTask } from "../../runtime/a2a/tasks/task-store.js";

const recordOf = (n: number, tenant = "", owner = ""): StoredTask => ({ tenant, owner, task: { id: `t${n}`, contextId: `c${n % 7}` } as never });
/** Bytes that say which task they are, `size` long. */
const bytesOf = (n: number, size = 40): Uint8Array => Uint8Array.from({ length: size }, (_, i) => (n * 31 + i) & 255);
const decodeAs = (bytes: Uint8Array) => ({ bytes }) as never;

test("each kept task reads back its own columns and bytes, in memory of their own, through growth and wrap-around", () => {
  const kept = new FinishedTasks();
  const seqs = new Map<number, number>();
  let dropped: string[] = [];
  for (let n = 0; n < 1000; n++) {
    seqs.set(n, kept.push(recordOf(n, `tenant${n % 2}`, `owner${n % 3}`), n % 9, 1000 + n, n, bytesOf(n, 10 + (n % 50)), 10 + (n % 50)));
    // Keep the newest 150: the columns grow to 256 rows and go round them several times.
    kept.expire(n, Infinity, 150, (id) => dropped.push(id));
  }
  expect(kept.size).toBe(150);
  expect(dropped).toEqual(Array.from({ length: 850 }, (_, n) => `t${n}`));
  for (let n = 0; n < 1000; n++) {
    const seq = seqs.get(n)!;
    expect(kept.has(seq)).toBe(n >= 850);
    if (n < 850) continue;
    expect([kept.idOf(seq), kept.contextIdOf(seq), kept.tenantOf(seq), kept.ownerOf(seq), kept.stateOf(seq), kept.timeMsOf(seq)]).toEqual([
      `t${n}`,
      `c${n % 7}`,
      `tenant${n % 2}`,
      `owner${n % 3}`,
      n % 9,
      1000 + n,
    ]);
    const read = kept.read(seq, decodeAs);
    const { bytes } = read.task as unknown as { bytes: Uint8Array };
    expect([...bytes]).toEqual([...bytesOf(n, 10 + (n % 50))]);
    // A copy: what a caller keeps pins no shared block.
    expect(bytes.buffer.byteLength).toBe(bytes.length);
    expect([read.tenant, read.owner]).toEqual([`tenant${n % 2}`, `owner${n % 3}`]);
  }
  dropped = [];
  kept.expire(2000, Infinity, 0, (id) => dropped.push(id));
  expect(dropped).toEqual(Array.from({ length: 150 }, (_, n) => `t${850 + n}`));
  expect(kept.size).toBe(0);
});

test("only the bytes given are kept (the writer's buffer may be longer), a large task in a block of its own, and a record as itself", () => {
  const kept = new FinishedTasks();
  const buffer = new Uint8Array(100).fill(7);
  const short = kept.push(recordOf(1), 3, 0, 0, buffer, 12);
  const large = kept.push(recordOf(2), 3, 0, 0, bytesOf(2, 100_000), 100_000);
  const record = recordOf(3);
  const asObject = kept.push(record, 3, 0, 0, undefined, 0);
  const after = kept.push(recordOf(4), 3, 0, 0, bytesOf(4), 40);
  expect([...(kept.read(short, decodeAs).task as unknown as { bytes: Uint8Array }).bytes]).toEqual(Array(12).fill(7));
  expect([...(kept.read(large, decodeAs).task as unknown as { bytes: Uint8Array }).bytes]).toEqual([...bytesOf(2, 100_000)]);
  expect(kept.read(asObject, decodeAs)).toBe(record);
  // The large one did not end the shared block: the next small one is right after the first.
  expect([...(kept.read(after, decodeAs).task as unknown as { bytes: Uint8Array }).bytes]).toEqual([...bytesOf(4)]);
});

/** Every kept task of `seqs` (task number -> seq) reads back its own bytes and id. */
function expectKept(kept: FinishedTasks, seqs: Map<number, number>, size: (n: number) => number): void {
  for (const [n, seq] of seqs) {
    if (!kept.has(seq)) continue;
    expect(kept.idOf(seq)).toBe(`t${n}`);
    expect([...(kept.read(seq, decodeAs).task as unknown as { bytes: Uint8Array }).bytes]).toEqual([...bytesOf(n, size(n))]);
  }
}

/** Tasks `from` to `to` - 1 pushed one by one, the newest `keep` kept after each; every `checkEvery`th one, all of them read back. */
function flow(kept: FinishedTasks, seqs: Map<number, number>, from: number, to: number, keep: number, size: (n: number) => number, checkEvery = Infinity): void {
  for (let n = from; n < to; n++) {
    seqs.set(n, kept.push(recordOf(n), 3, 0, n, bytesOf(n, size(n)), size(n)));
    kept.expire(n, Infinity, keep, () => undefined);
    if ((n - from) % checkEvery === 0) expectKept(kept, seqs, size);
  }
}

test("while tasks in a block are kept, its space is never written again: blocks fill, empty in order and are reused only once empty", () => {
  const kept = new FinishedTasks();
  const seqs = new Map<number, number>();
  const size = (n: number) => 500 + (n % 300);
  // About 650 bytes each: a 64 KB block holds some 100, and keeping the newest 150 spans two or three.
  flow(kept, seqs, 0, 3000, 150, size, 97);
  expectKept(kept, seqs, size);
  // Keeping only the newest few: the block being written holds them, and the rest of it is dropped.
  flow(kept, seqs, 3300, 3600, 3, size, 1);
  // Emptied with a block being written: that block starts over, and the next tasks read back.
  kept.expire(0, Infinity, 0, () => undefined);
  for (let n = 4000; n < 4300; n++) seqs.set(n, kept.push(recordOf(n), 3, 0, n, bytesOf(n, size(n)), size(n)));
  expect(kept.size).toBe(300);
  expectKept(kept, seqs, size);
});

test("an emptied block is written into again: a steady flow of tasks makes no new blocks once the first few have emptied", () => {
  const kept = new FinishedTasks();
  const seqs = new Map<number, number>();
  const size = (n: number) => 500 + (n % 300);
  // About 650 bytes each, the newest 150 kept: two or three blocks hold them, and 3,000 tasks fill about 30.
  flow(kept, seqs, 0, 3000, 150, size);
  expect(kept.blocksMade).toBeLessThanOrEqual(5);
  expectKept(kept, seqs, size);
  // A large task in the flow (20,000 bytes) gets a block of its own, which is never taken back as a shared one.
  const made = kept.blocksMade;
  const sizeWithLarge = (n: number) => (n === 3000 ? 20_000 : size(n));
  flow(kept, seqs, 3000, 4000, 150, sizeWithLarge, 250);
  expect(kept.has(seqs.get(3000)!)).toBe(false);
  expect(kept.blocksMade - made).toBe(1);
  expectKept(kept, seqs, sizeWithLarge);
});

test("the block being written into is never kept aside, even when forgetting empties it", () => {
  const kept = new FinishedTasks();
  const seqs = new Map<number, number>();
  const size = () => 16_000;
  // t0..t3 fill a block; t4 is alone in the block being written, and is forgotten: that block is empty.
  for (let n = 0; n < 5; n++) seqs.set(n, kept.push(recordOf(n), 3, 0, n, bytesOf(n, size()), size()));
  kept.forgetId("t4");
  seqs.delete(4);
  // The empty current block takes the next four, and the one after them needs a block of its own.
  for (let n = 10; n < 16; n++) seqs.set(n, kept.push(recordOf(n), 3, 0, n, bytesOf(n, size()), size()));
  expectKept(kept, seqs, size);
});

test("a store of 64 rows (never reset) lets the blocks it kept aside go once it holds no task", () => {
  const kept = new FinishedTasks();
  const size = () => 10_000;
  // 50 tasks of 10,000 bytes kept: about eight blocks in use, and a flow that empties one as it fills one.
  flow(kept, new Map(), 0, 400, 50, size);
  kept.expire(1000, Infinity, 0, () => undefined);
  expect(kept.size).toBe(0);
  // Three blocks' worth: the block being written (emptied, written again from its start) and two new ones.
  const before = kept.blocksMade;
  for (let n = 1000; n < 1018; n++) kept.push(recordOf(n), 3, 0, n, bytesOf(n, size()), size());
  expect(kept.blocksMade - before).toBe(2);
});

test("a block emptied by forgetting its tasks is kept aside and written into again, while the tasks in others stay", () => {
  const kept = new FinishedTasks();
  const seqs = new Map<number, number>();
  const size = () => 16_000;
  // Four tasks of 16,000 bytes fill a 64 KB block; the fifth starts the next one, the block being written.
  for (let n = 0; n < 5; n++) seqs.set(n, kept.push(recordOf(n), 3, 0, n, bytesOf(n, size()), size()));
  const made = kept.blocksMade;
  expect(made).toBe(2);
  for (let n = 0; n < 4; n++) {
    kept.forgetId(`t${n}`);
    seqs.delete(n);
  }
  // Three more fill the current block; the four after them go into the forgotten tasks' block.
  for (let n = 10; n < 17; n++) seqs.set(n, kept.push(recordOf(n), 3, 0, n, bytesOf(n, size()), size()));
  expect(kept.blocksMade).toBe(made);
  expectKept(kept, seqs, size);
  kept.push(recordOf(17), 3, 0, 17, bytesOf(17, size()), size());
  expect(kept.blocksMade).toBe(made + 1);
});

test("the columns shrink step by step while tasks are kept, and every kept task stays where its seq says", () => {
  const kept = new FinishedTasks();
  const seqs = new Map<number, number>();
  const size = (n: number) => 8 + (n % 40);
  for (let n = 0; n < 2000; n++) seqs.set(n, kept.push(recordOf(n), 3, 0, n, bytesOf(n, size(n)), size(n)));
  // 2,048 rows; each expiry below leaves a quarter or less of them in use, so each halves them.
  let max = 2000;
  for (let step = 0; step < 6; step++) {
    max = Math.floor(max / 4);
    kept.expire(0, Infinity, max, () => undefined);
    expect(kept.size).toBe(max);
    expectKept(kept, seqs, size);
    const n = 2000 + step;
    seqs.set(n, kept.push(recordOf(n), 3, 0, 0, bytesOf(n, size(n)), size(n)));
    expectKept(kept, seqs, size);
  }
});

test("expiry is by time as well as by count, oldest first, and stops at the first task still in time", () => {
  const kept = new FinishedTasks();
  for (let n = 0; n < 10; n++) kept.push(recordOf(n), 3, 0, n * 100, bytesOf(n), 40);
  const dropped: string[] = [];
  kept.expire(1000, 550, 100, (id) => dropped.push(id));
  // Finished at 0..400 are 600 ms old or more at 1000; 500 is 500 ms old.
  expect(dropped).toEqual(["t0", "t1", "t2", "t3", "t4"]);
  expect(kept.size).toBe(5);
});

test("a forgotten task is never reported dropped, and its row still leaves in its turn", () => {
  const kept = new FinishedTasks();
  const seqs = [0, 1, 2, 3].map((n) => kept.push(recordOf(n), 3, 0, 0, bytesOf(n), 40));
  kept.forgetId("t1");
  expect(kept.has(seqs[1]!)).toBe(false);
  expect(kept.has(seqs[2]!)).toBe(true);
  const dropped: string[] = [];
  kept.expire(0, Infinity, 1, (id) => dropped.push(id));
  expect(dropped).toEqual(["t0", "t2"]);
  expect(kept.size).toBe(1);
  kept.forgetId("no such id");
  expect(kept.has(seqs[3]!)).toBe(true);
});

test("a forgotten task leaves its block's space alone while older tasks in that block are kept", () => {
  const kept = new FinishedTasks();
  const older = kept.push(recordOf(1), 3, 0, 0, bytesOf(1, 300), 300);
  kept.push(recordOf(2), 3, 0, 0, bytesOf(2, 300), 300);
  kept.push(recordOf(3), 3, 0, 0, bytesOf(3, 300), 300);
  kept.forgetId("t3");
  kept.forgetId("t2");
  const newer = kept.push(recordOf(4), 3, 0, 0, bytesOf(4, 300), 300);
  expect([...(kept.read(older, decodeAs).task as unknown as { bytes: Uint8Array }).bytes]).toEqual([...bytesOf(1, 300)]);
  expect([...(kept.read(newer, decodeAs).task as unknown as { bytes: Uint8Array }).bytes]).toEqual([...bytesOf(4, 300)]);
});

test("emptied after a burst, the columns go back to nothing, and take tasks again", () => {
  const kept = new FinishedTasks();
  for (let n = 0; n < 5000; n++) kept.push(recordOf(n), 3, 0, n, bytesOf(n), 40);
  kept.expire(10_000, 1, 10_000, () => undefined);
  expect(kept.size).toBe(0);
  // Pushing again after the reset works from fresh columns.
  const seq = kept.push(recordOf(9), 3, 0, 0, bytesOf(9), 40);
  expect(kept.idOf(seq)).toBe("t9");
  expect([...(kept.read(seq, decodeAs).task as unknown as { bytes: Uint8Array }).bytes]).toEqual([...bytesOf(9)]);
});
