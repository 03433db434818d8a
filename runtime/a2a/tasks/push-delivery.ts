/**
 * Push-notification delivery (spec section 4.3.3): POSTs a task's stream
 * responses to the webhooks its push configs name. Delivery runs beside the
 * task, never in its way: `deliver` only queues, and each (task, url) has a
 * lane that sends one notification at a time, so a receiver sees a task's
 * updates in order and a slow or failing receiver holds back only its own
 * lane. Every connection goes through the SSRF guard (section 13.2).
 */
import { validateHeaderValue } from "node:http";
import { Agent, request } from "undici";
import { SlotMap } from "../../core/slots.js";
import { backgroundTracing, inBackground } from "../../core/background.js";
import { loadTracingApi, type TraceContext, type TracingApi } from "../../core/tracing.js";
import { PushGuardError, createPushGuard } from "./push-guard.js";
import { PushTracer, type PushSpan } from "./push-tracing.js";

/** Where one push config sends: taken from a TaskPushNotificationConfig. */
export interface PushTarget {
  /** The push config's id: `forget` stops what is still queued for it. */
  readonly configId?: string | undefined;
  readonly url: string;
  /** The config's token; sent as `X-A2A-Notification-Token` when not empty. */
  readonly token: string;
  /** The config's authentication: sent as `Authorization: <scheme> <credentials>` (or the scheme alone) when scheme is set. */
  readonly authentication?: { readonly scheme: string; readonly credentials: string } | undefined;
  /** The body's media type. Default `application/a2a+json`; 0.3's notifications are `application/json` (D112). */
  readonly contentType?: string | undefined;
}

export interface PushDeliveryOptions {
  /** Per attempt. Default 10_000 ms. */
  readonly timeoutMs?: number;
  /** Attempts per notification, the first included. Default 5. */
  readonly maxAttempts?: number;
  /** First retry delay; doubles each retry (with jitter up to 20 %), capped by maxBackoffMs. Default 500 ms. */
  readonly backoffMs?: number;
  /** Default 30_000 ms. */
  readonly maxBackoffMs?: number;
  /** Notifications waiting per (task, url) before the oldest is dropped (and reported). Default 1000. */
  readonly maxQueued?: number;
  /**
   * Notifications sent at once to one origin (scheme, host, port), over all tasks and urls: more
   * wait their turn (their timeout starts when they are sent), so many tasks pointed at one slow
   * or dead receiver do not open a socket each. Default 32.
   */
  readonly maxConnectionsPerOrigin?: number;
  /**
   * Destinations allowed although the SSRF guard would refuse them: each entry is a host name
   * (`localhost`), an IP address, or a CIDR (`127.0.0.0/8`, `::1/128`). The tests allow their
   * loopback receiver with it. Default none.
   */
  readonly allow?: readonly string[];
  /**
   * OpenTelemetry (D35): each attempt is a CLIENT span, child of the span active when the
   * notification was queued (the call whose task update it is), and its context goes out in the
   * POST's `traceparent`. Default `true`, as serveA2AService's: `@opentelemetry/api` is loaded if
   * it is installed (notifications queued before it has loaded go untraced); `false` turns it
   * off; the API module itself is used as given.
   */
  readonly tracing?: boolean | TracingApi | undefined;
  /** Every notification given up on, and every dropped one; default writes one line to console.error. */
  readonly onError?: (error: Error, info: { readonly taskId: string; readonly url: string }) => void;
}

export interface PushDelivery {
  /**
   * Queues `body` (the ProtoJSON text of one A2A StreamResponse) for each target, and returns at
   * once: delivery never blocks the caller. Per (taskId, target url) notifications are sent one
   * at a time in the order queued (a retry holds back the ones after it); different tasks and
   * urls are independent. `settled`, if given, is called per target once its notification was
   * delivered or given up on (not when close() drops it): a store's outbox forgets it then (D74).
   */
  deliver(taskId: string, targets: readonly PushTarget[], body: string, settled?: (target: PushTarget) => void): void;
  /**
   * Checks a push URL when a config is created: it must parse, be http: or https:, and its host,
   * after DNS resolution (every address it resolves to), must not be loopback, private (RFC 1918),
   * link-local, unique-local (fc00::/7), unspecified, CGNAT 100.64/10, multicast/broadcast, not
   * routed, or an IPv6 form of an IPv4 address that is (mapped, NAT64, 6to4), unless `allow` lets
   * it; and the target's token and authentication must be sendable as header values. Rejects with
   * an Error whose message names the URL or the field and what is wrong, but never what a name
   * resolved to (the caller turns it into InvalidParams; the detail is its `cause`).
   */
  check(url: string, target?: Omit<PushTarget, "url">): Promise<void>;
  /**
   * A push config was deleted (spec 3.1.10: nothing more is sent to it): what is queued for it is
   * dropped, and a notification of it being sent is not tried again. Optional for a delivery of
   * one's own, which then keeps sending what it had queued.
   */
  forget?(taskId: string, configId: string): void;
  /**
   * Resolves when nothing is queued or in flight (tests and graceful shutdown wait on it), and keeps
   * the process up meanwhile: against a receiver that is down that is every retry's backoff, so a
   * shutdown bounds its wait, then calls close().
   */
  idle(): Promise<void>;
  /** Stops: queued notifications are dropped, in-flight requests aborted, timers cleared. */
  close(): Promise<void>;
}

interface Notification {
  readonly target: PushTarget;
  readonly body: string;
  readonly settled: ((target: PushTarget) => void) | undefined;
  /** The context active when it was queued, its attempts' parent; only when tracing (D35). */
  readonly parent?: TraceContext | undefined;
  /** Its config was deleted: not tried again. */
  forgotten?: boolean;
}

/** One (task, url): what waits, and the attempt or backoff under way, so close() can stop it. */
interface Lane {
  readonly taskId: string;
  readonly url: string;
  readonly queue: Notification[];
  /** The notification being sent (or waiting out a backoff). */
  current: Notification | undefined;
  done: Promise<void>;
  attempt: AbortController | undefined;
  backoff: { readonly timer: NodeJS.Timeout; readonly wake: () => void } | undefined;
}

function positive(name: string, value: number | undefined, fallback: number, integer = false): number {
  if (value === undefined) return fallback;
  if (!(value > 0) || (integer && !Number.isInteger(value))) {
    throw new RangeError(`push delivery: ${name} must be a positive ${integer ? "integer" : "number"}, got ${value}`);
  }
  return value;
}

/** node's timers go no further: a longer delay (Infinity included) fires after 1 ms. */
const longestTimerMs = 2 ** 31 - 1;

/** A delay in ms (a timer's): positive, and at most what a timer can wait. */
function delay(name: string, value: number | undefined, fallback: number): number {
  const ms = positive(name, value, fallback);
  if (ms > longestTimerMs) throw new RangeError(`push delivery: ${name} must be at most ${longestTimerMs} ms (about 24.8 days, the longest a timer waits), got ${value}`);
  return ms;
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/** Whether `error` is, or was caused by, a guard refusal: the client may hand it back wrapped. */
function isRefusal(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e instanceof PushGuardError) return true;
  return false;
}

function headersOf(target: Omit<PushTarget, "url">): Record<string, string> {
  const headers: Record<string, string> = { "content-type": target.contentType ?? "application/a2a+json" };
  const auth = target.authentication;
  if (auth?.scheme) headers["authorization"] = auth.credentials ? `${auth.scheme} ${auth.credentials}` : auth.scheme;
  if (target.token) headers["x-a2a-notification-token"] = target.token;
  return headers;
}

/** An auth-scheme is an HTTP token (RFC 9110 section 11.1). */
const tokenPattern = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Throws, naming the field, when the target's token or authentication cannot be sent as a header. */
function checkHeaders(target: Omit<PushTarget, "url">): void {
  const scheme = target.authentication?.scheme;
  if (scheme && !tokenPattern.test(scheme)) throw new Error(`authentication.scheme "${scheme}" is not an HTTP auth scheme (a token: letters, digits, !#$%&'*+.^_\`|~-)`);
  for (const [field, name, value] of [
    ["token", "x-a2a-notification-token", target.token],
    ["authentication.credentials", "authorization", target.authentication?.credentials ?? ""],
  ] as const) {
    try {
      validateHeaderValue(name, value);
    } catch {
      throw new Error(`${field} cannot be sent in an HTTP header: it holds a character a header cannot carry (a line break, NUL, or one outside Latin-1)`);
    }
  }
}

/**
 * An answer that trying again will not change: a redirect (never followed) or a client error
 * other than timeout (408), too early (425) and too many requests (429).
 */
const isFinalStatus = (status: number): boolean => (status >= 300 && status < 400) || (status >= 400 && status < 500 && status !== 408 && status !== 425 && status !== 429);

/** An HTTP answer that is not 2xx. */
class StatusError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export function createPushDelivery(options: PushDeliveryOptions = {}): Required<PushDelivery> {
  const timeoutMs = delay("timeoutMs", options.timeoutMs, 10_000);
  const maxAttempts = positive("maxAttempts", options.maxAttempts, 5, true);
  const backoffMs = delay("backoffMs", options.backoffMs, 500);
  const maxBackoffMs = delay("maxBackoffMs", options.maxBackoffMs, 30_000);
  const maxQueued = positive("maxQueued", options.maxQueued, 1000, true);
  const connections = positive("maxConnectionsPerOrigin", options.maxConnectionsPerOrigin, 32, true);
  const onError =
    options.onError ??
    ((error: Error, info: { readonly taskId: string; readonly url: string }) =>
      console.error(`a2a push (task ${info.taskId}, ${info.url}): ${error.message}`));

  let tracer: PushTracer | undefined;
  if (options.tracing === true || options.tracing === undefined) {
    void loadTracingApi().then((api) => {
      if (api !== undefined) tracer ??= new PushTracer(api);
    });
  } else if (options.tracing !== false) {
    tracer = new PushTracer(options.tracing);
    backgroundTracing(options.tracing);
  }
  const guard = createPushGuard(options.allow);
  // The guard's lookup runs inside every connect, on the address connected
  // to. Redirects are never followed: undici's request only follows them
  // with a redirect interceptor, and this agent has none.
  const agent = new Agent({ connect: { lookup: guard.lookup } });
  /** Notifications being sent per origin, and the attempts waiting for one of them to end. */
  const origins = new Map<string, { active: number; readonly waiting: (() => void)[] }>();

  /** Takes one of the origin's `connections`; a promise when the attempt must wait for one. */
  function acquire(origin: string): Promise<void> | undefined {
    let slot = origins.get(origin);
    if (slot === undefined) origins.set(origin, (slot = { active: 0, waiting: [] }));
    if (slot.active < connections) {
      slot.active++;
      return undefined;
    }
    const queue = slot.waiting;
    return new Promise((resolve) => queue.push(resolve));
  }

  /** Hands the origin's slot to the next attempt waiting for one, or frees it. */
  function releaseSlot(origin: string): void {
    const slot = origins.get(origin);
    if (slot === undefined) return;
    const next = slot.waiting.shift();
    if (next !== undefined) next();
    else if (--slot.active === 0) origins.delete(origin);
  }
  // Slots, not a Map: a task's lane comes and goes with its notifications (D116).
  const lanes = new SlotMap<Lane>();
  let idleWaiters: (() => void)[] = [];
  // While someone waits for idle(), a ref'd timer keeps the process up: the lanes' own timers
  // (backoffs, timeouts) are unref'd, and a drain at shutdown must not end with the process.
  let keepAlive: NodeJS.Timeout | undefined;
  // Set before close() does anything, so every lane that wakes from it sees it.
  let closed = false;
  let closing: Promise<void> | undefined;

  function report(error: Error, lane: Lane): void {
    try {
      onError(error, { taskId: lane.taskId, url: lane.url });
    } catch {
      // A throwing callback must not end the lane it was called from.
    }
  }

  async function attempt(lane: Lane, notification: Notification, resends: number): Promise<void> {
    const { target } = notification;
    const url = guard.screen(target.url);
    const waiting = acquire(url.origin);
    if (waiting !== undefined) await waiting;
    try {
      // Closed, or its config deleted, while it waited: not sent.
      if (closed || notification.forgotten) throw new Error(`push notification to ${target.url} not sent: ${closed ? "delivery closed" : "its config was deleted"}`);
      await post(lane, url, notification, resends);
    } finally {
      releaseSlot(url.origin);
    }
  }

  /** One POST, within the timeout; its own span when tracing (OTel: each resend is a span). */
  async function post(lane: Lane, url: URL, notification: Notification, resends: number): Promise<void> {
    const { target, body } = notification;
    const headers = headersOf(target);
    // Only a notification queued with a tracer has its parent: one queued before the API loaded goes untraced.
    const span: PushSpan | undefined = notification.parent === undefined ? undefined : tracer?.start(notification.parent, url, resends, headers);
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    timer.unref();
    lane.attempt = controller;
    try {
      const response = await request(url, {
        dispatcher: agent,
        method: "POST",
        headers,
        body,
        signal: controller.signal,
      });
      span?.answered(response.statusCode);
      // The status alone decides; the body is read only to free the socket
      // for the next notification, so a failure reading it changes nothing.
      await response.body.dump().catch(() => undefined);
      if (response.statusCode < 200 || response.statusCode > 299) {
        throw new StatusError(`${target.url} answered HTTP ${response.statusCode}`, response.statusCode);
      }
    } catch (error) {
      if (span !== undefined && !(error instanceof StatusError)) span.failed(error, timedOut);
      if (timedOut) throw new Error(`${target.url} did not answer within ${timeoutMs} ms`, { cause: error });
      throw error;
    } finally {
      clearTimeout(timer);
      lane.attempt = undefined;
      span?.end();
    }
  }

  function pause(lane: Lane, retry: number): Promise<void> {
    const delay = Math.min(maxBackoffMs, backoffMs * 2 ** (retry - 1) * (1 + Math.random() * 0.2));
    return new Promise<void>((wake) => {
      const timer = setTimeout(wake, delay);
      timer.unref();
      lane.backoff = { timer, wake };
    }).finally(() => {
      lane.backoff = undefined;
    });
  }

  async function send(lane: Lane, notification: Notification): Promise<void> {
    const settled = () => settle(notification, lane);
    for (let tries = 1; ; tries++) {
      let failure: Error;
      try {
        await attempt(lane, notification, tries - 1);
        settled();
        return;
      } catch (error) {
        failure = toError(error);
      }
      if (closed) return;
      if (notification.forgotten) {
        settled();
        return;
      }
      if (tries >= maxAttempts || isRefusal(failure) || (failure instanceof StatusError && isFinalStatus(failure.status))) {
        const times = tries === 1 ? "1 attempt" : `${tries} attempts`;
        report(new Error(`push notification to ${lane.url} given up after ${times}: ${failure.message}`, { cause: failure }), lane);
        settled();
        return;
      }
      await pause(lane, tries);
      if (closed) return;
      if (notification.forgotten) {
        settled();
        return;
      }
    }
  }

  async function run(key: string, lane: Lane): Promise<void> {
    for (let next = lane.queue.shift(); next && !closed; next = lane.queue.shift()) {
      lane.current = next;
      await send(lane, next);
      lane.current = undefined;
    }
    // No await between the empty queue and this, so a deliver() cannot slip
    // a notification into a lane that is going away.
    lanes.delete(key);
    if (lanes.size === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      clearInterval(keepAlive);
      keepAlive = undefined;
      for (const wake of waiters) wake();
    }
  }

  function deliver(taskId: string, targets: readonly PushTarget[], body: string, settled?: (target: PushTarget) => void): void {
    // A task finishing during shutdown may still publish; that is no error.
    if (closed) return;
    for (const target of targets) {
      const key = JSON.stringify([taskId, target.url]);
      let lane = lanes.get(key);
      if (!lane) {
        const created: Lane = { taskId, url: target.url, queue: [], current: undefined, done: Promise.resolve(), attempt: undefined, backoff: undefined };
        // Started on a microtask, so not even the connect happens inside deliver(). In the
        // background context, not the caller's: a lane (its promises, its timers, the sockets it
        // opens and the pool keeps) would hold the context of the call that happened to start it,
        // an OpenTelemetry span with it, for as long as it runs (D35). Not the context the
        // delivery was made in either, which its own AsyncResource held for the delivery's life.
        created.done = inBackground(() => Promise.resolve().then(() => run(key, created)));
        lanes.set(key, created);
        lane = created;
      }
      if (lane.queue.length >= maxQueued) {
        const dropped = lane.queue.shift()!;
        settle(dropped, lane);
        report(new Error(`push notification to ${target.url} dropped: more than ${maxQueued} waiting for task ${taskId}`), lane);
      }
      lane.queue.push(tracer === undefined ? { target, body, settled } : { target, body, settled, parent: tracer.parent() });
    }
  }

  /** Calls the notification's `settled`; one that throws is reported, and the lane goes on. */
  function settle(notification: Notification, lane: Lane): void {
    try {
      notification.settled?.(notification.target);
    } catch (error) {
      report(toError(error), lane);
    }
  }

  function forget(taskId: string, configId: string): void {
    for (const lane of lanes.values()) {
      if (lane.taskId !== taskId) continue;
      const current = lane.current;
      if (current?.target.configId === configId && !current.forgotten) {
        current.forgotten = true;
        // Its attempt is not aborted: a POST already sent is not taken back by dropping the socket.
        if (lane.backoff) {
          clearTimeout(lane.backoff.timer);
          lane.backoff.wake();
        }
      }
      for (let i = lane.queue.length - 1; i >= 0; i--) {
        const queued = lane.queue[i]!;
        if (queued.target.configId !== configId) continue;
        lane.queue.splice(i, 1);
        settle(queued, lane);
      }
    }
  }

  function idle(): Promise<void> {
    if (lanes.size === 0) return Promise.resolve();
    // In the background context (D35): made in the caller's, it held that context while it waited.
    keepAlive ??= inBackground(() => setInterval(() => undefined, 60_000));
    return new Promise((wake) => idleWaiters.push(wake));
  }

  function close(): Promise<void> {
    closed = true;
    closing ??= (async () => {
      // Attempts waiting for a slot go on to see that delivery closed.
      for (const slot of origins.values()) {
        const woken = slot.waiting.splice(0);
        slot.active += woken.length;
        for (const wake of woken) wake();
      }
      const running = [...lanes.values()];
      for (const lane of running) {
        lane.queue.length = 0;
        lane.attempt?.abort();
        if (lane.backoff) {
          clearTimeout(lane.backoff.timer);
          lane.backoff.wake();
        }
      }
      await Promise.all(running.map((lane) => lane.done));
      clearInterval(keepAlive);
      keepAlive = undefined;
      await agent.destroy();
    })();
    return closing;
  }

  async function check(url: string, target?: Omit<PushTarget, "url">): Promise<void> {
    if (target !== undefined) checkHeaders(target);
    await guard.check(url);
  }

  return { deliver, check, forget, idle, close };
}
