/**
 * The HTTP+JSON router: finds the route for a method and a raw request path.
 *
 * It works on what path-template.ts parsed, so the plugin and the router agree
 * on what a template means. The design follows the reference transcoder
 * (grpc-httpjson-transcoding path_matcher) rather than grpc-gateway's
 * ServeMux, because the mux makes precedence depend on registration order
 * and scans every handler per request:
 *
 * - Routes are compiled once into a segment trie. A lookup walks the trie
 *   depth first, trying the literal child, then `*`, then `**`, backtracking
 *   on failure. That order IS decision D6 (a literal beats `*`, `*` beats
 *   `**`, left to right), so `GET /tasks/tasks` is GetTask(id="tasks") and
 *   not ListTasks(tenant="tasks"). The work depends on the path's length,
 *   never on how many routes exist.
 * - The custom verb is part of a leaf's key (`GET` + `subscribe` is another
 *   leaf than `GET` alone), and only verbs some route registers are split
 *   off the request, so an id such as `urn:x` stays an id (grpc-gateway #224,
 *   #708; reference #43) and `/tasks/x:subscribe` cannot fall through to
 *   GetTask (a2a-js #569).
 * - The raw path is split on "/" before anything is decoded, and only
 *   captured values are decoded (D8), so an encoded `%2F` can never become a
 *   separator and change which route matches (grpc-gateway #3263, #308).
 *
 * Deliberate differences from the reference matcher, each tested:
 * - "/" matches nothing, even `/**`: every template has a segment, and a
 *   request for the bare interface URL is better answered 404 than routed.
 * - A trailing slash is dropped before the verb is looked for, so
 *   `/tasks/x:cancel/` is `/tasks/x:cancel` (the reference finds no verb).
 *   With `trailingSlash: "empty-value"` it is instead an empty last segment
 *   that only a `*` can match, its value "": how A2A 0.3's paths were read
 *   (`…/pushNotificationConfigs/` is config "", D110). With
 *   `"empty-value-or-drop"` (A2A 1.0's routes, D6) it is that empty value
 *   where a route takes one, and dropped only where none does, so a trailing
 *   slash never turns an item's route into its collection's (`/tasks/` is
 *   GetTask with id "", not ListTasks; `/tasks/x/` is still GetTask "x");
 *   an empty segment left by a verb (`/tasks/:cancel`) or between two
 *   slashes (`/tasks//pushNotificationConfigs`) is an empty value too in
 *   both "empty-value" modes, where grpc-gateway and the reference answer
 *   404: the A2A profile answers it as JSON-RPC answers an empty id.
 * - `**` never swallows an empty segment, same as `*`.
 */
import { templateKey, type PathTemplate, type TemplateVariable } from "./path-template.js";

export interface RouteInput<T> {
  readonly httpMethod: string;
  readonly template: PathTemplate;
  readonly target: T;
}

export type RouteMatch<T> =
  /** values[i] is the decoded value of template.variables[i]. */
  | { readonly kind: "found"; readonly route: RouteInput<T>; readonly values: readonly string[] }
  /** The path (and verb) exists, but not for this method; `allow` is sorted. */
  | { readonly kind: "method_not_allowed"; readonly allow: readonly string[] }
  | { readonly kind: "not_found" }
  /** The route matched, but a captured value is not valid percent-encoded UTF-8. */
  | { readonly kind: "bad_path"; readonly reason: string };

export interface Router<T> {
  /**
   * `rawPath` is the request path without the query, still percent-encoded
   * (e.g. the part of `req.url` before "?"), relative to where the binding is
   * mounted. `httpMethod` is compared exactly, so pass it upper-case.
   */
  match(httpMethod: string, rawPath: string): RouteMatch<T>;
}

/** A custom HttpRule kind of "*" accepts every method. */
const ANY_METHOD = "*";
/** Leaf key of routes without a verb; a parsed verb is never empty. */
const NO_VERB = "";

interface TrieNode<T> {
  /** Keyed by the raw (still encoded) literal text, compared as-is. */
  readonly literals: Map<string, TrieNode<T>>;
  wildcard: TrieNode<T> | undefined;
  /** `**` is always the last segment, so this node only ever has leaves. */
  deep: TrieNode<T> | undefined;
  /** verb (or NO_VERB) -> HTTP method (or ANY_METHOD) -> route. */
  readonly leaves: Map<string, Map<string, RouteInput<T>>>;
}

function newNode<T>(): TrieNode<T> {
  return { literals: new Map(), wildcard: undefined, deep: undefined, leaves: new Map() };
}

/**
 * Builds the router. Two routes with the same method and the same template
 * shape (`templateKey`) could never be told apart by a request, so that is a
 * programming error and throws here rather than silently shadowing one.
 *
 * `stats` exists for tests: when given, `nodesVisited` is increased by the
 * number of trie nodes each `match` enters, which lets a test show the cost
 * follows the path and not the route count without timing anything.
 */
export interface RouterOptions {
  /**
   * What a trailing slash is: dropped (the default, as the reference does); an empty last
   * segment a `*` matches ("empty-value"); or that empty value where a route takes one and
   * dropped elsewhere ("empty-value-or-drop"). Both "empty-value" modes also let a `*` take
   * any other empty segment: what a verb leaves (`/tasks/:cancel`) and `//` mid-path.
   */
  readonly trailingSlash?: TrailingSlash;
}

export type TrailingSlash = "drop" | "empty-value" | "empty-value-or-drop";

export function createRouter<T>(
  routes: readonly RouteInput<T>[],
  stats?: { nodesVisited: number },
  options: RouterOptions = {},
): Router<T> {
  const mode = options.trailingSlash ?? "drop";
  const root = newNode<T>();
  // Only these are split off a request's last segment; anything else after a
  // ":" is part of the segment (reference default, #43).
  const verbs = new Set<string>();

  for (const route of routes) {
    const { segments, verb } = route.template;
    let node = root;
    for (const [i, seg] of segments.entries()) {
      if (seg.kind === "literal") {
        let next = node.literals.get(seg.value);
        if (!next) node.literals.set(seg.value, (next = newNode()));
        node = next;
      } else if (seg.kind === "wildcard") {
        node = node.wildcard ??= newNode();
      } else {
        // The lookup relies on this to match `**` in O(1); the parser
        // guarantees it, a hand-built template might not.
        if (i !== segments.length - 1) {
          throw new Error(`route ${route.template.text}: "**" must be the last segment`);
        }
        node = node.deep ??= newNode();
      }
    }
    const verbKey = verb ?? NO_VERB;
    if (verb !== undefined) verbs.add(verb);
    let byMethod = node.leaves.get(verbKey);
    if (!byMethod) node.leaves.set(verbKey, (byMethod = new Map()));
    if (byMethod.has(route.httpMethod)) {
      throw new Error(
        `duplicate route ${route.httpMethod} ${templateKey(route.template)} (${route.template.text})`,
      );
    }
    byMethod.set(route.httpMethod, route);
  }

  // When a request's last segment has several ":", the verb is the shortest
  // registered suffix after one of them: with `subscribe` registered,
  // `a:b:subscribe` is id "a:b" + verb. Looking further left than the last
  // ":" only matters for verbs that themselves contain ":" (the parser
  // allows `/v1/{name}:a:b`), which would otherwise be unreachable.
  function splitVerb(last: string): { segment: string; verb: string } | undefined {
    for (let colon = last.lastIndexOf(":"); colon >= 0; colon = last.lastIndexOf(":", colon - 1)) {
      const verb = last.slice(colon + 1);
      if (verbs.has(verb)) return { segment: last.slice(0, colon), verb };
      if (colon === 0) break;
    }
    return undefined;
  }

  return {
    match(httpMethod, rawPath) {
      if (!rawPath.startsWith("/")) return { kind: "not_found" };
      const segs = rawPath.slice(1).split("/");
      if (mode !== "empty-value-or-drop") return matchSegments(httpMethod, segs, mode === "empty-value", mode === "empty-value");
      // The lookup changes `segs`: copied only when a second lookup (the slash dropped) may follow.
      const trailing = segs[segs.length - 1] === "";
      const asValue = matchSegments(httpMethod, trailing ? [...segs] : segs, true, true);
      // No trailing slash: dropping it would look for the same path again.
      if (asValue.kind === "found" || asValue.kind === "bad_path" || !trailing) return asValue;
      const dropped = matchSegments(httpMethod, segs, false, true);
      if (dropped.kind === "found" || dropped.kind === "bad_path") return dropped;
      const allow = new Set([...(asValue.kind === "method_not_allowed" ? asValue.allow : []), ...(dropped.kind === "method_not_allowed" ? dropped.allow : [])]);
      return allow.size > 0 ? { kind: "method_not_allowed", allow: [...allow].sort() } : { kind: "not_found" };
    },
  };

  /**
   * One lookup of the path split on "/" (`segs`, changed in place). `emptyLast`: a trailing
   * slash is an empty last value, else dropped; `emptyValues`: an empty segment anywhere (`//`
   * mid-path, or what a verb leaves: `/tasks/:cancel`) is a value a `*` may take, else only
   * the trailing one `emptyLast` keeps.
   */
  function matchSegments(httpMethod: string, segs: string[], emptyLast: boolean, emptyValues: boolean): RouteMatch<T> {
    // A trailing slash; also "/" -> [].
    if (segs[segs.length - 1] === "" && (!emptyLast || segs.length === 1)) segs.pop();
    if (segs.length === 0) return { kind: "not_found" };
    // The one empty segment a `*` may match where empty values are not taken: the last, when a trailing slash is a value.
    const emptyAt = emptyLast && segs[segs.length - 1] === "" ? segs.length - 1 : -1;

    let verbKey = NO_VERB;
    if (verbs.size > 0) {
      const split = splitVerb(segs[segs.length - 1] as string);
      if (split) {
        segs[segs.length - 1] = split.segment;
        verbKey = split.verb;
      }
    }

    // `**` consumes the rest of the path, which is allowed only when no
    // segment from there on is empty; knowing the last empty one makes
    // that an O(1) check instead of a rescan at every level.
    const lastEmpty = segs.lastIndexOf("");
    // Methods that would have matched, gathered along the way: the DFS
    // explores every matching node before giving up, so when it finds
    // nothing for this method, this is the complete Allow list.
    const allow = new Set<string>();

    // Exact method first, then "*": a route written for this method is
    // more specific than one that takes any method.
    function leafAt(node: TrieNode<T>): RouteInput<T> | undefined {
      const byMethod = node.leaves.get(verbKey);
      if (!byMethod) return undefined;
      const exact = byMethod.get(httpMethod);
      if (exact !== undefined && takesEmpties(exact)) return exact;
      const any = byMethod.get(ANY_METHOD);
      if (any !== undefined && takesEmpties(any)) return any;
      for (const [m, route] of byMethod) if (takesEmpties(route)) allow.add(m);
      return undefined;
    }

    // An empty segment is the value of a single-segment variable (or of no variable), never a
    // piece of a multi-segment one: `{tenant=*/*}` of `org/` would be a value no client sent.
    function takesEmpties(route: RouteInput<T>): boolean {
      if (lastEmpty < 0) return true;
      const { segments, variables } = route.template;
      const endsDeep = segments[segments.length - 1]?.kind === "deep_wildcard";
      for (const v of variables) {
        if (!v.multiSegment) continue;
        const end = endsDeep && v.end === segments.length ? segs.length : v.end;
        for (let j = v.start; j < end; j++) if (segs[j] === "") return false;
      }
      return true;
    }

    function enter(node: TrieNode<T>): TrieNode<T> {
      if (stats) stats.nodesVisited++;
      return node;
    }

    // Backtracking continues past a node that has the path but not the
    // method, so `GET /tasks/tasks` still reaches GET /tasks/{id} when a
    // hypothetical POST /tasks/tasks exists: 405 only when no route at
    // all takes the method.
    function search(node: TrieNode<T>, i: number): RouteInput<T> | undefined {
      enter(node);
      if (i === segs.length) {
        return leafAt(node) ?? (node.deep ? leafAt(enter(node.deep)) : undefined);
      }
      const seg = segs[i] as string;
      const lit = node.literals.get(seg);
      const viaLiteral = lit ? search(lit, i + 1) : undefined;
      if (viaLiteral) return viaLiteral;
      if ((seg !== "" || emptyValues || i === emptyAt) && node.wildcard) {
        const viaWildcard = search(node.wildcard, i + 1);
        if (viaWildcard) return viaWildcard;
      }
      if (node.deep && lastEmpty < i) return leafAt(enter(node.deep));
      return undefined;
    }

    const route = search(root, 0);
    if (!route) {
      return allow.size > 0
        ? { kind: "method_not_allowed", allow: [...allow].sort() }
        : { kind: "not_found" };
    }
    return bindValues(route, segs);
  }
}

// Decoding happens only after a route is chosen: it never changes which
// route matches, and a bad escape in a value is the client's 400, not a 404.
function bindValues<T>(route: RouteInput<T>, segs: readonly string[]): RouteMatch<T> {
  const { segments, variables } = route.template;
  const endsDeep = segments[segments.length - 1]?.kind === "deep_wildcard";
  const values: string[] = [];
  for (const v of variables) {
    // Template and request segments line up one to one, except that a
    // trailing `**` stands for all remaining request segments.
    const end = endsDeep && v.end === segments.length ? segs.length : v.end;
    const value = decodeValue(segs.slice(v.start, end), v);
    if (value === undefined) {
      return {
        kind: "bad_path",
        reason: `the value of "${v.fieldPath.join(".")}" is not valid percent-encoded UTF-8`,
      };
    }
    values.push(value);
  }
  return { kind: "found", route, values };
}

// http.proto: a single-segment value is fully decoded (its `%2F` cannot be a
// separator any more); a multi-segment value keeps `%2F`/`%2f` encoded so the
// handler can still tell a separator from an encoded slash. decodeURIComponent
// leaves `+` alone (path, not form encoding) and rejects bad escapes and
// invalid UTF-8, which is exactly the bad_path set.
function decodeValue(parts: readonly string[], v: TemplateVariable): string | undefined {
  try {
    if (!v.multiSegment) return decodeURIComponent(parts[0] ?? "");
    return parts
      .map((p) =>
        p
          .split(/(%2F)/i)
          .map((piece, k) => (k % 2 === 1 ? piece : decodeURIComponent(piece)))
          .join(""),
      )
      .join("/");
  } catch {
    return undefined;
  }
}
