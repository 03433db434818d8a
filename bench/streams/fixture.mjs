// What every streams target serves (bench/streams.mjs): SendStreamingMessage
// whose message text says what to do.
//   "stream <N>"  first a working Task, then N artifact-update chunks of one
//                 artifact ("chunk 0" .. "chunk <N-1>", the last with
//                 lastChunk), then the stream ends: N + 1 events in all;
//   "idle"        the working Task, then the handler waits (ours: until the
//                 call's signal aborts; a2a-js, and a2a-js-full's executor:
//                 until the bench says "release", since the SDK gives them no
//                 signal) and its finally block reports to the server
//                 process.
export const taskId = "task-stream";
export const contextId = "ctx-1";
export const artifactId = "stream";
export const chunkText = (i) => `chunk ${i}`;

export const streamText = (n) => `stream ${n}`;
export const idleText = "idle";

/** The number of chunks a message text asks for, or "idle". */
export function parseText(text) {
  if (text === idleText) return "idle";
  const m = /^stream (\d+)$/.exec(text ?? "");
  if (m === null) throw new Error(`unexpected message text ${JSON.stringify(text)}`);
  return Number(m[1]);
}

/** The ProtoJSON message a client sends. */
export const messageJson = (text) => ({
  messageId: "msg-stream",
  contextId,
  role: "ROLE_USER",
  parts: [{ text }],
});

export const a2aVersion = "1.0";

/** JSON-RPC request body (both "ours" and a2a-js use the v1.0 method name). */
export const jsonRpcBody = (text) =>
  JSON.stringify({ jsonrpc: "2.0", id: 7, method: "SendStreamingMessage", params: { message: messageJson(text) } });

/** HTTP+JSON (REST) request body of POST /message:stream. */
export const restBody = (text) => JSON.stringify({ message: messageJson(text) });

/**
 * Checks the last event of an N-chunk stream, a ProtoJSON StreamResponse
 * (unwrapped from the JSON-RPC envelope by the caller); returns an error
 * text or undefined.
 */
export function checkLastEvent(event, n) {
  const u = event?.artifactUpdate;
  const text = u?.artifact?.parts?.[0]?.text;
  if (u?.taskId !== taskId || u?.artifact?.artifactId !== artifactId || text !== chunkText(n - 1) || u?.lastChunk !== true) {
    return `last event is not chunk ${n - 1} with lastChunk: ${JSON.stringify(event)?.slice(0, 300)}`;
  }
  return undefined;
}
