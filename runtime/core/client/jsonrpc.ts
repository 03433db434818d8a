/**
 * JSON-RPC 2.0 calls over HTTP (http.ts: undici's request, or a fetch)
 * (D13, D14): one POST per call to the endpoint's URL, the RPC name as the
 * method, the request as `params`;
 * a streaming method's answer is read as server-sent events, each `data`
 * a response envelope for the call's id. An error answer, whether the whole
 * body or a stream's last frame, becomes the profile's error class.
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { RpcError } from "../errors.js";
import type { RequiredFieldTable } from "../method-spec.js";
import type { ClientErrors, ClientTransport, OutgoingCall } from "./client.js";
import { errorFromHttp, errorFromJsonRpc } from "./error-decoding.js";
import { createHttpSend, type HttpResponse } from "./http.js";
import { bodyBoundsOf, boundedSend, type BodyBoundOptions } from "./bounds.js";
import { createJsonMessages, readJsonBody } from "./json-messages.js";
import { readSse } from "./sse.js";

export interface JsonRpcTransportOptions extends BodyBoundOptions {
  /** The endpoint's URL. */
  readonly url: string | URL;
  readonly errors: ClientErrors;
  readonly required: RequiredFieldTable;
  /** The fetch to call; default undici's `request` on the global dispatcher (http.ts). */
  readonly fetch?: typeof fetch;
}

export function createJsonRpcTransport(options: JsonRpcTransportOptions): ClientTransport {
  const url = String(options.url);
  const bounds = bodyBoundsOf(options);
  const send = boundedSend(createHttpSend(options.fetch), bounds);
  const messages = createJsonMessages(options.required);
  const errors = options.errors;
  let nextId = 1;

  const post = async (call: OutgoingCall, accept: string): Promise<{ response: HttpResponse; id: number }> => {
    const id = nextId++;
    const body = JSON.stringify({ jsonrpc: "2.0", id, method: call.spec.name, params: messages.write(call.spec.input, call.request) });
    const response = await (accept === "text/event-stream" ? send.stream : send.unary)(url, {
      method: "POST",
      headers: { ...call.headers, "content-type": "application/json", accept },
      body,
      signal: call.signal,
    });
    return { response, id };
  };

  /** The result of one response envelope, or its error thrown. */
  const resultOf = (envelope: JsonValue | undefined, id: number, status: number): JsonValue => {
    if (envelope === null || typeof envelope !== "object" || Array.isArray(envelope) || envelope.jsonrpc !== "2.0") {
      // An HTTP error with no JSON-RPC answer is read by its status (a gateway's 502 is UNAVAILABLE,
      // D29); a 2xx that holds none was answered, but not as JSON-RPC answers (a wrong URL, say).
      if (status >= 400) throw errorFromHttp(errors, status, undefined);
      throw new RpcError("INTERNAL", `the agent answered HTTP ${status} with no JSON-RPC response`);
    }
    // JSON-RPC 2.0 §5: an answer's id is its request's; only an error may say null (an id it could not read).
    const answeredId = envelope.id;
    if (envelope.error !== undefined && (answeredId === id || answeredId === null)) throw errorFromJsonRpc(errors, envelope.error);
    if (answeredId !== id) throw new RpcError("INTERNAL", `the agent answered JSON-RPC id ${JSON.stringify(envelope.id)} to request ${id}`);
    if (!("result" in envelope)) throw new RpcError("INTERNAL", "the JSON-RPC response has neither result nor error");
    return (envelope as JsonObject).result as JsonValue;
  };

  return {
    async unary(call) {
      const { response, id } = await post(call, "application/json");
      const envelope = await readJsonBody(response);
      return messages.read(call.spec.output, resultOf(envelope, id, response.status));
    },

    async *stream(call) {
      const { response, id } = await post(call, "text/event-stream");
      if (response.mediaType !== "text/event-stream" || response.body === null) {
        // An error before the first event is an ordinary response (D14).
        resultOf(await readJsonBody(response), id, response.status);
        throw new RpcError("INTERNAL", `the agent answered a stream with ${response.mediaType || "no content type"}`);
      }
      for await (const event of readSse(response.body, bounds.maxMessageBytes)) {
        let envelope: JsonValue;
        try {
          envelope = JSON.parse(event.data) as JsonValue;
        } catch {
          throw new RpcError("INTERNAL", "a stream event is not JSON");
        }
        yield messages.read(call.spec.output, resultOf(envelope, id, 200));
      }
    },
  };
}
