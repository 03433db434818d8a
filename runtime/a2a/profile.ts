/**
 * The A2A profile: A2A's rules on top of the core's bindings, switched on for
 * `lf.a2a.v1.A2AService` (the generator passes it for that service, by its
 * full name, see names.ts, and for no other). Every binding gets, the same way:
 *
 * - version negotiation (D5) and extensions (spec 3.2.6): `A2A-Version` and
 *   `A2A-Extensions`, the activated extensions echoed on the response;
 * - the policy (D18): the card's required extensions and capability gating,
 *   and the extended card for authenticated callers only;
 * - the error for a left-out method, the stream rules (D15), the tenant of
 *   the request, the A2A error table and `application/a2a+json` (D9).
 */
import type { JsonValue, Message } from "@bufbuild/protobuf";
import type { Authenticate, Binding, CallContext } from "../core/call-context.js";
import { CallScope, ScopedContext, type ScopeRequest } from "../core/call-scope.js";
import type { RpcError } from "../core/errors.js";
import type { HttpJsonOptions } from "../core/http/endpoint.js";
import type { JsonRpcOptions } from "../core/jsonrpc/endpoint.js";
import type { DispatchConfig } from "../core/dispatch.js";
import type { MethodSpec } from "../core/method-spec.js";
import type { Profile } from "../core/profile.js";
import {
  A2AErrorTable,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  PushNotificationNotSupportedError,
  UnauthenticatedError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from "./errors.js";
import { a2aAnswerError } from "./json-rpc-codes.js";
import type { AgentPolicy } from "./policy.js";
import { isHeaderUri, negotiateVersion, parseExtensions, type VersionPolicy } from "./service-params.js";
import { createStreamCheck } from "./stream-rules.js";
import { a2aTrace } from "./tracing.js";
import { v03MethodOf } from "./compat/v03-methods.js";

/** What an A2A endpoint takes besides a binding's own options. */
export interface A2AOptions {
  /** Protocol versions served (D5). Default: 1.0 only, a missing version is 0.3. */
  readonly versions?: VersionPolicy;
  /** Authentication, required extensions and capability gating, shared by all bindings. */
  readonly policy?: AgentPolicy;
}

/** Which older A2A versions the same endpoints also answer, with the same handler. */
export interface CompatOptions {
  /**
   * A2A 0.3 callers (D110, D111): a request without `A2A-Version`, or with
   * 0.3, is read in 0.3's wire form on JSON-RPC (`message/send`, ...) and
   * HTTP+JSON (the `/v1/...` routes below the same base path), served by the
   * same handler as a 1.0 call, and answered in 0.3's form; the card lists a
   * 0.3 interface per JSON binding and carries 0.3's `url`,
   * `preferredTransport` and `additionalInterfaces`. Default off: such a
   * request is answered VersionNotSupported.
   */
  readonly v0_3?: boolean;
}

/** What A2A's JSON endpoints take besides A2AOptions: the older versions they answer too (D110; gRPC's 0.3 service is serveA2AService's, D113). */
export interface A2AJsonOptions extends A2AOptions {
  readonly compat?: CompatOptions;
}

/** The options of generated A2A endpoints: the binding's own, and A2A's. */
export type A2AJsonRpcOptions = Omit<JsonRpcOptions, "authenticate"> & A2AJsonOptions;
export type A2AHttpJsonOptions = Omit<HttpJsonOptions, "authenticate"> & A2AJsonOptions;
export type A2AGrpcOptions = Pick<DispatchConfig, "onError" | "logger" | "tracing"> & A2AOptions;

/** What a handler of A2AService learns about the call besides its request message. */
export interface A2ACallContext<Principal = unknown> extends CallContext<Principal> {
  /** The negotiated protocol version as Major.Minor, e.g. `1.0`. */
  readonly protocolVersion: string;
  /** Extension URIs the client asked for (`A2A-Extensions`), in request order. */
  readonly requestedExtensions: readonly string[];
  /**
   * Extension URIs the handler activated for this call. Add to it; the binding
   * echoes it in the response's `A2A-Extensions` header or metadata.
   */
  readonly activatedExtensions: Set<string>;
  /** The tenant of the request (path, params or request field); undefined when none. */
  readonly tenant: string | undefined;
}

/** The Agent Card capability (`AgentCapabilities` field) that gates an RPC (D18, spec 3.3.4). */
type Capability = "streaming" | "pushNotifications" | "extendedAgentCard";

/**
 * Which RPCs of A2AService a capability gates, as A2A data: an RPC a later proto adds is ungated
 * until listed. 0.3's gRPC service (D113) is served through this profile under these 1.0 names too.
 */
const gates: Readonly<Record<string, Capability>> = {
  SendStreamingMessage: "streaming",
  SubscribeToTask: "streaming",
  CreateTaskPushNotificationConfig: "pushNotifications",
  GetTaskPushNotificationConfig: "pushNotifications",
  ListTaskPushNotificationConfigs: "pushNotifications",
  DeleteTaskPushNotificationConfig: "pushNotifications",
  GetExtendedAgentCard: "extendedAgentCard",
};

/**
 * A push config that comes inside a message (`SendMessageConfiguration.taskPushNotificationConfig`,
 * 0.3 gRPC's `pushNotification`) on an agent that declares no push notifications: refused as the
 * push RPCs are (D18), or the agent would post to a URL its caller chose, under a config that
 * caller could then neither read nor delete.
 */
function refusePushInMessage(spec: MethodSpec, _scope: A2AScope, request: Message): void {
  if (spec.name !== "SendMessage" && spec.name !== "SendStreamingMessage") return;
  const configuration = (request as unknown as { configuration?: { taskPushNotificationConfig?: unknown; pushNotification?: unknown } }).configuration;
  if (configuration?.taskPushNotificationConfig === undefined && configuration?.pushNotification === undefined) return;
  throw new PushNotificationNotSupportedError(`${spec.name} with a push notification config needs capabilities.pushNotifications, which this agent does not declare`);
}

/**
 * ListTasks with `includeArtifacts`: each listed task shows `artifacts`, as `[]` when it has none
 * (spec 3.1.4: "included with its actual content (which may be an empty array)"; checklist 15 #18),
 * where ProtoJSON leaves an empty list out. Without it the field is absent, as ProtoJSON has it.
 */
function showArtifactsAsked(spec: MethodSpec, request: Message, json: JsonValue): void {
  if (spec.name !== "ListTasks" || (request as unknown as { includeArtifacts?: boolean }).includeArtifacts !== true) return;
  const tasks = (json as { tasks?: unknown } | null)?.tasks;
  if (!Array.isArray(tasks)) return;
  for (const task of tasks) {
    if (task !== null && typeof task === "object" && !Array.isArray(task) && !Object.hasOwn(task, "artifacts")) (task as Record<string, unknown>).artifacts = [];
  }
}

const defaultVersions: VersionPolicy = { supported: ["1.0"] };

/** The scope of one request: the core's, plus the negotiated version and the extensions. */
export class A2AScope extends CallScope {
  #activated: Set<string> | undefined;
  #requested: readonly string[] | undefined;

  constructor(
    binding: Binding,
    request: ScopeRequest,
    readonly protocolVersion: string,
  ) {
    super(binding, request);
  }

  /** Extension URIs the client asked for (`A2A-Extensions`; a 0.3 caller's `X-A2A-Extensions`, D110). */
  get requestedExtensions(): readonly string[] {
    if (this.#requested === undefined) {
      const header = this.request.header("a2a-extensions");
      this.#requested = parseExtensions(header === null && this.protocolVersion === "0.3" ? this.request.header("x-a2a-extensions") : header);
    }
    return this.#requested;
  }

  get activatedExtensions(): Set<string> {
    return (this.#activated ??= new Set());
  }

  /**
   * The `A2A-Extensions` response header when a handler activated any, else undefined. A URI a
   * header cannot carry (other than printable ASCII: `urn:example:中`, CR/LF) is left out here, so
   * the others still go: the core would leave out the whole header (dispatch's `sendable`, D19).
   */
  activatedHeader(): string | undefined {
    const activated = this.#activated;
    if (activated === undefined || activated.size === 0) return undefined;
    const sendable = [...activated].filter(isHeaderUri);
    return sendable.length === 0 ? undefined : sendable.join(", ");
  }
}

// The core's context (binding, headers, signal, principal) plus A2A's; private
// fields (#) so a handler that spreads or logs its context sees only the
// A2ACallContext members.
class A2AContext extends ScopedContext implements A2ACallContext {
  readonly #scope: A2AScope;
  readonly protocolVersion: string;

  constructor(
    scope: A2AScope,
    readonly tenant: string | undefined,
  ) {
    super(scope);
    this.#scope = scope;
    this.protocolVersion = scope.protocolVersion;
  }

  get requestedExtensions(): readonly string[] {
    return this.#scope.requestedExtensions;
  }

  get activatedExtensions(): Set<string> {
    return this.#scope.activatedExtensions;
  }
}

/** Every A2A request message has a `tenant` field (spec 8.3.2, topics/multi-tenancy). */
function tenantOf(request: Message): string | undefined {
  const tenant = (request as unknown as { tenant?: unknown }).tenant;
  return typeof tenant === "string" && tenant !== "" ? tenant : undefined;
}

/** A2A 0.3's JSON-RPC method names, and the 1.0 method each became (D5): the compat layer's table (D110), and `tasks/list`, which some 0.3 clients sent. */
function renamedFrom03(method: string): string | undefined {
  return method === "tasks/list" ? "ListTasks" : v03MethodOf(method)?.v1;
}

export function createA2AProfile(options: A2AOptions = {}): Profile<A2AScope> {
  const versions = options.versions ?? defaultVersions;
  const policy = options.policy;
  return {
    errors: A2AErrorTable,
    mediaType: "application/a2a+json",
    ...(policy?.challenge === undefined ? {} : { challenge: policy.challenge }),

    open(binding, request, query) {
      const version = negotiateVersion(request.header("a2a-version"), query?.get("A2A-Version") ?? null, versions);
      if (!version.ok) throw new VersionNotSupportedError(version.message);
      return new A2AScope(binding, request, version.version);
    },

    methodHint(method) {
      const renamed = renamedFrom03(method);
      return renamed === undefined ? undefined : `it is A2A 0.3's name for ${renamed}; send A2A-Version: 1.0 and call ${renamed}`;
    },

    admit(spec, scope) {
      if (policy === undefined) return;
      const gate = gates[spec.name];
      const capabilities = policy.capabilities;
      // What the card does not offer is refused as such first (spec 3.3.4): asking a caller to
      // authenticate for an extended card the agent has none of would mislead it.
      if (capabilities !== undefined && gate !== undefined && capabilities[gate] !== true) {
        const message = `${spec.name} needs capabilities.${gate}, which this agent does not declare`;
        throw gate === "pushNotifications" ? new PushNotificationNotSupportedError(message) : new UnsupportedOperationError(message);
      }
      // The extended card is for authenticated callers only (spec 3.1.11, 13.3).
      if (gate === "extendedAgentCard" && scope.principal === undefined) {
        throw new UnauthenticatedError("the extended agent card requires an authenticated caller");
      }
      const missing = (policy.requiredExtensions ?? []).filter((uri) => !scope.requestedExtensions.includes(uri));
      if (missing.length > 0) {
        throw new ExtensionSupportRequiredError(`this agent requires the extension${missing.length > 1 ? "s" : ""} ${missing.join(", ")}; list ${missing.length > 1 ? "them" : "it"} in A2A-Extensions`, {
          metadata: { extensions: missing.join(",") },
        });
      }
    },

    // Only an agent whose card turns push notifications off has anything to check.
    ...(policy?.capabilities !== undefined && policy.capabilities.pushNotifications !== true ? { admitRequest: refusePushInMessage } : {}),

    shapeJson: showArtifactsAsked,

    context: (scope, request) => new A2AContext(scope, tenantOf(request)),

    unimplemented(spec): RpcError {
      const gate = gates[spec.name];
      // D18: a card that promises an extended card the handler cannot give.
      if (gate === "extendedAgentCard" && policy?.capabilities?.extendedAgentCard === true) {
        return new ExtendedAgentCardNotConfiguredError("this agent declares an extended agent card but has none configured");
      }
      const message = `${spec.name} is not supported by this agent`;
      return gate === "pushNotifications" ? new PushNotificationNotSupportedError(message) : new UnsupportedOperationError(message);
    },

    streamCheck: (spec) => (spec.kind === "server_streaming" ? createStreamCheck(spec.output) : undefined),

    responseHeaders(scope): Readonly<Record<string, string>> | undefined {
      const activated = scope.activatedHeader();
      if (activated === undefined) return undefined;
      // 0.3's clients read the header under 0.3's name (D110).
      return scope.protocolVersion === "0.3" ? { "a2a-extensions": activated, "x-a2a-extensions": activated } : { "a2a-extensions": activated };
    },

    trace: a2aTrace,

    answerError: a2aAnswerError,

    // D6: a trailing slash (or a verb) that leaves an id empty is GetTask with id "", InvalidParams
    // as on JSON-RPC (D11), never the collection's route: `GET /tasks/` was ListTasks, which
    // @a2a-js/sdk read as an empty Task.
    trailingSlash: "empty-value-or-drop",
  };
}

/**
 * A binding's options with A2A's turned into the core's: the A2A profile,
 * and the policy's authentication hook. What generated A2A endpoints pass on.
 */
export function withA2AProfile<O extends A2AOptions>(options: O): Omit<O, "versions" | "policy"> & { readonly profile: Profile<A2AScope>; readonly authenticate: Authenticate | undefined } {
  const { versions, policy, ...rest } = options;
  return { ...rest, profile: createA2AProfile({ versions, policy }), authenticate: policy?.authenticate };
}
