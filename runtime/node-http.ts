/**
 * Runs a binding core as a node:http request listener: reads the body under
 * its limit, writes plain and SSE responses, waits for `drain` between
 * events, sends heartbeats, and turns a client disconnect into an abort.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyTooLargeError, checkDeclaredLength, sseHeartbeat, type CoreRequest, type CoreResponse, type EventSource } from "./binding-core.js";

export interface BindingCore {
  handle(request: CoreRequest): Promise<CoreResponse>;
}

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

export function createNodeListener(core: BindingCore): NodeListener {
  return (req, res) => {
    serveNodeRequest(core, req, res).catch(() => answerFailure(res));
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
 * Serves one request with a binding core. Rejects only on a failure the core
 * did not answer (a socket error while reading, say); `createNodeListener`
 * then answers with `answerFailure`, a framework adapter may hand it on.
 */
export function serveNodeRequest(core: BindingCore, req: IncomingMessage, res: ServerResponse, options?: NodeServeOptions): Promise<void> {
  return serve(core, req, res, options);
}

/** The last resort: an empty 500 if nothing was sent yet, never what went wrong. */
export function answerFailure(res: ServerResponse): void {
  // The cores answer every failure themselves; this never leaks what went wrong.
  if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
  res.end();
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
  #controller: AbortController | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly options: NodeServeOptions | undefined,
  ) {
    this.method = req.method ?? "GET";
    this.url = options?.url ?? req.url ?? "/";
  }

  get headers(): Headers {
    return (this.#headers ??= toHeaders(this.req));
  }

  header(name: string): string | null {
    const value = this.req.headers[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const controller = new AbortController();
      this.#controller = controller;
      this.onClose(() => controller.abort());
    }
    return this.#controller.signal;
  }

  onClose(listener: () => void): void {
    const res = this.res;
    if (res.closed) {
      if (!res.writableFinished) listener();
    } else res.once("close", () => !res.writableFinished && listener());
  }

  body(limit: number): Promise<Uint8Array> {
    const read = this.options?.body;
    return read === undefined ? readBody(this.req, limit) : read(limit);
  }
}

async function serve(core: BindingCore, req: IncomingMessage, res: ServerResponse, options: NodeServeOptions | undefined): Promise<void> {
  const request = new NodeCoreRequest(req, res, options);
  const response = await core.handle(request);
  switch (response.kind) {
    case "body":
      if (response.status === 413) {
        // The rest of the body is never read: close rather than drain it.
        res.shouldKeepAlive = false;
        res.on("finish", () => req.destroy());
      }
      res.writeHead(response.status, rawHeaders(response.headers, Buffer.byteLength(response.body)));
      res.end(response.body);
      return;
    case "empty":
      res.writeHead(response.status, response.headers);
      res.end();
      return;
    case "stream":
      // Returned, not awaited: this frame is not kept alive for the stream's life.
      return writeStream(res, response.headers, response.events);
  }
}

// One timer per heartbeat period for all open streams, not one per stream: an
// idle stream then costs only its entry in a set (the idle-stream memory target).
const heartbeats = new Map<number, { readonly timer: ReturnType<typeof setInterval>; readonly streams: Set<ServerResponse> }>();

/** Writes a heartbeat comment to `res` every `ms` until the returned function is called. */
function onHeartbeat(ms: number, res: ServerResponse): () => void {
  let group = heartbeats.get(ms);
  if (group === undefined) {
    const streams = new Set<ServerResponse>();
    group = { streams, timer: setInterval(() => streams.forEach((r) => r.write(sseHeartbeat)), ms) };
    heartbeats.set(ms, group);
  }
  const { streams, timer } = group;
  streams.add(res);
  return () => {
    if (!streams.delete(res) || streams.size > 0) return;
    clearInterval(timer);
    heartbeats.delete(ms);
  };
}

async function writeStream(res: ServerResponse, headers: Readonly<Record<string, string>>, events: EventSource): Promise<void> {
  // The response's own close event, not an AbortSignal: an idle stream then
  // holds no controller of its own (the idle-stream memory target).
  let closed = res.closed && !res.writableFinished;
  let wake: (() => void) | undefined;
  const stopHeartbeat = events.heartbeatMs > 0 ? onHeartbeat(events.heartbeatMs, res) : undefined;
  // Not only in finally: that waits for the handler's pending next(), and a
  // handler that ignores its signal would keep the heartbeat writing forever.
  const onClose = () => {
    if (res.writableFinished) return;
    closed = true;
    stopHeartbeat?.();
    events.cancel();
    wake?.();
  };
  res.once("close", onClose);
  res.writeHead(200, headers);
  res.flushHeaders();
  try {
    for (let data = closed ? undefined : await events.next(); data !== undefined && !closed; data = await events.next()) {
      if (!res.write(data)) {
        // Paced by the client: the next event is pulled once the socket drained, or never if it closed.
        await new Promise<void>((resolve) => {
          wake = resolve;
          res.once("drain", resolve);
        });
        res.off("drain", wake as () => void);
        wake = undefined;
      }
    }
  } finally {
    stopHeartbeat?.();
    res.off("close", onClose);
    if (!closed) res.end();
  }
}

/** Headers as writeHead's flat [name, value, ...] list, which it takes without copying into an object. */
function rawHeaders(headers: Readonly<Record<string, string>>, contentLength: number): (string | number)[] {
  const raw: (string | number)[] = [];
  for (const name in headers) raw.push(name, headers[name] as string);
  raw.push("content-length", contentLength);
  return raw;
}

function toHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}

function readBody(req: IncomingMessage, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    checkDeclaredLength(req.headers["content-length"], limit);
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        reject(new BodyTooLargeError(limit));
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
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}
