// What bench/router.mjs and bench/plugin-scale.mjs share to time lookups in-process: the
// synthetic routes in a2a.proto's shapes, a batch of router matches, and the interleaved
// timing of batches (each case timed in turn, the order rotated, the median batch kept).

/**
 * Synthetic service `i`'s routes, in the shapes a2a.proto has: an item GET, a custom verb, a
 * streaming verb, a collection POST, a nested config GET and DELETE, and the `{tenant}` forms.
 */
export function syntheticTemplates(i) {
  return [
    ["GET", `/svc${i}/items/{id}`],
    ["POST", `/svc${i}/items/{id}:action${i}`],
    ["GET", `/svc${i}/items/{id}:watch`],
    ["POST", `/svc${i}/items`],
    ["GET", `/svc${i}/items/{item_id}/configs/{id}`],
    ["DELETE", `/svc${i}/items/{item_id}/configs/{id}`],
    ["GET", `/{tenant}/svc${i}/items/{id}`],
    ["POST", `/{tenant}/svc${i}/items/{id}:action${i}`],
  ];
}

let sink = 0;

/** ns per match of `n` matches of one request. */
export function matchBatch(router, method, path, n) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) sink += router.match(method, path).kind.length;
  return Number(process.hrtime.bigint() - t0) / n;
}

/** Keeps the loops' results observable, so no batch is optimized away. */
export function keepSink() {
  if (sink === 0) console.log("");
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * The median of `batches` runs of each case, where a case is a function that times one batch
 * and returns its ns per operation; the cases run in turn within each batch, in an order that
 * rotates so that no case always follows a switch.
 */
export function interleavedMedians(cases, batches) {
  const samples = cases.map(() => []);
  for (let b = 0; b < batches; b++) {
    for (let j = 0; j < cases.length; j++) {
      const k = (j + b) % cases.length;
      samples[k].push(cases[k]());
    }
  }
  return samples.map(median);
}
