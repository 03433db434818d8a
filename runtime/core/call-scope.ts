/**
 * The scope of one transport request (a JSON-RPC batch is one request with
 * several calls). Everything a handler may or may not look at (headers, the
 * abort signal) is made on first use, because a unary call that reads none
 * of it should not pay for an AbortController, a listener and a Headers
 * copy per request. A profile extends the class with what it reads once per
 * request (the A2A one: protocol version and extensions).
 */
import type { Binding, CallContext } from "./call-context.js";

/**
 * What a transport aborts when the client goes away: an AbortController, or a stream's writer.
 * Transports pass `clientLeft()` as the reason.
 */
export interface Abortable {
  abort(reason?: unknown): void;
}

/**
 * Why a call's signal aborts: the client went away (or, `failed`, the call failed on the server's
 * side), its stack already written out (D114). V8 keeps an error's frames, their receivers
 * included, until its stack is first read: AbortController's own reason, made in the transport's
 * close listener, kept node's response and request (or grpc-js's call) for as long as anything
 * held the signal, a task that runs on for one.
 */
export function clientLeft(failed = false): DOMException {
  const reason = new DOMException(failed ? "The call failed" : "The client went away", "AbortError");
  void reason.stack;
  return reason;
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
  /**
   * Whether the client has gone (closed, cancelled, past its deadline), read without making the
   * signal: offered by transports that can tell it cheaply.
   */
  left?(): boolean;
}

const isThenable = (value: unknown): boolean => typeof (value as { then?: unknown } | null)?.then === "function";

// A class, not an object of closures: one allocation per request on the hot
// path, with everything else made on first use.
export class CallScope {
  #controller: AbortController | undefined;
  #failed = false;
  #principal: unknown;
  /** The hook's answer for the request's first method, and per RPC name for the others of a batch. */
  #firstMethod: string | undefined;
  #first: Promise<unknown> | undefined;
  #others: Map<string, Promise<unknown>> | undefined;
  #hookWaited = false;

  constructor(
    readonly binding: Binding,
    readonly request: ScopeRequest,
  ) {}

  /** The request's headers or metadata, as an authentication hook sees them. */
  get headers(): Headers {
    return this.request.headers;
  }

  /** The principal the authentication hook returned; undefined before it ran or for an anonymous caller. */
  get principal(): unknown {
    return this.#principal;
  }

  /**
   * Runs the authentication hook once per RPC name of the request, so a hook that allows or refuses
   * by method sees every method of a batch: it ran once for the whole batch, and a call it
   * refuses alone went through behind one it allowed (D18). Settles with the principal; `admitAs`
   * keeps it for the contexts made afterwards.
   */
  authenticate(method: string, hook: () => unknown): Promise<unknown> {
    if (this.#first === undefined) {
      this.#firstMethod = method;
      return (this.#first = this.#ask(hook));
    }
    if (method === this.#firstMethod) return this.#first;
    const others = (this.#others ??= new Map());
    let answer = others.get(method);
    if (answer === undefined) {
      answer = this.#ask(hook);
      others.set(method, answer);
    }
    return answer;
  }

  #ask(hook: () => unknown): Promise<unknown> {
    return Promise.resolve().then(() => {
      const principal = hook();
      if (isThenable(principal)) this.#hookWaited = true;
      return principal;
    });
  }

  /**
   * The principal the calls made from now on see (null, a lookup that found nobody, is anonymous
   * as undefined is: D18). Set with the call's own hook answer just before the call is admitted.
   */
  admitAs(principal: unknown): void {
    this.#principal = principal ?? undefined;
  }

  /**
   * Whether the client left while an asynchronous authentication hook ran: nothing is run for it
   * then. Read off the transport where it can tell cheaply (no signal made for every call).
   */
  get leftWhileAuthenticating(): boolean {
    if (!this.#hookWaited) return false;
    if (this.#controller !== undefined) return this.aborted;
    return this.request.left?.() ?? this.signal().aborted;
  }

  /**
   * Aborts the signal every context of this request sees: a stream the
   * client left, or (`failed`) one that failed on the server's side, whose
   * failure is still to be answered and reported.
   */
  abort(failed = false): void {
    // Its own controller, not the transport's: aborting the handler (a stream
    // that failed) must not read as "the client went away" to the writer.
    // Made first, so a client that left already is seen as such.
    this.signal();
    if (failed && !this.aborted) this.#failed = true;
    if (this.#controller?.signal.aborted === false) this.#controller.abort(clientLeft(failed));
  }

  /** Whether the client left or the call was cut: the request's signal fired, and not because the call failed first. */
  get aborted(): boolean {
    return !this.#failed && this.#controller?.signal.aborted === true;
  }

  /** The signal of every context of this request, made on first use. */
  signal(): AbortSignal {
    if (this.#controller === undefined) {
      const own = new AbortController();
      this.#controller = own;
      if (this.request.onClose !== undefined) {
        this.request.onClose(own);
      } else {
        const request = this.request.signal;
        if (request.aborted) own.abort(clientLeft());
        else request.addEventListener("abort", () => own.abort(clientLeft()), { once: true });
      }
    }
    return this.#controller.signal;
  }
}

/**
 * The context of a call with no profile: the scope's binding, headers,
 * signal and principal. Private fields (#) so a handler that spreads or logs
 * its context sees only the CallContext members.
 */
export class ScopedContext implements CallContext {
  readonly #scope: CallScope;
  readonly binding: Binding;
  readonly principal: unknown;

  constructor(scope: CallScope) {
    this.#scope = scope;
    this.binding = scope.binding;
    this.principal = scope.principal;
  }

  get headers(): Headers {
    return this.#scope.headers;
  }

  get signal(): AbortSignal {
    return this.#scope.signal();
  }
}
