// What the "ceiling-together" targets add to a ceiling server: every
// res.end(body) of a turn of the event loop is held and run at the turn's
// end (setImmediate), at most 64 together: the way ours writes its unary
// answers on node:http (D115), written out here so the ceiling stays bare
// node:http. It shows whether that way of writing lifts the ceiling itself:
// if it did, ours-tasks/ceiling would credit ours with it.
const MOST = 64;
let ends = [];
let bodies = [];

function endAll() {
  const e = ends;
  const b = bodies;
  ends = [];
  bodies = [];
  for (let i = 0; i < e.length; i++) e[i](b[i]);
}

/** `server` with its request listener's res.end held to the end of the turn. */
export function endingTogether(server) {
  const listeners = server.listeners("request");
  server.removeAllListeners("request");
  server.on("request", (req, res) => {
    const end = res.end.bind(res);
    res.end = (body) => {
      if (ends.length === 0) setImmediate(endAll);
      ends.push(end);
      bodies.push(body);
      if (ends.length >= MOST) endAll();
      return res;
    };
    for (const l of listeners) l(req, res);
  });
  return server;
}
