// The IPC commands every stream benchmark's server child answers alike
// (bench/streams/server.mjs, bench/tasks/server.mjs): its CPU time, its heap
// after gc, a heap snapshot, the counts of idle handlers opened and closed,
// and a wait until `closed` of them have closed. Needs --expose-gc.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { writeHeapSnapshot } from "node:v8";

/** Hooks `onCount` (the handlers' counter callback) and answers the shared commands; false for any other. */
export function createServerCommands(counts, onCount) {
  let waiter;
  onCount.fn = () => {
    if (waiter !== undefined && counts.closed >= waiter.closed) waiter.done();
  };
  return {
    gc() {
      global.gc();
      global.gc();
    },
    handle(msg) {
      switch (msg?.cmd) {
        case "cpu":
          process.send({ cpu: process.cpuUsage() });
          return true;
        case "mem": {
          this.gc();
          const m = process.memoryUsage();
          process.send({ heap: m.heapUsed, rss: m.rss, external: m.external });
          return true;
        }
        case "counts":
          process.send({ ...counts });
          return true;
        case "snapshot":
          this.gc();
          mkdirSync(dirname(msg.file), { recursive: true });
          writeHeapSnapshot(msg.file);
          process.send({ file: msg.file });
          return true;
        case "wait": {
          let timer;
          const done = () => {
            clearTimeout(timer);
            waiter = undefined;
            process.send({ ...counts });
          };
          if (counts.closed >= msg.closed) done();
          else {
            waiter = { closed: msg.closed, done };
            timer = setTimeout(done, msg.ms);
          }
          return true;
        }
        default:
          return false;
      }
    },
  };
}
