/**
 * HTTP+JSON calls over HTTP (http.ts: undici's request, or a fetch): each
 * request encoded by its method's `google.api.http` rules (request-encoding.ts, the inverse of the server's
 * transcoding), the answer read as ProtoJSON (the rule's `response_body`
 * when it names a field), a streaming method's answer as server-sent
 * events, and errors from the AIP-193 body, a stream's `event: error` frame
 * included (D14).
 */
import type { DescMessage, JsonValue } from "@bufbuild/protobuf";
import { RpcError } from "../errors.js";
import { createRequestEncoder, jsonNamesOf, literalsOf, zeroTextOf, type RequestEncoder } from "../http/request-encoding.js";
import type { HttpRuleSpec, MethodSpec, RequiredFieldTable } from "../method-spec.js";
import type { ClientErrors, ClientTransport, OutgoingCall } from "./client.js";
import { errorFromHttp } from "./error-decoding.js";
import { createHttpSend } from "./http.js";
import { bodyBoundsOf, boundedSend, type BodyBoundOptions } from "./bounds.js";
import { createJsonMessages, parseJson, readJsonBody } from "./json-messages.js";
import { readSse } from "./sse.js";

export interface HttpJsonTransportOptions extends BodyBoundOptions {
  /** The base URL the rules' paths are appended to (an interface URL, e.g. `http://host/a2a/rest`). */
  readonly baseUrl: string | URL;
  /** The generated HTTP rules of the service. */
  readonly rules: readonly HttpRuleSpec[];
  readonly errors: ClientErrors;
  readonly required: RequiredFieldTable;
  /** The media type of request bodies and the first one asked for in `Accept`. Default `application/json`. */
  readonly mediaType?: string;
  /** The fetch to call; default undici's `request` on the global dispatcher (http.ts). */
  readonly fetch?: typeof fetch;
}

export function createHttpJsonTransport(options: HttpJsonTransportOptions): ClientTransport {
  // The rules' paths go after the interface URL's path, and their query after its own (an API key, say).
  const raw = String(options.baseUrl);
  const cut = raw.search(/[?#]/);
  const base = (cut < 0 ? raw : raw.slice(0, cut)).replace(/\/+$/, "");
  const baseQuery = cut < 0 || raw[cut] === "#" ? "" : (raw.slice(cut + 1).split("#")[0] ?? "");
  const urlOf = (path: string): string => {
    if (baseQuery === "") return base + path;
    const q = path.indexOf("?");
    return q < 0 ? `${base}${path}?${baseQuery}` : `${base}${path.slice(0, q)}?${baseQuery}&${path.slice(q + 1)}`;
  };
  const bounds = bodyBoundsOf(options);
  const http = boundedSend(createHttpSend(options.fetch), bounds);
  const messages = createJsonMessages(options.required);
  const errors = options.errors;
  const mediaType = options.mediaType ?? "application/json";
  const accept = mediaType === "application/json" ? mediaType : `${mediaType}, application/json`;
  const encoders = new Map<MethodSpec, RequestEncoder>();

  let literals: Set<string> | undefined;
  const encoderOf = (spec: MethodSpec): RequestEncoder => {
    let encoder = encoders.get(spec);
    if (encoder === undefined) {
      const rules = options.rules.filter((r) => r.method === spec.localName);
      encoder = createRequestEncoder(
        spec.name,
        rules,
        (field) => jsonNamesOf(spec.input, field),
        (literals ??= literalsOf(options.rules)),
        (field) => zeroTextOf(spec.input, field),
      );
      encoders.set(spec, encoder);
    }
    return encoder;
  };

  const send = async (call: OutgoingCall, streaming: boolean) => {
    let parts;
    try {
      parts = encoderOf(call.spec).encode(messages.write(call.spec.input, call.request) as never);
    } catch (err) {
      // A request no rule can carry (a path field left empty) is refused before anything is sent, as
      // the profile spells INVALID_ARGUMENT (A2A: InvalidParamsError, what the other bindings' servers answer).
      throw errors.create(errors.byCode("INVALID_ARGUMENT"), err instanceof Error ? err.message : String(err), { cause: err });
    }
    const headers: Record<string, string> = { ...call.headers, accept: streaming ? "text/event-stream" : accept };
    if (parts.body !== undefined) headers["content-type"] = mediaType;
    const response = await (streaming ? http.stream : http.unary)(urlOf(parts.path), {
      method: parts.method,
      headers,
      body: parts.body === undefined ? undefined : JSON.stringify(parts.body),
      signal: call.signal,
    });
    return { response, responseBody: parts.rule.responseBody };
  };

  const answerOf = (output: DescMessage, json: JsonValue | undefined, responseBody: string) => {
    if (json === undefined) throw new RpcError("INTERNAL", "the agent's answer is not JSON");
    return messages.read(output, responseBody === "" ? json : { [jsonNamesOf(output, [responseBody])[0]!]: json });
  };

  return {
    async unary(call) {
      const { response, responseBody } = await send(call, false);
      const text = await response.text();
      const json = parseJson(text);
      if (!response.ok) throw errorFromHttp(errors, response.status, json);
      // No body at all (a 204, say) is an answer of nothing: the empty message where that is all there is.
      if (text === "") return messages.read(call.spec.output, null);
      return answerOf(call.spec.output, json, responseBody);
    },

    async *stream(call) {
      const { response } = await send(call, true);
      if (!response.ok) throw errorFromHttp(errors, response.status, await readJsonBody(response));
      if (response.mediaType !== "text/event-stream" || response.body === null) {
        await response.discard();
        throw new RpcError("INTERNAL", `the agent answered a stream with ${response.mediaType || "no content type"}`);
      }
      for await (const event of readSse(response.body, bounds.maxMessageBytes)) {
        let json: JsonValue;
        try {
          json = JSON.parse(event.data) as JsonValue;
        } catch {
          throw new RpcError("INTERNAL", "a stream event is not JSON");
        }
        if (event.event === "error") {
          const error = json !== null && typeof json === "object" && !Array.isArray(json) ? json.error : undefined;
          const status = error !== null && typeof error === "object" && !Array.isArray(error) && typeof error?.code === "number" ? error.code : 500;
          throw errorFromHttp(errors, status, json);
        }
        yield messages.read(call.spec.output, json);
      }
    },
  };
}

/** The JSON names along a path of local field names from `desc`. */
