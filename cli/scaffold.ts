/**
 * Renders a folder of handlebars templates (`templates/<name>/`, each file
 * `<path>.hbs`) into a new folder. `gitignore.hbs` becomes `.gitignore`
 * (npm drops files named .gitignore from packages). Templates are compiled
 * in strict mode, so a hole the context does not fill is an error, not an
 * empty string; `{{{json x}}}` writes a JSON value.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import Handlebars from "handlebars";
import { packageRoot } from "./package-root.js";

const renamed: Readonly<Record<string, string>> = { gitignore: ".gitignore" };

function templateFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? templateFiles(join(dir, entry.name)) : entry.name.endsWith(".hbs") ? [join(dir, entry.name)] : []))
    .sort();
}

/** Renders every template of `templates/<template>` with `context`; returns the paths written, relative to `outDir`. */
export function renderTemplates(template: string, outDir: string, context: object): string[] {
  const templates = join(packageRoot(), "templates", template);
  const handlebars = Handlebars.create();
  handlebars.registerHelper("json", (value: unknown) => JSON.stringify(value));
  return templateFiles(templates).map((file) => {
    const path = relative(templates, file).slice(0, -".hbs".length);
    const base = path.split("/").pop() ?? path;
    const target = join(dirname(path), renamed[base] ?? base);
    const render = handlebars.compile(readFileSync(file, "utf8"), { noEscape: true, strict: true });
    const out = join(outDir, target);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, render(context));
    return target;
  });
}
