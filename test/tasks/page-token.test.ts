/**
 * Page tokens are opaque, and one that no store gave out is the client's
 * error (BadPageTokenError: InvalidParams), on every store: a time that is
 * no whole number of ms within Timestamp's range, or an id with NUL, reached
 * the SQL store's query and came back as the database's error (Internal).
 */
import { decodeConfigCursor, decodeTaskCursor, encodeConfigCursor, encodeTaskCursor } from "../../runtime/a2a/tasks/page-token.js";
import { BadPageTokenError } from "../../runtime/a2a/tasks/task-store.js";

const token = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

test("a task cursor a store gave out reads back; a fractional or huge time, or an id with NUL, is a bad token", () => {
  for (const cursor of [{ timeMs: 1_764_000_000_123, id: "t1" }, { timeMs: 0, id: "" }, { timeMs: -62_135_596_800_000, id: "old" }]) {
    expect(decodeTaskCursor(encodeTaskCursor(cursor))).toEqual(cursor);
  }
  for (const bad of [[1.5, "a"], [1e300, "a"], [253_402_300_800_000, "a"], [1, "a\u0000b"], ["1", "a"], [1], "x"]) {
    expect(() => decodeTaskCursor(token(bad))).toThrow(BadPageTokenError);
  }
});

test("a config cursor with NUL is a bad token", () => {
  expect(decodeConfigCursor(encodeConfigCursor("c-1"))).toBe("c-1");
  expect(() => decodeConfigCursor("AA")).toThrow(BadPageTokenError);
  expect(() => decodeConfigCursor(encodeConfigCursor("a\u0000"))).toThrow(BadPageTokenError);
});
