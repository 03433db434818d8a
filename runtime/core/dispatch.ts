/**
 * What every binding does with a call once it has the request as ProtoJSON:
 * decode it strictly (D10) and check REQUIRED fields (D11), call the
 * handler or answer for a left-out method (D18), write the result with
 * REQUIRED defaults, and open a stream after checking its first event
 * (D14, D15). JSON-RPC and HTTP+JSON differ only in framing, so they share
 * this; gRPC shares the handler call and the stream rules.
 */
import { type DescMessage, type JsonObject, type JsonValue, type Message } from "@bufbuild/protobuf";
import type { EventSource } from "./transport.js";
import type { CallContext } from "./call-context.js";
import type { CallScope } from "./call-scope.js";
import { badRequest } from "./error-encoding.js";
import { A2AError, type ErrorTableEntry } from "./errors.js";
import { createEventSource, releaseIterator, type EventEncoder } from "./event-stream.js";
import { jsonWriter } from "./codec/json-writer.js";
import type { MethodSpec, RequiredFieldTable } from "./method-spec.js";
import type { AgentPolicy } from "../a2a/policy.js";
import { JsonDecodeError, decodeJson } from "./codec/proto-json.js";
import { findMissingRequired } from "./codec/required-fields.js";
import { createStreamCheck, type StreamCheck } from "../a2a/stream-rules.js";

/**
 * The generated error table: the rows the bindings raise themselves, and any
 * row a method table names for a left-out method (D18).
 */
export type BindingErrorTable = Readonly<
  Record<
    | "ParseError"
    | "InvalidRequest"
    | "MethodNotFound"
    | "InvalidParams"
    | "Internal"
    | "UnsupportedOperation"
    | "VersionNotSupported"
    | "ContentTypeNotSupported"
    | "InvalidAgentResponse"
    | "Unauthenticated"
    | "PushNotificationNotSupported"
    | "ExtendedAgentCardNotConfigured"
    | "ExtensionSupportRequired",
    ErrorTableEntry
  >
> &
  Readonly<Record<string, ErrorTableEntry>>;

export interface Dispatcher {
  /**
   * Applies the agent's policy before anything else of a call: the
   * authentication hook, the card's required extensions, then capability
   * gating (D18). Throws the spec error; a no-op without a policy.
   */
  admit(spec: MethodSpec, scope: CallScope): Promise<void> | undefined;
  /**
   * Calls the handler's method for `spec` and returns what it returned (a
   * promise, an async iterable, or a value), or throws the error for a
   * left-out method (D18). For bindings that chain the result themselves.
   */
  invoke(spec: MethodSpec, request: Message, context: CallContext): unknown;
  /** Decodes and validates a request message; throws InvalidParams naming the fields at fault. */
  decode(spec: MethodSpec, json: JsonValue): Message;
  /** Calls a unary method and writes its result as ProtoJSON. */
  unary(spec: MethodSpec, request: Message, context: CallContext): Promise<JsonValue>;
  /** Calls a streaming method for gRPC: the handler's iterator, with the stream rules (D15) applied to each result. */
  streamMessages(spec: MethodSpec, request: Message, context: CallContext): MessageStream;
  /** Checks REQUIRED fields of a request decoded elsewhere (gRPC binary); throws InvalidParams. */
  checkRequired(spec: MethodSpec, request: Message): void;
  /**
   * Calls a streaming method and pulls its first event, so an error before
   * it still throws here; later events and errors go through the source.
   */
  openStream(spec: MethodSpec, request: Message, context: CallContext, framing: StreamFraming): Promise<EventSource>;
  /** The `tenant` field of a decoded request, when it has a non-empty one. */
  tenantOf(request: Message): string | undefined;
}

/**
 * How a binding frames one stream's events. Methods, not function fields: a
 * binding can answer with one small object per stream (JSON-RPC's carries
 * the call's id) instead of a closure per member.
 */
export interface StreamFraming {
  /** The `data:` payload of one event, from its ProtoJSON. */
  event(json: JsonValue): string;
  /** The `data:` payload of the error that ends the stream. */
  error(err: unknown): string;
  /** SSE event name of that error frame, if the binding names it. */
  readonly errorEvent?: string | undefined;
  /** Aborts the call's signal. */
  abort(): void;
  readonly heartbeatMs: number;
}

/**
 * A handler's stream as the gRPC binding pulls it: the writer calls the
 * handler's iterator itself, so an idle stream waits on one pending next()
 * with nothing of ours suspended around it.
 */
export interface MessageStream {
  readonly iterator: AsyncIterator<unknown>;
  /**
   * The message to send for one result of `iterator.next()`, or undefined
   * when the stream is over; throws the error that ends it (D15).
   */
  accept(result: IteratorResult<unknown>): Message | undefined;
}

type HandlerFn = (request: Message, context: CallContext) => unknown;

/**
 * A handler's result on the gRPC path, left as the handler gave it: the
 * generated definition serializes with the runtime's encodeBinary, which
 * writes an init shape exactly as `toBinary(create(desc, value))` would, so
 * creating the message first would only build a tree to be read once. Typed
 * as a Message because that is what grpc-js is told the definition takes.
 */
function grpcResult(value: unknown): Message {
  return value as Message;
}

export function createDispatcher(config: {
  readonly errors: BindingErrorTable;
  readonly required: RequiredFieldTable;
  readonly handler: object;
  readonly policy?: AgentPolicy | undefined;
}): Dispatcher {
  const { errors, required, policy } = config;
  const handler = config.handler as Record<string, HandlerFn | undefined>;
  const write = (desc: DescMessage, value: unknown) => jsonWriter(desc, required)(value);

  /** Calls the handler's method for `spec`, or throws the error for a left-out method (D18). */
  function invoke(spec: MethodSpec, request: Message, context: CallContext): unknown {
    const fn = handler[spec.localName];
    // An RPC named e.g. HasOwnProperty must not find Object.prototype's method.
    const inherited = (Object.prototype as unknown as Record<string, unknown>)[spec.localName];
    if (typeof fn !== "function" || fn === inherited) {
      // D18: a card that promises an extended card the handler cannot give.
      if (spec.capability === "extendedAgentCard" && policy?.capabilities?.extendedAgentCard === true) {
        throw new A2AError(errors.ExtendedAgentCardNotConfigured, "this agent declares an extended agent card but has none configured");
      }
      throw new A2AError(errors[spec.unimplemented] ?? errors.UnsupportedOperation, `${spec.name} is not supported by this agent`);
    }
    return fn.call(handler, request, context);
  }

  function checkRequired(spec: MethodSpec, request: Message): void {
    const missing = findMissingRequired(spec.input, request, required);
    if (missing.length > 0) {
      const fields = missing.map((v) => v.field).join(", ");
      throw new A2AError(errors.InvalidParams, `missing required field${missing.length > 1 ? "s" : ""}: ${fields}`, {
        details: [badRequest(missing)],
      });
    }
  }


  async function admitWith(policy: AgentPolicy, spec: MethodSpec, scope: CallScope): Promise<void> {
    const hook = policy.authenticate;
    const principal =
      hook === undefined ? undefined : await scope.authenticate(() => hook({ binding: scope.binding, method: spec.name, headers: scope.headers }));
    // The extended card is for authenticated callers only (spec 3.1.11, 13.3).
    if (spec.capability === "extendedAgentCard" && principal === undefined) {
      throw new A2AError(errors.Unauthenticated, "the extended agent card requires an authenticated caller");
    }
    const missing = (policy.requiredExtensions ?? []).filter((uri) => !scope.requestedExtensions.includes(uri));
    if (missing.length > 0) {
      throw new A2AError(errors.ExtensionSupportRequired, `this agent requires the extension${missing.length > 1 ? "s" : ""} ${missing.join(", ")}; list ${missing.length > 1 ? "them" : "it"} in A2A-Extensions`, {
        metadata: { extensions: missing.join(",") },
      });
    }
    const capabilities = policy.capabilities;
    if (capabilities !== undefined && spec.capability !== "" && capabilities[spec.capability] !== true) {
      const entry = spec.capability === "pushNotifications" ? errors.PushNotificationNotSupported : errors.UnsupportedOperation;
      throw new A2AError(entry, `${spec.name} needs capabilities.${spec.capability}, which this agent does not declare`);
    }
  }

  return {
    admit(spec, scope) {
      // No policy: nothing to wait for, and no promise to allocate per call.
      return policy === undefined ? undefined : admitWith(policy, spec, scope);
    },


    decode(spec, json) {
      let request: Message;
      try {
        request = decodeJson(spec.input, json);
      } catch (err) {
        if (!(err instanceof JsonDecodeError)) throw err;
        const details = err.field === undefined ? [] : [badRequest([{ field: err.field, description: err.reason }])];
        throw new A2AError(errors.InvalidParams, `invalid params: ${err.message}`, { details });
      }
      checkRequired(spec, request);
      return request;
    },

    checkRequired,

    invoke,

    streamMessages(spec, request, context) {
      const source = (invoke(spec, request, context) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      return new CheckedMessages(source, createStreamCheck(spec.output), errors);
    },

    async unary(spec, request, context) {
      return write(spec.output, await invoke(spec, request, context));
    },

    async openStream(spec, request, context, framing) {
      const encoder = new FramedEvents(spec.output, createStreamCheck(spec.output), framing, write, errors);
      let iterator: AsyncIterator<unknown> | undefined;
      let first = "";
      try {
        iterator = (invoke(spec, request, context) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
        const r = await iterator.next();
        // Nothing yielded: endStream throws (D15).
        if (r.done === true) endStream(encoder.check, errors);
        // Encoded before answering, so an unencodable first event is still a plain error response.
        else first = encoder.event(r.value);
      } catch (err) {
        framing.abort();
        releaseIterator(iterator);
        throw err;
      }
      return createEventSource(iterator, first, encoder, framing.heartbeatMs);
    },

    tenantOf(request) {
      const tenant = (request as unknown as JsonObject)["tenant"];
      return typeof tenant === "string" && tenant !== "" ? tenant : undefined;
    },
  };
}

type WriteJson = (desc: DescMessage, value: unknown) => JsonValue;

/** The stream rules (D15) on one of the handler's events: InvalidAgentResponse for one that may not come next. */
function acceptEvent(check: StreamCheck, value: unknown, errors: BindingErrorTable): void {
  const problem = check.next(value);
  if (problem !== undefined) throw new A2AError(errors.InvalidAgentResponse, problem);
}

/** The stream rules (D15) at the handler's end of stream: Internal for a stream that owed an event. */
function endStream(check: StreamCheck, errors: BindingErrorTable): void {
  const problem = check.end();
  if (problem !== undefined) throw new A2AError(errors.Internal, problem);
}

/** One stream's events on the HTTP bindings: the stream rules (D15), ProtoJSON with REQUIRED defaults, the binding's framing. */
class FramedEvents implements EventEncoder<unknown> {
  constructor(
    private readonly output: DescMessage,
    readonly check: StreamCheck,
    private readonly framing: StreamFraming,
    private readonly write: WriteJson,
    private readonly errors: BindingErrorTable,
  ) {}

  get errorEvent(): string | undefined {
    return this.framing.errorEvent;
  }

  event(value: unknown): string {
    acceptEvent(this.check, value, this.errors);
    return this.framing.event(this.write(this.output, value));
  }

  error(err: unknown): string {
    return this.framing.error(err);
  }

  abort(): void {
    this.framing.abort();
  }
}

/** One stream's results on the gRPC path, checked by the stream rules (D15). */
class CheckedMessages implements MessageStream {
  constructor(
    readonly iterator: AsyncIterator<unknown>,
    private readonly check: StreamCheck,
    private readonly errors: BindingErrorTable,
  ) {}

  accept(r: IteratorResult<unknown>): Message | undefined {
    if (r.done === true) {
      endStream(this.check, this.errors);
      return undefined;
    }
    acceptEvent(this.check, r.value, this.errors);
    return grpcResult(r.value);
  }
}
