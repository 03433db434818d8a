/**
 * Decision D15: the binding forwards what the handler yields, but checks the
 * shape A2A requires of a stream: the first event is a `task` or a
 * `message`, and nothing follows a `message` (a message-only stream is that
 * one message). It applies to any stream message with a oneof that has both
 * a `task` and a `message` member, as A2A's StreamResponse does; for other
 * stream types there is no rule.
 */
import type { DescMessage } from "@bufbuild/protobuf";

/** The rule's state for one stream: `next(event)` says why `event` may not come next, or undefined when it may. */
export interface StreamCheck {
  next(event: unknown): string | undefined;
}

// Which oneof the rule reads, per stream type; computed once per type, not per stream.
const ruleKeys = new WeakMap<DescMessage, string | null>();

function ruleKey(desc: DescMessage): string | undefined {
  let key = ruleKeys.get(desc);
  if (key === undefined) {
    const oneof = desc.oneofs.find((o) => o.fields.some((f) => f.localName === "task") && o.fields.some((f) => f.localName === "message"));
    key = oneof === undefined ? null : oneof.localName;
    ruleKeys.set(desc, key);
  }
  return key ?? undefined;
}

export function createStreamCheck(desc: DescMessage): StreamCheck | undefined {
  const key = ruleKey(desc);
  return key === undefined ? undefined : new OneofRule(key);
}

// An object with two counters, not a closure over them: an open stream holds
// one small object (the idle-stream memory target).
class OneofRule implements StreamCheck {
  #count = 0;
  #afterMessage = false;

  constructor(readonly key: string) {}

  next(event: unknown): string | undefined {
    const kase = (event as Record<string, { case?: unknown } | undefined>)[this.key]?.case;
    const index = this.#count++;
    if (this.#afterMessage) return `the stream continued after a message (event ${index} is ${String(kase)})`;
    if (index === 0 && kase !== "task" && kase !== "message") {
      return `the first event of a stream must be a task or a message, not ${kase === undefined ? "an empty event" : String(kase)}`;
    }
    this.#afterMessage = kase === "message";
    return undefined;
  }
}
