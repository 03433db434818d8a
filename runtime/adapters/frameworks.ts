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
import { failUnanswered, serveNodeRequest } from "./node-http.js";

export type { Endpoint } from "../core/transport.js";
export type { NodeListener } from "./node-http.js";
export { createNodeListener } from "./node-http.js";
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
 * as strings, so A2A messages are not affected). The core's limit is then
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
async function parsedBody(req: ExpressRequestLike, limit: number): Promise<Uint8Array> {
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
 * from `request.raw`: the route must not have a content-type parser that
 * consumes it. `createFastifyPlugin` sets that up; use this handler directly
 * only inside a context whose parsers leave the body alone (see
 * `passThroughParser`).
 */
export function createFastifyHandler(core: Endpoint): FastifyHandler {
  return (request, reply) => {
    reply.hijack();
    serveNodeRequest(core, request.raw, reply.raw).catch((err: unknown) => failUnanswered(core, err, request.raw, reply.raw));
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
}

const fastifyMethods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];

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
    instance.route({ method: fastifyMethods, url: "/", handler });
    instance.route({ method: fastifyMethods, url: "/*", handler });
  };
}

// ---------------------------------------------------------------- hono and other fetch-style frameworks

/** The member of a Hono context the adapter reads. */
export interface HonoContextLike {
  readonly req: { readonly raw: Request };
}

/**
 * A Hono handler serving `core`: `app.all("/a2a/jsonrpc", handler)` and
 * `app.all("/a2a/rest/*", handler)`. It is `createFetchHandler` on the
 * context's raw Request, so it runs wherever Hono does (@hono/node-server,
 * Bun, Deno, workers); Bun.serve and Deno.serve take `createFetchHandler`
 * itself.
 */
export function createHonoHandler(core: Endpoint): (c: HonoContextLike) => Promise<Response> {
  const handler: FetchHandler = createFetchHandler(core);
  return (c) => handler(c.req.raw);
}
