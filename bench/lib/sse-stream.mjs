// One SSE stream read as fast as raw node:http can, counting `data:` frames
// (the stream clients of bench/streams.mjs and bench/tasks.mjs): no SSE
// library is what limits.
import http from "node:http";

/** One SSE stream: resolves with { events, firstMs, wallMs, last, before } (the text of the last two data frames). */
export function sseStream({ port, path, headers, body }, agent) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let firstMs = NaN;
    let events = 0;
    let carry = "";
    let lastSegment = "";
    let previousSegment = "";
    const req = http.request(
      { host: "127.0.0.1", port, path, method: "POST", headers: { ...headers, "content-length": Buffer.byteLength(body) }, agent },
      (res) => {
        if (res.statusCode !== 200 || !String(res.headers["content-type"]).startsWith("text/event-stream")) {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c) => (text += c));
          res.on("end", () => reject(new Error(`status ${res.statusCode} ${res.headers["content-type"]}: ${text.slice(0, 300)}`)));
          return;
        }
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          const s = carry.length > 0 ? carry + chunk : chunk;
          const end = s.lastIndexOf("\n\n");
          if (end < 0) {
            carry = s;
            return;
          }
          // s[0..end) is whole frames, each starting at a frame start.
          let n = s.startsWith("data:") ? 1 : 0;
          for (let i = s.indexOf("\ndata:"); i >= 0 && i < end; i = s.indexOf("\ndata:", i + 6)) n++;
          if (n > 0 && events === 0) firstMs = performance.now() - t0;
          events += n;
          previousSegment = lastSegment;
          lastSegment = s.slice(0, end);
          carry = s.slice(end + 2);
        });
        res.on("end", () => {
          // The last two frames, from the last two segments read (a segment holds one frame or more).
          const frames = `${previousSegment}\n\n${lastSegment}`
            .split("\n\n")
            .map((f) => f.split("\n").find((line) => line.startsWith("data:")))
            .filter((line) => line !== undefined)
            .slice(-2)
            .map((line) => line.slice(5).trim());
          resolve({ events, firstMs, wallMs: performance.now() - t0, last: frames.at(-1) ?? "", before: frames.at(-2) ?? "" });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}
