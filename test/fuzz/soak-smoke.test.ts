/**
 * A short run of the stream soak (`npm run soak`, fuzz/soak.mjs: the same
 * harness and server child): a few hundred streams per binding, opened and
 * cut by the client at random points. Every cut stream whose call reached
 * the handler ended there (its signal aborted, or it had run to its end or
 * answered an error first), no crash, rejection or onError in the server
 * child, every executor done, and its heap back within 5% of the baseline.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot, scratchDir } from "../support/protos.js";

interface SoakReport {
  binding: string;
  streams: number;
  cut: number;
  ok: boolean;
  handler: { aborted: number; completed: number; failed: number; neverCalled: number; stillOpen: number };
  child: { uncaught: number; unhandled: number; onError: number; executorErrors: number };
  heap: { ratio: number };
}

test("the stream soak's smoke: streams cut at random points on JSON-RPC, HTTP+JSON and gRPC end their handlers", async () => {
  const { dir, done } = scratchDir("soak-smoke");
  try {
    const file = join(dir, "report.json");
    const env = { ...process.env, SOAK_STREAMS: "200", SOAK_CONCURRENCY: "32", SOAK_SEED: "3", SOAK_REPORT: file };
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      execFile(process.execPath, [join(projectRoot, "fuzz", "soak.mjs")], { cwd: projectRoot, env, maxBuffer: 10 * 1024 * 1024 }, (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? null), output: `${stdout}${stderr}` }),
      );
    });
    const { reports } = JSON.parse(readFileSync(file, "utf8")) as { reports: SoakReport[] };
    expect(reports.map((r) => r.binding)).toEqual(["jsonrpc", "http-json", "grpc"]);
    for (const r of reports) {
      expect(r.streams).toBe(200);
      // Most streams are cut mid-way, and most of those reached a handler, which saw its signal aborted.
      expect(r.cut).toBeGreaterThan(100);
      expect(r.handler.aborted).toBeGreaterThan(50);
      expect(r.handler.stillOpen).toBe(0);
      expect(r.handler.aborted + r.handler.completed + r.handler.failed + r.handler.neverCalled).toBe(r.cut);
      expect(r.child).toMatchObject({ uncaught: 0, unhandled: 0, onError: 0, executorErrors: 0 });
      expect(r.heap.ratio).toBeLessThanOrEqual(1.05);
      expect(r.ok).toBe(true);
    }
    expect({ code, output: code === 0 ? "" : output }).toEqual({ code: 0, output: "" });
  } finally {
    done();
  }
}, 180_000);
