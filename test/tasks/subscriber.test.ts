/**
 * The slow-stream rule of one Subscriber (D24), with jest's fake timers: a
 * stream is cut only when it stays `highWater` events behind for the grace
 * time, whichever run of its task waits on it (D77: a run that takes over
 * from one still waiting).
 */
import { jest } from "@jest/globals";
import { Subscriber } from "../../runtime/a2a/tasks/subscriber.js";

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

function fill(subscriber: Subscriber<number>, n: number): void {
  for (let i = 0; i < n; i++) subscriber.push(i);
}

test("a run that takes over from one waiting for room waits beside it; both go on once the reader catches up, and no timer is left to cut it", async () => {
  const subscriber = new Subscriber<number>(4, new AbortController().signal, () => undefined);
  fill(subscriber, 4);
  let firstDone = false;
  const first = subscriber.whenDrained(1500).then(() => (firstDone = true));
  jest.advanceTimersByTime(1000);
  // The run that took over waits on the same full stream.
  const second = subscriber.whenDrained(1500);
  await Promise.resolve();
  expect(firstDone).toBe(false);
  // The reader catches up: both waits are over.
  for (let i = 0; i < 2; i++) await subscriber.next();
  await Promise.all([first, second]);
  // Past either wait's grace time: the stream was not cut.
  jest.advanceTimersByTime(3000);
  subscriber.push(99);
  expect(subscriber.finished).toBe(false);
  expect([await subscriber.next(), await subscriber.next(), await subscriber.next()]).toEqual([
    { value: 2, done: false },
    { value: 3, done: false },
    { value: 99, done: false },
  ]);
});

test("the grace time counts from the first wait: a stream that stays behind is cut then, not a grace time after the second wait", async () => {
  const subscriber = new Subscriber<number>(4, new AbortController().signal, () => undefined);
  fill(subscriber, 4);
  const first = subscriber.whenDrained(1500);
  jest.advanceTimersByTime(1000);
  const second = subscriber.whenDrained(1500);
  jest.advanceTimersByTime(500);
  await Promise.all([first, second]);
  expect(subscriber.finished).toBe(true);
});

test("a stream that stays behind for the grace time is cut, with the error D24 names", async () => {
  const subscriber = new Subscriber<number>(4, new AbortController().signal, () => undefined);
  fill(subscriber, 4);
  const waited = subscriber.whenDrained(1500);
  jest.advanceTimersByTime(1500);
  await waited;
  expect(subscriber.finished).toBe(true);
  await expect(subscriber.next()).rejects.toMatchObject({ message: expect.stringContaining("stayed 4 events behind") });
});
