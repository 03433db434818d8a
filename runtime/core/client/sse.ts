/**
 * Server-sent events read from a response body, as the HTML standard's
 * event stream parser reads them (lines ending in LF, CR or CRLF; `data`
 * lines joined with LF; `event`; comments and other fields ignored; an
 * event is dispatched at a blank line, and one cut off at the end of the
 * stream is dropped). Both JSON bindings stream this way (D14).
 */
import { tooLarge } from "./bounds.js";

export interface SseEvent {
  /** The `event` field; "message" when absent. */
  readonly event: string;
  readonly data: string;
}

/**
 * The events of `body`, in order. Returning early cancels the body. An event
 * whose data (or a line not ended yet) passes `maxEventBytes` fails
 * RESOURCE_EXHAUSTED: read whole, one past what a string can hold was a
 * RangeError.
 */
export async function* readSse(body: AsyncIterable<Uint8Array>, maxEventBytes = Infinity): AsyncGenerator<SseEvent> {
  const parser = new SseParser(maxEventBytes);
  for await (const chunk of body) {
    const events = parser.push(chunk, false);
    for (let i = 0; i < events.length; i++) yield events[i]!;
    // The events before the one too large are delivered first.
    if (parser.overflow !== undefined) throw parser.overflow;
  }
  yield* parser.push(undefined, true);
}

/** The parser's state between chunks. */
class SseParser {
  readonly #decoder = new TextDecoder();
  readonly #max: number;
  /** The UTF-8 bytes of #pending and of #data. */
  #pendingBytes = 0;
  #dataBytes = 0;
  /** An event passed the bound: the error the stream ends with. */
  overflow: Error | undefined;

  constructor(maxEventBytes: number) {
    this.#max = maxEventBytes;
  }

  /**
   * The start of a line whose end has not come yet, in the pieces it came in: joined once its end
   * comes, so a long line (a large artifact in one event) costs its length once, not once per
   * chunk (rescanned and recopied per chunk, 8 MiB in 16 KiB chunks took 5 s).
   */
  #pending: string[] = [];
  /** The last chunk ended in CR: a LF starting the next one is the rest of that CRLF. */
  #afterCr = false;
  #data: string[] = [];
  #event = "";

  /** The events completed by `chunk` (or, `done`, by the end of the stream). */
  push(chunk: Uint8Array | undefined, done: boolean): SseEvent[] {
    const events: SseEvent[] = [];
    const text = done ? this.#decoder.decode() : this.#decoder.decode(chunk, { stream: true });
    let start = 0;
    if (this.#afterCr && text.charCodeAt(0) === 10) start = 1;
    if (text.length > 0) this.#afterCr = false;
    for (;;) {
      if (this.overflow !== undefined) return events;
      const end = lineEnd(text, start);
      if (end < 0) break;
      let line = text.slice(start, end);
      if (this.#pending.length > 0) {
        this.#pending.push(line);
        line = this.#pending.join("");
        this.#pending = [];
        this.#pendingBytes = 0;
      }
      if (text.charCodeAt(end) === 13) {
        if (end + 1 === text.length) this.#afterCr = true;
        start = end + (text.charCodeAt(end + 1) === 10 ? 2 : 1);
      } else start = end + 1;
      this.#line(line, events);
    }
    // What is left has no line end yet; at the end of the stream it never will, and is dropped.
    if (done) this.#pending = [];
    else if (start < text.length) {
      const rest = text.slice(start);
      this.#pending.push(rest);
      if (this.#max !== Infinity) {
        this.#pendingBytes += Buffer.byteLength(rest);
        // The line still holds its field ("data: ", 6 bytes), and joins the data with a newline: an
        // event within the bound passes whether or not its last line came in one read (review).
        if (this.#pendingBytes + this.#dataBytes > this.#max + 7) this.overflow = tooLarge(this.#max, "a stream event");
      }
    }
    return events;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === "") {
      if (this.#data.length > 0) events.push({ event: this.#event === "" ? "message" : this.#event, data: this.#data.join("\n") });
      this.#data = [];
      this.#dataBytes = 0;
      this.#event = "";
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ":" a comment (heartbeats).
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "data") {
      this.#data.push(value);
      if (this.#max !== Infinity) {
        this.#dataBytes += Buffer.byteLength(value) + 1;
        if (this.#dataBytes > this.#max + 1) this.overflow = tooLarge(this.#max, "a stream event");
      }
    }
    else if (field === "event") this.#event = value;
  }
}

function lineEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) return i;
  }
  return -1;
}
