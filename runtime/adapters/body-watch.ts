/**
 * Body reads in progress, by timeout, for the node:http and fetch adapters
 * alike (D32): each group is checked by one timer a few times per timeout
 * (a late body is refused up to a quarter of its timeout late). A timer per
 * request would cost every call a Timeout object, and nearly every body is
 * in before anyone could look. The reads are slots, not a Set: one comes
 * and goes per call (D116). The fetch adapter runs on workers, Bun and Deno
 * too: nothing here needs node (the background context takes async_hooks
 * from the process where there is one).
 */
import { inBackground } from "../core/background.js";
import { SlotSet } from "../core/slots.js";

export interface PendingBody {
  readonly startedAt: number;
  /** Called once the read took its timeout: refuses the body (408). */
  readonly refuse: () => void;
  /** Its slot in its watch's reads. */
  slot: number;
}

const bodyWatches = new Map<number, { readonly timer: ReturnType<typeof setInterval>; readonly reads: SlotSet<PendingBody> }>();

/** A pending read of `startedAt` now, watched until `unwatchBody`; `refuse` is called if it is still there `timeoutMs` later. */
export function watchBody(timeoutMs: number, refuse: () => void): PendingBody {
  const pending: PendingBody = { startedAt: performance.now(), refuse, slot: -1 };
  let group = bodyWatches.get(timeoutMs);
  if (group === undefined) {
    const reads = new SlotSet<PendingBody>();
    // In the background context (D35): made in the context of the read that started the watch, it
    // held that request's (its span, a logger's request context) for as long as any body was read.
    const timer: ReturnType<typeof setInterval> = inBackground(() => setInterval(() => {
      // Stopped once a whole period passed with nothing to watch, not at every empty moment: busy servers would restart it per request.
      if (reads.size === 0) {
        clearInterval(timer);
        bodyWatches.delete(timeoutMs);
        return;
      }
      const now = performance.now();
      for (const read of reads) if (now - read.startedAt >= timeoutMs) read.refuse();
    }, Math.max(10, Math.floor(timeoutMs / 4))));
    // Where timers can be unref'd (node, Bun, Deno): a read in progress keeps no process up on its own.
    (timer as { unref?: () => void }).unref?.();
    group = { timer, reads };
    bodyWatches.set(timeoutMs, group);
  }
  pending.slot = group.reads.add(pending);
  return pending;
}

export function unwatchBody(timeoutMs: number, pending: PendingBody): void {
  bodyWatches.get(timeoutMs)?.reads.delete(pending.slot, pending);
}
