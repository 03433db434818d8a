/**
 * Messages to and from the JSON bindings on the client side. Requests are
 * written as the server writes its answers (the emitted writers, REQUIRED
 * fields included, D11); answers are read leniently (spec 5.7's forward
 * compatibility): a field or enum value this client's proto does not know
 * is skipped, never an error, so an agent on a newer proto still answers.
 * An answer that cannot be read even so (a value of the wrong type) is
 * INTERNAL: the agent answered, so it is no transport failure (D29).
 *
 * A message with no fields (DeleteTaskPushNotificationConfig's
 * google.protobuf.Empty) may come as nothing at all: JSON-RPC `result: null`
 * or an HTTP 204 with no body, as @a2a-js/sdk answers it (D12 leaves the
 * output to the implementation). Nothing is lost reading that as the empty
 * message; for any other message nothing is not an answer.
 */
import { create, fromJson, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import { RpcError } from "../errors.js";
import { readJsonFast } from "../codec/json-reader.js";
import { jsonWriter } from "../codec/json-writer.js";
import type { RequiredFieldTable } from "../method-spec.js";
import type { HttpResponse } from "./http.js";

export interface JsonMessages {
  write(desc: DescMessage, value: object): JsonValue;
  /** The message of an answer (`null` for an answer of nothing); an RpcError (INTERNAL) when it is not one. */
  read(desc: DescMessage, json: JsonValue): Message;
}

export function createJsonMessages(required: RequiredFieldTable): JsonMessages {
  return {
    write: (desc, value) => jsonWriter(desc, required)(value) as JsonValue,
    read(desc, json) {
      if (json === null) {
        if (desc.fields.length === 0) return create(desc);
        throw new RpcError("INTERNAL", `the agent answered nothing where a ${desc.typeName} was due`);
      }
      try {
        return readJsonFast(desc, json) ?? fromJson(desc, json, { ignoreUnknownFields: true });
      } catch (err) {
        throw new RpcError("INTERNAL", `the agent's answer is not a ${desc.typeName}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    },
  };
}

/** A body read as JSON, or undefined when it is empty or not JSON (a proxy's HTML page, say). */
export async function readJsonBody(response: HttpResponse): Promise<JsonValue | undefined> {
  return parseJson(await response.text());
}

/** `text` as JSON, or undefined when it is empty or not JSON. */
export function parseJson(text: string): JsonValue | undefined {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}
