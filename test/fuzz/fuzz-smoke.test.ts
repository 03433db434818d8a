/**
 * A short run of the fuzz campaign (`npm run fuzz`, fuzz/fuzz.mjs: the same
 * harness, its server child, generators and oracle) on all three bindings:
 * a few thousand mutated requests each, after a warm-up, within ~20 s of
 * requests. Zero findings: no Internal answer to a client mistake, no hang,
 * no crash or unhandled rejection or onError in the server child, and its
 * heap back within 5% of the baseline. Then the JSON bindings once more
 * with 0.3 callers (FUZZ_COMPAT=1), whose layer the campaign found failures in.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot, scratchDir } from "../support/protos.js";

interface BindingReport {
  binding: string;
  requests: number;
  ok: boolean;
  findings: unknown[];
  outcomes: Record<string, number>;
  child: { uncaught: number; unhandled: number; onError: number; executorErrors: number; compat: boolean };
  heap: { baseline: number; after: number; ratio: number };
}

/** Runs fuzz/fuzz.mjs with `extra` in its environment; its exit code, output and JSON report. */
async function runCampaign(extra: Record<string, string>): Promise<{ code: number | null; output: string; reports: BindingReport[] }> {
  const { dir, done } = scratchDir("fuzz-smoke");
  try {
    const file = join(dir, "report.json");
    const env = { ...process.env, FUZZ_COUNT: "2500", FUZZ_SECONDS: "4", FUZZ_WARMUP: "1500", FUZZ_SEED: "7", FUZZ_REPORT: file, ...extra };
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = execFile(process.execPath, [join(projectRoot, "fuzz", "fuzz.mjs")], { cwd: projectRoot, env, maxBuffer: 10 * 1024 * 1024 }, (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : ((err as { code?: number }).code ?? null), output: `${stdout}${stderr}` }),
      );
      child.stdin?.end();
    });
    return { code, output, reports: (JSON.parse(readFileSync(file, "utf8")) as { reports: BindingReport[] }).reports };
  } finally {
    done();
  }
}

function expectClean(r: BindingReport): void {
  // Requests were sent and answered: the oracle had something to judge.
  expect(r.requests).toBeGreaterThan(300);
  expect(r.findings).toEqual([]);
  expect(r.child).toMatchObject({ uncaught: 0, unhandled: 0, onError: 0, executorErrors: 0 });
  expect(r.heap.ratio).toBeLessThanOrEqual(1.05);
  expect(r.ok).toBe(true);
}

test("the fuzz campaign's smoke: JSON-RPC, HTTP+JSON and gRPC, no findings", async () => {
  const { code, output, reports } = await runCampaign({});
  expect(reports.map((r) => r.binding)).toEqual(["jsonrpc", "http-json", "grpc"]);
  for (const r of reports) expectClean(r);
  expect({ code, output: code === 0 ? "" : output }).toEqual({ code: 0, output: "" });
}, 180_000);

test("its smoke with 0.3 callers (FUZZ_COMPAT=1): 0.3's calls and routes through the 0.3 layer, no findings", async () => {
  const { code, output, reports } = await runCampaign({ FUZZ_COMPAT: "1", FUZZ_BINDINGS: "jsonrpc,http-json" });
  expect(reports.map((r) => r.binding)).toEqual(["jsonrpc", "http-json"]);
  for (const r of reports) {
    expectClean(r);
    // The server child did take 0.3 callers: else 0.3's calls would all be refused, and pass.
    expect(r.child.compat).toBe(true);
  }
  expect({ code, output: code === 0 ? "" : output }).toEqual({ code: 0, output: "" });
}, 120_000);
