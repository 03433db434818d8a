/**
 * One HTTP exchange of the JSON bindings' transports: a request with a
 * string body out, the status, media type and body back, the body read as
 * text or as the bytes it streams in. Sent with undici's `request` on the
 * global dispatcher (the one node's fetch uses too, so `setGlobalDispatcher`
 * with a proxy or mock agent applies to both), following redirects as fetch
 * does; or with the `fetch` a client was given. undici's `request` costs a
 * fraction of fetch's per call: no Request, Headers and Response objects, no
 * WHATWG stream under every body (bench/client.mjs).
 */
import { Dispatcher, getGlobalDispatcher, interceptors, request } from "undici";

/** What a transport sends. */
export interface HttpRequest {
  readonly method: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
  readonly signal: AbortSignal | undefined;
}

/** What comes back; its body must be read (`text`, `body`) or dropped (`discard`). */
export interface HttpResponse {
  readonly status: number;
  /** A 2xx status. */
  readonly ok: boolean;
  /** The content type without parameters, lower case; "" when absent. */
  readonly mediaType: string;
  /** The whole body as UTF-8 text. */
  text(): Promise<string>;
  /** The body's bytes as they arrive; leaving the loop early cancels the body. */
  readonly body: AsyncIterable<Uint8Array> | null;
  /** Drops the body. */
  discard(): Promise<void>;
}

export type HttpSend = (url: string, request: HttpRequest) => Promise<HttpResponse>;

/** The sender of a transport: through `fetchImpl` when given, else undici's `request`. */
export function createHttpSend(fetchImpl: typeof fetch | undefined): HttpSend {
  return fetchImpl === undefined ? sendWithUndici : sendWithFetch(fetchImpl);
}

/** The media type of a content-type header value, without parameters, lower case. */
export function mediaTypeOf(contentType: string | null | undefined): string {
  if (contentType === null || contentType === undefined) return "";
  const semicolon = contentType.indexOf(";");
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

// fetch follows up to 20 redirects (Fetch standard, "HTTP-redirect fetch"), with the same method
// and body on 307 and 308 and as a GET on 303 (and 301 or 302 after a POST); undici's redirect
// interceptor does the same.
const maxRedirections = 20;
let globalDispatcher: Dispatcher | undefined;
let redirecting: Dispatcher | undefined;

/**
 * The global dispatcher, as it is now, with redirects followed; undefined when it is another
 * undici's than this package's. Node 22 installs its own (its bundled undici 6), whose dispatch
 * refuses the handlers of undici 7's interceptors ("invalid onError method"): every call failed.
 * Node's fetch sends through that one as it should (D44).
 */
function dispatcher(): Dispatcher | undefined {
  const current = getGlobalDispatcher();
  if (current !== globalDispatcher) {
    globalDispatcher = current;
    redirecting = current instanceof Dispatcher ? current.compose(interceptors.redirect({ maxRedirections })) : undefined;
  }
  return redirecting;
}

/** Through the global fetch as it is at each call. */
const sendWithGlobalFetch: HttpSend = sendWithFetch((input, init) => fetch(input, init));

async function sendWithUndici(url: string, req: HttpRequest): Promise<HttpResponse> {
  const through = dispatcher();
  if (through === undefined) return sendWithGlobalFetch(url, req);
  const { statusCode, headers, body } = await request(url, {
    method: req.method as Dispatcher.HttpMethod,
    headers: req.headers,
    body: req.body,
    signal: req.signal,
    dispatcher: through,
  });
  const contentType = headers["content-type"];
  return {
    status: statusCode,
    ok: statusCode >= 200 && statusCode <= 299,
    mediaType: mediaTypeOf(Array.isArray(contentType) ? contentType[0] : contentType),
    text: () => body.text(),
    body,
    discard: () => body.dump(),
  };
}

function sendWithFetch(fetchImpl: typeof fetch): HttpSend {
  return async (url, req) => {
    const response = await fetchImpl(url, { method: req.method, headers: req.headers, body: req.body, signal: req.signal });
    const body = response.body;
    return {
      status: response.status,
      ok: response.ok,
      mediaType: mediaTypeOf(response.headers.get("content-type")),
      text: () => response.text(),
      body: body === null ? null : chunksOf(body),
      discard: async () => {
        await body?.cancel();
      },
    };
  };
}

/** The chunks of a WHATWG stream; leaving early cancels it. */
async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) {
        done = true;
        return;
      }
      yield chunk.value;
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
