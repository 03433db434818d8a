/**
 * What every binding does with a call once it has the request as ProtoJSON:
 * decode it strictly (D10) and check REQUIRED fields (D11), call the
 * handler or answer for a left-out method (D18), write the result with
 * REQUIRED defaults, and open a stream after checking its first event
 * (D14, D15). JSON-RPC and HTTP+JSON differ only in framing, so they share
 * this; gRPC shares the handler call and the stream rules.
 */
import { type DescMessage, type JsonObject, type JsonValue, type Message } from "@bufbuild/protobuf";
import type { EventSource } from "./binding-core.js";
import type { CallContext } from "./call-context.js";
import type { CallScope } from "./call-scope.js";
import { badRequest } from "./error-encoding.js";
import { A2AError, type ErrorTableEntry } from "./errors.js";
import { createEventSource } from "./event-stream.js";
import { jsonWriter } from "./json-writer.js";
import type { MethodSpec, RequiredFieldTable } from "./method-spec.js";
import type { AgentPolicy } from "./policy.js";
import { JsonDecodeError, decodeJson } from "./proto-json.js";
import { findMissingRequired } from "./required-fields.js";
import { createStreamCheck } from "./stream-rules.js";

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
  /** Calls a streaming method: its events for gRPC, checked by the stream rules (D15), init shapes as is. */
  streamMessages(spec: MethodSpec, request: Message, context: CallContext): AsyncIterator<Message>;
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

export interface StreamFraming {
  /** The `data:` payload of one event, from its ProtoJSON. */
  readonly event: (json: JsonValue) => string;
  /** The `data:` payload of the error that ends the stream. */
  readonly error: (err: unknown) => string;
  /** SSE event name of that error frame, if the binding names it. */
  readonly errorEvent?: string;
  /** Aborts the call's signal. */
  readonly abort: () => void;
  readonly heartbeatMs: number;
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
      const check = createStreamCheck(spec.output);
      const source = (invoke(spec, request, context) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      let started = false;
      return {
        async next() {
          const r = await source.next();
          if (r.done === true) {
            // As on the HTTP bindings: a stream owes at least its first event (D15).
            if (!started) throw new A2AError(errors.Internal, "the stream ended before its first event");
            return { done: true, value: undefined };
          }
          started = true;
          const problem = check?.(r.value);
          if (problem !== undefined) throw new A2AError(errors.InvalidAgentResponse, problem);
          return { done: false, value: grpcResult(r.value) };
        },
        async return() {
          await source.return?.();
          return { done: true, value: undefined };
        },
      };
    },

    async unary(spec, request, context) {
      return write(spec.output, await invoke(spec, request, context));
    },

    async openStream(spec, request, context, framing) {
      const output = spec.output;
      const check = createStreamCheck(output);
      const serialize = (event: unknown) => {
        const problem = check?.(event);
        if (problem !== undefined) throw new A2AError(errors.InvalidAgentResponse, problem);
        return framing.event(write(output, event));
      };
      let iterator: AsyncIterator<unknown> | undefined;
      let first: string;
      try {
        iterator = (invoke(spec, request, context) as AsyncIterable<unknown>)[Symbol.asyncIterator]();
        const r = await iterator.next();
        if (r.done === true) throw new A2AError(errors.Internal, "the stream ended before its first event");
        // Serialized before answering, so an unencodable first event is still a plain error response.
        first = serialize(r.value);
      } catch (err) {
        framing.abort();
        void Promise.resolve()
          .then(() => iterator?.return?.())
          .catch(() => undefined);
        throw err;
      }
      return createEventSource({
        first,
        iterator,
        serialize,
        serializeError: framing.error,
        ...(framing.errorEvent === undefined ? {} : { errorEvent: framing.errorEvent }),
        abort: framing.abort,
        heartbeatMs: framing.heartbeatMs,
      });
    },

    tenantOf(request) {
      const tenant = (request as unknown as JsonObject)["tenant"];
      return typeof tenant === "string" && tenant !== "" ? tenant : undefined;
    },
  };
}
