/**
 * What both 0.3 JSON bindings do around the 1.0 endpoint (D110): tell a 0.3
 * call from a 1.0 one, hand the 1.0 endpoint the translated request marked
 * `A2A-Version: 0.3` (so the handler's `context.protocolVersion` says who
 * called), and translate the SSE frames of its answer.
 */
import { RequestShapeError } from "../../core/http/request-encoding.js";
import type { CoreRequest, CoreResponse, EventSource } from "../../core/transport.js";
import { majorMinorOfValue } from "../service-params.js";

/** Spec 3.6.2: a missing or empty A2A-Version is 0.3; the header wins over `?A2A-Version=`, as D5 reads them. */
export function isV03Request(req: CoreRequest): boolean {
  const header = req.header("a2a-version");
  const query = new URLSearchParams(req.url.split("?")[1] ?? "").get("A2A-Version");
  const raw = header !== null && header.trim() !== "" ? header : query !== null && query.trim() !== "" ? query : null;
  return raw === null || majorMinorOfValue(raw) === "0.3";
}

/**
 * The request the 1.0 endpoint sees: `A2A-Version: 0.3`, and `url` and body
 * as translated; `json` when the compat layer wrote the body (a GET of 0.3
 * may be a POST of 1.0).
 */
export function translatedRequest(req: CoreRequest, url: string, body: CoreRequest["body"], rewrite: { readonly method?: string; readonly json?: boolean } = {}): CoreRequest {
  const headers = new Headers(req.headers);
  headers.set("a2a-version", "0.3");
  if (rewrite.json === true) headers.set("content-type", "application/json");
  return {
    method: rewrite.method ?? req.method,
    url,
    headers,
    header: (name) => headers.get(name),
    get signal() {
      return req.signal;
    },
    // The connection's, for the span's server.address (D35); bound, as the adapter's methods read its own fields.
    ...(req.authority === undefined ? {} : { authority: () => req.authority?.() }),
    ...(req.local === undefined ? {} : { local: () => req.local?.() }),
    body,
  };
}

/**
 * A body read once by the compat layer and handed on as bytes, once: the 1.0 endpoint reads it
 * once, and a task the call started holds the request for as long as it runs (D114), so the
 * bytes (up to the body limit) are not kept past that read.
 */
export function bytesBody(bytes: Uint8Array): CoreRequest["body"] {
  let kept: Uint8Array | undefined = bytes;
  return async () => {
    const read = kept;
    kept = undefined;
    if (read === undefined) throw new Error("the translated body was read already");
    return read;
  };
}

/** A body that refuses as the original did (size, time), for the 1.0 endpoint to answer. */
export function failedBody(error: unknown): CoreRequest["body"] {
  return async () => {
    throw error;
  };
}

const encoder = new TextEncoder();

export function jsonBytes(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** Each SSE frame's data (and event name) translated; heartbeats and cancel pass through. */
export function mapEvents(
  events: EventSource,
  map: (data: string, event: string | undefined) => { data: string; event?: string | undefined },
  report: (err: unknown) => void,
): EventSource {
  return {
    heartbeatMs: events.heartbeatMs,
    cancel: () => events.cancel(),
    async next() {
      const frame = await events.next();
      if (frame === undefined) return undefined;
      let event: string | undefined;
      const data: string[] = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      if (data.length === 0) return frame;
      let out: { data: string; event?: string | undefined };
      try {
        out = map(data.join("\n"), event);
      } catch (err) {
        // A 1.0 event that does not translate: ours to fix. The stream ends as a failed source ends it.
        report(err);
        throw err;
      }
      return out.event === undefined ? `data: ${out.data}\n\n` : `event: ${out.event}\ndata: ${out.data}\n\n`;
    },
  };
}

/** A JSON body response. */
export function jsonResponse(status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): CoreResponse {
  return { kind: "body", status, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(value) };
}

/**
 * What a caller is told of a request the translation could not take, when
 * that is the request's doing: a value nested past the stack, or a request
 * 1.0's routes cannot carry (an empty task id). Anything else is a failure
 * of ours, rethrown, so the endpoint reports it and answers Internal.
 */
export function translationFailure(err: unknown): string {
  if (err instanceof RangeError) return "it is nested too deep";
  if (err instanceof RequestShapeError) return err.message;
  throw err;
}
