/**
 * Server-sent events read from a fetch body, as the HTML standard's event
 * stream parser reads them (lines ending in LF, CR or CRLF; `data` lines
 * joined with LF; `event`; comments and other fields ignored; an event is
 * dispatched at a blank line, and one cut off at the end of the stream is
 * dropped). Both JSON bindings stream this way (D14).
 */

export interface SseEvent {
  /** The `event` field; "message" when absent. */
  readonly event: string;
  readonly data: string;
}

/** The events of `body`, in order. Returning early cancels the body. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = "";
  let data: string[] = [];
  let event = "";
  let done = false;
  try {
    while (!done) {
      const chunk = await reader.read();
      done = chunk.done;
      buffer += done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      let start = 0;
      for (;;) {
        const end = lineEnd(buffer, start);
        if (end < 0) break;
        const line = buffer.slice(start, end);
        // A CR at the very end may be the first half of a CRLF still on its way.
        if (buffer.charCodeAt(end) === 13 && end + 1 === buffer.length && !done) break;
        start = end + (buffer.charCodeAt(end) === 13 && buffer.charCodeAt(end + 1) === 10 ? 2 : 1);
        if (line === "") {
          if (data.length > 0) yield { event: event === "" ? "message" : event, data: data.join("\n") };
          data = [];
          event = "";
          continue;
        }
        if (line.charCodeAt(0) === 58) continue; // ":" a comment (heartbeats).
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.charCodeAt(0) === 32) value = value.slice(1);
        if (field === "data") data.push(value);
        else if (field === "event") event = value;
      }
      buffer = buffer.slice(start);
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

function lineEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) return i;
  }
  return -1;
}
