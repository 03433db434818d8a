/**
 * The in-memory store's line of tasks waiting for their client
 * (runtime/a2a/tasks/waiting-tasks.ts, D76): checked against a plain list
 * through random waits, moves to the back and leaves, and held to its
 * bound on memory: a task moved to the back over and over, or a burst
 * that went, leaves no rows behind. The store's own suite holds the store
 * to its behaviour over the task handler and the bindings.
 */
import { WaitingTasks } from "../../runtime/a2a/tasks/waiting-tasks.js";

/** A small deterministic generator, so a failure repeats. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const contents = (line: WaitingTasks) => {
  const out: [string, number][] = [];
  line.forEach((id, since) => out.push([id, since]));
  return out;
};

test("the line is the order tasks began to wait in, through random waits, moves to the back and leaves", () => {
  const line = new WaitingTasks();
  const model: [string, number][] = [];
  const next = random(7);
  for (let step = 0; step < 20_000; step++) {
    const id = `t${Math.floor(next() * 300)}`;
    const at = model.findIndex(([m]) => m === id);
    const r = next();
    if (r < 0.5) {
      if (at >= 0) model.splice(at, 1);
      model.push([id, step]);
      line.wait(id, step);
    } else if (r < 0.7) {
      expect(line.touch(id, step)).toBe(at >= 0);
      if (at >= 0) model.push([id, step], ...model.splice(at, 1).slice(1));
    } else {
      expect(line.leave(id)).toBe(at >= 0);
      if (at >= 0) model.splice(at, 1);
    }
    expect(line.size).toBe(model.length);
    expect(line.oldest()).toBe(model[0]?.[0]);
    if (step % 97 === 0) expect(contents(line)).toEqual(model);
  }
  expect(contents(line)).toEqual(model);
});

test("rows do not pile up: a task moved to the back 100,000 times, and a burst of 10,000 that left, leave the ring small", () => {
  const line = new WaitingTasks();
  line.wait("stays", 0);
  line.wait("other", 0);
  for (let i = 1; i <= 100_000; i++) line.touch(i % 2 === 0 ? "stays" : "other", i);
  expect(line.size).toBe(2);
  expect(line.capacity).toBeLessThanOrEqual(64);
  for (let i = 0; i < 10_000; i++) line.wait(`burst ${i}`, i);
  expect(line.capacity).toBe(16_384);
  for (let i = 0; i < 10_000; i++) line.leave(`burst ${i}`);
  expect(contents(line)).toEqual([
    ["other", 99_999],
    ["stays", 100_000],
  ]);
  expect(line.capacity).toBeLessThanOrEqual(64);
  line.leave("stays");
  line.leave("other");
  expect(line.oldest()).toBeUndefined();
});
