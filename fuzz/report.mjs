// The campaign's report as text.
const mb = (b) => (b === undefined ? "?" : `${(b / 1048576).toFixed(2)} MB`);

export function formatReport(summary) {
  const lines = [`fuzz campaign ${summary.date}, ${summary.seconds.toFixed(0)} s, node ${summary.node}, seed ${summary.options.seed}, ${summary.options.concurrency} in flight`];
  for (const r of summary.reports) {
    lines.push("");
    lines.push(`${r.binding}: ${r.requests} requests (+${r.warmup} warm-up) in ${r.seconds.toFixed(1)} s (${Math.round(r.requests / Math.max(r.seconds, 0.001))}/s): ${r.ok ? "OK" : "FINDINGS"}`);
    lines.push(`  answers: ${Object.entries(r.outcomes).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(", ")}`);
    lines.push(`  findings: ${r.findings.length === 0 ? "none" : Object.entries(r.problems).map(([k, v]) => `${k} ${v}`).join(", ")}`);
    const c = r.child;
    lines.push(`  server child: uncaughtException ${c.uncaught}, unhandledRejection ${c.unhandled}, onError ${c.onError}, executor errors ${c.executorErrors}, tasks held ${c.tasks}, push deliveries (counted, not sent) ${c.pushed}`);
    for (const s of c.samples ?? []) lines.push(`    ${s.kind}: ${s.error.split("\n").slice(0, 4).join(" | ")} ${JSON.stringify(s.info ?? {})}`);
    lines.push(heapLine(r.heap));
    for (const m of r.minimized) lines.push(`  minimized (${m.shrinks ?? 0} shrinks): ${m.problem}${m.note ? ` (${m.note})` : ""}\n    request: ${JSON.stringify(m.request)}\n    answer: ${JSON.stringify(m.answer)}`);
  }
  return lines.join("\n");
}

/** The compiled code may grow by this much over a campaign (it grew by 0.5-0.8 MB over a million requests); past it, it is counted as a leak too. */
export const codeGrowthLimit = 2 * 1048576;

/**
 * Stores what the server child answered to "mem" (fuzz/server.mjs weigh())
 * as the heap's `baseline` or `after`, and once both are there, the ratio the
 * limit applies to and whether the heap is within its bounds: what the
 * server holds within 5% of its baseline, and the compiled code within
 * codeGrowthLimit (code compiled per request, `new Function` say, would
 * grow it without end).
 */
export function weighInto(heap, which, answer) {
  heap[which] = answer.heap;
  heap[which === "baseline" ? "rawBaseline" : "rawAfter"] = answer.raw;
  heap[which === "baseline" ? "codeBaseline" : "codeAfter"] = answer.code;
  if (heap.baseline !== undefined && heap.after !== undefined) {
    heap.ratio = heap.after / heap.baseline;
    heap.ok = heap.ratio <= 1.05 && heap.codeAfter - heap.codeBaseline <= codeGrowthLimit;
  }
}

const percent = (after, baseline) => (after === undefined || baseline === undefined ? "?" : `${after >= baseline ? "+" : ""}${((after / baseline - 1) * 100).toFixed(1)}%`);

/**
 * The heap's line of a report (fuzz/server.mjs weighs it): what the server
 * holds, V8's compiled code left out, against the limit; then heapUsed
 * after three collections, and the compiled code's part of its change.
 */
export function heapLine(heap) {
  const kb = heap.codeBaseline === undefined || heap.codeAfter === undefined ? "?" : ((heap.codeAfter - heap.codeBaseline) / 1024).toFixed(0);
  return (
    `  heap without V8's compiled code: baseline ${mb(heap.baseline)}, after ${mb(heap.after)} (${percent(heap.after, heap.baseline)}; limit +5%)` +
    `; heapUsed ${mb(heap.rawBaseline)} -> ${mb(heap.rawAfter)} (${percent(heap.rawAfter, heap.rawBaseline)}), compiled code ${mb(heap.codeBaseline)} -> ${mb(heap.codeAfter)} (${Number(kb) >= 0 ? "+" : ""}${kb} KB; limit +${codeGrowthLimit / 1048576} MB)`
  );
}
