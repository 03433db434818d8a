/**
 * Decision D15: the binding forwards what the handler yields, but checks the
 * shape A2A requires of a stream: it has at least one event, the first is a
 * `task` or a `message`, and nothing follows a `message` (a message-only
 * stream is that one message). The order rules read the oneof of the
 * stream message that has both a `task` and a `message` member
 * (StreamResponse's `payload`).
 */
import type { DescMessage } from "@bufbuild/protobuf";
import type { RpcError } from "../core/errors.js";
import type { StreamCheck } from "../core/profile.js";
import { InternalError, InvalidAgentResponseError } from "./errors.js";

// Which oneof the order rules read, per stream type; computed once per type, not per stream.
const ruleKeys = new WeakMap<DescMessage, string | null>();

function ruleKey(desc: DescMessage): string | null {
  let key = ruleKeys.get(desc);
  if (key === undefined) {
    const oneof = desc.oneofs.find((o) => o.fields.some((f) => f.localName === "task") && o.fields.some((f) => f.localName === "message"));
    key = oneof === undefined ? null : oneof.localName;
    ruleKeys.set(desc, key);
  }
  return key;
}

export function createStreamCheck(desc: DescMessage): StreamCheck {
  return new StreamRules(ruleKey(desc));
}

// An object with two counters, not a closure over them: an open stream holds
// one small object (the idle-stream memory target).
class StreamRules implements StreamCheck {
  #count = 0;
  #afterMessage = false;

  constructor(readonly key: string | null) {}

  next(event: unknown): RpcError | undefined {
    const index = this.#count++;
    const key = this.key;
    if (key === null) return undefined;
    const kase = (event as Record<string, { case?: unknown } | undefined>)[key]?.case;
    if (this.#afterMessage) return invalid(`the stream continued after a message (event ${index} is ${String(kase)})`);
    if (index === 0 && kase !== "task" && kase !== "message") {
      return invalid(`the first event of a stream must be a task or a message, not ${kase === undefined ? "an empty event" : String(kase)}`);
    }
    this.#afterMessage = kase === "message";
    return undefined;
  }

  end(): RpcError | undefined {
    // Nothing at all is not an invalid response but a handler that failed to answer.
    return this.#count === 0 ? new InternalError("the stream ended before its first event") : undefined;
  }
}

function invalid(problem: string): RpcError {
  return new InvalidAgentResponseError(problem);
}
