/**
 * jsonSizeWithin: the weight a ListTasks page is bounded by (D78), against
 * the JSON the bindings write for the same task.
 */
import { create, toJsonString } from "@bufbuild/protobuf";
import { jsonSizeWithin } from "../../runtime/core/codec/json-size.js";
import { TaskSchema, TaskState } from "../../generated/a2a_pb.js";

const task = (text: string, bytes = new Uint8Array(0)) =>
  create(TaskSchema, {
    id: "task-1",
    contextId: "ctx-1",
    status: { state: TaskState.WORKING },
    artifacts: [
      {
        artifactId: "out",
        parts: [{ content: { case: "text", value: text } }, { content: { case: "raw", value: bytes } }],
      },
    ],
    metadata: { nested: { list: [1, "two", true, null] } },
  });

describe("jsonSizeWithin", () => {
  test.each([
    ["ascii text", task("a".repeat(50_000))],
    ["text of three-byte characters", task("語".repeat(50_000))],
    ["raw bytes", task("", new Uint8Array(60_000))],
    ["a small task", task("hi")],
  ])("%s: at least its JSON, and not twice it", (_, t) => {
    const json = Buffer.byteLength(toJsonString(TaskSchema, t));
    const weight = jsonSizeWithin(t, Infinity);
    expect(weight).toBeGreaterThanOrEqual(json);
    expect(weight).toBeLessThan(json * 2 + 200);
  });

  test("stops past its budget: a weight above it, without walking the rest", () => {
    const many = Array.from({ length: 1000 }, () => task("x".repeat(1000)));
    const weight = jsonSizeWithin(many, 5_000);
    expect(weight).toBeGreaterThan(5_000);
    expect(weight).toBeLessThan(20_000);
  });
});
