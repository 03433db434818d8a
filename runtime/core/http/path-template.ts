/**
 * The one parser of `google.api.http` path templates. The plugin validates
 * templates with it at generation time and the router matches requests with
 * what it returns, so the two can never disagree about what a template means.
 *
 * Grammar (google/api/http.proto):
 *
 *     Template = "/" Segments [ Verb ] ;
 *     Segments = Segment { "/" Segment } ;
 *     Segment  = "*" | "**" | LITERAL | Variable ;
 *     Variable = "{" FieldPath [ "=" Segments ] "}" ;
 *     FieldPath = IDENT { "." IDENT } ;
 *     Verb     = ":" LITERAL ;
 *
 * Choices where the grammar leaves room (each one tested):
 * - `**` must be the last segment (before the verb), as the grammar's comment
 *   says; literals after `**` are rejected.
 * - The verb starts at the first `:` after the last `/` outside braces, so
 *   `/v1/{name}:a:b` has the verb `a:b` and a `:` inside an earlier literal
 *   segment (`/a:b/c`) is part of that literal.
 * - Literals are kept percent-encoded, because requests are matched on the raw
 *   path (split first, decode captured values only).
 */

/** One segment of a parsed template. Literals keep their raw (encoded) text. */
export type TemplateSegment =
  | { readonly kind: "literal"; readonly value: string }
  | { readonly kind: "wildcard" }
  | { readonly kind: "deep_wildcard" };

/** A `{field.path=pattern}` capture over a run of segments. */
export interface TemplateVariable {
  /** Proto field names from the request message, outermost first. */
  readonly fieldPath: readonly string[];
  /** Index of the first segment the variable covers. */
  readonly start: number;
  /** Index after the last segment the variable covers. */
  readonly end: number;
  /**
   * True when the capture can span several segments (more than one segment,
   * or a `**`). Such values keep `%2F` encoded when decoded, per http.proto.
   */
  readonly multiSegment: boolean;
}

export interface PathTemplate {
  /** The template exactly as written in the proto. */
  readonly text: string;
  readonly segments: readonly TemplateSegment[];
  readonly variables: readonly TemplateVariable[];
  /** The custom verb without its colon, e.g. `cancel`; undefined when absent. */
  readonly verb: string | undefined;
}

/** A template that does not follow the grammar. */
export class PathTemplateError extends Error {
  override readonly name = "PathTemplateError";
  constructor(
    /** The template text. */
    readonly template: string,
    /** Offset in the template where the problem is. */
    readonly offset: number,
    /** What is wrong, without the template. */
    readonly reason: string,
  ) {
    super(`invalid path template "${template}": ${reason} at offset ${offset}`);
  }
}

const identRE = /^[A-Za-z_][A-Za-z0-9_]*$/;
// RFC 3986 pchar without the characters the template grammar reserves
// ("/", "{", "}", "=", "*"); "%" is checked separately for a valid escape.
const literalCharRE = /^[A-Za-z0-9\-._~!$&'()+,;:@%]$/;

/** Parses a path template, throwing PathTemplateError if it is not valid. */
export function parsePathTemplate(text: string): PathTemplate {
  return createParser(text).parse();
}

function createParser(text: string) {
  let pos = 0;
  const segments: TemplateSegment[] = [];
  const variables: TemplateVariable[] = [];
  const variableOffsets: number[] = []; // offset of each variable's "{"

  function fail(reason: string, at = pos): never {
    throw new PathTemplateError(text, at, reason);
  }

  function describe(at: number): string {
    return at < text.length ? `unexpected "${text[at]}"` : "unexpected end";
  }

  // Offset of the verb's ":" or -1: the first ":" after the last "/" that
  // is outside braces.
  function findVerbColon(): number {
    let depth = 0;
    let lastSlash = -1;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === "{") depth++;
      else if (c === "}") depth--;
      else if (c === "/" && depth === 0) lastSlash = i;
    }
    depth = 0;
    for (let i = lastSlash + 1; i < text.length; i++) {
      const c = text[i];
      if (c === "{") depth++;
      else if (c === "}") depth--;
      else if (c === ":" && depth === 0) return i;
    }
    return -1;
  }

  function parseLiteral(end: number, what: string): string {
    const start = pos;
    while (pos < end && literalCharRE.test(text[pos] as string)) {
      if (text[pos] === "%") {
        if (!/^%[0-9A-Fa-f]{2}$/.test(text.slice(pos, pos + 3))) {
          fail(`"%" must start a percent-encoded byte such as %2F`);
        }
        pos += 3;
      } else {
        pos++;
      }
    }
    if (pos === start) fail(`${describe(pos)}, expected ${what}`);
    return text.slice(start, pos);
  }

  function parseSegment(end: number, insideVariable: boolean): void {
    if (text.startsWith("**", pos)) {
      pos += 2;
      segments.push({ kind: "deep_wildcard" });
    } else if (text[pos] === "*") {
      pos += 1;
      segments.push({ kind: "wildcard" });
    } else if (text[pos] === "{") {
      if (insideVariable) fail("a variable cannot contain another variable");
      parseVariable(end);
    } else {
      segments.push({ kind: "literal", value: parseLiteral(end, "a segment") });
    }
  }

  function parseSegments(end: number, insideVariable: boolean): void {
    for (;;) {
      parseSegment(end, insideVariable);
      if (pos < end && text[pos] === "/") {
        pos++;
        if (pos >= end || text[pos] === "/" || text[pos] === "}") {
          fail("empty segment");
        }
        continue;
      }
      return;
    }
  }

  function parseVariable(end: number): void {
    const open = pos;
    pos++; // "{"
    const close = text.indexOf("}", pos);
    if (close < 0 || close >= end) fail(`"{" is never closed`, open);
    const eq = text.indexOf("=", pos);
    const pathEnd = eq >= 0 && eq < close ? eq : close;
    const rawPath = text.slice(pos, pathEnd);
    const fieldPath = rawPath.split(".");
    if (!fieldPath.every((p) => identRE.test(p))) {
      fail(`"${rawPath}" is not a field path (identifiers joined by ".")`, pos);
    }
    const start = segments.length;
    if (pathEnd === eq) {
      pos = eq + 1;
      if (pos === close) fail(`variable "${rawPath}" has an empty pattern`);
      parseSegments(close, true);
      if (pos !== close) fail(`${describe(pos)} in the pattern of variable "${rawPath}"`);
    } else {
      pos = close;
      segments.push({ kind: "wildcard" });
    }
    pos = close + 1;
    const covered = segments.slice(start);
    variableOffsets.push(open);
    variables.push({
      fieldPath,
      start,
      end: segments.length,
      multiSegment:
        covered.length > 1 || covered.some((s) => s.kind === "deep_wildcard"),
    });
  }

  function checkDeepWildcardIsLast(): void {
    const deep = segments.findIndex((s) => s.kind === "deep_wildcard");
    if (deep >= 0 && deep !== segments.length - 1) {
      fail(`"**" must be the last segment of the path`, text.indexOf("**"));
    }
  }

  function checkVariablesUnique(): void {
    const seen = new Set<string>();
    for (const [i, v] of variables.entries()) {
      const key = v.fieldPath.join(".");
      if (seen.has(key)) fail(`field "${key}" is bound by two variables`, variableOffsets[i]);
      seen.add(key);
    }
  }

  return {
    parse(): PathTemplate {
      if (text[0] !== "/") fail(`a template must start with "/"`, 0);
      pos = 1;
      const colon = findVerbColon();
      const pathEnd = colon >= 0 ? colon : text.length;
      if (pos >= pathEnd) fail("the path has no segment");
      parseSegments(pathEnd, false);
      if (pos !== pathEnd) fail(describe(pos));
      let verb: string | undefined;
      if (colon >= 0) {
        pos = colon + 1;
        verb = parseLiteral(text.length, "a verb after \":\"");
        if (pos !== text.length) fail(describe(pos));
      }
      checkDeepWildcardIsLast();
      checkVariablesUnique();
      return { text, segments, variables, verb };
    },
  };
}

/**
 * The shape of a template with variable names removed: `/tasks/{id}` and
 * `/tasks/{name=*}` both give `/tasks/*`. Two rules with the same HTTP method
 * and the same key can never be told apart by a request.
 */
export function templateKey(template: PathTemplate): string {
  const path = template.segments
    .map((s) => (s.kind === "literal" ? s.value : s.kind === "wildcard" ? "*" : "**"))
    .join("/");
  return template.verb === undefined ? `/${path}` : `/${path}:${template.verb}`;
}

const segmentRank = { literal: 0, wildcard: 1, deep_wildcard: 2 } as const;

/**
 * Route precedence (decision D6): compare segment by segment; at the first
 * difference a literal beats `*` and `*` beats `**`. Returns a negative
 * number when `a` takes precedence. Templates of equal shape compare as 0;
 * callers break the tie (the default binding beats additional bindings).
 */
export function compareTemplatePrecedence(a: PathTemplate, b: PathTemplate): number {
  const n = Math.min(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const sa = a.segments[i] as TemplateSegment;
    const sb = b.segments[i] as TemplateSegment;
    const rank = segmentRank[sa.kind] - segmentRank[sb.kind];
    if (rank !== 0) return rank;
    if (sa.kind === "literal" && sb.kind === "literal" && sa.value !== sb.value) {
      return sa.value < sb.value ? -1 : 1;
    }
  }
  if (a.segments.length !== b.segments.length) {
    return a.segments.length - b.segments.length;
  }
  // A registered verb is matched before the verbless form of the same path.
  if (a.verb !== b.verb) {
    if (a.verb === undefined) return 1;
    if (b.verb === undefined) return -1;
    return a.verb < b.verb ? -1 : 1;
  }
  return 0;
}
