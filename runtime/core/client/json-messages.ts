/**
 * Messages to and from the JSON bindings on the client side. Requests are
 * written as the server writes its answers (the emitted writers, REQUIRED
 * fields included, D11); answers are read leniently (spec 5.7's forward
 * compatibility): a field or enum value this client's proto does not know
 * is skipped, never an error, so an agent on a newer proto still answers.
 */
import { fromJson, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import { readJsonFast } from "../codec/json-reader.js";
import { jsonWriter } from "../codec/json-writer.js";
import type { RequiredFieldTable } from "../method-spec.js";

export interface JsonMessages {
  write(desc: DescMessage, value: object): JsonValue;
  read(desc: DescMessage, json: JsonValue): Message;
}

export function createJsonMessages(required: RequiredFieldTable): JsonMessages {
  return {
    write: (desc, value) => jsonWriter(desc, required)(value) as JsonValue,
    read: (desc, json) => readJsonFast(desc, json) ?? fromJson(desc, json, { ignoreUnknownFields: true }),
  };
}

/** A body read as JSON, or undefined when it is empty or not JSON (a proxy's HTML page, say). */
export async function readJsonBody(response: Response): Promise<JsonValue | undefined> {
  const text = await response.text();
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

/** The media type of a response, without parameters, lower case. */
export function mediaTypeOf(response: Response): string {
  return (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}
