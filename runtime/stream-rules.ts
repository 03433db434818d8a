/**
 * Decision D15: the binding forwards what the handler yields, but checks the
 * shape A2A requires of a stream: the first event is a `task` or a
 * `message`, and nothing follows a `message` (a message-only stream is that
 * one message). It applies to any stream message with a oneof that has both
 * a `task` and a `message` member, as A2A's StreamResponse does; for other
 * stream types there is no rule.
 */
import type { DescMessage } from "@bufbuild/protobuf";

/** Returns why `event` may not come next, or undefined when it may. */
export type StreamCheck = (event: unknown) => string | undefined;

export function createStreamCheck(desc: DescMessage): StreamCheck | undefined {
  const oneof = desc.oneofs.find(
    (o) => o.fields.some((f) => f.localName === "task") && o.fields.some((f) => f.localName === "message"),
  );
  if (oneof === undefined) return undefined;
  const key = oneof.localName;
  let count = 0;
  let afterMessage = false;
  return (event) => {
    const kase = (event as Record<string, { case?: unknown } | undefined>)[key]?.case;
    const index = count++;
    if (afterMessage) return `the stream continued after a message (event ${index} is ${String(kase)})`;
    if (index === 0 && kase !== "task" && kase !== "message") {
      return `the first event of a stream must be a task or a message, not ${kase === undefined ? "an empty event" : String(kase)}`;
    }
    afterMessage = kase === "message";
    return undefined;
  };
}
