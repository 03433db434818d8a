/**
 * What the JSON bindings' transports read of an answer, bounded: one message
 * (a unary body, one server-sent event's data) at most `maxMessageBytes`
 * (4 MiB, gRPC's own default receive limit, D16).
 */
import { RpcError } from "../errors.js";
import type { HttpResponse, HttpSend } from "./http.js";

/** The client options that bound what the JSON bindings read. */
export interface BodyBoundOptions {
  /**
   * The largest message read: a unary answer's body, one stream event's
   * data. Larger fails RESOURCE_EXHAUSTED. Default 4 MiB (D16); gRPC's
   * channel gets it as `grpc.max_receive_message_length` unless
   * `channelOptions` set that.
   */
  readonly maxMessageBytes?: number;
}

export const defaultMaxMessageBytes = 4 * 1024 * 1024;

export interface BodyBounds {
  readonly maxMessageBytes: number;
}

export function bodyBoundsOf(options: BodyBoundOptions): BodyBounds {
  const maxMessageBytes = options.maxMessageBytes ?? defaultMaxMessageBytes;
  if (!(maxMessageBytes > 0)) throw new TypeError(`maxMessageBytes must be a positive number of bytes, got ${String(maxMessageBytes)}`);
  return { maxMessageBytes };
}

export function tooLarge(maxMessageBytes: number, what: string): RpcError {
  return new RpcError("RESOURCE_EXHAUSTED", `${what} is larger than maxMessageBytes (${maxMessageBytes} bytes)`);
}

/**
 * `send` with its answers bounded: `unary` for a body read whole (`text`
 * stops at maxMessageBytes), `stream` for a body read as it comes (its
 * text, an error before the stream, is bounded as well).
 */
export function boundedSend(send: HttpSend, bounds: BodyBounds): { unary: HttpSend; stream: HttpSend } {
  const max = bounds.maxMessageBytes;
  const bounded = (response: HttpResponse, body: AsyncIterable<Uint8Array> | null): HttpResponse => ({
    status: response.status,
    ok: response.ok,
    mediaType: response.mediaType,
    text: () => readText(response, max),
    body,
    discard: () => response.discard(),
  });
  return {
    unary: async (url, request) => {
      const response = await send(url, request);
      return bounded(response, response.body);
    },
    stream: async (url, request) => {
      const response = await send(url, request);
      return bounded(response, response.body);
    },
  };
}

/** The whole body as UTF-8 text (a BOM dropped, as fetch's text() does), RESOURCE_EXHAUSTED past `max` bytes. */
async function readText(response: HttpResponse, max: number): Promise<string> {
  const body = response.body;
  if (body === null) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    // Leaving the loop cancels the rest of the body.
    if (size > max) throw tooLarge(max, "the agent's answer");
    chunks.push(chunk);
  }
  return new TextDecoder().decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
}
