/**
 * The call contexts of one request. Everything a handler may or may not look
 * at (headers, the abort signal, the set of activated extensions) is made on
 * first use, because a unary call that reads none of it should not pay for an
 * AbortController, a listener and a Headers copy per request.
 */
import type { Binding, CallContext } from "./call-context.js";
import { parseExtensions } from "../a2a/service-params.js";

/** What a transport aborts when the client goes away: an AbortController, or a stream's writer. */
export interface Abortable {
  abort(): void;
}

/**
 * The `signal` of a request whose transport offers `onClose`: an
 * AbortController that `onClose` aborts, the controller itself the listener.
 */
export function signalOnClose(req: { onClose(target: Abortable): void }): AbortSignal {
  const controller = new AbortController();
  req.onClose(controller);
  return controller.signal;
}

/** What a scope needs of the request; `headers` and `signal` may themselves be lazy. */
export interface ScopeRequest {
  readonly headers: Headers;
  readonly signal: AbortSignal;
  header(name: string): string | null;
  /**
   * Aborts `target` when the client goes away (at once if it has). Offered
   * by transports that can, so a scope's signal needs no second
   * AbortController chained to the request's, and the controller itself is
   * the listener: no closure per open stream.
   */
  onClose?(target: Abortable): void;
}

export interface CallScope {
  readonly binding: Binding;
  /** The request's headers or metadata, as an authentication hook sees them. */
  readonly headers: Headers;
  /** Extension URIs the client asked for (`A2A-Extensions`). */
  readonly requestedExtensions: readonly string[];
  /** A context for one call of the request (a batch has several), with its tenant and the principal. */
  context(tenant: string | undefined): CallContext;
  /**
   * Runs the authentication hook once per request (the calls of a batch
   * share it) and keeps its principal for the contexts made afterwards.
   */
  authenticate(hook: () => unknown): Promise<unknown>;
  /** Aborts the signal every context of this request sees (a stream the client left). */
  abort(): void;
  /** The `A2A-Extensions` response header when a handler activated any, else undefined. */
  activatedHeader(): string | undefined;
}

export function createCallScope(binding: Binding, protocolVersion: string, req: ScopeRequest): CallScope {
  return new Scope(binding, protocolVersion, req);
}

interface ScopeState {
  signal(): AbortSignal;
  activated(): Set<string>;
  requested(): readonly string[];
}

// A class, not an object of closures: one allocation per request on the hot
// path, with everything else made on first use.
class Scope implements CallScope, ScopeState {
  #controller: AbortController | undefined;
  #activated: Set<string> | undefined;
  #requested: readonly string[] | undefined;
  #principal: unknown;
  #authenticated: Promise<unknown> | undefined;

  constructor(
    readonly binding: Binding,
    readonly protocolVersion: string,
    readonly req: ScopeRequest,
  ) {}

  get headers(): Headers {
    return this.req.headers;
  }

  get requestedExtensions(): readonly string[] {
    return this.requested();
  }

  context(tenant: string | undefined): CallContext {
    return new ScopedContext(this.binding, this.protocolVersion, tenant, this.req, this, this.#principal);
  }

  authenticate(hook: () => unknown): Promise<unknown> {
    this.#authenticated ??= Promise.resolve()
      .then(hook)
      .then((p) => (this.#principal = p));
    return this.#authenticated;
  }

  abort(): void {
    // Its own controller, not the transport's: aborting the handler (a stream
    // that failed) must not read as "the client went away" to the writer.
    this.signal();
    this.#controller?.abort();
  }

  activatedHeader(): string | undefined {
    const activated = this.#activated;
    return activated === undefined || activated.size === 0 ? undefined : [...activated].join(", ");
  }

  signal(): AbortSignal {
    if (this.#controller === undefined) {
      const own = new AbortController();
      this.#controller = own;
      if (this.req.onClose !== undefined) {
        this.req.onClose(own);
      } else {
        const request = this.req.signal;
        if (request.aborted) own.abort();
        else request.addEventListener("abort", () => own.abort(), { once: true });
      }
    }
    return this.#controller.signal;
  }

  activated(): Set<string> {
    return (this.#activated ??= new Set());
  }

  requested(): readonly string[] {
    return (this.#requested ??= parseExtensions(this.req.header("a2a-extensions")));
  }
}

// Private fields (#) so a handler that spreads or logs its context sees only
// the CallContext members.
class ScopedContext implements CallContext {
  readonly #req: ScopeRequest;
  readonly #scope: ScopeState;

  constructor(
    readonly binding: Binding,
    readonly protocolVersion: string,
    readonly tenant: string | undefined,
    req: ScopeRequest,
    scope: ScopeState,
    readonly principal: unknown,
  ) {
    this.#req = req;
    this.#scope = scope;
  }

  get requestedExtensions(): readonly string[] {
    return this.#scope.requested();
  }

  get activatedExtensions(): Set<string> {
    return this.#scope.activated();
  }

  get headers(): Headers {
    return this.#req.headers;
  }

  get signal(): AbortSignal {
    return this.#scope.signal();
  }

}
