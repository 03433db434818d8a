// Structure-aware mutation with fast-check: a valid request of each of the
// 11 methods (values.mjs's shapes), then up to a few mutations, each an
// operation on one place of the request (a field dropped, retyped, given a
// hostile value, an unknown field or enum added). Everything here is a
// fast-check arbitrary, so a request that finds something shrinks to a
// small one.
import fc from "fast-check";

// ---------------------------------------------------------------- hostile values

/** Strings that have broken parsers: odd unicode, escapes, path tricks, huge. */
export const oddString = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "\ud800",
    "\udfff",
    "\ud83d\ude00",
    "\u202e\u0041\u0042",
    "\u200b",
    "\ufeff",
    "\uffff",
    "é",
    "e\u0301",
    "..",
    "../..",
    "%",
    "%2F",
    "%00",
    "a/b",
    "a?b#c",
    "a:b",
    "__proto__",
    "constructor",
    "toString",
    "hasOwnProperty",
    "null",
    "NaN",
    "-0",
    "1e400",
    "TASK_STATE_WORKING",
    "ROLE_USER",
    "2.0",
    "\r\n",
    "\t",
    "x".repeat(10_000),
  ),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "grapheme", maxLength: 8 }),
  fc.string({ unit: "binary", maxLength: 8 }),
);

/** Numbers at every edge JSON can carry. */
export const oddNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 0.5, -0.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 53, -(2 ** 53), 2 ** 63, 2 ** 64, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER + 2),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Nesting as deep as a body may carry. */
export const deep = fc.record({ depth: fc.oneof(fc.integer({ min: 1, max: 64 }), fc.constantFrom(1000, 5000, 20_000)), kind: fc.constantFrom("array", "object", "mixed") }).map(
  ({ depth, kind }) => ({ __deep: depth, kind }),
);

/** Any JSON value, hostile ones favoured. */
export const oddValue = fc.oneof(
  { withCrossShrink: true },
  fc.constant(null),
  fc.boolean(),
  oddNumber,
  oddString,
  fc.constant([]),
  fc.constant({}),
  fc.jsonValue({ maxDepth: 3 }),
  deep,
);

/**
 * Deep-nesting placeholders stay small in the value (shrinking copies it)
 * and become a marker string here; stringify() writes the nesting as text
 * (JSON.stringify itself overflows the stack at such depths).
 */
const DEEP = "\u0001deep:";
export function expandDeep(value) {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(expandDeep);
  if (Number.isInteger(value.__deep) && value.__deep > 0 && value.__deep <= 20_000 && ["array", "object", "mixed"].includes(value.kind) && Object.keys(value).length === 2) return `${DEEP}${value.__deep}:${value.kind}`;
  const out = {};
  for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: expandDeep(v), enumerable: true, writable: true, configurable: true });
  return out;
}

function nested(depth, kind) {
  let open = "";
  let close = "";
  for (let i = 0; i < depth; i++) {
    const array = kind === "array" || (kind === "mixed" && i % 2 === 0);
    open += array ? "[" : '{"k":';
    close = (array ? "]" : "}") + close;
  }
  return `${open}"bottom"${close}`;
}

/** JSON text of a value from expandDeep, its markers written out as nesting. */
export function stringify(value) {
  const text = JSON.stringify(value) ?? "null";
  return text.includes("\\u0001deep:") ? text.replace(/"\\u0001deep:(\d+):(\w+)"/g, (_, d, k) => nested(Number(d), k)) : text;
}

// ---------------------------------------------------------------- mutations of a JSON value

/** One mutation: what to do, where (an index into the value's places, modulo their number), and with what. */
export const mutation = fc.record({
  op: fc.constantFrom("drop", "retype", "retype", "unknownField", "enumName", "enumNumber", "wrap", "duplicate"),
  at: fc.nat(),
  value: oddValue,
  key: fc.oneof(fc.constantFrom("unknown", "__proto__", "constructor", "tenant", "id", "extra_field", "historyLength", "history_length"), fc.string({ maxLength: 6 })),
});

const enumFields = new Set(["role", "state", "status"]);

/** Every place in `value`: [parent, key] pairs, the root's own fields included. */
function placesOf(value, out = []) {
  if (value === null || typeof value !== "object") return out;
  for (const key of Object.keys(value)) {
    out.push([value, key]);
    placesOf(value[key], out);
  }
  return out;
}

/** Applies `mutations` to a deep copy of `value` (a plain JSON object). */
export function applyMutations(value, mutations) {
  const copy = structuredClone(value);
  for (const original of mutations) {
    // fast-check hands out the same instance of a constant each time: never let a request change it.
    const m = { ...original, value: structuredClone(original.value) };
    const places = placesOf(copy);
    if (places.length === 0) {
      if (copy !== null && typeof copy === "object" && !Array.isArray(copy)) copy[m.key] = m.value;
      continue;
    }
    const [parent, key] = places[m.at % places.length];
    switch (m.op) {
      case "drop":
        if (Array.isArray(parent)) parent.splice(Number(key), 1);
        else delete parent[key];
        break;
      case "retype":
        parent[key] = m.value;
        break;
      case "unknownField": {
        const target = parent[key] !== null && typeof parent[key] === "object" && !Array.isArray(parent[key]) ? parent[key] : parent;
        if (!Array.isArray(target)) Object.defineProperty(target, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
        break;
      }
      case "enumName": {
        const enumPlace = places.find(([, k]) => enumFields.has(k));
        const [p, k] = enumPlace ?? [parent, key];
        p[k] = typeof m.value === "string" ? m.value : `TASK_STATE_${String(m.key).toUpperCase()}`;
        break;
      }
      case "enumNumber": {
        const enumPlace = places.find(([, k]) => enumFields.has(k));
        const [p, k] = enumPlace ?? [parent, key];
        p[k] = typeof m.value === "number" ? m.value : m.at % 2 === 0 ? 99 : -1;
        break;
      }
      case "wrap":
        parent[key] = m.at % 2 === 0 ? [parent[key]] : { value: parent[key] };
        break;
      case "duplicate":
        if (Array.isArray(parent)) parent.push(structuredClone(parent[key]));
        else parent[key] = [parent[key], parent[key]];
        break;
    }
  }
  return copy;
}

/** Text-level damage to a serialized body: truncation, a stray byte, invalid UTF-8, a duplicated key. */
export const textDamage = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("truncate", "insert", "invalidUtf8", "dupKey", "bom", "trailing"), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }) },
);

export function damage(text, d) {
  if (d === undefined) return Buffer.from(text);
  const buf = Buffer.from(text);
  const at = buf.length === 0 ? 0 : d.at % buf.length;
  switch (d.kind) {
    case "truncate":
      return buf.subarray(0, at);
    case "insert":
      return Buffer.concat([buf.subarray(0, at), Buffer.from([d.byte]), buf.subarray(at)]);
    case "invalidUtf8":
      return Buffer.concat([buf.subarray(0, at), Buffer.from([0xc0, 0xaf, 0xff, 0xfe]), buf.subarray(at)]);
    case "dupKey":
      return text.startsWith("{") ? Buffer.from(`{"id":1,"id":"x",${text.slice(1)}`) : buf;
    case "bom":
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), buf]);
    case "trailing":
      return Buffer.concat([buf, Buffer.from(" }garbage")]);
  }
  return buf;
}
