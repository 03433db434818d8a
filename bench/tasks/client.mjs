// Client child process of bench/tasks.mjs's stream parts (SSE only): reads
// streams as fast as it can with raw node:http, counting `data:` frames, as
// bench/streams/client.mjs does, and reports over IPC.
//   <- { stream: { port, path, headers, body, n, events, envelope, reps, budgetMs } }
//        runs SendStreamingMessage streams one after the other over one
//        kept-alive connection (at least 1, at most `reps`, until `budgetMs`
//        is spent) and checks every one: `events` data frames (N + 1 or
//        N + 2), chunk N-1 of artifact "stream" with lastChunk among the last
//        two, and when N + 2 the last one the COMPLETED status update
//   -> { streams: [{ events, wallMs, firstMs }], error?, cpuMs, wallMs }
//   <- { prepare: { port, path, headers, body, count, envelope } }
//        POSTs `body` (a SendMessage with returnImmediately) `count` times,
//        32 at a time, and checks that each answer is a WORKING task
//   -> { ids: [task ids] }
//   <- { open: { port, requests: [{ method, path, headers, body? }] } }
//        opens one stream per request at once, each on its own connection,
//        and answers once every one received its first event
//   -> { opened, ms }
//   <- { close: true }   destroys every open stream's socket
//   -> { closed }
import http from "node:http";
import { sseStream as sseStreamOn } from "../lib/sse-stream.mjs";
import { artifactId, chunkText } from "../streams/fixture.mjs";

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
const sseStream = (spec) => sseStreamOn(spec, keepAlive);

const unwrap = (text, envelope) => {
  const value = JSON.parse(text);
  return envelope ? value.result : value;
};

function isLastChunk(event, n) {
  const u = event?.artifactUpdate;
  return u?.artifact?.artifactId === artifactId && u.artifact.parts?.[0]?.text === chunkText(n - 1) && u.lastChunk === true && u.taskId !== "";
}

/** Checks the end of an N-chunk stream of `events` events; an error text or undefined. */
function checkEnd(r, n, events, envelope) {
  if (r.events !== events) return `${r.events} events, expected ${events}`;
  const last = unwrap(r.last, envelope);
  if (events === n + 1) return isLastChunk(last, n) ? undefined : `last event is not chunk ${n - 1} with lastChunk: ${r.last.slice(0, 300)}`;
  const before = unwrap(r.before, envelope);
  if (!isLastChunk(before, n)) return `the event before the last is not chunk ${n - 1} with lastChunk: ${r.before.slice(0, 300)}`;
  const u = last?.statusUpdate;
  if (u?.status?.state !== "TASK_STATE_COMPLETED" || u.taskId !== before.artifactUpdate.taskId) return `last event is not the task's COMPLETED status: ${r.last.slice(0, 300)}`;
  return undefined;
}

async function runStreams(spec) {
  const { n, events, envelope, reps, budgetMs } = spec;
  const streams = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let error;
  try {
    do {
      const r = await sseStream(spec);
      const bad = checkEnd(r, n, events, envelope);
      if (bad !== undefined) throw new Error(bad);
      streams.push({ events: r.events, wallMs: r.wallMs, firstMs: r.firstMs });
    } while (streams.length < reps && performance.now() - t0 < budgetMs);
  } catch (err) {
    error = String(err?.message ?? err);
  }
  const cpu = process.cpuUsage(cpu0);
  return { streams, error, cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0 };
}

// --- working tasks, and idle streams following them ---

function post({ port, path, headers, body }, agent) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method: "POST", headers: { ...headers, "content-length": Buffer.byteLength(body) }, agent }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function prepare(spec) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const ids = [];
  let next = 0;
  const one = async () => {
    while (next++ < spec.count) {
      const { status, text } = await post(spec, agent);
      const task = status === 200 ? unwrap(text, spec.envelope)?.task : undefined;
      if (task?.status?.state !== "TASK_STATE_WORKING" || typeof task.id !== "string" || task.id === "") {
        throw new Error(`SendMessage (returnImmediately) did not answer a WORKING task: ${status} ${text.slice(0, 300)}`);
      }
      ids.push(task.id);
    }
  };
  try {
    await Promise.all(Array.from({ length: 32 }, one));
  } finally {
    agent.destroy();
  }
  return { ids };
}

let open = [];

async function openStreams({ port, requests }) {
  const t0 = performance.now();
  const count = requests.length;
  let first = 0;
  let resolveAll;
  let rejectAll;
  const all = new Promise((res, rej) => ((resolveAll = res), (rejectAll = rej)));
  const gotFirst = () => {
    if (++first === count) resolveAll();
  };
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  for (const { method, path, headers, body } of requests) {
    const h = body === undefined ? headers : { ...headers, "content-length": Buffer.byteLength(body) };
    const req = http.request({ host: "127.0.0.1", port, path, method, headers: h, agent }, (res) => {
      if (res.statusCode !== 200 || !String(res.headers["content-type"]).startsWith("text/event-stream")) {
        rejectAll(new Error(`status ${res.statusCode} ${res.headers["content-type"]}`));
      }
      res.setEncoding("utf8");
      let seen = "";
      const onData = (c) => {
        seen += c;
        if (seen.includes("data:")) {
          res.off("data", onData);
          res.on("data", () => undefined);
          gotFirst();
        }
      };
      res.on("data", onData);
    });
    req.on("error", (err) => rejectAll(err));
    req.end(body);
    open.push(req);
  }
  if (count === 0) resolveAll();
  await all;
  return { opened: first, ms: performance.now() - t0 };
}

async function closeStreams() {
  const n = open.length;
  await Promise.all(
    open.map(
      (req) =>
        new Promise((r) => {
          req.once("close", r);
          req.destroy();
        }),
    ),
  );
  open = [];
  return { closed: n };
}

process.on("message", async (msg) => {
  try {
    if (msg?.stream !== undefined) process.send(await runStreams(msg.stream));
    else if (msg?.prepare !== undefined) process.send(await prepare(msg.prepare));
    else if (msg?.open !== undefined) process.send(await openStreams(msg.open));
    else if (msg?.close !== undefined) process.send(await closeStreams());
  } catch (err) {
    process.send({ error: String(err?.message ?? err) });
  }
});
process.on("disconnect", () => process.exit(0));
