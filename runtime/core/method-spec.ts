/**
 * The shapes of the data that generated method tables hold. Bindings read
 * these tables instead of knowing any service by name.
 */
import type { DescMessage } from "@bufbuild/protobuf";

/** Method kinds the bindings can serve (client and bidi streaming cannot cross JSON-RPC or HTTP). */
export type MethodKind = "unary" | "server_streaming";

/** HTTP methods of `google.api.http`, plus the kind of a `custom` pattern as written. */
export type HttpMethod = "GET" | "PUT" | "POST" | "DELETE" | "PATCH" | (string & {});

/** One `google.api.http` rule (or one of its `additional_bindings`). */
export interface HttpRuleSpec {
  /** Local name of the method in the service's method table. */
  readonly method: string;
  readonly httpMethod: HttpMethod;
  /** The path template as written in the proto; parse with `parsePathTemplate`. */
  readonly path: string;
  /**
   * What the request body maps to: `*` for the whole request message, a
   * top-level field's local name, or `""` when the request has no body.
   */
  readonly body: string;
  /** Local name of the response field sent as the body, or `""` for the whole message. */
  readonly responseBody: string;
  /** True for an entry of `additional_bindings`; the default binding wins ties (D6). */
  readonly additional: boolean;
  /** Each path variable, as written in the template, and the local names of the field it sets. */
  readonly pathParams: readonly PathParamSpec[];
  /**
   * Request fields a query parameter may set, as dotted JSON names
   * (`statusTimestampAfter`, `filter.state`); a query may also use the proto
   * names (`status_timestamp_after`). Empty when the body is `*`.
   */
  readonly query: readonly string[];
  /** True for the POST twin of a streaming RPC's GET rule (D1), which takes an empty body or `{}`. */
  readonly derived: boolean;
}

export interface PathParamSpec {
  /** The variable's field path as written, e.g. `task_id`. */
  readonly variable: string;
  /** Local names from the request message down to the bound field, e.g. `["taskId"]`. */
  readonly field: readonly string[];
}

/** One RPC of a service, as the bindings need it. */
export interface MethodSpec<I extends DescMessage = DescMessage, O extends DescMessage = DescMessage, K extends MethodKind = MethodKind> {
  /** The RPC name, which is also the JSON-RPC method name, e.g. `SendMessage`. */
  readonly name: string;
  /**
   * The property name in the handler interface and the clients, e.g. `sendMessage`: what the
   * dispatcher calls on a handler and a client is built with. The generator escapes an RPC named
   * like a client's own member (`close$` for Close, `then$`, `__proto__$`; D118).
   */
  readonly localName: string;
  readonly kind: K;
  /** The gRPC path, e.g. `/lf.a2a.v1.A2AService/SendMessage`. */
  readonly grpcPath: string;
  readonly input: I;
  readonly output: O;
}

/**
 * For each message type that has `google.api.field_behavior = REQUIRED`
 * fields, or holds messages that do: the local names of its required fields
 * and of its message fields to descend into.
 */
export type RequiredFieldTable = Readonly<
  Record<string, { readonly required: readonly string[]; readonly nested: readonly string[] }>
>;
