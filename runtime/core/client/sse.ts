/**
 * Server-sent events read from a response body, as the HTML standard's
 * event stream parser reads them (lines ending in LF, CR or CRLF; `data`
 * lines joined with LF; `event`; comments and other fields ignored; an
 * event is dispatched at a blank line, and one cut off at the end of the
 * stream is dropped). Both JSON bindings stream this way (D14).
 */

export interface SseEvent {
  /** The `event` field; "message" when absent. */
  readonly event: string;
  readonly data: string;
}

/** The events of `body`, in order. Returning early cancels the body. */
export async function* readSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  for await (const chunk of body) {
    const events = parser.push(chunk, false);
    for (let i = 0; i < events.length; i++) yield events[i]!;
  }
  yield* parser.push(undefined, true);
}

/** The parser's state between chunks. */
class SseParser {
  readonly #decoder = new TextDecoder();
  #buffer = "";
  #data: string[] = [];
  #event = "";

  /** The events completed by `chunk` (or, `done`, by the end of the stream). */
  push(chunk: Uint8Array | undefined, done: boolean): SseEvent[] {
    const events: SseEvent[] = [];
    const buffer = this.#buffer + (done ? this.#decoder.decode() : this.#decoder.decode(chunk, { stream: true }));
    let start = 0;
    for (;;) {
      const end = lineEnd(buffer, start);
      if (end < 0) break;
      // A CR at the very end may be the first half of a CRLF still on its way.
      if (buffer.charCodeAt(end) === 13 && end + 1 === buffer.length && !done) break;
      const line = buffer.slice(start, end);
      start = end + (buffer.charCodeAt(end) === 13 && buffer.charCodeAt(end + 1) === 10 ? 2 : 1);
      if (line === "") {
        if (this.#data.length > 0) events.push({ event: this.#event === "" ? "message" : this.#event, data: this.#data.join("\n") });
        this.#data = [];
        this.#event = "";
        continue;
      }
      if (line.charCodeAt(0) === 58) continue; // ":" a comment (heartbeats).
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === "data") this.#data.push(value);
      else if (field === "event") this.#event = value;
    }
    this.#buffer = buffer.slice(start);
    return events;
  }
}

function lineEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) return i;
  }
  return -1;
}
