/**
 * The fuzz campaign's and the soak's heap check (fuzz/server.mjs weigh())
 * weighs the heap it meant to: the server child weighed twice in a row
 * while idle gives the same heap, within 1%. Taking the heap snapshot that
 * weigh() reads the compiled code's size from changes the heap itself (on
 * Node 22 the first one stores each script's line ends, +0.6 MB that stays;
 * on Node 24 the first one frees ~1 MB); read before it, heapUsed did not
 * match the code figure, and the first weigh, the baseline, was off by that
 * (+6% on Node 22 from nothing, a failed smoke; -8% on Node 24, room a leak
 * could hide in).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { projectRoot } from "../support/protos.js";

const script = `
const { prepare } = await import(${JSON.stringify(pathToFileURL(join(projectRoot, "fuzz", "build.mjs")).href)});
const { startServer } = await import(${JSON.stringify(pathToFileURL(join(projectRoot, "fuzz", "campaign.mjs")).href)});
prepare();
const server = await startServer("fuzz");
const first = await server.child.request({ cmd: "mem" });
const second = await server.child.request({ cmd: "mem" });
await server.stop();
console.log(JSON.stringify({ first, second }));
`;

test("the fuzz server child, idle, weighs the same heap twice in a row", async () => {
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ["--input-type=module", "-e", script], { cwd: projectRoot, maxBuffer: 1024 * 1024 }, (err, stdout, stderr) =>
      err === null ? resolve(stdout) : reject(new Error(`${err.message}\n${stderr}`)),
    );
  });
  const { first, second } = JSON.parse(out.trim().split("\n").pop() as string) as Record<"first" | "second", { heap: number; raw: number; code: number }>;
  expect(first.heap).toBeGreaterThan(5 * 1048576);
  expect({ node: process.version, change: Math.abs(second.heap / first.heap - 1) <= 0.01 ? "within 1%" : `${((second.heap / first.heap - 1) * 100).toFixed(1)}%` }).toEqual({
    node: process.version,
    change: "within 1%",
  });
}, 60_000);
