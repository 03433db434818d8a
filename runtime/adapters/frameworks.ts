/**
 * Framework adapters: each is a thin layer over the same binding core and
 * over the node:http or fetch adapter, so SSE, drain between events,
 * heartbeats, disconnect -> abort and the body limit behave the same on
 * every framework. Imported as "protoc-gen-a2a/runtime/adapters".
 *
 * No framework is imported, not even for its types: each adapter takes the
 * few members it uses as a structural type, so express, fastify and hono are
 * optional peer dependencies that only the application installs.
 *
 * One rule for paths on every framework: the core sees the request's full
 * path, as the client sent it (express: `req.originalUrl`, not the
 * mount-relative `req.url`). So an HTTP+JSON core mounted under a prefix is
 * created with that prefix as its `basePath`, exactly as `serveAgent` does:
 *
 *     const rest = createA2AServiceHttpJsonEndpoint(handler, { basePath: "/a2a/rest" });
 *     app.use("/a2a/rest", createExpressMiddleware(rest));
 *
 * The JSON-RPC core reads no path (only the query's A2A-Version), so it can
 * be mounted anywhere.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { BodyTooLargeError, type Endpoint } from "../core/transport.js";
import { createFetchHandler, type FetchHandler } from "./fetch.js";
import { serverClosing } from "./closing.js";
import { failUnanswered, serveNodeRequest } from "./node-http.js";

export type { Endpoint } from "../core/transport.js";
export type { NodeListener } from "./node-http.js";
export { continueOnRead, createNodeListener } from "./node-http.js";
export { createFetchHandler } from "./fetch.js";
export type { FetchHandler } from "./fetch.js";

// ---------------------------------------------------------------- express 4 and 5

/** The members of an express request the adapter reads. */
export interface ExpressRequestLike extends IncomingMessage {
  /** The full path and query; `url` is relative to the mount point. */
  readonly originalUrl?: string;
  /** Set by a body parser that ran before the adapter. */
  readonly body?: unknown;
}

export type ExpressNext = (err?: unknown) => void;

export type ExpressMiddleware = (req: ExpressRequestLike, res: ServerResponse, next: ExpressNext) => void;

/**
 * An express (4 or 5) middleware serving `core`, to mount with
 * `app.use(path, ...)` or a router; it answers every request that reaches
 * it (unknown routes under the mount get the core's JSON 404, not
 * express's HTML page) and calls `next(err)` only for a failure the core
 * did not answer itself, such as the client's socket failing mid-body.
 *
 * The body: when no body parser ran, the adapter reads the raw stream under
 * the core's limit, like the node:http adapter. When one already read it
 * (express.json(), express.raw(), express.text(), ...), the stream is gone
 * and `req.body` is used instead: a Buffer or string as it is; any other
 * value (a parsed object) is serialized again with JSON.stringify, which is
 * the same JSON value but not the same bytes (duplicate keys are already
 * merged, numbers past 2^53 already rounded: ProtoJSON sends 64-bit integers
 * as strings, so A2A messages are not affected; a number past double's range
 * is already Infinity, sent on as null; and express.json() makes an empty
 * body `{}`, which JSON-RPC answers -32600 rather than -32700). The core's limit is then
 * applied to those bytes, but the parser's own limit (express.json's 100 kB
 * by default) and its error page come first: mount the adapter before any
 * body parser, or scope parsers to the routes that need them, to get the
 * binding's own 413 and parse errors.
 */
export function createExpressMiddleware(core: Endpoint): ExpressMiddleware {
  return (req, res, next) => {
    const consumed = bodyAlreadyRead(req);
    serveNodeRequest(core, req, res, {
      url: req.originalUrl ?? req.url ?? "/",
      ...(consumed ? { body: (limit: number) => parsedBody(req, limit) } : {}),
    }).catch((err: unknown) => (res.headersSent ? failUnanswered(core, err, req, res, req.originalUrl ?? req.url ?? "/") : next(err)));
  };
}

/**
 * Whether something before the adapter read the request stream. body-parser
 * marks it with `_body`; `readableEnded` catches any other reader. Not
 * `req.body`: express 4's parsers set it to `{}` without reading a byte when
 * the content type is not theirs.
 */
function bodyAlreadyRead(req: ExpressRequestLike): boolean {
  return (req as { _body?: unknown })._body === true || req.readableEnded;
}

/** The body a parser left on `req.body`, as bytes, under the core's limit. */
async function parsedBody(req: { readonly body?: unknown }, limit: number): Promise<Uint8Array> {
  const body = req.body;
  let bytes: Uint8Array;
  if (body instanceof Uint8Array) bytes = body;
  else if (typeof body === "string") bytes = Buffer.from(body, "utf8");
  else if (body === undefined || body === null) bytes = new Uint8Array(0);
  else bytes = Buffer.from(JSON.stringify(body), "utf8");
  if (bytes.byteLength > limit) throw new BodyTooLargeError(limit);
  return bytes;
}

// ---------------------------------------------------------------- fastify

/** The members of a fastify request the adapter reads. */
export interface FastifyRequestLike {
  readonly raw: IncomingMessage;
  /** What a content-type parser of the route's context made of the body, when one ran. */
  readonly body?: unknown;
}

/** The members of a fastify reply the adapter uses. */
export interface FastifyReplyLike {
  readonly raw: ServerResponse;
  hijack(): unknown;
}

export type FastifyHandler = (request: FastifyRequestLike, reply: FastifyReplyLike) => void;

/**
 * A fastify route handler serving `core`. It hijacks the reply and serves
 * the raw request and response with the node:http adapter, so SSE,
 * backpressure and disconnects work as they do there, and reads the body
 * from `request.raw`. `createFastifyPlugin` sets that up, with no parser in
 * its context. On a route where one of fastify's parsers already read the
 * body, its result (`request.body`) is used as after an express body
 * parser: bytes or text as they are, a parsed object serialized again, and
 * the parser's own limit and errors come first; use the plugin (or
 * `passThroughParser`) to get the binding's own.
 */
export function createFastifyHandler(core: Endpoint): FastifyHandler {
  return (request, reply) => {
    reply.hijack();
    const consumed = request.raw.readableEnded;
    serveNodeRequest(core, request.raw, reply.raw, consumed ? { body: (limit: number) => parsedBody(request, limit) } : undefined).catch((err: unknown) =>
      failUnanswered(core, err, request.raw, reply.raw),
    );
  };
}

/** A content-type parser that reads nothing, leaving the body on `request.raw` for the core. */
export function passThroughParser(_request: unknown, _payload: unknown, done: (err: Error | null, body?: unknown) => void): void {
  done(null, undefined);
}

/** The members of a fastify instance the plugin uses. */
export interface FastifyInstanceLike {
  removeAllContentTypeParsers(): unknown;
  addContentTypeParser(contentType: string, parser: typeof passThroughParser): unknown;
  route(options: { method: string[]; url: string; handler: FastifyHandler }): unknown;
  /** Every method the instance routes (fastify 5); HEAD comes with GET's routes. */
  readonly supportedMethods?: readonly string[];
}

const fastifyMethods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];

/** Every method fastify routes, so that one the core does not serve gets its 405 (with Allow), not fastify's 404. */
function methodsOf(instance: FastifyInstanceLike): string[] {
  return instance.supportedMethods === undefined ? fastifyMethods : instance.supportedMethods.filter((m) => m !== "HEAD");
}

/**
 * A fastify plugin serving `core` at its prefix and everything under it:
 * `app.register(createFastifyPlugin(core), { prefix: "/a2a/rest" })`. Inside
 * the plugin's own (encapsulated) context every content type is left
 * unparsed, so the core reads the body under its own limit and answers with
 * its own 413, 415 and parse errors; the rest of the app keeps its parsers.
 */
export function createFastifyPlugin(core: Endpoint): (instance: FastifyInstanceLike, options: unknown) => Promise<void> {
  const handler = createFastifyHandler(core);
  return async (instance) => {
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser("*", passThroughParser);
    const method = methodsOf(instance);
    instance.route({ method, url: "/", handler });
    instance.route({ method, url: "/*", handler });
  };
}

// ---------------------------------------------------------------- hono and other fetch-style frameworks

/** The members of a Hono context the adapter reads. */
export interface HonoContextLike {
  readonly req: {
    readonly raw: Request;
    /** The body, from Hono's cache when a middleware already read it. */
    arrayBuffer(): Promise<ArrayBuffer>;
  };
  /** On @hono/node-server: the node request and response (`incoming`, `outgoing`). */
  readonly env?: unknown;
}

/**
 * A Hono handler serving `core`: `app.all("/a2a/jsonrpc", handler)` and
 * `app.all("/a2a/rest/*", handler)`. It is `createFetchHandler` on the
 * context's raw Request, so it runs wherever Hono does (@hono/node-server,
 * Bun, Deno, workers); Bun.serve and Deno.serve take `createFetchHandler`
 * itself. A body a middleware already read (`c.req.json()`, a validator)
 * is taken from Hono's cache; the core's limit then applies to those bytes.
 */
export function createHonoHandler(core: Endpoint): (c: HonoContextLike) => Promise<Response> {
  const handler: FetchHandler = createFetchHandler(core);
  return async (c) => {
    endWhenClosing(c.env);
    const raw = c.req.raw;
    if (!raw.bodyUsed) return handler(raw);
    return handler(new Request(raw.url, { method: raw.method, headers: raw.headers, body: await c.req.arrayBuffer(), signal: raw.signal }));
  };
}

/**
 * On @hono/node-server: an answer that finishes once its server's close()
 * began ends its connection, as the node:http adapter's do (D115); node
 * would keep it for its keep-alive timeout, which held close() open.
 */
function endWhenClosing(env: unknown): void {
  // Recognised by shape: a runtime import of node:http would keep this module off platforms without it.
  const outgoing = (env as { outgoing?: Partial<ServerResponse> } | undefined)?.outgoing;
  if (typeof outgoing?.once !== "function" || outgoing.req === undefined) return;
  const response = outgoing as ServerResponse;
  response.once("finish", () => {
    // The answer's socket: node has detached it from the response by 'finish'.
    if (serverClosing(response.req)) response.req.socket?.destroySoon();
  });
}
