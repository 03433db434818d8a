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

/**
 * Runs `body` (strict mode) as a function of one parameter, `args`, and
 * returns what it returns; undefined where code generation is not allowed
 * or the body does not compile (a message too big, say). Values go in
 * `args`, never into the source: only descriptor data quoted with
 * JSON.stringify, and integers, may be spelled out in `body`.
 */
export function runGenerated<T>(body: string, args: readonly unknown[]): T | undefined {
  if (!allowed || !platformAllows) return undefined;
  try {
    return new Function("args", `"use strict";\n${body}`)(args) as T;
  } catch (e) {
    if (e instanceof EvalError) platformAllows = false;
    return undefined;
  }
}
