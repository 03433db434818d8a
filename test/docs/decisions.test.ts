/**
 * docs/decisions.md is where every `D<n>` the code, tests and README cite is
 * written down. This keeps the two together: each citation resolves to a
 * `## D<n>: <title>` heading, the headings run D1, D2, ... without gaps or
 * repeats, and each decision names the spec sections it rests on.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// Found from this file, not through test/support/protos.ts: that module
// imports the plugin, and this test needs nothing but files.
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const decisionsPath = "docs/decisions.md";

/** Where decisions are cited: source, templates, tests and docs. */
const scanned = ["bin", "cli", "runtime", "plugin", "templates", "examples", "bench", "scripts", "test", "README.md", "bench/README.md"];

/**
 * A citation: `D` and a number standing as a word of its own, so `D3Foo`,
 * `0xD1` or `ABD12` are not citations. Every match in the scanned files
 * was checked to be one when this test was written; if a match ever is not
 * (a hex string, a regex escape), exclude it here with a rule as narrow as
 * that case and say why.
 */
const citation = /\bD(\d{1,3})\b/g;

/**
 * The files to scan: tracked ones, plus new ones not yet added (so a
 * citation in a file being written is checked too), minus the golden
 * outputs, which only repeat what the templates say. A tracked file that is
 * gone from the working tree (moved, not yet committed) is skipped.
 */
function scannedFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ...scanned], {
    cwd: root,
    encoding: "utf8",
  });
  const files = new Set(out.split("\0").filter((f) => f !== "" && !f.startsWith("test/golden/")));
  return [...files].filter((f) => existsSync(join(root, f))).sort();
}

interface Citation {
  readonly where: string;
  readonly number: number;
}

function citations(): Citation[] {
  const found: Citation[] = [];
  for (const file of scannedFiles()) {
    const text = readFileSync(join(root, file), "utf8");
    if (text.includes("\0")) continue; // not text
    text.split("\n").forEach((line, i) => {
      for (const m of line.matchAll(citation)) found.push({ where: `${file}:${i + 1}`, number: Number(m[1]) });
    });
  }
  return found;
}

interface Section {
  readonly number: number;
  readonly heading: string;
  readonly body: string;
}

const decisions = readFileSync(join(root, decisionsPath), "utf8");

/** The `## D<n>: <title>` sections, in file order, each up to the next `## ` heading. */
function sections(): Section[] {
  const headings = [...decisions.matchAll(/^## D(\d+): \S.*$/gm)];
  return headings.map((m) => {
    const start = (m.index ?? 0) + m[0].length;
    const next = decisions.slice(start).search(/^## /m);
    return {
      number: Number(m[1]),
      heading: m[0],
      body: next < 0 ? decisions.slice(start) : decisions.slice(start, start + next),
    };
  });
}

test("every decision cited in the code, tests and README has a section in docs/decisions.md", () => {
  const cited = citations();
  // A scan that found nothing would pass vacuously: the README cites D6 in a heading.
  expect(cited.some((c) => c.where.startsWith("README.md:") && c.number === 6)).toBe(true);
  const defined = new Set(sections().map((s) => s.number));
  const unresolved = cited.filter((c) => !defined.has(c.number)).map((c) => `${c.where}: D${c.number}`);
  expect(unresolved).toEqual([]);
});

/**
 * The numbers in order, each block run without its gaps: a block is what starts at D1 or where the
 * numbers jump to a multiple of ten (the block a parallel branch took, as docs/decisions.md says).
 * A jump anywhere else (from 31 to 33) is a gap.
 */
function gaps(numbers: readonly number[]): string[] {
  const found: string[] = [];
  numbers.forEach((n, i) => {
    const expected = i === 0 ? 1 : (numbers[i - 1] ?? 0) + 1;
    if (n === expected) return;
    if (i > 0 && n > expected && n % 10 === 0) return; // the start of a reserved block
    found.push(`D${n} where D${expected} was expected`);
  });
  return found;
}

test("decision headings run D1, D2, ... with no gaps and no repeats (a reserved block starts at a multiple of ten)", () => {
  const numbers = sections().map((s) => s.number);
  expect(numbers.length).toBeGreaterThan(0);
  expect(gaps(numbers)).toEqual([]);
  expect(new Set(numbers).size).toBe(numbers.length);
  // The check catches what it is for.
  expect(gaps([1, 2, 4])).toEqual(["D4 where D3 was expected"]);
  expect(gaps([1, 2, 60, 61])).toEqual([]);
  expect(gaps([1, 2, 60, 62])).toEqual(["D62 where D61 was expected"]);
  expect(gaps([1, 2, 2])).toEqual(["D2 where D3 was expected"]);
  // A heading that starts like a decision but is not of the form `## D<n>: <title>` would escape the checks.
  const malformed = decisions.split("\n").filter((line) => /^#+\s*D\d/.test(line) && !/^## D\d+: \S/.test(line));
  expect(malformed).toEqual([]);
});

test("every decision names the spec sections it follows and states the decision", () => {
  const incomplete = sections()
    .filter((s) => !/^\*\*Spec:\*\*.*§\d/m.test(s.body) || !/^\*\*Decision:\*\* \S/m.test(s.body))
    .map((s) => s.heading);
  expect(incomplete).toEqual([]);
});
