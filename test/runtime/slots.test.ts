/**
 * SlotSet and SlotMap (D116): what the runtime keeps per call in flight.
 * They must behave as the Set and Map they replace where the runtime relies
 * on it (membership, size, iteration while members leave), and a member
 * that left must be referenced by none of their arrays (the point of them).
 */
import v8 from "node:v8";
import vm from "node:vm";
import { SlotMap, SlotSet } from "../../runtime/core/slots.js";

describe("SlotSet", () => {
  test("add gives a slot; delete takes the member out of it once, and only that member", () => {
    const set = new SlotSet<{ n: number }>();
    const a = { n: 1 };
    const b = { n: 2 };
    const slotA = set.add(a);
    const slotB = set.add(b);
    expect(slotA).not.toBe(slotB);
    expect(set.size).toBe(2);
    expect([...set]).toEqual([a, b]);
    // The wrong member for the slot, an unknown slot, the slot of one never added: nothing changes.
    expect(set.delete(slotA, b)).toBe(false);
    expect(set.delete(99, a)).toBe(false);
    expect(set.delete(-1, a)).toBe(false);
    expect(set.size).toBe(2);
    expect(set.delete(slotA, a)).toBe(true);
    expect(set.delete(slotA, a)).toBe(false);
    expect(set.size).toBe(1);
    expect([...set]).toEqual([b]);
  });

  test("a freed slot is reused, and a late delete of its former member leaves the new one in", () => {
    const set = new SlotSet<object>();
    const a = {};
    const slot = set.add(a);
    set.add({});
    set.delete(slot, a);
    const c = {};
    expect(set.add(c)).toBe(slot);
    expect(set.delete(slot, a)).toBe(false);
    expect([...set]).toContain(c);
    expect(set.size).toBe(2);
  });

  test("members leaving while it is iterated are skipped, as with a Set; the others are each met once", () => {
    const set = new SlotSet<{ slot: number; n: number }>();
    const members = Array.from({ length: 10 }, (_, n) => ({ slot: -1, n }));
    for (const m of members) m.slot = set.add(m);
    const met: number[] = [];
    for (const m of set) {
      met.push(m.n);
      // Each member met takes out the next one, as close() letting executions go may.
      const next = members[m.n + 1];
      if (next !== undefined) set.delete(next.slot, next);
      set.delete(m.slot, m);
    }
    expect(met).toEqual([0, 2, 4, 6, 8]);
    expect(set.size).toBe(0);
  });

  test("emptied after a burst, it gives back its arrays; clear empties it", () => {
    const set = new SlotSet<object>();
    const burst = Array.from({ length: 5000 }, () => ({}));
    const slots = burst.map((m) => set.add(m));
    burst.forEach((m, i) => set.delete(slots[i]!, m));
    expect(set.size).toBe(0);
    // Slots start from 0 again: the 5,000 are forgotten, not kept free.
    expect(set.add({})).toBe(0);
    set.clear();
    expect(set.size).toBe(0);
    expect([...set]).toEqual([]);
  });
});

describe("SlotMap", () => {
  test("get, set (new and replacing), delete, size, values and forEach", () => {
    const map = new SlotMap<{ v: string }>();
    const a = { v: "a" };
    const b = { v: "b" };
    map.set("x", a);
    map.set("y", b);
    expect(map.get("x")).toBe(a);
    expect(map.get("z")).toBeUndefined();
    expect(map.size).toBe(2);
    const a2 = { v: "a2" };
    map.set("x", a2);
    expect(map.get("x")).toBe(a2);
    expect(map.size).toBe(2);
    const seen: string[] = [];
    map.forEach((value, key) => seen.push(`${key}=${value.v}`));
    expect(seen).toEqual(["x=a2", "y=b"]);
    expect(map.delete("x")).toBe(true);
    expect(map.delete("x")).toBe(false);
    expect(map.get("x")).toBeUndefined();
    expect([...map.values()]).toEqual([b]);
    // A key back after its delete is a new entry, in a reused slot.
    map.set("x", a);
    expect(map.get("x")).toBe(a);
    expect(map.size).toBe(2);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.get("y")).toBeUndefined();
  });

  test("a quarter full after a burst, it moves what is left to the first slots: one value that stays does not keep every loop walking the burst", () => {
    const map = new SlotMap<number>();
    for (let i = 0; i < 10_000; i++) map.set(`k${i}`, i);
    for (let i = 0; i < 10_000; i++) if (i !== 5_000 && i !== 9_999) map.delete(`k${i}`);
    expect(map.size).toBe(2);
    expect(map.capacity).toBeLessThan(2_000);
    expect([map.get("k5000"), map.get("k9999"), map.get("k0")]).toEqual([5_000, 9_999, undefined]);
    const seen: [string, number][] = [];
    map.forEach((value, key) => seen.push([key, value]));
    expect(seen).toEqual([["k5000", 5_000], ["k9999", 9_999]]);
    // And it goes on working: new keys, deletes, gets.
    map.set("n", 1);
    expect(map.delete("k5000")).toBe(true);
    expect([...map.values()].sort()).toEqual([1, 9_999]);
  });

  test("no move while a loop is under way: values deleted during forEach or values() are not met", () => {
    const map = new SlotMap<number>();
    for (let i = 0; i < 4_000; i++) map.set(`k${i}`, i);
    const met: number[] = [];
    map.forEach((value) => {
      met.push(value);
      // The first value met deletes all others but the last: they must not be met after it.
      if (value === 0) for (let i = 1; i < 3_999; i++) map.delete(`k${i}`);
    });
    expect(met).toEqual([0, 3_999]);
    for (let i = 0; i < 4_000; i++) map.set(`v${i}`, i);
    const viaValues: number[] = [];
    for (const value of map.values()) {
      viaValues.push(value);
      if (value === 0 && viaValues.length === 1) for (let i = 1; i < 3_999; i++) map.delete(`v${i}`);
    }
    expect(viaValues.filter((v) => v > 0 && v < 3_999)).toEqual([]);
  });

  test("holds numbers as well as objects", () => {
    const map = new SlotMap<object | number>();
    map.set("done", 0);
    map.set("running", {});
    expect(map.get("done")).toBe(0);
    const seen: [string, unknown][] = [];
    map.forEach((value, key) => seen.push([key, value]));
    expect(seen).toEqual([
      ["done", 0],
      ["running", {}],
    ]);
  });
});

test("a member that left is referenced by no array of either: the collector takes it", async () => {
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  const set = new SlotSet<object>();
  const map = new SlotMap<object>();
  const registry = new FinalizationRegistry<string>((name) => collected.push(name));
  const collected: string[] = [];
  // Made in a function of its own, so no local of this one keeps them.
  (() => {
    const member = {};
    const value = {};
    registry.register(member, "member");
    registry.register(value, "value");
    const slot = set.add(member);
    map.set("k", value);
    // Others stay, so the arrays are not simply dropped.
    set.add({});
    map.set("other", {});
    set.delete(slot, member);
    map.delete("k");
  })();
  for (let i = 0; i < 10 && collected.length < 2; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  expect(collected.sort()).toEqual(["member", "value"]);
  expect(set.size).toBe(1);
  expect(map.size).toBe(1);
});
