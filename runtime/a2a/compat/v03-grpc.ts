/**
 * A2A 0.3's gRPC service, `a2a.v1.A2AService`, served beside 1.0's
 * `lf.a2a.v1.A2AService` on the same grpc-js server by the same handler
 * (D113). Its messages and descriptor are generated from the v0.3.0 proto
 * (runtime/gen/a2a/v0_3, scripts/gen-a2a-v03.mjs); the method table and the
 * grpc-js definition are read from that descriptor here. Each call's request
 * goes v0.3 message -> the v0.3 proto's ProtoJSON -> 1.0 ProtoJSON (the
 * `proto` dialect of v03-shapes.ts, the one HTTP+JSON uses) -> the 1.0
 * message the handler takes, and the answer back the same way.
 */
import { create, fromBinary, fromJson, toBinary, toJson, type DescMessage, type JsonObject, type JsonValue, type Message } from "@bufbuild/protobuf";
import type { ServiceDefinition } from "@grpc/grpc-js";
import type { Authenticate } from "../../core/call-context.js";
import { isRpcError } from "../../core/errors.js";
import type { MethodSpec } from "../../core/method-spec.js";
import { A2AService as A2AServiceV03 } from "../../gen/a2a/v0_3/a2a_pb.js";
import type { A2ACallContext } from "../profile.js";
import { InvalidParamsError } from "../errors.js";
import { createStreamCheck } from "../stream-rules.js";
import { cardTo03 } from "./v03-card.js";
import { v03Methods } from "./v03-methods.js";
import { translationFailure } from "./v03-request.js";
import { obj, pushConfigFrom03, streamResponseTo03, taskPushConfigTo03, type Obj } from "./v03-shapes.js";

/** The v0.3 service's descriptor: what health reports and reflection describes beside 1.0's. */
export const v03GrpcService = A2AServiceV03;

/**
 * The v0.3 service's method table, as the core's gRPC binding takes it. Each method is named by the
 * 1.0 RPC it is served as, so the authentication hook, capability gating and errors see the names
 * they see on every other binding (a hook that guards CancelTask guards 0.3's too, D18).
 * GetAgentCard keeps its own: it is the public card to anyone, and the extended one only to a
 * caller the hook lets have GetExtendedAgentCard.
 */
export const v03GrpcMethods: Readonly<Record<string, MethodSpec>> = Object.fromEntries(
  A2AServiceV03.methods.map((m) => [
    m.localName,
    {
      name: m.name === "GetAgentCard" ? m.name : (requestOf(m.name)?.v1 ?? m.name),
      localName: m.localName,
      kind: m.methodKind === "server_streaming" ? "server_streaming" : "unary",
      grpcPath: `/${A2AServiceV03.typeName}/${m.name}`,
      input: m.input,
      output: m.output,
    },
  ]),
);

/** The grpc-js definition of the v0.3 service, serialized with protobuf-es. */
export const v03GrpcDefinition: ServiceDefinition = Object.fromEntries(
  Object.values(v03GrpcMethods).map((m) => [
    m.localName,
    {
      path: m.grpcPath,
      originalName: m.name,
      requestStream: false,
      responseStream: m.kind === "server_streaming",
      requestSerialize: (value: Message) => Buffer.from(toBinary(m.input, value)),
      requestDeserialize: (bytes: Buffer) => fromBinary(m.input, bytes),
      responseSerialize: (value: Message) => Buffer.from(toBinary(m.output, value)),
      responseDeserialize: (bytes: Buffer) => fromBinary(m.output, bytes),
    },
  ]),
);

/** `tasks/{id}` (or the proto's `task/{id}` typo) and `tasks/{id}/pushNotificationConfigs/{cfg}`: 0.3's resource names. */
function names(name: unknown): { taskId: string; configId: string } {
  const parts = String(name ?? "").split("/");
  return { taskId: parts[1] ?? "", configId: parts[3] ?? "" };
}

type Call = (request: Message, context: A2ACallContext) => unknown;

export interface V03GrpcConfig {
  /** The 1.0 handler. */
  readonly handler: object;
  /** The 1.0 service's method table (its request and answer schemas). */
  readonly methods: Readonly<Record<string, MethodSpec>>;
  /** The public card as served (ProtoJSON): GetAgentCard's answer to a caller without the extended card. */
  readonly card: () => JsonObject;
  /** The server's authentication hook: GetAgentCard asks it about GetExtendedAgentCard before it gives the extended card. */
  readonly authenticate?: Authenticate | undefined;
}

/**
 * The handler of the v0.3 service: each v0.3 method the 1.0 handler can
 * serve, translated to it. A method the 1.0 handler leaves out is left out
 * here too, so the binding answers it as unimplemented as on 1.0.
 */
export function createV03GrpcHandler(config: V03GrpcConfig): Record<string, Call> {
  const byName = new Map(Object.values(config.methods).map((m) => [m.name, m]));
  const target = (v1: string): { spec: MethodSpec; fn: (request: Message, context: A2ACallContext) => unknown } | undefined => {
    const spec = byName.get(v1);
    const fn = spec === undefined ? undefined : (config.handler as Record<string, unknown>)[spec.localName];
    return spec === undefined || typeof fn !== "function" ? undefined : { spec, fn: (r, c) => (fn as Call).call(config.handler, r, c) };
  };
  const json = (schema: DescMessage, value: unknown): Obj => obj(toJson(schema, create(schema, value as never)));
  const to03 = (schema: DescMessage, value: JsonValue): Message => fromJson(schema, value, { ignoreUnknownFields: true });

  const handler: Record<string, Call> = {};
  for (const method of A2AServiceV03.methods) {
    const spec03 = v03GrpcMethods[method.localName]!;
    const translation = requestOf(method.name);
    if (translation === undefined) continue;
    const call = target(translation.v1);
    if (call === undefined && method.name !== "GetAgentCard") continue;
    handler[spec03.localName] = (request03, context) => {
      let translated: JsonObject;
      try {
        translated = translation.request(json(spec03.input, request03));
      } catch (err) {
        // A request of the caller's that 1.0 cannot take (a part of no kind): InvalidParams, as on the JSON bindings.
        throw new InvalidParamsError(`the request cannot be read as A2A 0.3's: ${translationFailure(err)}`);
      }
      const request = fromJson(call?.spec.input ?? spec03.input, translated as JsonValue, { ignoreUnknownFields: true });
      if (spec03.kind === "server_streaming") {
        const { spec, fn } = call!;
        // The handler's stream keeps 1.0's rules (D15) here too: this path does not go through 1.0's binding.
        const check = createStreamCheck(spec.output);
        return (async function* () {
          for await (const event of fn(request, context) as AsyncIterable<unknown>) {
            const refusal = check.next(event);
            if (refusal !== undefined) throw refusal;
            yield to03(spec03.output, streamResponseTo03(json(spec.output, event), "proto"));
          }
          const refusal = check.end();
          if (refusal !== undefined) throw refusal;
        })();
      }
      const { spec, fn } = call ?? {};
      const answer = (asked = context) => Promise.resolve(fn!(request, asked)).then((answer) => to03(spec03.output, translation.result(json(spec!.output, answer))));
      if (method.name !== "GetAgentCard") return answer();
      // 0.3's gRPC has no well-known URL: GetAgentCard is the card, the extended one for a caller
      // the hook lets have GetExtendedAgentCard (it was asked about GetAgentCard, which anyone may call).
      const publicCard = () => to03(spec03.output, cardTo03(config.card(), "proto"));
      if (call === undefined || config.authenticate === undefined || obj(config.card().capabilities).extendedAgentCard !== true) return publicCard();
      const hook = config.authenticate;
      return Promise.resolve()
        .then(() => hook({ binding: "GRPC", method: "GetExtendedAgentCard", headers: context.headers }))
        .then(
          // The handler's extended card for the principal the hook gave for GetExtendedAgentCard.
          (principal) => (principal === undefined || principal === null ? publicCard() : answer(withPrincipal(context, principal))),
          (err: unknown) => {
            if (isRpcError(err)) return publicCard();
            throw err;
          },
        );
    };
  }
  return handler;
}

/** `context` with another principal; its other members read through to it. */
function withPrincipal(context: A2ACallContext, principal: unknown): A2ACallContext {
  return {
    binding: context.binding,
    principal,
    protocolVersion: context.protocolVersion,
    tenant: context.tenant,
    get headers() {
      return context.headers;
    },
    get signal() {
      return context.signal;
    },
    get requestedExtensions() {
      return context.requestedExtensions;
    },
    get activatedExtensions() {
      return context.activatedExtensions;
    },
  };
}

interface GrpcTranslation {
  readonly v1: string;
  request(request03: Obj): JsonObject;
  result(result: Obj): JsonValue;
}

/** Each v0.3 gRPC method: its request to the 0.3 params of v03-methods.ts where they match, and the result back. */
function requestOf(name: string): GrpcTranslation | undefined {
  const via = (method: string, params: (r: Obj) => Obj): GrpcTranslation => {
    const m = v03Methods[method]!;
    return { v1: m.v1, request: (r) => m.request(params(r)), result: (r) => m.result(r, "proto") };
  };
  const historyLength = (r: Obj) => (typeof r.historyLength === "number" && r.historyLength !== 0 ? { historyLength: r.historyLength } : {});
  switch (name) {
    case "SendMessage":
      return via("message/send", (r) => r);
    case "SendStreamingMessage":
      return via("message/stream", (r) => r);
    case "GetTask":
      return via("tasks/get", (r) => ({ id: names(r.name).taskId, ...historyLength(r) }));
    case "CancelTask":
      return via("tasks/cancel", (r) => ({ id: names(r.name).taskId }));
    case "TaskSubscription":
      return via("tasks/resubscribe", (r) => ({ id: names(r.name).taskId }));
    case "CreateTaskPushNotificationConfig":
      return {
        v1: "CreateTaskPushNotificationConfig",
        request(r) {
          const taskId = names(r.parent).taskId;
          const inner = obj(obj(r.config).pushNotificationConfig);
          const id = typeof r.configId === "string" && r.configId !== "" ? r.configId : typeof inner.id === "string" && inner.id !== "" ? inner.id : taskId;
          return { ...pushConfigFrom03(inner, taskId), id };
        },
        result: (r) => taskPushConfigTo03(r, "proto"),
      };
    case "GetTaskPushNotificationConfig":
      return via("tasks/pushNotificationConfig/get", (r) => ({ id: names(r.name).taskId, pushNotificationConfigId: names(r.name).configId }));
    case "ListTaskPushNotificationConfig":
      return {
        v1: "ListTaskPushNotificationConfigs",
        request: (r) => ({ taskId: names(`${String(r.parent ?? "")}/`).taskId, ...(typeof r.pageSize === "number" ? { pageSize: r.pageSize } : {}), ...(typeof r.pageToken === "string" ? { pageToken: r.pageToken } : {}) }),
        result: (r) => v03Methods["tasks/pushNotificationConfig/list"]!.result(r, "proto"),
      };
    case "DeleteTaskPushNotificationConfig":
      return via("tasks/pushNotificationConfig/delete", (r) => ({ id: names(r.name).taskId, pushNotificationConfigId: names(r.name).configId }));
    case "GetAgentCard":
      return via("agent/getAuthenticatedExtendedCard", () => ({}));
    default:
      return undefined;
  }
}
