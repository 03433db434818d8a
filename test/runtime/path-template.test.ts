import {
  compareTemplatePrecedence,
  parsePathTemplate,
  PathTemplateError,
  templateKey,
  type PathTemplate,
  type TemplateSegment,
  type TemplateVariable,
} from "../../runtime/core/http/path-template.js";

// ---------------------------------------------------------------------------
// Builders for expected values.
// ---------------------------------------------------------------------------

/** "*" -> wildcard, "**" -> deep wildcard, anything else -> literal. */
function segs(...parts: string[]): TemplateSegment[] {
  return parts.map((p): TemplateSegment =>
    p === "**"
      ? { kind: "deep_wildcard" }
      : p === "*"
        ? { kind: "wildcard" }
        : { kind: "literal", value: p },
  );
}

function variable(
  path: string,
  start: number,
  end: number,
  multiSegment: boolean,
): TemplateVariable {
  return { fieldPath: path.split("."), start, end, multiSegment };
}

function parsed(
  text: string,
  segments: TemplateSegment[],
  variables: TemplateVariable[],
  verb: string | undefined,
): PathTemplate {
  return { text, segments, variables, verb };
}

function catchError(template: string): unknown {
  try {
    parsePathTemplate(template);
  } catch (e) {
    return e;
  }
  throw new Error(`expected "${template}" to be rejected`);
}

const sign = (n: number): number => (n === 0 ? 0 : n < 0 ? -1 : 1);

// ---------------------------------------------------------------------------
// parsePathTemplate: every grammar form.
// ---------------------------------------------------------------------------

describe("parsePathTemplate: grammar forms", () => {
  test.each<[string, string, PathTemplate]>([
    // literals
    ["single literal", "/v1", parsed("/v1", segs("v1"), [], undefined)],
    ["several literals", "/v1/tasks/list", parsed("/v1/tasks/list", segs("v1", "tasks", "list"), [], undefined)],
    [
      "every non-reserved pchar in a literal",
      "/a-b._~!$&'()+,;@z",
      parsed("/a-b._~!$&'()+,;@z", segs("a-b._~!$&'()+,;@z"), [], undefined),
    ],
    ["dot segments are plain literals", "/a/../b", parsed("/a/../b", segs("a", "..", "b"), [], undefined)],
    // wildcards
    ["bare *", "/*", parsed("/*", segs("*"), [], undefined)],
    ["bare **", "/**", parsed("/**", segs("**"), [], undefined)],
    ["* between literals", "/v1/*/items", parsed("/v1/*/items", segs("v1", "*", "items"), [], undefined)],
    ["* then ** at the end", "/v1/*/**", parsed("/v1/*/**", segs("v1", "*", "**"), [], undefined)],
    // variables
    ["{var}", "/{var}", parsed("/{var}", segs("*"), [variable("var", 0, 1, false)], undefined)],
    ["{var=*}", "/{var=*}", parsed("/{var=*}", segs("*"), [variable("var", 0, 1, false)], undefined)],
    [
      "{var} after a literal",
      "/tasks/{id}",
      parsed("/tasks/{id}", segs("tasks", "*"), [variable("id", 1, 2, false)], undefined),
    ],
    [
      "{var=pattern/with/*}",
      "/v1/{name=projects/*/tasks/*}",
      parsed(
        "/v1/{name=projects/*/tasks/*}",
        segs("v1", "projects", "*", "tasks", "*"),
        [variable("name", 1, 5, true)],
        undefined,
      ),
    ],
    [
      "{var=single-literal} captures one segment",
      "/{x=tasks}",
      parsed("/{x=tasks}", segs("tasks"), [variable("x", 0, 1, false)], undefined),
    ],
    ["{var=**}", "/v1/{path=**}", parsed("/v1/{path=**}", segs("v1", "**"), [variable("path", 1, 2, true)], undefined)],
    [
      "{var=literal/**}",
      "/v1/{name=files/**}",
      parsed("/v1/{name=files/**}", segs("v1", "files", "**"), [variable("name", 1, 3, true)], undefined),
    ],
    [
      "dotted field path {a.b.c}",
      "/v1/{a.b.c}",
      parsed("/v1/{a.b.c}", segs("v1", "*"), [{ fieldPath: ["a", "b", "c"], start: 1, end: 2, multiSegment: false }], undefined),
    ],
    [
      "dotted field path with a pattern, underscores and digits",
      "/v1/{a_b.C9=x/*}/y",
      parsed(
        "/v1/{a_b.C9=x/*}/y",
        segs("v1", "x", "*", "y"),
        [{ fieldPath: ["a_b", "C9"], start: 1, end: 3, multiSegment: true }],
        undefined,
      ),
    ],
    [
      "field path starting with _",
      "/{_x}",
      parsed("/{_x}", segs("*"), [{ fieldPath: ["_x"], start: 0, end: 1, multiSegment: false }], undefined),
    ],
    [
      "several variables keep their own indexes",
      "/{a}/{b=x/*}/c/{d.e=**}",
      parsed(
        "/{a}/{b=x/*}/c/{d.e=**}",
        segs("*", "x", "*", "c", "**"),
        [variable("a", 0, 1, false), variable("b", 1, 3, true), variable("d.e", 4, 5, true)],
        undefined,
      ),
    ],
    [
      "sibling fields sharing a prefix are distinct",
      "/{a.b}/{a.c}",
      parsed("/{a.b}/{a.c}", segs("*", "*"), [variable("a.b", 0, 1, false), variable("a.c", 1, 2, false)], undefined),
    ],
    // verbs
    ["custom verb on a literal", "/v1/tasks:cancel", parsed("/v1/tasks:cancel", segs("v1", "tasks"), [], "cancel")],
    ["custom verb on *", "/v1/*:batchGet", parsed("/v1/*:batchGet", segs("v1", "*"), [], "batchGet")],
    ["custom verb after a final **", "/v1/**:watch", parsed("/v1/**:watch", segs("v1", "**"), [], "watch")],
    [
      "verb after {var}",
      "/tasks/{id}:cancel",
      parsed("/tasks/{id}:cancel", segs("tasks", "*"), [variable("id", 1, 2, false)], "cancel"),
    ],
    [
      "verb after a multi-segment variable",
      "/{name=tasks/*}:cancel",
      parsed("/{name=tasks/*}:cancel", segs("tasks", "*"), [variable("name", 0, 2, true)], "cancel"),
    ],
    [
      "verb after {var=**}",
      "/{path=**}:get",
      parsed("/{path=**}:get", segs("**"), [variable("path", 0, 1, true)], "get"),
    ],
    [
      "verb containing ':'",
      "/v1/{name}:bla:baa",
      parsed("/v1/{name}:bla:baa", segs("v1", "*"), [variable("name", 1, 2, false)], "bla:baa"),
    ],
    [
      "':' inside a non-last literal belongs to the literal",
      "/a:b/c",
      parsed("/a:b/c", segs("a:b", "c"), [], undefined),
    ],
    [
      "':' inside a non-last literal plus a verb",
      "/a:b/c:d",
      parsed("/a:b/c:d", segs("a:b", "c"), [], "d"),
    ],
    [
      "':' inside a variable pattern is not a verb",
      "/v1/{name=a:b}",
      parsed("/v1/{name=a:b}", segs("v1", "a:b"), [variable("name", 1, 2, false)], undefined),
    ],
    [
      "':' inside a variable pattern, then a verb",
      "/{name=a:b/*}:go",
      parsed("/{name=a:b/*}:go", segs("a:b", "*"), [variable("name", 0, 2, true)], "go"),
    ],
    // percent-encoding
    ["percent-encoded literal kept raw", "/a%2Fb", parsed("/a%2Fb", segs("a%2Fb"), [], undefined)],
    [
      "lower-case escapes kept raw, in literals and verbs",
      "/a%2fb/c%20d:do%2Fit",
      parsed("/a%2fb/c%20d:do%2Fit", segs("a%2fb", "c%20d"), [], "do%2Fit"),
    ],
    [
      "escape in a variable pattern literal",
      "/{x=a%7Bb/*}",
      parsed("/{x=a%7Bb/*}", segs("a%7Bb", "*"), [variable("x", 0, 2, true)], undefined),
    ],
  ])("%s: %s", (_name, template, expected) => {
    expect(parsePathTemplate(template)).toStrictEqual(expected);
  });

  test("text is the template exactly as written", () => {
    const text = "/v1/{name=tasks/*}:cancel";
    expect(parsePathTemplate(text).text).toBe(text);
  });

  test("{var} and {var=*} parse to the same segments and variables", () => {
    const a = parsePathTemplate("/tasks/{id}");
    const b = parsePathTemplate("/tasks/{id=*}");
    expect(a.segments).toStrictEqual(b.segments);
    expect(a.variables).toStrictEqual(b.variables);
    expect(a.verb).toBe(b.verb);
  });

  test("parsing twice gives independent results", () => {
    const a = parsePathTemplate("/a/{b}");
    const b = parsePathTemplate("/a/{b}");
    expect(a).not.toBe(b);
    expect(a.segments).not.toBe(b.segments);
    expect(a).toStrictEqual(b);
  });
});

// ---------------------------------------------------------------------------
// The templates of the real A2A protos.
// ---------------------------------------------------------------------------

interface Route {
  readonly rpc: string;
  readonly method: "GET" | "POST" | "DELETE";
  readonly template: string;
}

const A2A_V1_DEFAULT: readonly Route[] = [
  { rpc: "SendMessage", method: "POST", template: "/message:send" },
  { rpc: "SendStreamingMessage", method: "POST", template: "/message:stream" },
  { rpc: "GetTask", method: "GET", template: "/tasks/{id=*}" },
  { rpc: "ListTasks", method: "GET", template: "/tasks" },
  { rpc: "CancelTask", method: "POST", template: "/tasks/{id=*}:cancel" },
  { rpc: "SubscribeToTask", method: "GET", template: "/tasks/{id=*}:subscribe" },
  { rpc: "CreateTaskPushNotificationConfig", method: "POST", template: "/tasks/{task_id=*}/pushNotificationConfigs" },
  { rpc: "GetTaskPushNotificationConfig", method: "GET", template: "/tasks/{task_id=*}/pushNotificationConfigs/{id=*}" },
  { rpc: "ListTaskPushNotificationConfigs", method: "GET", template: "/tasks/{task_id=*}/pushNotificationConfigs" },
  { rpc: "GetExtendedAgentCard", method: "GET", template: "/extendedAgentCard" },
  { rpc: "DeleteTaskPushNotificationConfig", method: "DELETE", template: "/tasks/{task_id=*}/pushNotificationConfigs/{id=*}" },
];

const A2A_V1_TENANT: readonly Route[] = A2A_V1_DEFAULT.map((r) => ({ ...r, template: `/{tenant}${r.template}` }));

const A2A_V1_ROUTES: readonly Route[] = [...A2A_V1_DEFAULT, ...A2A_V1_TENANT];

describe("parsePathTemplate: A2A v1.0.1 templates", () => {
  test("the route table has 11 default and 11 tenant bindings", () => {
    expect(A2A_V1_DEFAULT).toHaveLength(11);
    expect(A2A_V1_TENANT).toHaveLength(11);
    expect(A2A_V1_TENANT.map((r) => r.template)).toContain("/{tenant}/tasks/{id=*}:cancel");
  });

  test.each<[string, PathTemplate]>([
    ["/message:send", parsed("/message:send", segs("message"), [], "send")],
    ["/message:stream", parsed("/message:stream", segs("message"), [], "stream")],
    ["/tasks/{id=*}", parsed("/tasks/{id=*}", segs("tasks", "*"), [variable("id", 1, 2, false)], undefined)],
    ["/tasks", parsed("/tasks", segs("tasks"), [], undefined)],
    ["/tasks/{id=*}:cancel", parsed("/tasks/{id=*}:cancel", segs("tasks", "*"), [variable("id", 1, 2, false)], "cancel")],
    [
      "/tasks/{id=*}:subscribe",
      parsed("/tasks/{id=*}:subscribe", segs("tasks", "*"), [variable("id", 1, 2, false)], "subscribe"),
    ],
    [
      "/tasks/{task_id=*}/pushNotificationConfigs",
      parsed(
        "/tasks/{task_id=*}/pushNotificationConfigs",
        segs("tasks", "*", "pushNotificationConfigs"),
        [variable("task_id", 1, 2, false)],
        undefined,
      ),
    ],
    [
      "/tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
      parsed(
        "/tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
        segs("tasks", "*", "pushNotificationConfigs", "*"),
        [variable("task_id", 1, 2, false), variable("id", 3, 4, false)],
        undefined,
      ),
    ],
    ["/extendedAgentCard", parsed("/extendedAgentCard", segs("extendedAgentCard"), [], undefined)],
    ["/{tenant}/message:send", parsed("/{tenant}/message:send", segs("*", "message"), [variable("tenant", 0, 1, false)], "send")],
    [
      "/{tenant}/message:stream",
      parsed("/{tenant}/message:stream", segs("*", "message"), [variable("tenant", 0, 1, false)], "stream"),
    ],
    [
      "/{tenant}/tasks/{id=*}",
      parsed(
        "/{tenant}/tasks/{id=*}",
        segs("*", "tasks", "*"),
        [variable("tenant", 0, 1, false), variable("id", 2, 3, false)],
        undefined,
      ),
    ],
    ["/{tenant}/tasks", parsed("/{tenant}/tasks", segs("*", "tasks"), [variable("tenant", 0, 1, false)], undefined)],
    [
      "/{tenant}/tasks/{id=*}:cancel",
      parsed(
        "/{tenant}/tasks/{id=*}:cancel",
        segs("*", "tasks", "*"),
        [variable("tenant", 0, 1, false), variable("id", 2, 3, false)],
        "cancel",
      ),
    ],
    [
      "/{tenant}/tasks/{id=*}:subscribe",
      parsed(
        "/{tenant}/tasks/{id=*}:subscribe",
        segs("*", "tasks", "*"),
        [variable("tenant", 0, 1, false), variable("id", 2, 3, false)],
        "subscribe",
      ),
    ],
    [
      "/{tenant}/tasks/{task_id=*}/pushNotificationConfigs",
      parsed(
        "/{tenant}/tasks/{task_id=*}/pushNotificationConfigs",
        segs("*", "tasks", "*", "pushNotificationConfigs"),
        [variable("tenant", 0, 1, false), variable("task_id", 2, 3, false)],
        undefined,
      ),
    ],
    [
      "/{tenant}/tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
      parsed(
        "/{tenant}/tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
        segs("*", "tasks", "*", "pushNotificationConfigs", "*"),
        [variable("tenant", 0, 1, false), variable("task_id", 2, 3, false), variable("id", 4, 5, false)],
        undefined,
      ),
    ],
    [
      "/{tenant}/extendedAgentCard",
      parsed("/{tenant}/extendedAgentCard", segs("*", "extendedAgentCard"), [variable("tenant", 0, 1, false)], undefined),
    ],
  ])("%s", (template, expected) => {
    expect(parsePathTemplate(template)).toStrictEqual(expected);
  });

  test.each(A2A_V1_ROUTES.map((r) => [r.method, r.template, r.rpc] as const))(
    "%s %s (%s) parses and its key has no variable names",
    (_method, template) => {
      const t = parsePathTemplate(template);
      expect(t.text).toBe(template);
      expect(templateKey(t)).not.toMatch(/[{}=]/);
      expect(templateKey(t)).toBe(template.replace(/\{[^}=]+(=\*)?\}/g, "*"));
    },
  );

  test("each (method, key) pair of the 22 routes is unique", () => {
    const keys = A2A_V1_ROUTES.map((r) => `${r.method} ${templateKey(parsePathTemplate(r.template))}`);
    expect(new Set(keys).size).toBe(22);
  });

  test("routes with the same key differ by method", () => {
    const byKey = new Map<string, string[]>();
    for (const r of A2A_V1_DEFAULT) {
      const key = templateKey(parsePathTemplate(r.template));
      byKey.set(key, [...(byKey.get(key) ?? []), r.method]);
    }
    expect(Object.fromEntries(byKey)).toStrictEqual({
      "/message:send": ["POST"],
      "/message:stream": ["POST"],
      "/tasks/*": ["GET"],
      "/tasks": ["GET"],
      "/tasks/*:cancel": ["POST"],
      "/tasks/*:subscribe": ["GET"],
      "/tasks/*/pushNotificationConfigs": ["POST", "GET"],
      "/tasks/*/pushNotificationConfigs/*": ["GET", "DELETE"],
      "/extendedAgentCard": ["GET"],
    });
  });
});

describe("parsePathTemplate: A2A v0.3.0 templates", () => {
  test.each<[string, PathTemplate]>([
    ["/v1/message:send", parsed("/v1/message:send", segs("v1", "message"), [], "send")],
    ["/v1/message:stream", parsed("/v1/message:stream", segs("v1", "message"), [], "stream")],
    ["/v1/{name=tasks/*}", parsed("/v1/{name=tasks/*}", segs("v1", "tasks", "*"), [variable("name", 1, 3, true)], undefined)],
    [
      "/v1/{name=tasks/*}:cancel",
      parsed("/v1/{name=tasks/*}:cancel", segs("v1", "tasks", "*"), [variable("name", 1, 3, true)], "cancel"),
    ],
    [
      "/v1/{name=tasks/*}:subscribe",
      parsed("/v1/{name=tasks/*}:subscribe", segs("v1", "tasks", "*"), [variable("name", 1, 3, true)], "subscribe"),
    ],
    [
      // sic: "task", not "tasks", in the v0.3.0 proto
      "/v1/{parent=task/*/pushNotificationConfigs}",
      parsed(
        "/v1/{parent=task/*/pushNotificationConfigs}",
        segs("v1", "task", "*", "pushNotificationConfigs"),
        [variable("parent", 1, 4, true)],
        undefined,
      ),
    ],
    [
      "/v1/{name=tasks/*/pushNotificationConfigs/*}",
      parsed(
        "/v1/{name=tasks/*/pushNotificationConfigs/*}",
        segs("v1", "tasks", "*", "pushNotificationConfigs", "*"),
        [variable("name", 1, 5, true)],
        undefined,
      ),
    ],
    [
      "/v1/{parent=tasks/*}/pushNotificationConfigs",
      parsed(
        "/v1/{parent=tasks/*}/pushNotificationConfigs",
        segs("v1", "tasks", "*", "pushNotificationConfigs"),
        [variable("parent", 1, 3, true)],
        undefined,
      ),
    ],
    ["/v1/card", parsed("/v1/card", segs("v1", "card"), [], undefined)],
  ])("%s", (template, expected) => {
    expect(parsePathTemplate(template)).toStrictEqual(expected);
  });

  test.each([
    ["/v1/{name=tasks/*}", "/v1/tasks/*"],
    ["/v1/{name=tasks/*}:cancel", "/v1/tasks/*:cancel"],
    ["/v1/{name=tasks/*}:subscribe", "/v1/tasks/*:subscribe"],
    ["/v1/{parent=task/*/pushNotificationConfigs}", "/v1/task/*/pushNotificationConfigs"],
    ["/v1/{name=tasks/*/pushNotificationConfigs/*}", "/v1/tasks/*/pushNotificationConfigs/*"],
    ["/v1/{parent=tasks/*}/pushNotificationConfigs", "/v1/tasks/*/pushNotificationConfigs"],
  ])("key of %s is %s", (template, key) => {
    expect(templateKey(parsePathTemplate(template))).toBe(key);
  });
});

// ---------------------------------------------------------------------------
// Errors.
// ---------------------------------------------------------------------------

describe("parsePathTemplate: errors", () => {
  test.each<[string, string, number, string]>([
    // leading "/"
    ["missing leading /", "v1/tasks", 0, 'a template must start with "/"'],
    ["empty string", "", 0, 'a template must start with "/"'],
    ["leading space", " /a", 0, 'a template must start with "/"'],
    // no segment
    ["empty path /", "/", 1, "the path has no segment"],
    ["only a verb", "/:cancel", 1, "the path has no segment"],
    // empty segments
    ["trailing /", "/a/", 3, "empty segment"],
    ["trailing / after a variable", "/tasks/{id}/", 12, "empty segment"],
    ["empty segment //", "/a//b", 3, "empty segment"],
    ["leading //", "//a", 1, 'unexpected "/", expected a segment'],
    ["trailing / before the verb", "/a/:cancel", 3, "empty segment"],
    ["trailing / inside a variable", "/{a=b/}", 6, "empty segment"],
    ["// inside a variable", "/{a=b//c}", 6, "empty segment"],
    // braces
    ["unclosed {", "/{a", 1, '"{" is never closed'],
    ["unclosed { with a pattern", "/v1/{name=tasks/*", 4, '"{" is never closed'],
    ["second variable unclosed", "/{a}/{b:c", 5, '"{" is never closed'],
    ["nested variable", "/{a={b}}", 4, "a variable cannot contain another variable"],
    ["nested variable after a segment", "/{a=x/{b}}", 6, "a variable cannot contain another variable"],
    ["{ glued to a literal in a pattern", "/{a=b{c}}", 5, 'unexpected "{" in the pattern of variable "a"'],
    ["junk after * in a pattern", "/{a=*x}", 5, 'unexpected "x" in the pattern of variable "a"'],
    ["empty variable pattern {x=}", "/{x=}", 4, 'variable "x" has an empty pattern'],
    ["stray }", "/a}", 2, 'unexpected "}"'],
    ["extra } after a variable", "/{a}}", 4, 'unexpected "}"'],
    ["{ glued to a literal", "/a{b}", 2, 'unexpected "{"'],
    // field paths
    ["field path starting with a digit {1x}", "/{1x}", 2, '"1x" is not a field path (identifiers joined by ".")'],
    ["field path with .. {a..b}", "/{a..b}", 2, '"a..b" is not a field path (identifiers joined by ".")'],
    ["field path ending with .", "/x/{a.=*}", 4, '"a." is not a field path (identifiers joined by ".")'],
    ["field path starting with .", "/{.a}", 2, '".a" is not a field path (identifiers joined by ".")'],
    ["empty field path {}", "/{}", 2, '"" is not a field path (identifiers joined by ".")'],
    ["empty field path {=*}", "/{=*}", 2, '"" is not a field path (identifiers joined by ".")'],
    ["dash in a field path", "/{a-b}", 2, '"a-b" is not a field path (identifiers joined by ".")'],
    ["colon in a field path", "/{a:b}", 2, '"a:b" is not a field path (identifiers joined by ".")'],
    ["* as a field path", "/{*}", 2, '"*" is not a field path (identifiers joined by ".")'],
    // "**" placement
    ["** not last", "/a/**/b", 3, '"**" must be the last segment of the path'],
    ["** not last, with a verb", "/a/**/b:get", 3, '"**" must be the last segment of the path'],
    ["{x=**} followed by a literal", "/{x=**}/c", 4, '"**" must be the last segment of the path'],
    ["** inside a pattern, not last", "/{x=**/c}", 4, '"**" must be the last segment of the path'],
    ["two **", "/**/**", 1, '"**" must be the last segment of the path'],
    ["*** is ** then junk", "/***", 3, 'unexpected "*"'],
    // duplicate fields
    ["same field bound twice", "/{a}/{a}", 5, 'field "a" is bound by two variables'],
    ["same field bound twice, different patterns", "/{a}/x/{a=y/*}", 7, 'field "a" is bound by two variables'],
    ["same dotted field bound twice", "/{a.b}/c/{a.b=*}", 9, 'field "a.b" is bound by two variables'],
    ["duplicate after a field with the same prefix", "/{ab}/{a}/{a=*}", 10, 'field "a" is bound by two variables'],
    ["duplicate after a dotted field with the same head", "/{a.b}/{a}/{a}", 11, 'field "a" is bound by two variables'],
    // percent escapes
    ["bad percent escape %zz", "/a%zz", 2, '"%" must start a percent-encoded byte such as %2F'],
    ["truncated percent escape", "/a%2", 2, '"%" must start a percent-encoded byte such as %2F'],
    ["lone %", "/%", 1, '"%" must start a percent-encoded byte such as %2F'],
    ["bad escape in a pattern", "/{x=a%g0}", 5, '"%" must start a percent-encoded byte such as %2F'],
    ["bad escape in a verb", "/a:b%g1", 4, '"%" must start a percent-encoded byte such as %2F'],
    // verbs
    ["empty verb /a:", "/a:", 3, 'unexpected end, expected a verb after ":"'],
    ["empty verb after a variable", "/{a}:", 5, 'unexpected end, expected a verb after ":"'],
    ["variable as a verb", "/a:{b}", 3, 'unexpected "{", expected a verb after ":"'],
    ["* in a verb", "/a:b*", 4, 'unexpected "*"'],
    // stray characters in literals
    ["* inside a literal", "/a*", 2, 'unexpected "*"'],
    ["literal after *", "/*a", 2, 'unexpected "a"'],
    ["literal after **", "/**a", 3, 'unexpected "a"'],
    ["= outside a variable", "/a=b", 2, 'unexpected "="'],
    ["space", "/a b", 2, 'unexpected " "'],
    ["query string", "/a?x=1", 2, 'unexpected "?"'],
    ["fragment", "/a#x", 2, 'unexpected "#"'],
    ["non-ASCII character", "/caf\u00e9", 4, 'unexpected "\u00e9"'],
    // A "}" right after "/" is reported as an empty segment (the parser's wording).
    ["} as a whole segment", "/a/}", 3, "empty segment"],
  ])("%s: %j", (_name, template, offset, reason) => {
    const err = catchError(template);
    expect(err).toBeInstanceOf(PathTemplateError);
    expect(err).toBeInstanceOf(Error);
    const e = err as PathTemplateError;
    expect(e.name).toBe("PathTemplateError");
    expect(e.template).toBe(template);
    expect(e.offset).toBe(offset);
    expect(e.reason).toBe(reason);
    expect(e.message).toContain(`"${template}"`);
    expect(e.message).toContain(reason);
    expect(e.message).toBe(`invalid path template "${template}": ${reason} at offset ${offset}`);
  });

  test("parsePathTemplate throws (toThrow form)", () => {
    expect(() => parsePathTemplate("/a/")).toThrow(PathTemplateError);
    expect(() => parsePathTemplate("/a/")).toThrow('invalid path template "/a/": empty segment at offset 3');
  });
});

describe("PathTemplateError", () => {
  test("constructed directly it carries its fields and formats its message", () => {
    const e = new PathTemplateError("/x{", 2, "something is wrong");
    expect(e).toBeInstanceOf(PathTemplateError);
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe("PathTemplateError");
    expect(e.template).toBe("/x{");
    expect(e.offset).toBe(2);
    expect(e.reason).toBe("something is wrong");
    expect(e.message).toBe('invalid path template "/x{": something is wrong at offset 2');
    expect(String(e)).toBe('PathTemplateError: invalid path template "/x{": something is wrong at offset 2');
    expect(typeof e.stack).toBe("string");
  });
});

// ---------------------------------------------------------------------------
// templateKey.
// ---------------------------------------------------------------------------

describe("templateKey", () => {
  test.each([
    ["/tasks/{id}", "/tasks/*"],
    ["/tasks/{name=*}", "/tasks/*"],
    ["/tasks/*", "/tasks/*"],
    ["/tasks", "/tasks"],
    ["/v1/{name=tasks/*}:cancel", "/v1/tasks/*:cancel"],
    ["/tasks/{id}:cancel", "/tasks/*:cancel"],
    ["/v1/{path=**}", "/v1/**"],
    ["/v1/**", "/v1/**"],
    ["/a/**:x", "/a/**:x"],
    ["/{p=files/**}:get", "/files/**:get"],
    ["/a%2Fb", "/a%2Fb"],
    ["/a:b/c", "/a:b/c"],
    ["/a:b/c:d", "/a:b/c:d"],
    ["/v1/{name}:bla:baa", "/v1/*:bla:baa"],
    ["/{a.b.c}/x", "/*/x"],
    ["/{tenant}/tasks/{task_id=*}/pushNotificationConfigs/{id=*}", "/*/tasks/*/pushNotificationConfigs/*"],
  ])("%s -> %s", (template, key) => {
    expect(templateKey(parsePathTemplate(template))).toBe(key);
  });

  test.each([
    ["/tasks/{id}", "/tasks/{name=*}"],
    ["/tasks/{id}", "/tasks/*"],
    ["/v1/{name=tasks/*}", "/v1/tasks/{id}"],
    ["/v1/{name=tasks/*}:cancel", "/v1/tasks/{task_id=*}:cancel"],
    ["/v1/{path=**}", "/v1/**"],
    ["/{a}/{b}", "/{x=*/*}"],
  ])("%s and %s share a key", (a, b) => {
    expect(templateKey(parsePathTemplate(a))).toBe(templateKey(parsePathTemplate(b)));
  });

  test.each([
    ["/tasks/{id}", "/tasks/{id}:cancel"],
    ["/tasks/{id}:cancel", "/tasks/{id}:subscribe"],
    ["/v1/*", "/v1/**"],
    ["/a%2Fb", "/a/b"],
    ["/a%2fb", "/a%2Fb"],
    ["/a/*", "/a/*/*"],
  ])("%s and %s have different keys", (a, b) => {
    expect(templateKey(parsePathTemplate(a))).not.toBe(templateKey(parsePathTemplate(b)));
  });

  test.each(A2A_V1_ROUTES.map((r) => r.template))("key of %s parses back to itself", (template) => {
    const key = templateKey(parsePathTemplate(template));
    const reparsed = parsePathTemplate(key);
    expect(templateKey(reparsed)).toBe(key);
    expect(reparsed.variables).toStrictEqual([]);
    expect(reparsed.segments).toStrictEqual(parsePathTemplate(template).segments);
  });
});

// ---------------------------------------------------------------------------
// compareTemplatePrecedence (decision D6).
// ---------------------------------------------------------------------------

const cmp = (a: string, b: string): number =>
  compareTemplatePrecedence(parsePathTemplate(a), parsePathTemplate(b));

describe("compareTemplatePrecedence", () => {
  test.each<[string, string, string, -1 | 0 | 1]>([
    // literal > * > ** at the first differing segment
    ["literal beats *", "/tasks/x", "/tasks/*", -1],
    ["* beats **", "/tasks/*", "/tasks/**", -1],
    ["literal beats **", "/tasks/x", "/tasks/**", -1],
    ["literal beats a variable", "/tasks/list", "/tasks/{id}", -1],
    ["variable beats {x=**}", "/tasks/{id}", "/tasks/{rest=**}", -1],
    ["literal first segment beats a leading variable", "/tasks/{id=*}", "/{tenant}/tasks", -1],
    ["only the first difference counts (literal wins there)", "/a/b/*", "/a/*/c", -1],
    ["only the first difference counts (* loses there)", "/*/b", "/a/*", 1],
    ["earlier segment decides over later", "/a/*/c/d", "/a/b/*/*", 1],
    ["* then literal beats **", "/a/*/b", "/a/**", -1],
    // lengths
    ["shorter prefix first", "/a", "/a/b", -1],
    ["path before the same path plus **", "/a", "/a/**", -1],
    ["* before */**", "/a/*", "/a/*/**", -1],
    // verbs
    ["verb before the same path without one", "/a/*:cancel", "/a/*", -1],
    ["verbless after the same path with a verb", "/a/*", "/a/*:cancel", 1],
    ["A2A subscribe before GetTask", "/tasks/{id=*}:subscribe", "/tasks/{id=*}", -1],
    ["different verbs order deterministically", "/a:cancel", "/a:subscribe", -1],
    ["different verbs order deterministically (reversed)", "/a:subscribe", "/a:cancel", 1],
    // distinct literals order deterministically
    ["distinct literals", "/a", "/b", -1],
    ["distinct literals (reversed)", "/b", "/a", 1],
    // equal shapes
    ["equal shapes with different names", "/tasks/{id}", "/tasks/{name=*}", 0],
    ["variable and bare *", "/tasks/{id}", "/tasks/*", 0],
    ["pattern variable and split literal", "/v1/{name=tasks/*}", "/v1/tasks/{id}", 0],
    ["same verb, different names", "/a/*:x", "/a/{b}:x", 0],
    ["identical", "/tasks/{task_id=*}/pushNotificationConfigs", "/tasks/{task_id=*}/pushNotificationConfigs", 0],
    ["** and {x=**}", "/v1/**", "/v1/{path=**}", 0],
  ])("%s: %s vs %s -> %i", (_name, a, b, expected) => {
    expect(sign(cmp(a, b))).toBe(expected);
    expect(sign(cmp(b, a))).toBe(-expected || 0);
  });

  const all = [...A2A_V1_ROUTES.map((r) => r.template), "/a/**", "/a/*/b", "/a/b", "/a", "/**", "/*", "/a:x"];

  test("is antisymmetric and reflexive over many templates", () => {
    for (const a of all) {
      expect(cmp(a, a)).toBe(0);
      for (const b of all) {
        expect(sign(cmp(a, b))).toBe(-sign(cmp(b, a)) || 0);
      }
    }
  });

  test("is transitive over many templates", () => {
    for (const a of all) {
      for (const b of all) {
        for (const c of all) {
          if (cmp(a, b) <= 0 && cmp(b, c) <= 0) expect(cmp(a, c)).toBeLessThanOrEqual(0);
        }
      }
    }
  });
});

// ---------------------------------------------------------------------------
// Sorting the 22 A2A v1.0.1 routes (decision D6).
// ---------------------------------------------------------------------------

interface ParsedRoute extends Route {
  readonly parsed: PathTemplate;
  readonly tenant: boolean;
}

/** D6: structural precedence, then the default binding before the tenant one. */
function sortRoutes(routes: readonly Route[]): ParsedRoute[] {
  return routes
    .map((r) => ({ ...r, parsed: parsePathTemplate(r.template), tenant: r.template.startsWith("/{tenant}") }))
    .sort((a, b) => compareTemplatePrecedence(a.parsed, b.parsed) || Number(a.tenant) - Number(b.tenant));
}

/** A minimal matcher over the raw path, enough to show what D6 implies. */
function matchRoute(t: PathTemplate, rawPath: string): boolean {
  let path = rawPath;
  if (t.verb !== undefined) {
    if (!path.endsWith(`:${t.verb}`)) return false;
    path = path.slice(0, -(t.verb.length + 1));
  }
  const parts = path.slice(1).split("/");
  let i = 0;
  for (const s of t.segments) {
    if (s.kind === "deep_wildcard") return true;
    if (i >= parts.length) return false;
    if (s.kind === "literal" && s.value !== parts[i]) return false;
    i++;
  }
  return i === parts.length;
}

function resolve(method: string, rawPath: string): string | undefined {
  return sortRoutes(A2A_V1_ROUTES).find((r) => r.method === method && matchRoute(r.parsed, rawPath))?.rpc;
}

describe("sorting the 22 A2A v1.0.1 routes", () => {
  const expectedOrder = [
    "/extendedAgentCard",
    "/message:send",
    "/message:stream",
    "/tasks",
    "/tasks/{id=*}:cancel",
    "/tasks/{id=*}:subscribe",
    "/tasks/{id=*}",
    "/tasks/{task_id=*}/pushNotificationConfigs",
    "/tasks/{task_id=*}/pushNotificationConfigs",
    "/tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
    "/tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
    "/{tenant}/extendedAgentCard",
    "/{tenant}/message:send",
    "/{tenant}/message:stream",
    "/{tenant}/tasks",
    "/{tenant}/tasks/{id=*}:cancel",
    "/{tenant}/tasks/{id=*}:subscribe",
    "/{tenant}/tasks/{id=*}",
    "/{tenant}/tasks/{task_id=*}/pushNotificationConfigs",
    "/{tenant}/tasks/{task_id=*}/pushNotificationConfigs",
    "/{tenant}/tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
    "/{tenant}/tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
  ];

  test.each([
    ["proto order", A2A_V1_ROUTES],
    ["reversed", [...A2A_V1_ROUTES].reverse()],
    ["tenant first", [...A2A_V1_TENANT, ...A2A_V1_DEFAULT]],
    ["interleaved", A2A_V1_DEFAULT.flatMap((r, i) => [A2A_V1_TENANT[i] as Route, r])],
  ])("gives the D6 order from %s input", (_name, input) => {
    expect(sortRoutes(input).map((r) => r.template)).toStrictEqual(expectedOrder);
  });

  const order = sortRoutes(A2A_V1_ROUTES).map((r) => r.template);
  const before = (a: string, b: string): boolean => order.indexOf(a) < order.indexOf(b);

  test.each([
    ["/tasks/{id=*}", "/{tenant}/tasks"],
    ["/tasks/{id=*}", "/{tenant}/extendedAgentCard"],
    ["/tasks/{task_id=*}/pushNotificationConfigs", "/{tenant}/tasks/{id=*}"],
    ["/tasks/{id=*}:subscribe", "/tasks/{id=*}"],
    ["/tasks/{id=*}:cancel", "/tasks/{id=*}"],
    ["/{tenant}/tasks/{id=*}:subscribe", "/{tenant}/tasks/{id=*}"],
    ["/tasks", "/tasks/{id=*}"],
  ])("%s precedes %s", (a, b) => {
    expect(order).toContain(a);
    expect(order).toContain(b);
    expect(before(a, b)).toBe(true);
    expect(cmp(a, b)).toBeLessThan(0);
  });

  test("every default binding precedes every tenant binding", () => {
    const lastDefault = Math.max(...A2A_V1_DEFAULT.map((r) => order.lastIndexOf(r.template)));
    const firstTenant = Math.min(...A2A_V1_TENANT.map((r) => order.indexOf(r.template)));
    expect(lastDefault).toBe(10);
    expect(firstTenant).toBe(11);
  });

  test.each([
    ["GET", "/tasks/tasks", "GetTask"],
    ["GET", "/tasks/extendedAgentCard", "GetTask"],
    ["GET", "/tasks/abc", "GetTask"],
    ["GET", "/tasks/abc:subscribe", "SubscribeToTask"],
    ["POST", "/tasks/abc:cancel", "CancelTask"],
    ["GET", "/tasks/tasks/pushNotificationConfigs", "ListTaskPushNotificationConfigs"],
    ["GET", "/tasks", "ListTasks"],
    ["GET", "/t1/tasks", "ListTasks"],
    ["GET", "/t1/extendedAgentCard", "GetExtendedAgentCard"],
    ["GET", "/t1/tasks/abc", "GetTask"],
    ["POST", "/message:send", "SendMessage"],
    ["POST", "/t1/message:stream", "SendStreamingMessage"],
    ["DELETE", "/tasks/a/pushNotificationConfigs/b", "DeleteTaskPushNotificationConfig"],
    ["DELETE", "/t1/tasks/a/pushNotificationConfigs/b", "DeleteTaskPushNotificationConfig"],
  ])("%s %s resolves to %s", (method, path, rpc) => {
    expect(resolve(method, path)).toBe(rpc);
  });

  test("GET /tasks/tasks picks the default GetTask binding, not the tenant ListTasks one", () => {
    const first = sortRoutes(A2A_V1_ROUTES).find((r) => r.method === "GET" && matchRoute(r.parsed, "/tasks/tasks"));
    expect(first?.template).toBe("/tasks/{id=*}");
    expect(first?.tenant).toBe(false);
  });
});
