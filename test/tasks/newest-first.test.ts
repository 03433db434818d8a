/**
 * The in-memory store's ListTasks page (runtime/a2a/tasks/newest-first.ts):
 * what one pass with a bounded heap chooses must be what sorting every task
 * and slicing after the cursor gives, page after page, ties of the status
 * time included (ordered by id, descending).
 */
import { NewestFirstPage } from "../../runtime/a2a/tasks/newest-first.js";
import { compareNewestFirst, type TaskCursor } from "../../runtime/a2a/tasks/page-token.js";
import { rng } from "../support/rng.js";

/** Every page of `tasks` (offered in the order given) of `size`, following each page's cursor to the end. */
function pagesOf(tasks: readonly TaskCursor[], size: number): TaskCursor[][] {
  const pages: TaskCursor[][] = [];
  let after: TaskCursor | undefined;
  for (;;) {
    const page = new NewestFirstPage<TaskCursor>(size, after);
    for (const t of tasks) page.offer(t.timeMs, t.id, t);
    const { values, next } = page.take();
    pages.push(values);
    if (next === undefined) return pages;
    expect(next).toEqual({ timeMs: values.at(-1)!.timeMs, id: values.at(-1)!.id });
    after = next;
    if (pages.length > tasks.length + 1) throw new Error("the pages never end");
  }
}

test.each([1, 2, 3, 4, 5, 6])("every page is the next slice of all tasks sorted newest first, seed %i", (seed) => {
  const r = rng(seed);
  const n = Math.floor(r() * 300);
  // Few distinct times: many ties, which the ids order.
  const tasks = Array.from({ length: n }, (_, i) => ({ timeMs: 1_000 + Math.floor(r() * 20), id: `task-${Math.floor(r() * 1e6)}-${i}` }));
  const sorted = tasks.slice().sort(compareNewestFirst);
  for (const size of [1, 2, 7, 50, 100, 400]) {
    const pages = pagesOf(tasks, size);
    expect(pages.flat()).toEqual(sorted);
    // Full pages, then one that is not (or none at all when it would be empty).
    for (const page of pages.slice(0, -1)) expect(page).toHaveLength(size);
    expect(pages.at(-1)!.length).toBe(n === 0 ? 0 : n - size * (pages.length - 1));
  }
});

test("a cursor between tasks starts the page after it, and a task added since is answered on no later page", () => {
  const tasks = [5, 4, 4, 3, 1].map((timeMs, i) => ({ timeMs, id: `t${i}` }));
  // After (4, "t2"): t1 (also 4, a smaller id) comes next, then 3 and 1.
  const page = new NewestFirstPage<TaskCursor>(2, { timeMs: 4, id: "t2" });
  for (const t of [...tasks, { timeMs: 9, id: "new" }]) page.offer(t.timeMs, t.id, t);
  const { values, next } = page.take();
  expect(values.map((t) => t.id)).toEqual(["t1", "t3"]);
  expect(next).toEqual({ timeMs: 3, id: "t3" });
});
