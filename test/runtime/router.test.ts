import { parsePathTemplate, type PathTemplate } from "../../runtime/core/http/path-template.js";
import { createRouter, type RouteInput, type RouteMatch, type Router, type RouterOptions } from "../../runtime/core/http/router.js";

// ---------------------------------------------------------------------------
// Helpers: routes are [method, template, name]; a match is summarised so the
// tables can state the expected outcome as plain data.
// ---------------------------------------------------------------------------

type RouteSpec = readonly [method: string, template: string, name: string];

function route(method: string, template: string, name: string): RouteInput<string> {
  return { httpMethod: method, template: parsePathTemplate(template), target: name };
}

function build(specs: readonly RouteSpec[], stats?: { nodesVisited: number }, options?: RouterOptions): Router<string> {
  return createRouter(specs.map(([m, t, n]) => route(m, t, n)), stats, options);
}

type Outcome =
  | { found: string; bindings: Record<string, string> }
  | { allow: string[] }
  | "not_found"
  | "bad_path";

function summarize(m: RouteMatch<string>): Outcome {
  switch (m.kind) {
    case "found": {
      const bindings: Record<string, string> = {};
      m.route.template.variables.forEach((v, i) => {
        bindings[v.fieldPath.join(".")] = m.values[i] as string;
      });
      return { found: m.route.target, bindings };
    }
    case "method_not_allowed":
      return { allow: [...m.allow] };
    case "not_found":
      return "not_found";
    case "bad_path":
      return "bad_path";
  }
}

const found = (name: string, bindings: Record<string, string> = {}): Outcome => ({ found: name, bindings });
const allow = (...methods: string[]): Outcome => ({ allow: methods });

type Case = readonly [method: string, path: string, expected: Outcome];

/** test.each rows from a route table and request cases. */
function suite(title: string, specs: readonly RouteSpec[], cases: readonly Case[], options?: RouterOptions): void {
  describe(title, () => {
    const router = build(specs, undefined, options);
    test.each(cases.map((c) => [c[0], c[1], c[2]] as const))("%s %s", (method, path, expected) => {
      expect(summarize(router.match(method, path))).toEqual(expected);
    });
  });
}

// ---------------------------------------------------------------------------
// (a) Ports of grpc-httpjson-transcoding test/path_matcher_test.cc.
// Templates with literals after `**` (e.g. `/{x=**}/a/b`) are left out: our
// parser rejects them (http.proto: `**` is last), so no router can see them.
// ---------------------------------------------------------------------------

suite(
  "reference: WildCardMatches",
  [
    ["GET", "/a/**", "a__"],
    ["GET", "/b/*", "b_"],
    ["GET", "/c/*/d/**", "c_d__"],
    ["GET", "/c/*/d/e", "c_de"],
    ["GET", "/c/f/d/e", "cfde"],
  ],
  [
    ["GET", "/a/b", found("a__")],
    ["GET", "/a/b/c", found("a__")],
    ["GET", "/a", found("a__")], // `**` matches zero segments
    ["GET", "/b/c", found("b_")],
    ["GET", "b/c/d", "not_found"], // no leading slash
    ["GET", "/c/u/d/v", found("c_d__")],
    ["GET", "/c/v/d/w/x", found("c_d__")],
    ["GET", "/c/x/y/d/z", "not_found"],
    ["GET", "/c//v/d/w/x", "not_found"], // `*` never matches an empty segment
    ["GET", "/c/x/d/e", found("c_de")], // literal beats `**`
    ["GET", "/c/f/d/e", found("cfde")], // literal beats `*`
    ["GET", "/", "not_found"],
  ],
);

suite(
  "reference: WildCardMatchesRoot (deliberate difference: / matches nothing)",
  [["GET", "/**", "all"]],
  [
    ["GET", "/", "not_found"],
    ["GET", "", "not_found"],
    ["GET", "/a", found("all")],
    ["GET", "/a/", found("all")],
    ["GET", "/a/b/c", found("all")],
    ["GET", "/a//c", "not_found"], // `**` does not swallow empty segments either
  ],
);

suite(
  "reference: VariableBindings",
  [
    ["GET", "/a/{x}/c/d/e", "a_cde"],
    ["GET", "/{x=a/*}/b/{y=*}/c", "a_b_c"],
    ["GET", "/a/{x=b/*}/{y=d/**}", "ab_d__"],
    ["GET", "/{x=*}/a", "_a"],
    ["GET", "/a/b/{x=*}", "ab_"],
    ["GET", "/a/b/c/{x=**}", "abc__"],
    ["GET", "/{x=*}/d/e/f/{y=**}", "_def__"],
  ],
  [
    ["GET", "/a/book/c/d/e", found("a_cde", { x: "book" })],
    ["GET", "/a/hello/b/world/c", found("a_b_c", { x: "a/hello", y: "world" })],
    ["GET", "/a/b/zoo/d/animal/tiger", found("ab_d__", { x: "b/zoo", y: "d/animal/tiger" })],
    ["GET", "/foo/a", found("_a", { x: "foo" })],
    ["GET", "/a/b/foo", found("ab_", { x: "foo" })],
    ["GET", "/a/b/c/foo/bar/baz", found("abc__", { x: "foo/bar/baz" })],
    ["GET", "/a/b/c", found("abc__", { x: "" })], // `{x=**}` over zero segments
    ["GET", "/foo/d/e/f/bar/baz", found("_def__", { x: "foo", y: "bar/baz" })],
  ],
);

suite(
  "reference: PercentEscapes (single segment fully decoded, multi keeps %2F)",
  [
    ["GET", "/a/{x}/c", "a_c"],
    ["GET", "/m/{x=p/*/q/*}/c", "ap_q_c"],
    ["GET", "/n/{x=**}", "n__"],
    ["GET", "/r/{x=*}/{y=**}", "reserved"],
  ],
  [
    ["GET", "/a/p%20q%2Fr/c", found("a_c", { x: "p q/r" })],
    ["GET", "/m/p/foo%20foo/q/bar%2Fbar/c", found("ap_q_c", { x: "p/foo foo/q/bar%2Fbar" })],
    ["GET", "/n/p/foo%20foo/q/bar%2Fbar", found("n__", { x: "p/foo foo/q/bar%2Fbar" })],
    ["GET", "/n/a%2fb", found("n__", { x: "a%2fb" })], // lower-case %2f kept as written
    ["GET", "/n/a%252Fb", found("n__", { x: "a%2Fb" })], // %25 decodes; it is not a %2F
    // UrlUnescapeSpec kAllCharactersExceptSlash: http.proto's rule, our choice.
    [
      "GET",
      "/r/%21%23%24%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D/%21%23%24%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D",
      found("reserved", { x: "!#$&'()*+,/:;=?@[]", y: "!#$&'()*+,%2F:;=?@[]" }),
    ],
  ],
);

describe("reference: PercentEscapesUnescapedForSingleSegmentAllAsciiChars", () => {
  const router = build([["GET", "/{x}", "x"]]);
  test.each([["upper-case hex"], ["lower-case hex"]])("%s", (mode) => {
    for (let c = 0; c < 0x7f; c++) {
      let hex = c.toString(16).padStart(2, "0");
      hex = mode === "upper-case hex" ? hex.toUpperCase() : hex.toLowerCase();
      expect(summarize(router.match("GET", `/%${hex}`))).toEqual(found("x", { x: String.fromCharCode(c) }));
    }
  });
});

suite(
  "reference: CustomVerbIssue",
  [
    ["GET", "/person", "list_person"],
    ["GET", "/person/{id=*}", "get_person"],
    ["GET", "/{x=**}:verb", "verb"],
  ],
  [
    ["GET", "/person:verb", found("verb", { x: "person" })],
    ["GET", "/person/jason:verb", found("verb", { x: "person/jason" })],
    ["GET", "/animal:verb", found("verb", { x: "animal" })],
    ["GET", "/animal/cat:verb", found("verb", { x: "animal/cat" })],
    ["GET", "/person", found("list_person")],
    ["GET", "/person/jason", found("get_person", { id: "jason" })],
    ["GET", "/animal", "not_found"],
    ["GET", "/animal/cat", "not_found"],
    ["GET", "/person:other", "not_found"],
    ["GET", "/person/jason:other", found("get_person", { id: "jason:other" })],
    ["GET", "/animal:other", "not_found"],
    ["GET", "/animal/cat:other", "not_found"],
  ],
);

suite(
  "reference: VariableBindingsWithCustomVerb",
  [
    ["GET", "/a/{y=*}:verb", "a_verb"],
    ["GET", "/a/{y=d/**}:verb", "ad__verb"],
    ["GET", "/{x=*}/a:verb", "_averb"],
    ["GET", "/e/{x=*}/f:verb", "e_fverb"],
  ],
  [
    ["GET", "/a/world:verb", found("a_verb", { y: "world" })],
    ["GET", "/a/d/animal/tiger:verb", found("ad__verb", { y: "d/animal/tiger" })],
    ["GET", "/foo/a:verb", found("_averb", { x: "foo" })],
    ["GET", "/e/foo/f:verb", found("e_fverb", { x: "foo" })],
  ],
);

suite(
  "reference: ConstantSuffixesWithVariable (the parts with `**` last)",
  [
    ["GET", "/a/{x=b/**}", "ab__"],
    ["GET", "/a/{x=b/**}:verb", "ab__verb"],
    ["GET", "/a/{x=**}", "a__"],
  ],
  [
    ["GET", "/a/b/hello/world/c", found("ab__", { x: "b/hello/world/c" })],
    ["GET", "/a/b/world/c:verb", found("ab__verb", { x: "b/world/c" })],
    ["GET", "/a/hello/b/world/c", found("a__", { x: "hello/b/world/c" })],
    ["GET", "/a/b", found("ab__", { x: "b" })],
    ["GET", "/a", found("a__", { x: "" })],
  ],
);

suite(
  "reference: CustomVerbMatches",
  [
    ["GET", "/some/const:verb", "some_const_verb"],
    ["GET", "/some/*:verb", "some__verb"],
    ["GET", "/some/*/foo:verb", "some__foo_verb"],
    ["GET", "/other/**:verb", "other__verb"],
  ],
  [
    ["GET", "/some/const:verb", found("some_const_verb")],
    ["GET", "/some/other:verb", found("some__verb")],
    // Deliberate difference: the trailing slash goes first (reference: no match).
    ["GET", "/some/other:verb/", found("some__verb")],
    ["GET", "/some/bar/foo:verb", found("some__foo_verb")],
    ["GET", "/some/foo1/foo2/foo:verb", "not_found"],
    ["GET", "/some/foo/bar:verb", "not_found"],
    ["GET", "/other/bar/foo:verb", found("other__verb")],
    ["GET", "/some/const", "not_found"], // the verb is part of the key
  ],
);

suite("reference: CustomVerbMatch2", [["GET", "/{a=*}/{b=*}:verb", "verb"]], [
  ["GET", "/some:verb/const:verb", found("verb", { a: "some:verb", b: "const" })],
]);

suite("reference: CustomVerbMatch3 (unregistered verb stays in the value)", [["GET", "/foo/{a=*}", "foo"]], [
  ["GET", "/foo/other:verb", found("foo", { a: "other:verb" })],
]);

suite(
  "reference: CustomVerbMatch4 (a colon before the last slash is not a verb)",
  [
    ["GET", "/foo/*/hello", "a"],
    ["GET", "/unrelated:verb", "registers_verb"],
  ],
  [["GET", "/foo/other:verb/hello", found("a")]],
);

suite(
  "reference: CustomVerbMatch5",
  [
    ["GET", "/{a=**}:verb", "verb"],
    ["GET", "/{a=**}", "non_verb"],
  ],
  [
    ["GET", "/some:verb/const:verb", found("verb", { a: "some:verb/const" })],
    ["GET", "/some:verb/const", found("non_verb", { a: "some:verb/const" })],
    ["GET", "/some:verb2/const:verb2", found("non_verb", { a: "some:verb2/const:verb2" })],
  ],
);

suite(
  "reference: RejectPartialMatches / Over- and underspecified paths",
  [
    ["GET", "/prefix/middle/suffix", "pms"],
    ["GET", "/prefix/middle", "pm"],
    ["GET", "/prefix", "p"],
  ],
  [
    ["GET", "/prefix/middle/suffix", found("pms")],
    ["GET", "/prefix/middle", found("pm")],
    ["GET", "/prefix", found("p")],
    ["GET", "/prefix/middle/suffix/other", "not_found"],
    ["GET", "/prefix/middle/other", "not_found"],
    ["GET", "/prefix/other", "not_found"],
    ["GET", "/other", "not_found"],
  ],
);

suite(
  "reference: LookupSimplePaths",
  [
    ["GET", "/prefix/middle/suffix", "pms"],
    ["GET", "/prefix/middle/othersuffix", "pmo"],
    ["GET", "/prefix/othermiddle/suffix", "pos"],
    ["GET", "/otherprefix/middle/suffix", "oms"],
    ["GET", "/otherprefix/suffix", "os"],
  ],
  [
    ["GET", "/prefix/not/a/path", "not_found"],
    ["GET", "/prefix/middle", "not_found"],
    ["GET", "/prefix/not/othermiddle", "not_found"],
    ["GET", "/otherprefix/suffix/othermiddle", "not_found"],
    ["GET", "/prefix/middle/suffix", found("pms")],
    ["GET", "/prefix/middle/othersuffix", found("pmo")],
    ["GET", "/prefix/othermiddle/suffix", found("pos")],
    ["GET", "/otherprefix/middle/suffix", found("oms")],
    ["GET", "/otherprefix/suffix", found("os")],
  ],
);

suite(
  "reference: DifferentHttpMethod (we answer 405 where the reference has no match)",
  [["GET", "/a/b", "ab"]],
  [
    ["GET", "/a/b", found("ab")],
    ["POST", "/a/b", allow("GET")],
    ["get", "/a/b", allow("GET")], // methods compare exactly
  ],
);

describe("reference: LookupReturnsNullIfMatcherEmpty / ReplacevoidForPath", () => {
  test("an empty router finds nothing", () => {
    expect(summarize(build([]).match("GET", "a/b/blue/foo"))).toBe("not_found");
    expect(summarize(build([]).match("GET", "/a/b/blue/foo"))).toBe("not_found");
  });
  test.each([
    ["/foo/bar", "/foo/bar"],
    ["/tasks/{id}", "/tasks/{name=*}"], // same shape, different variable name
    ["/x/{a=**}:v", "/x/**:v"],
  ])("duplicate GET %s + %s throws", (a, b) => {
    expect(() => build([["GET", a, "1"], ["GET", b, "2"]])).toThrow(/duplicate route GET/);
  });
});

// ---------------------------------------------------------------------------
// The rest of the semantics, one table each.
// ---------------------------------------------------------------------------

suite(
  "trailing slash, empty segments, root",
  [
    ["GET", "/tasks", "list"],
    ["GET", "/tasks/{id}", "get"],
    ["GET", "/tasks/{id}/x", "x"],
    ["POST", "/tasks/{id}:cancel", "cancel"],
  ],
  [
    ["GET", "/tasks/", found("list")],
    ["GET", "/tasks/a/", found("get", { id: "a" })],
    ["POST", "/tasks/a:cancel/", found("cancel", { id: "a" })],
    ["GET", "/tasks//x", "not_found"],
    ["GET", "//tasks", "not_found"],
    ["GET", "/tasks//", "not_found"], // only one trailing slash is dropped
    ["POST", "/tasks/:cancel", "not_found"], // the verb leaves an empty id
    ["GET", "/", "not_found"],
    ["GET", "tasks", "not_found"],
  ],
);

describe('trailingSlash: "empty-value" (A2A 0.3\'s paths, D110)', () => {
  const router = createRouter(
    [
      route("GET", "/tasks", "list"),
      route("GET", "/tasks/{id}", "get"),
      route("GET", "/tasks/{id}/configs", "configs"),
      route("GET", "/tasks/{id}/configs/{cfg}", "config"),
      route("POST", "/tasks/{id}:cancel", "cancel"),
    ],
    undefined,
    { trailingSlash: "empty-value" },
  );
  test.each([
    ["/tasks/a/configs/", found("config", { id: "a", cfg: "" })],
    ["/tasks/", found("get", { id: "" })],
    ["/tasks/a/configs", found("configs", { id: "a" })],
    ["/tasks/a/", "not_found"], // a literal never matches the empty segment
    ["/tasks//configs/", found("config", { id: "", cfg: "" })], // 0.3's paths split as they came: every empty segment a `*` takes is ""
    ["/tasks/a/configs//", "not_found"],
    ["/", "not_found"],
  ] as const)("GET %s", (path, outcome) => {
    expect(summarize(router.match("GET", path))).toEqual(outcome);
  });
  test("a verb is not split off an empty last segment", () => {
    expect(summarize(router.match("POST", "/tasks/a:cancel/"))).toEqual("not_found");
  });
  test("the empty segment a verb leaves is an empty value, as 0.3's paths were split (D110)", () => {
    expect(summarize(router.match("POST", "/tasks/:cancel"))).toEqual(found("cancel", { id: "" }));
  });
});

suite(
  'trailingSlash: "empty-value-or-drop": an empty value where a route takes one, else dropped (D6)',
  [
    ["GET", "/tasks", "list"],
    ["GET", "/tasks/{id}", "get"],
    ["GET", "/tasks/{id}/x", "x"],
    ["POST", "/tasks/{id}:cancel", "cancel"],
    ["POST", "/tasks", "create"],
    ["GET", "/files/{path=**}", "file"],
  ],
  [
    ["GET", "/tasks/", found("get", { id: "" })],
    ["GET", "/tasks", found("list")],
    ["GET", "/tasks/a/", found("get", { id: "a" })], // no route takes "" there: dropped
    ["GET", "/tasks/a/x/", found("x", { id: "a" })],
    ["POST", "/tasks/", found("create")], // no POST takes "": dropped
    ["POST", "/tasks/:cancel", found("cancel", { id: "" })],
    ["POST", "/tasks/:cancel/", found("cancel", { id: "" })],
    ["POST", "/tasks/a:cancel/", found("cancel", { id: "a" })],
    ["DELETE", "/tasks/", allow("GET", "POST")], // both readings' methods
    ["GET", "/tasks//x", found("x", { id: "" })], // an empty segment mid-path is an empty value too
    ["GET", "/tasks//", found("get", { id: "" })], // one trailing slash dropped, the other "" the id
    ["GET", "/files/", found("file", { path: "" })], // `**` never takes the empty segment; dropped, it is `**` of nothing
    ["GET", "/", "not_found"],
  ],
  { trailingSlash: "empty-value-or-drop" },
);

suite(
  "methods: 405 union, `*` after specific methods, backtracking past a method mismatch",
  [
    ["GET", "/r/{id}", "get"],
    ["DELETE", "/r/{id}", "delete"],
    ["POST", "/r/special", "post_special"],
    ["*", "/any/{id}", "any"],
    ["PUT", "/any/{id}", "put"],
    ["POST", "/v/{id}:go", "go"],
    ["PATCH", "/v/fixed:go", "patch_fixed_go"],
  ],
  [
    // No POST for /r/x: the methods of every node the path reaches, sorted.
    ["POST", "/r/x", allow("DELETE", "GET")],
    // The literal node has only POST; the DFS goes on to GET /r/{id}.
    ["GET", "/r/special", found("get", { id: "special" })],
    ["PUT", "/r/special", allow("DELETE", "GET", "POST")],
    ["PUT", "/any/1", found("put", { id: "1" })],
    ["GET", "/any/1", found("any", { id: "1" })],
    ["BREW", "/any/1", found("any", { id: "1" })],
    ["GET", "/v/fixed:go", allow("PATCH", "POST")],
    ["POST", "/v/fixed:go", found("go", { id: "fixed" })],
  ],
);

suite(
  "custom verbs: registered only, last colon, no retry without the verb",
  [
    ["GET", "/tasks/{id}", "get"],
    ["GET", "/tasks/{id}:subscribe", "subscribe"],
    ["POST", "/tasks/{id}:cancel", "cancel"],
    ["GET", "/v1/{name}:a:b", "colon_verb"], // the parser allows a ":" inside a verb
  ],
  [
    ["GET", "/tasks/abc:subscribe", found("subscribe", { id: "abc" })],
    ["GET", "/tasks/a:b", found("get", { id: "a:b" })],
    ["GET", "/tasks/a:b:subscribe", found("subscribe", { id: "a:b" })],
    ["GET", "/tasks/a:subscribe:b", found("get", { id: "a:subscribe:b" })],
    ["GET", "/tasks/x:cancel", allow("POST")],
    ["GET", "/tasks/x%3Asubscribe", found("get", { id: "x:subscribe" })], // an encoded ":" is data
    ["GET", "/tasks/:subscribe", "not_found"],
    ["GET", "/v1/thing:a:b", found("colon_verb", { name: "thing" })],
    ["GET", "/v1/thing:b", "not_found"],
  ],
);

suite(
  "decoding: bad escapes, UTF-8, plus",
  [
    ["GET", "/s/{v}", "single"],
    ["GET", "/m/{v=**}", "multi"],
    ["GET", "/lit%20eral/{v}", "encoded_literal"],
  ],
  [
    ["GET", "/s/a+b", found("single", { v: "a+b" })],
    ["GET", "/s/a%2Bb", found("single", { v: "a+b" })],
    ["GET", "/s/%C3%A9", found("single", { v: "é" })],
    ["GET", "/s/%c3%a9t%C3%A9", found("single", { v: "été" })],
    ["GET", "/s/%F0%9F%98%80", found("single", { v: "😀" })],
    ["GET", "/s/%E4%BD%A0%E5%A5%BD", found("single", { v: "你好" })],
    ["GET", "/s/é", found("single", { v: "é" })], // already-decoded text passes through
    ["GET", "/s/%zz", "bad_path"],
    ["GET", "/s/%", "bad_path"],
    ["GET", "/s/%4", "bad_path"],
    ["GET", "/s/%C3", "bad_path"], // truncated UTF-8
    ["GET", "/s/%FF", "bad_path"],
    ["GET", "/s/%C0%AF", "bad_path"], // overlong "/"
    ["GET", "/s/%ED%A0%80", "bad_path"], // UTF-16 surrogate
    ["GET", "/m/ok/%zz", "bad_path"],
    ["GET", "/m/%C3%2F%A9", "bad_path"], // a kept %2F cannot glue a split character
    ["GET", "/m/a+b/%C3%A9%2Fx", found("multi", { v: "a+b/é%2Fx" })],
    // Literals compare raw: the encoded form must be written the same way.
    ["GET", "/lit%20eral/x", found("encoded_literal", { v: "x" })],
    ["GET", "/lit eral/x", "not_found"],
  ],
);

describe("bad_path names the field, not the raw value", () => {
  test("reason", () => {
    const m = build([["GET", "/s/{a.b}", "s"]]).match("GET", "/s/%zz");
    expect(m).toEqual({ kind: "bad_path", reason: 'the value of "a.b" is not valid percent-encoded UTF-8' });
  });
});

describe("values line up with template.variables", () => {
  test("order and identity of the route", () => {
    const r = route("GET", "/{tenant}/tasks/{task_id}/pushNotificationConfigs/{id}", "get");
    const m = createRouter([r]).match("GET", "/t/tasks/a/pushNotificationConfigs/b");
    expect(m).toEqual({ kind: "found", route: r, values: ["t", "a", "b"] });
    if (m.kind === "found") expect(m.route).toBe(r);
  });
});

describe("a hand-built template with `**` before the end is refused", () => {
  test("throws", () => {
    const bad: PathTemplate = {
      text: "/**/x",
      segments: [{ kind: "deep_wildcard" }, { kind: "literal", value: "x" }],
      variables: [],
      verb: undefined,
    };
    expect(() => createRouter([{ httpMethod: "GET", template: bad, target: "x" }])).toThrow(/last segment/);
  });
});

// ---------------------------------------------------------------------------
// (b) The A2A v1.0.1 routes (checklist Part B 1.1): 11 defaults + 11 tenant twins.
// ---------------------------------------------------------------------------

const a2aDefaults: readonly RouteSpec[] = [
  ["POST", "/message:send", "SendMessage"],
  ["POST", "/message:stream", "SendStreamingMessage"],
  ["GET", "/tasks/{id}", "GetTask"],
  ["GET", "/tasks", "ListTasks"],
  ["POST", "/tasks/{id}:cancel", "CancelTask"],
  ["GET", "/tasks/{id}:subscribe", "SubscribeToTask"],
  ["POST", "/tasks/{task_id}/pushNotificationConfigs", "CreateTaskPushNotificationConfig"],
  ["GET", "/tasks/{task_id}/pushNotificationConfigs/{id}", "GetTaskPushNotificationConfig"],
  ["GET", "/tasks/{task_id}/pushNotificationConfigs", "ListTaskPushNotificationConfigs"],
  ["DELETE", "/tasks/{task_id}/pushNotificationConfigs/{id}", "DeleteTaskPushNotificationConfig"],
  ["GET", "/extendedAgentCard", "GetExtendedAgentCard"],
];
const a2aRoutes: readonly RouteSpec[] = [
  ...a2aDefaults,
  ...a2aDefaults.map(([m, t, n]): RouteSpec => [m, `/{tenant}${t}`, `${n}@tenant`]),
];

test("the A2A table has 22 routes", () => {
  expect(a2aRoutes).toHaveLength(22);
});

suite("A2A v1.0.1 routes", a2aRoutes, [
  // Every route reachable, default and tenant form.
  ["POST", "/message:send", found("SendMessage")],
  ["POST", "/t1/message:send", found("SendMessage@tenant", { tenant: "t1" })],
  ["POST", "/message:stream", found("SendStreamingMessage")],
  ["POST", "/t1/message:stream", found("SendStreamingMessage@tenant", { tenant: "t1" })],
  ["GET", "/tasks/abc", found("GetTask", { id: "abc" })],
  ["GET", "/t1/tasks/abc", found("GetTask@tenant", { tenant: "t1", id: "abc" })],
  ["GET", "/tasks", found("ListTasks")],
  ["GET", "/t1/tasks", found("ListTasks@tenant", { tenant: "t1" })],
  ["POST", "/tasks/abc:cancel", found("CancelTask", { id: "abc" })],
  ["POST", "/t1/tasks/abc:cancel", found("CancelTask@tenant", { tenant: "t1", id: "abc" })],
  ["GET", "/tasks/x:subscribe", found("SubscribeToTask", { id: "x" })],
  ["GET", "/t1/tasks/x:subscribe", found("SubscribeToTask@tenant", { tenant: "t1", id: "x" })],
  ["POST", "/tasks/x/pushNotificationConfigs", found("CreateTaskPushNotificationConfig", { task_id: "x" })],
  [
    "POST",
    "/t1/tasks/x/pushNotificationConfigs",
    found("CreateTaskPushNotificationConfig@tenant", { tenant: "t1", task_id: "x" }),
  ],
  ["GET", "/tasks/x/pushNotificationConfigs/c", found("GetTaskPushNotificationConfig", { task_id: "x", id: "c" })],
  [
    "GET",
    "/t1/tasks/x/pushNotificationConfigs/c",
    found("GetTaskPushNotificationConfig@tenant", { tenant: "t1", task_id: "x", id: "c" }),
  ],
  ["GET", "/tasks/x/pushNotificationConfigs", found("ListTaskPushNotificationConfigs", { task_id: "x" })],
  [
    "GET",
    "/t1/tasks/x/pushNotificationConfigs",
    found("ListTaskPushNotificationConfigs@tenant", { tenant: "t1", task_id: "x" }),
  ],
  [
    "DELETE",
    "/tasks/x/pushNotificationConfigs/c",
    found("DeleteTaskPushNotificationConfig", { task_id: "x", id: "c" }),
  ],
  [
    "DELETE",
    "/t1/tasks/x/pushNotificationConfigs/c",
    found("DeleteTaskPushNotificationConfig@tenant", { tenant: "t1", task_id: "x", id: "c" }),
  ],
  ["GET", "/extendedAgentCard", found("GetExtendedAgentCard")],
  ["GET", "/t1/extendedAgentCard", found("GetExtendedAgentCard@tenant", { tenant: "t1" })],

  // D6 overlaps between `/{tenant}/…` and `/tasks/{id}`: literal first.
  ["GET", "/tasks/tasks", found("GetTask", { id: "tasks" })],
  ["GET", "/tasks/extendedAgentCard", found("GetTask", { id: "extendedAgentCard" })],
  ["GET", "/tasks/tasks/pushNotificationConfigs", found("ListTaskPushNotificationConfigs", { task_id: "tasks" })],
  // Backtracking: no default route fits, the tenant route does.
  ["GET", "/tasks/tasks/x", found("GetTask@tenant", { tenant: "tasks", id: "x" })],
  ["GET", "/message/tasks", found("ListTasks@tenant", { tenant: "message" })],
  ["POST", "/tasks/message:send", found("SendMessage@tenant", { tenant: "tasks" })],

  // Verbs and colons in ids.
  ["GET", "/tasks/a:b", found("GetTask", { id: "a:b" })],
  ["GET", "/tasks/urn:uuid:1234", found("GetTask", { id: "urn:uuid:1234" })],
  ["GET", "/tasks/a:b:subscribe", found("SubscribeToTask", { id: "a:b" })],
  ["POST", "/t1/tasks/urn:x:cancel", found("CancelTask@tenant", { tenant: "t1", id: "urn:x" })],
  ["GET", "/tasks/x%3Asubscribe", found("GetTask", { id: "x:subscribe" })],
  ["GET", "/tasks/x:cancel", allow("POST")], // no retry as GetTask(id="x:cancel")

  // Decoding (D8).
  ["GET", "/tasks/a%2Fb", found("GetTask", { id: "a/b" })],
  ["GET", "/t%2F1/tasks/a%2fb", found("GetTask@tenant", { tenant: "t/1", id: "a/b" })],
  ["GET", "/tasks/%C3%A9t%C3%A9", found("GetTask", { id: "été" })],
  ["GET", "/tasks/%F0%9F%A4%96", found("GetTask", { id: "🤖" })],
  ["GET", "/tasks/a+b", found("GetTask", { id: "a+b" })],
  ["GET", "/tasks/a%20b", found("GetTask", { id: "a b" })],
  ["GET", "/tasks/%zz", "bad_path"],
  ["GET", "/tasks/%E9", "bad_path"], // Latin-1 é, not UTF-8
  ["GET", "/tasks/%zz:subscribe", "bad_path"],

  // Empty segments and trailing slashes, as the A2A profile has them read (D6): a trailing
  // slash or a verb that leaves an id empty is that id, "", never the collection's route.
  ["GET", "/tasks/", found("GetTask", { id: "" })],
  ["GET", "/t1/tasks/", found("GetTask@tenant", { tenant: "t1", id: "" })],
  ["GET", "/tasks/abc/", found("GetTask", { id: "abc" })],
  ["GET", "/tasks/x/pushNotificationConfigs/", found("GetTaskPushNotificationConfig", { task_id: "x", id: "" })],
  ["DELETE", "/tasks/x/pushNotificationConfigs/", found("DeleteTaskPushNotificationConfig", { task_id: "x", id: "" })],
  ["POST", "/tasks/x/pushNotificationConfigs/", found("CreateTaskPushNotificationConfig", { task_id: "x" })],
  ["POST", "/tasks/:cancel", found("CancelTask", { id: "" })],
  ["GET", "/tasks/:subscribe", found("SubscribeToTask", { id: "" })],
  ["POST", "/tasks/abc:cancel/", found("CancelTask", { id: "abc" })],
  ["POST", "/message:send/", found("SendMessage")],
  ["PUT", "/tasks/", allow("GET")],
  // An empty segment mid-path is the empty value of the variable there, as a client that
  // builds the path from an empty id sends it: InvalidParams for a REQUIRED one, as on JSON-RPC.
  ["GET", "/tasks//pushNotificationConfigs", found("ListTaskPushNotificationConfigs", { task_id: "" })],
  ["GET", "/t1/tasks//pushNotificationConfigs/c", found("GetTaskPushNotificationConfig@tenant", { tenant: "t1", task_id: "", id: "c" })],
  ["GET", "//tasks", found("ListTasks@tenant", { tenant: "" })],
  ["GET", "/tasks/x/pushNotificationConfigs//", found("GetTaskPushNotificationConfig", { task_id: "x", id: "" })],
  ["GET", "/tasks//nope", "not_found"], // no route takes it there
  ["GET", "/", "not_found"],

  // 404 / 405.
  ["DELETE", "/message:send", allow("POST")],
  ["GET", "/message:send", allow("POST")],
  ["PUT", "/tasks/x/pushNotificationConfigs", allow("GET", "POST")],
  ["PATCH", "/tasks/x/pushNotificationConfigs/c", allow("DELETE", "GET")],
  ["POST", "/tasks/x:subscribe", allow("GET")],
  ["POST", "/tasks", allow("GET")],
  ["GET", "/nope", "not_found"],
  ["GET", "/message", "not_found"],
  ["POST", "/message:unknown", "not_found"],
  ["GET", "/t1/t2/tasks", "not_found"],
], { trailingSlash: "empty-value-or-drop" });

// ---------------------------------------------------------------------------
// (c) A multi-segment tenant (fixture, not A2A). The brief's form
// `/{tenant=**}/tasks/{id}` puts a literal after `**`, which the parser
// refuses, so the fixture spells the two-segment tenant as `{tenant=*/*}`.
// ---------------------------------------------------------------------------

test("`/{tenant=**}/tasks/{id}` is refused by the parser, so it never reaches the router", () => {
  expect(() => parsePathTemplate("/{tenant=**}/tasks/{id}")).toThrow(/"\*\*" must be the last segment/);
});

suite(
  "multi-segment tenant fixture",
  [
    ["GET", "/{tenant=*/*}/tasks/{id}", "GetTask@org"],
    ["GET", "/tasks/{id}", "GetTask"],
    ["GET", "/files/{path=**}", "GetFile"],
  ],
  [
    ["GET", "/org/team/tasks/x", found("GetTask@org", { tenant: "org/team", id: "x" })],
    ["GET", "/org/te%2Fam/tasks/x%2Fy", found("GetTask@org", { tenant: "org/te%2Fam", id: "x/y" })],
    ["GET", "/org%20a/t%C3%A9am/tasks/x", found("GetTask@org", { tenant: "org a/téam", id: "x" })],
    ["GET", "/org/tasks/x", "not_found"],
    ["GET", "/org/team/extra/tasks/x", "not_found"],
    ["GET", "/files/a/b%2Fc/d", found("GetFile", { path: "a/b%2Fc/d" })],
    ["GET", "/files", found("GetFile", { path: "" })],
  ],
);

suite(
  "empty segments with empty values on (D6): a single-segment variable's value, never a piece of a multi-segment one",
  [
    ["GET", "/{tenant=*/*}/tasks/{id}", "GetTask@org"],
    ["GET", "/{tenant}/a/tasks/{id}", "GetTask@one"],
    ["GET", "/shelves/{name=shelves/*}", "GetShelf"],
  ],
  [
    ["GET", "/org//tasks/x", "not_found"], // tenant "org/" is no value a client sent
    ["GET", "//team/tasks/x", "not_found"],
    ["GET", "//a/tasks/x", found("GetTask@one", { tenant: "", id: "x" })], // the DFS backtracks to the single-segment route
    ["GET", "/org/team/tasks/", found("GetTask@org", { tenant: "org/team", id: "" })],
    ["GET", "/shelves/shelves/", "not_found"],
  ],
  { trailingSlash: "empty-value-or-drop" },
);

// ---------------------------------------------------------------------------
// (d) Cost: nodes visited per match, counted, not timed.
// ---------------------------------------------------------------------------

describe("matching cost follows the path, not the route count", () => {
  function synthetic(n: number): RouteSpec[] {
    const specs: RouteSpec[] = [];
    for (let i = 0; i < n; i++) {
      specs.push(["GET", `/svc${i}/items/{id}`, `get${i}`]);
      specs.push(["GET", `/svc${i}/items/{id}/sub/{sub}`, `sub${i}`]);
      specs.push(["POST", `/svc${i}/items/{id}:run`, `run${i}`]);
      specs.push(["GET", `/{tenant}/svc${i}/x`, `tenant${i}`]);
    }
    return specs;
  }

  function visits(router: Router<string>, stats: { nodesVisited: number }, method: string, path: string) {
    stats.nodesVisited = 0;
    const outcome = summarize(router.match(method, path));
    return { outcome, nodes: stats.nodesVisited };
  }

  const small = { nodesVisited: 0 };
  const large = { nodesVisited: 0 };
  const smallRouter = build(synthetic(10), small);
  const largeRouter = build(synthetic(1000), large);

  test.each([
    // [method, path, expected nodes]: a straight walk enters root + one node
    // per segment; the backtracking case also enters the dead-end literal.
    ["GET", "/svc3/items/abc", 4],
    ["GET", "/svc3/items/abc/sub/d", 6],
    ["POST", "/svc3/items/abc:run", 4],
    ["GET", "/svc3/svc4/x", 5], // root, svc3 (dead end), root's `*`, svc4, x
    ["GET", "/svc3/items", 4], // root, svc3, items (no leaf), root's `*`: not found
    ["GET", "/zzz", 2], // root, root's `*`
  ] as const)("%s %s enters %i nodes with 10 or 1,000 services", (method, path, expectedNodes) => {
    const a = visits(smallRouter, small, method, path);
    const b = visits(largeRouter, large, method, path);
    expect(b).toEqual(a);
    expect(a.nodes).toBe(expectedNodes);
  });

  test("a longer path enters more nodes, a larger route table does not", () => {
    const short = visits(largeRouter, large, "GET", "/svc999/items/abc");
    const long = visits(largeRouter, large, "GET", "/svc999/items/abc/sub/d");
    expect(short.outcome).toEqual(found("get999", { id: "abc" }));
    expect(long.outcome).toEqual(found("sub999", { id: "abc", sub: "d" }));
    expect(long.nodes - short.nodes).toBe(2);
  });

  test("stats are optional and untouched when absent", () => {
    expect(summarize(build(synthetic(2)).match("GET", "/svc1/items/a"))).toEqual(found("get1", { id: "a" }));
  });
});
