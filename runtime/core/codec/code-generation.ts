/**
 * The one place the runtime turns source text into functions (`new
 * Function`), for code specialised per message type: the binary codec's
 * field access (codec-fields.ts) and zero messages (message-zero.ts). Every
 * caller has a slower path without it, used where the platform disallows
 * code generation from strings (`--disallow-code-generation-from-strings`,
 * some sandboxes) or a source does not compile.
 */

let allowed = true;
/** False once `new Function` threw EvalError: the platform disallows it, so nothing tries again. */
let platformAllows = true;

/**
 * Whether the runtime may generate code (default: yes, where the platform
 * allows it). Turned off, everything compiled afterwards takes its path
 * without generated code: for tests of that path.
 */
export function allowCodeGeneration(allow: boolean): void {
  allowed = allow;
}

/** Names a value the generated source uses: returns the identifier it is bound to there. */
export type Ref = (value: unknown) => string;

/**
 * The value returned by the body `build` writes (strict mode), or undefined
 * where code generation is not allowed, `build` gives up (returns
 * undefined) or the body does not compile (a message too big, say). Values
 * reach the body only through `ref`, bound once, outside the returned
 * functions; the source itself may spell only descriptor data quoted with
 * JSON.stringify, and integers.
 */
export function generate<T>(build: (ref: Ref) => string | undefined): T | undefined {
  if (!allowed || !platformAllows) return undefined;
  const values: unknown[] = [];
  const body = build((value) => {
    values.push(value);
    return `a${values.length - 1}`;
  });
  if (body === undefined) return undefined;
  // One array, not one parameter per value: thousands of fields would overflow the call's stack.
  const bind = values.map((_, i) => `const a${i} = values[${i}];`).join("\n");
  try {
    return new Function("values", `"use strict";\n${bind}\n${body}`)(values) as T;
  } catch (e) {
    if (e instanceof EvalError) platformAllows = false;
    return undefined;
  }
}
