import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { GeneratedFile, Printable } from "@bufbuild/protoplugin";
import Handlebars from "handlebars";
import { packageRoot } from "../package-root.js";

/**
 * Renders handlebars templates into a protoplugin GeneratedFile.
 *
 * Templates only lay out text; they cannot carry protoplugin's typed
 * printables (import symbols, JSDoc blocks, string literals). An emitter
 * therefore puts a token for each printable into the view (`ref`), and after
 * rendering the text is split at the tokens and printed with the printables
 * themselves, so GeneratedFile still owns every import.
 */
export interface Renderer {
  /** A token that stands for `printable` in a template's view. */
  ref(printable: Printable): string;
  /** Renders `templates/<name>.hbs` with `view` and prints the result. */
  print(name: string, view: object): void;
}

const token = (i: number) => `\u0000${i}\u0000`;
const tokenRE = /\u0000(\d+)\u0000/;

const handlebars = Handlebars.create();
const compiled = new Map<string, HandlebarsTemplateDelegate>();

function template(name: string): HandlebarsTemplateDelegate {
  let t = compiled.get(name);
  if (t === undefined) {
    const source = readFileSync(join(packageRoot, "templates", `${name}.hbs`), "utf8");
    t = handlebars.compile(source, { noEscape: true, strict: true });
    compiled.set(name, t);
  }
  return t;
}

export function createRenderer(f: GeneratedFile): Renderer {
  const printables: Printable[] = [];
  return {
    ref(printable) {
      printables.push(printable);
      return token(printables.length - 1);
    },
    print(name, view) {
      const text = template(name)(view).replace(/\n$/, "");
      // Nothing to lay out (e.g. no service has HTTP rules): leave the file
      // empty, so protoplugin drops it unless keep_empty_files is set.
      if (text.trim() === "") return;
      const parts = text.split(tokenRE);
      // split() with a capture group alternates text and token indexes.
      const out: Printable[] = parts.map((part, i) => (i % 2 === 0 ? part : (printables[Number(part)] as Printable)));
      f.print(...out.filter((p) => p !== ""));
    },
  };
}
