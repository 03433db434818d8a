/**
 * Runs a binding core as a node:http request listener: reads the body under
 * its limit, writes plain and SSE responses, waits for `drain` between
 * events, sends heartbeats, and turns a client disconnect into an abort.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { BodyRefusedError, BodyTimeoutError, BodyTooLargeError, checkBodyHeaders, sseHeartbeat, type CoreRequest, type Endpoint, type EventSource } from "../core/transport.js";
import { clientLeft, signalOnClose, type Abortable } from "../core/call-scope.js";
import { failUnanswered } from "./answer-failure.js";
import { endAnswer, serverClosing } from "./closing.js";
import { endTogether } from "./end-together.js";
import { SlotSet } from "../core/slots.js";
import { unwatchBody, watchBody } from "./body-watch.js";
import { inBackground } from "../core/background.js";
import type { ServerEndpoint } from "../core/tracing.js";

export { answerFailure, failUnanswered } from "./answer-failure.js";

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** The node:http request listener of a binding core; its unary answers are written at the end of the turn they finish in (D115). */
export function createNodeListener(core: Endpoint): NodeListener {
  return (req, res) => {
    serve(core, req, res, undefined, true).catch((err: unknown) => failUnanswered(core, err, req, res));
  };
}

/**
 * Responses whose request said `Expect: 100-continue` and got no `100 Continue` yet: node handed
 * them to 'checkContinue' (`continueOnRead`). The 100 goes out when the body is read, after its
 * declared length passed the limit, so a body the answer refuses (413) or never reads (404) is
 * not asked for; node closes such a connection after the answer (D32).
 */
const owesContinue = new WeakSet<ServerResponse>();

/**
 * `listener` for node's 'checkContinue' event: `server.on("checkContinue", continueOnRead(listener))`.
 * Without it node sends `100 Continue` to every such request before anything looks at it, and
 * the client sends a body the server then refuses (D32).
 */
export function continueOnRead(listener: NodeListener): NodeListener {
  return (req, res) => {
    owesContinue.add(res);
    listener(req, res);
  };
}

/**
 * What a framework adapter changes about how a node:http request is served;
 * everything else (SSE, drain, heartbeats, disconnect -> abort, 413) stays
 * the node adapter's.
 */
export interface NodeServeOptions {
  /** Path and query the core sees instead of `req.url` (express: `req.originalUrl`). */
  readonly url?: string;
  /** Reads the body instead of the request stream, for a body a framework already read. */
  readonly body?: (limit: number) => Promise<Uint8Array>;
}

/**
 * Serves one request with a binding core. Settles once the response is
 * written or, for a stream, started (a stream ends on its own, its failures
 * end the response). Rejects only on a failure the core did not answer (a
 * socket error while reading, say); `createNodeListener` then answers with
 * `answerFailure`, a framework adapter may hand it on.
 */
export function serveNodeRequest(core: Endpoint, req: IncomingMessage, res: ServerResponse, options?: NodeServeOptions): Promise<void> {
  return serve(core, req, res, options, false);
}

/**
 * A request target in absolute form (`POST http://host/a2a/jsonrpc`, which RFC 9112 3.2.2 says a
 * server must accept) as the path and query the cores route by, byte for byte as sent (no URL
 * parsing: it would resolve dot segments and backslashes the origin form keeps, D8); any other form
 * as it is.
 */
function originForm(target: string): string {
  if (target.charCodeAt(0) === 47 /* "/" */) return target;
  const scheme = /^https?:\/\//i.exec(target);
  if (scheme === null) return target;
  const rest = target.slice(scheme[0].length);
  const at = rest.search(/[/?]/);
  if (at < 0) return "/";
  return rest[at] === "?" ? `/${rest.slice(at)}` : rest.slice(at);
}

/** Per connection, what waits for its close while its response waits its turn (see whileQueued). */
const queuedOn = new WeakMap<Socket, Set<() => void>>();

/**
 * Calls `gone` if the client leaves while `res` waits behind an earlier answer on its connection
 * (pipelining): node emits no 'close' on a response that has no socket yet, so a stream queued so
 * was never let go (its heartbeat and drain watch kept its request for good). One 'close' listener
 * per connection, however deep its pipeline; a connection already gone calls `gone` at once.
 */
function whileQueued(res: ServerResponse, gone: () => void): void {
  if (res.socket !== null) return;
  const socket = res.req.socket;
  if (socket.destroyed) {
    gone();
    return;
  }
  let waiting = queuedOn.get(socket);
  if (waiting === undefined) {
    const all = new Set<() => void>();
    waiting = all;
    queuedOn.set(socket, all);
    socket.once("close", () => {
      queuedOn.delete(socket);
      for (const call of all) call();
    });
  }
  waiting.add(gone);
  const own = waiting;
  res.once("socket", () => own.delete(gone));
}

/**
 * The CoreRequest of a node:http request. Headers and the abort signal are
 * made on first use: most unary calls read neither, and each costs an
 * allocation or a listener per request.
 */
class NodeCoreRequest implements CoreRequest {
  readonly method: string;
  readonly url: string;
  #headers: Headers | undefined;
  #signal: AbortSignal | undefined;
  /** Until the response is out (`release`): a task may run long after, and must not keep them. */
  #req: IncomingMessage | undefined;
  #res: ServerResponse | undefined;
  /** A framework's reader of a body it already parsed (express), which holds its request too: dropped with it. */
  #read: ((limit: number) => Promise<Uint8Array>) | undefined;
  /** What is kept of the request for a context read after that: its headers, as node parsed them. */
  readonly #parsed: IncomingHttpHeaders;
  readonly #raw: readonly string[];

  constructor(req: IncomingMessage, res: ServerResponse, options: NodeServeOptions | undefined) {
    this.#req = req;
    this.#res = res;
    this.#read = options?.body;
    this.#parsed = req.headers;
    this.#raw = req.rawHeaders;
    this.method = req.method ?? "GET";
    this.url = originForm(options?.url ?? req.url ?? "/");
  }

  get headers(): Headers {
    return (this.#headers ??= toHeaders(this.#raw));
  }

  header(name: string): string | null {
    const value = this.#parsed[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  }

  get signal(): AbortSignal {
    return (this.#signal ??= signalOnClose(this));
  }

  authority(): string | undefined {
    const value = this.#parsed[":authority"];
    return typeof value === "string" ? value : undefined;
  }

  /** Read when a span starts (D35), while the request is held. */
  local(): ServerEndpoint | undefined {
    const socket = this.#req?.socket as (Socket & { encrypted?: boolean }) | undefined;
    if (socket === undefined) return undefined;
    return { address: socket.localAddress, port: socket.localPort, secure: socket.encrypted === true };
  }

  /**
   * The response is out (D114): this object lets go of node's request and response. A task the call
   * started, which may run for hours, holds its context, and through it this object; it held
   * them and their socket's state too (about 3 KB a task). The call is over, so a signal asked
   * for from now on never aborts, as one made before did not once the response was sent.
   */
  release(): void {
    this.#req = undefined;
    this.#res = undefined;
    this.#read = undefined;
  }

  onClose(target: Abortable): void {
    const res = this.#res;
    if (res === undefined) return;
    if (res.closed) {
      if (!res.writableFinished) target.abort(clientLeft());
    } else {
      const left = () => {
        if (!res.writableFinished) target.abort(clientLeft());
      };
      // on, not once: close fires once, and once() wraps every listener in two more objects.
      res.on("close", left);
      whileQueued(res, left);
    }
  }

  left(): boolean {
    const res = this.#res;
    if (res === undefined) return false;
    // A response queued behind an earlier one on its connection (pipelining) has no socket and gets no close: its connection's tells.
    return (res.closed && !res.writableFinished) || (res.socket === null && res.req.socket.destroyed);
  }

  /** The body limit of a read that was refused (too large, too slow): what is left of the body is drained up to a bound. */
  refusedAt: number | undefined;

  body(limit: number, timeoutMs: number): Promise<Uint8Array> {
    if (this.#req === undefined) return Promise.reject(new Error("the body of a request that was answered cannot be read"));
    if (this.#read !== undefined) return this.#read(limit);
    return readBody(this.#req, this.#res, limit, timeoutMs, this);
  }
}

/**
 * `together`: the answer is written at the end of the turn with the others
 * finished in it (D115). Only the plain listener does: a framework adapter's
 * caller may go on with the response once the returned promise settles.
 */
async function serve(core: Endpoint, req: IncomingMessage, res: ServerResponse, options: NodeServeOptions | undefined, together: boolean): Promise<void> {
  const request = new NodeCoreRequest(req, res, options);
  const response = await core.handle(request);
  if (response.kind === "stream") {
    // Not awaited: neither this frame nor the caller's promise lives as long as the stream, which releases the request at its end.
    new SseWriter(res, response.events, request).start(response.headers);
    return;
  }
  try {
    const closing = serverClosing(req);
    // A body the answer never read (a 404, 405 or 415 before it) is drained up to the same bound as a
    // refused one: node's own dump read all of it, gigabytes from a client that kept sending.
    if (request.refusedAt === undefined && !req.complete && req.readableFlowing === null) drainRefused(req, 0);
    if (response.kind === "empty") {
      res.writeHead(response.status, closing ? { ...response.headers, connection: "close" } : response.headers);
      if (together) endTogether(res, undefined, core);
      else res.end();
      return;
    }
    if (request.refusedAt !== undefined) drainRefused(req, request.refusedAt);
    const raw = rawHeaders(response.headers, Buffer.byteLength(response.body));
    if (closing) raw.push("connection", "close");
    res.writeHead(response.status, raw);
    if (together) endTogether(res, response.body, core);
    else res.end(response.body);
  } finally {
    request.release();
  }
}

// One timer per heartbeat period for all open streams, not one per stream: an
// idle stream then costs only its slot (the idle-stream memory target). Slots,
// not a Set: streams come and go with calls (D116).
const heartbeats = new Map<number, { readonly timer: ReturnType<typeof setInterval>; readonly streams: SlotSet<ServerResponse> }>();

/** Writes a heartbeat comment to `res` every `ms` until `removeHeartbeat`; returns its slot. */
function addHeartbeat(ms: number, res: ServerResponse): number {
  let group = heartbeats.get(ms);
  if (group === undefined) {
    const streams = new SlotSet<ServerResponse>();
    // A stream whose client is not reading gets none: its write buffer would only grow.
    group = {
      streams,
      // In the background context (D35): made by the first stream, it held that call's context
      // (its span, a logger's request store) as long as any stream was open.
      timer: inBackground(() =>
        setInterval(() => {
          for (const r of streams) r.writableNeedDrain || r.write(sseHeartbeat);
        }, ms),
      ),
    };
    heartbeats.set(ms, group);
  }
  return group.streams.add(res);
}

/** Stops `res`'s heartbeat (at `slot`); safe to call more than once. */
function removeHeartbeat(ms: number, slot: number, res: ServerResponse): void {
  const group = heartbeats.get(ms);
  if (group === undefined || !group.streams.delete(slot, res) || group.streams.size > 0) return;
  clearInterval(group.timer);
  heartbeats.delete(ms);
}

/**
 * Writes an event source to `res`, one pull at a time, waiting for `drain`
 * before the next. Callbacks on one object rather than an async loop: an
 * idle stream holds this object and the source's pending pull, with no
 * suspended frame or chain of promises of ours (the idle-stream memory
 * target). Nothing waits for the stream to end: `serve` returns once it
 * started.
 */
class SseWriter {
  readonly #res: ServerResponse;
  readonly #events: EventSource;
  /** The client went away, or the stream ended: nothing more is written. */
  #closed = false;
  /** While a write waits for the client to take it: when it gives up on the client. */
  #stalled: ReturnType<typeof setInterval> | undefined;
  /** A pull of the source is under way. */
  #pulling = false;
  /** The last write was not taken at once: nothing more is pulled until the response drains. */
  #blocked = false;
  /**
   * Events of this turn not written yet: events ready together (a fast producer, a backlog) go out
   * in one write, on the next tick, not a write and a syscall each. Joined here rather than with
   * the socket corked: Node 22 loses a corked answer's 'drain' (a stream that was once behind
   * never went on) and what is corked when end() comes in the same turn (D44).
   */
  #batch: string | undefined;
  #flushQueued = false;
  readonly #onEvent = (data: string | undefined): void => {
    this.#pulling = false;
    this.#write(data);
  };
  readonly #onFailure = (): void => {
    this.#pulling = false;
    this.#end();
  };
  // The response's own close event, not an AbortSignal: an idle stream holds
  // no controller of its own.
  readonly #onClose = (): void => this.#clientLeft();

  readonly #request: NodeCoreRequest;
  /** Its slot among the streams its heartbeat timer writes to. */
  #heartbeat = -1;

  constructor(res: ServerResponse, events: EventSource, request: NodeCoreRequest) {
    this.#res = res;
    this.#events = events;
    this.#request = request;
  }

  start(headers: Readonly<Record<string, string>>): void {
    const res = this.#res;
    const events = this.#events;
    if (events.heartbeatMs > 0) this.#heartbeat = addHeartbeat(events.heartbeatMs, res);
    res.on("close", this.#onClose);
    whileQueued(res, this.#onClose);
    try {
      res.writeHead(200, headers);
      res.flushHeaders();
    } catch (err) {
      // Headers node refuses (an activated extension whose name a header cannot hold): the stream
      // never opens. Its source is let go as on a disconnect, and the failure is answered as any.
      if (events.heartbeatMs > 0) removeHeartbeat(events.heartbeatMs, this.#heartbeat, res);
      res.off("close", this.#onClose);
      this.#closed = true;
      events.cancel();
      this.#request.release();
      throw err;
    }
    // Gone before the first event was written: release the handler as a later disconnect would.
    if (res.closed && !res.writableFinished) this.#clientLeft();
    else if (!this.#closed) this.#pull();
  }

  // Failures of a source or a write end the response, as answerFailure would;
  // they must not escape a promise callback, where no one would catch them.
  #pull(): void {
    if (this.#pulling || this.#blocked || this.#closed) return;
    this.#pulling = true;
    let pending: Promise<string | undefined>;
    try {
      pending = this.#events.next();
    } catch {
      this.#pulling = false;
      this.#end();
      return;
    }
    pending.then(this.#onEvent, this.#onFailure);
  }

  #write(data: string | undefined): void {
    if (this.#closed) return;
    if (data === undefined) {
      this.#end();
      return;
    }
    this.#batch = this.#batch === undefined ? data : this.#batch + data;
    // Waiting for the client: the drain sends it.
    if (this.#blocked) return;
    if (this.#batch.length >= batchChars) this.#send();
    else if (!this.#flushQueued) {
      this.#flushQueued = true;
      process.nextTick(flushWriter, this);
    }
    // Paced by the client: nothing more is pulled while a write waits for it (#send blocked).
    this.#pull();
  }

  /** The turn's events, written on the tick after them. */
  flush(): void {
    this.#flushQueued = false;
    if (!this.#blocked && !this.#closed) this.#send();
  }

  /** Writes what is gathered; a write the response could not take at once blocks pulling until it drains. */
  #send(): void {
    const batch = this.#batch;
    if (batch === undefined) return;
    this.#batch = undefined;
    let flushed: boolean;
    try {
      flushed = this.#res.write(batch);
    } catch {
      this.#end();
      return;
    }
    if (!flushed) {
      this.#blocked = true;
      this.#awaitDrain();
    }
  }

  /** The response drained: what gathered meanwhile goes out, and pulling goes on unless that blocks again. */
  #drained(): void {
    this.#blocked = false;
    if (this.#closed) return;
    this.#send();
    this.#pull();
  }

  /**
   * Waits for the client to take what was written. One that takes nothing at all for four
   * heartbeat periods (a minute by default, or without heartbeats) while the server has events
   * for it is gone or never will read: its socket is destroyed, and the stream released as on a
   * disconnect. The task runtime cut its stream long before (D24); the transport has to let go
   * too, or the connection stays for good. Progress is what user space can see of it (buffered
   * writes going out, libuv's queue going down); the kernel takes more from that queue only once
   * a good part of its own buffer is free, so a client that reads a large event very slowly (tens
   * of KB/s) can show none for a while: with a short heartbeat it may be cut, with the default one
   * it has a minute.
   */
  #awaitDrain(): void {
    const res = this.#res;
    if (res.socket === null) {
      // Queued behind an earlier answer on its connection (pipelining): nothing of it goes out
      // before its turn, so no stall can be told yet; the watch starts when the socket is its.
      res.once("socket", () => {
        if (this.#closed) return;
        if (res.writableNeedDrain) this.#awaitDrain();
        else this.#drained();
      });
      return;
    }
    const heartbeat = this.#events.heartbeatMs;
    const period = heartbeat > 0 ? heartbeat : 15_000;
    let buffered = res.writableLength;
    let queued = queuedInKernelWrite(res);
    let still = 0;
    this.#stalled = setInterval(() => {
      const nowBuffered = res.writableLength;
      const nowQueued = queuedInKernelWrite(res);
      still = nowBuffered < buffered || nowQueued < queued ? 0 : still + 1;
      buffered = nowBuffered;
      queued = nowQueued;
      if (still >= 4) res.destroy();
    }, period);
    this.#stalled.unref();
    res.once("drain", () => {
      clearInterval(this.#stalled);
      this.#stalled = undefined;
      this.#drained();
    });
  }

  /** The stream is over (or its source failed): what is gathered goes out, and the response ends. */
  #end(): void {
    if (this.#closed) return;
    const events = this.#events;
    if (events.heartbeatMs > 0) removeHeartbeat(events.heartbeatMs, this.#heartbeat, this.#res);
    const batch = this.#batch;
    this.#batch = undefined;
    this.#closed = true;
    // A write still waits for the client: its watch stays, to let go of one that never reads the
    // end (its drain or close clears it); nothing else would, as no 'finish' comes (D24).
    if (!this.#blocked) clearInterval(this.#stalled);
    try {
      if (batch !== undefined) this.#res.write(batch);
    } catch {
      // Ended below as any failed write ends it.
    }
    endAnswer(this.#res);
    this.#request.release();
  }

  #clientLeft(): void {
    clearInterval(this.#stalled);
    if (this.#res.writableFinished || this.#closed) return;
    this.#closed = true;
    this.#batch = undefined;
    // Now, not when the pending pull settles: a handler that ignores its
    // signal would otherwise keep the heartbeat writing forever.
    const events = this.#events;
    if (events.heartbeatMs > 0) removeHeartbeat(events.heartbeatMs, this.#heartbeat, this.#res);
    events.cancel();
    this.#request.release();
  }
}

/**
 * Bytes of the write under way that the kernel has not taken yet. A write that waits counts whole
 * in `writableLength` until its last byte left (buffered writes go out as one), so a client that
 * reads a large event slowly shows its progress only here: in libuv's write queue, which Node's
 * own streams read the same way. Infinity where a socket has none (progress is then what
 * `writableLength` shows).
 */
function queuedInKernelWrite(res: ServerResponse): number {
  const handle = (res.socket as { _handle?: { writeQueueSize?: unknown } } | null)?._handle;
  return typeof handle?.writeQueueSize === "number" ? handle.writeQueueSize : Number.POSITIVE_INFINITY;
}

/** Past this many characters gathered in one turn, an SSE stream writes at once. */
const batchChars = 64 * 1024;

function flushWriter(writer: SseWriter): void {
  writer.flush();
}

/** Headers as writeHead's flat [name, value, ...] list, which it takes without copying into an object. */
function rawHeaders(headers: Readonly<Record<string, string>>, contentLength: number): (string | number)[] {
  const raw: (string | number)[] = [];
  for (const name in headers) raw.push(name, headers[name] as string);
  raw.push("content-length", contentLength);
  return raw;
}

function toHeaders(raw: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}

/**
 * After a refused body (413, 408) the client may still be sending it, and
 * reads the answer only once it has sent everything: closing the socket with
 * its bytes unread makes the kernel answer with a reset, which throws away
 * the answer too (issue 17: 3 of 5 clients never saw their 413). So the rest
 * is read and dropped, up to 16 MiB or four times the body limit, and the
 * connection stays usable; a client that sends more than that is cut (D32).
 * The server's requestTimeout bounds how long this may take.
 */
function drainRefused(req: IncomingMessage, limit: number): void {
  if (req.complete) return;
  const bound = Math.max(16 << 20, 4 * limit);
  let seen = 0;
  req.on("data", (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > bound) req.socket.destroy();
  });
  req.resume();
}

/** Reads `req`'s body; a refusal is noted on `refused` (its limit), so the rest is drained once answered. */
function readBody(req: IncomingMessage, res: ServerResponse | undefined, limit: number, timeoutMs: number, refused: { refusedAt: number | undefined }): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    try {
      checkBodyHeaders(req.headers["content-length"], req.headers["content-encoding"], req.headers["transfer-encoding"], limit);
    } catch (err) {
      refused.refusedAt = limit;
      throw err;
    }
    // The client waits for this before it sends the body.
    if (res !== undefined && owesContinue.delete(res)) res.writeContinue();
    const chunks: Buffer[] = [];
    let size = 0;
    // Called with no error by the body watch: the body took too long.
    const refuse = (err: BodyRefusedError = new BodyTimeoutError(timeoutMs)) => {
      refused.refusedAt = limit;
      cleanup();
      req.pause();
      reject(err);
    };
    const pending = watchBody(timeoutMs, refuse);
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        refuse(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      unwatchBody(timeoutMs, pending);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}
