/**
 * Command lines, parsed by node's util.parseArgs (strict: an unknown option
 * or a missing value is an error naming it) and described once, so each
 * command's `--help` is printed from the same table the parser reads.
 */
import { parseArgs } from "node:util";
import { UsageError } from "./errors.js";

export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  /** What the value is, in the help (`<dir>`); string options only. */
  readonly value?: string;
  readonly description: string;
  /** For string options: the values allowed (checked; listed in the help). */
  readonly choices?: readonly string[];
  readonly default?: string;
  /** Booleans that default to on: `--no-<name>` turns them off. */
  readonly negatable?: boolean;
}

export interface PositionalSpec {
  readonly name: string;
  readonly description: string;
  readonly required: boolean;
}

export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly positionals: readonly PositionalSpec[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Paragraphs printed after the options. */
  readonly details?: string;
}

export interface ParsedArgs {
  readonly positionals: readonly string[];
  /** String options (given, or their default). */
  readonly strings: Readonly<Record<string, string | undefined>>;
  /** Boolean options: a negatable one is true unless `--no-<name>` was given. */
  readonly flags: Readonly<Record<string, boolean>>;
  readonly help: boolean;
}

export const program = "protoc-gen-a2a";

export function parseCommand(spec: CommandSpec, argv: readonly string[]): ParsedArgs {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = { help: { type: "boolean", short: "h" } };
  for (const [name, option] of Object.entries(spec.options)) {
    options[name] = option.short === undefined ? { type: option.type } : { type: option.type, short: option.short };
    if (option.negatable === true) options[`no-${name}`] = { type: "boolean" };
  }
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true }) as {
      values: Record<string, string | boolean | undefined>;
      positionals: string[];
    });
  } catch (err) {
    throw new UsageError(`${program} ${spec.name}: ${describeParseError(err as Error)}\nRun \`${program} ${spec.name} --help\` for its options.`);
  }
  const help = values.help === true;
  const strings: Record<string, string | undefined> = {};
  const flags: Record<string, boolean> = {};
  for (const [name, option] of Object.entries(spec.options)) {
    if (option.type === "string") {
      const value = values[name] as string | undefined;
      if (value !== undefined && option.choices !== undefined && !option.choices.includes(value)) {
        throw new UsageError(`${program} ${spec.name}: --${name} must be one of ${option.choices.join(", ")}, not "${value}"`);
      }
      strings[name] = value ?? option.default;
    } else {
      flags[name] = option.negatable === true ? values[`no-${name}`] !== true : values[name] === true;
    }
  }
  if (!help) {
    const required = spec.positionals.filter((p) => p.required).length;
    if (positionals.length < required) {
      const missing = spec.positionals[positionals.length];
      throw new UsageError(`${program} ${spec.name}: missing <${missing?.name}> (${missing?.description})\nUsage: ${usageLine(spec)}`);
    }
    if (positionals.length > spec.positionals.length) {
      throw new UsageError(`${program} ${spec.name}: unexpected argument "${positionals[spec.positionals.length]}"\nUsage: ${usageLine(spec)}`);
    }
  }
  return { positionals, strings, flags, help };
}

/** parseArgs' messages name the option; they also say "To specify a positional ..." which is noise here. */
function describeParseError(err: Error): string {
  return err.message.split("\n")[0]?.replace(/\. To specify a positional argument.*$/, "") ?? err.message;
}

export function usageLine(spec: CommandSpec): string {
  const args = spec.positionals.map((p) => (p.required ? `<${p.name}>` : `[${p.name}]`));
  return [program, spec.name, ...(Object.keys(spec.options).length > 0 ? ["[options]"] : []), ...args].join(" ");
}

export function commandHelp(spec: CommandSpec): string {
  const lines = [`Usage: ${usageLine(spec)}`, "", spec.summary];
  if (spec.positionals.length > 0) {
    lines.push("", "Arguments:");
    for (const p of spec.positionals) lines.push(formatRow(p.required ? `<${p.name}>` : `[${p.name}]`, p.description));
  }
  lines.push("", "Options:");
  for (const [name, option] of Object.entries(spec.options)) {
    const flag = option.negatable === true ? `--no-${name}` : `${option.short === undefined ? "" : `-${option.short}, `}--${name}${option.type === "string" ? ` ${option.value ?? "<value>"}` : ""}`;
    let text = option.description;
    if (option.choices !== undefined) text += ` (one of: ${option.choices.join(", ")})`;
    if (option.default !== undefined) text += ` [default: ${option.default}]`;
    lines.push(formatRow(flag, text));
  }
  lines.push(formatRow("-h, --help", "Show this help"));
  if (spec.details !== undefined) lines.push("", spec.details);
  return `${lines.join("\n")}\n`;
}

function formatRow(left: string, right: string): string {
  return `  ${left.padEnd(26)} ${right}`;
}
