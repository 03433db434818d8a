/**
 * What ProtoJSON cannot write in a message that protobuf binary carried: a
 * google.protobuf.Value with no kind set, or a number that is NaN or
 * infinite in a Value, ListValue or Struct; a Timestamp or Duration out of
 * the range its JSON text has; a FieldMask path whose lowerCamelCase does
 * not read back as itself. A request holding one came in on gRPC, and a
 * JSON binding could not answer with it afterwards: a task whose message
 * held one answered every JSON GetTask with Internal, and its push
 * notifications failed (found by the fuzz campaign). The gRPC binding
 * refuses such a request as the JSON bindings refuse what does not decode
 * (D90).
 *
 * The walk is planned once per message type, by reflection: only the fields
 * through which one of those types can be reached. protobuf-es
 * keeps Struct fields as JSON objects (a Value with no kind in one became
 * null on decode, a NaN stayed a number); a Value or ListValue field, or a
 * Struct inside a Value, stays a message. The field path is built only for
 * a problem found.
 */
import type { DescField, DescMessage } from "@bufbuild/protobuf";

type Plan = readonly DescField[];

/** What was found, and where: the path is built from the inside out, once. */
interface Problem {
  readonly why: string;
  readonly path: string[];
}

const plans = new WeakMap<DescMessage, Plan>();

const valueType = "google.protobuf.Value";
const listType = "google.protobuf.ListValue";
const structType = "google.protobuf.Struct";
const timestampType = "google.protobuf.Timestamp";
const durationType = "google.protobuf.Duration";
const fieldMaskType = "google.protobuf.FieldMask";
/** The types checked here: the walk stops at them. */
const checkedTypes = new Set([valueType, listType, structType, timestampType, durationType, fieldMaskType]);
const isChecked = (desc: DescMessage) => checkedTypes.has(desc.typeName);

const noKind = "a google.protobuf.Value must have a value (ProtoJSON has no form for one without)";
const notFinite = "a number in a google.protobuf.Value cannot be NaN or infinite in ProtoJSON";
const timestampRange = "a google.protobuf.Timestamp must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z, its nanos from 0 to 999999999 (ProtoJSON has no form for others)";
const durationRange =
  "a google.protobuf.Duration must be within 315576000000 seconds either way, its nanos within 999999999 either way and of the seconds' sign (ProtoJSON has no form for others)";
const irreversiblePath =
  "a google.protobuf.FieldMask path must be lower_snake_case with no comma, which its lowerCamelCase JSON form reads back as (ProtoJSON has no form for others)";
const lonePath = "a google.protobuf.FieldMask of one empty path reads back as no path in ProtoJSON";

// ProtoJSON's ranges (google/protobuf/timestamp.proto, duration.proto).
const timestampMinSeconds = -62135596800;
const timestampMaxSeconds = 253402300799;
const durationMaxSeconds = 315576000000;

/** The first value of `message` (of `desc`) that ProtoJSON cannot write, described with its field path; undefined when there is none. */
export function jsonProblemOf(desc: DescMessage, message: object): string | undefined {
  // A method may take a checked type itself (a Struct, a Timestamp) as its input.
  const problem =
    desc.typeName === structType
      ? inEntries((message as { fields?: Record<string, object> }).fields ?? {}, valueProblem)
      : isChecked(desc)
        ? itemProblem(message, desc)
        : walk(planOf(desc), message);
  return problem === undefined ? undefined : `${desc.typeName}${problem.path.reverse().join("")}: ${problem.why}`;
}

function walk(plan: Plan, message: object): Problem | undefined {
  for (const field of plan) {
    let value: unknown;
    if (field.oneof !== undefined) {
      const chosen = (message as Record<string, { case?: string; value?: unknown } | undefined>)[field.oneof.localName];
      if (chosen?.case !== field.localName) continue;
      value = chosen.value;
    } else {
      value = (message as Record<string, unknown>)[field.localName];
    }
    if (value === undefined || value === null) continue;
    const type = field.message!;
    const problem =
      field.fieldKind === "list"
        ? inItems(value as readonly unknown[], itemProblem, type)
        : field.fieldKind === "map"
          ? inEntries(value as Record<string, unknown>, itemProblem, type)
          : itemProblem(value, type);
    if (problem !== undefined) {
      problem.path.push(`.${field.localName}`);
      return problem;
    }
  }
  return undefined;
}

/** `item`, a value of a field of message type `desc`. */
function itemProblem(item: unknown, desc: DescMessage): Problem | undefined {
  switch (desc.typeName) {
    case valueType:
      return valueProblem(item as object);
    case listType:
      return inItems((item as { values?: object[] }).values ?? [], valueProblem);
    case structType:
      // A JSON object here (protobuf-es's form of a Struct field).
      return jsonProblem(item);
    case timestampType:
      return timestampProblem(item as TimeLike);
    case durationType:
      return durationProblem(item as TimeLike);
    case fieldMaskType:
      return fieldMaskProblem((item as { paths?: string[] }).paths ?? []);
    default:
      return walk(planOf(desc), item as object);
  }
}

/** The first item with a problem, its index put on the path; `type` is handed to `check` (no closure per field). */
function inItems<T>(items: readonly T[], check: (item: T, type: DescMessage) => Problem | undefined, type?: DescMessage): Problem | undefined {
  for (let i = 0; i < items.length; i++) {
    const problem = check(items[i]!, type!);
    if (problem !== undefined) {
      problem.path.push(`[${i}]`);
      return problem;
    }
  }
  return undefined;
}

/** The first entry with a problem, its key put on the path; `type` as for inItems. */
function inEntries<T>(entries: Readonly<Record<string, T>>, check: (item: T, type: DescMessage) => Problem | undefined, type?: DescMessage): Problem | undefined {
  for (const key in entries) {
    const problem = check(entries[key]!, type!);
    if (problem !== undefined) {
      problem.path.push(`[${JSON.stringify(key)}]`);
      return problem;
    }
  }
  return undefined;
}

interface ValueLike {
  kind?: { case?: string; value?: unknown };
}

function valueProblem(value: object): Problem | undefined {
  const kind = (value as ValueLike).kind;
  switch (kind?.case) {
    case undefined:
      return { why: noKind, path: [] };
    case "numberValue":
      return Number.isFinite(kind.value) ? undefined : { why: notFinite, path: [] };
    case "structValue":
      return inEntries((kind.value as { fields?: Record<string, object> } | undefined)?.fields ?? {}, valueProblem);
    case "listValue":
      return inItems((kind.value as { values?: object[] }).values ?? [], valueProblem);
    default:
      return undefined;
  }
}

interface TimeLike {
  seconds?: bigint | number;
  nanos?: number;
}

/** The value as it came, for the message: what to fix. */
const timeText = (seconds: number, nanos: number) => `seconds ${seconds}, nanos ${nanos}`;

function timestampProblem(value: TimeLike): Problem | undefined {
  const seconds = Number(value.seconds ?? 0);
  const nanos = value.nanos ?? 0;
  if (seconds >= timestampMinSeconds && seconds <= timestampMaxSeconds && nanos >= 0 && nanos <= 999_999_999) return undefined;
  return { why: `${timestampRange}; got ${timeText(seconds, nanos)}`, path: [] };
}

function durationProblem(value: TimeLike): Problem | undefined {
  const seconds = Number(value.seconds ?? 0);
  const nanos = value.nanos ?? 0;
  const inRange = Math.abs(seconds) <= durationMaxSeconds && Math.abs(nanos) <= 999_999_999;
  if (inRange && !(seconds > 0 && nanos < 0) && !(seconds < 0 && nanos > 0)) return undefined;
  return { why: `${durationRange}; got ${timeText(seconds, nanos)}`, path: [] };
}

/**
 * A path whose lowerCamelCase (protoc's: a letter after "_" upper-cased, the "_" dropped) reads
 * back as itself (each A-Z becoming "_" and its lower case): no A-Z, and each "_" before a-z; and
 * no comma, which joins the paths in JSON. Written out rather than protobuf-es's
 * protoCamelCase/protoSnakeCase, from "@bufbuild/protobuf/reflect": that entry point, loaded by
 * the binding's dynamic import, failed jest's ESM loader; a test holds the two to agreeing.
 */
const reversiblePath = /^(?:[^A-Z_,]|_[a-z])*$/;

function fieldMaskProblem(paths: readonly string[]): Problem | undefined {
  if (paths.length === 1 && paths[0] === "") return { why: lonePath, path: [".paths"] };
  const problem = inItems(paths, pathProblem);
  problem?.path.push(".paths");
  return problem;
}

function pathProblem(path: string): Problem | undefined {
  return reversiblePath.test(path) ? undefined : { why: `${irreversiblePath}; got ${JSON.stringify(path)}`, path: [] };
}

/** A Struct field's JSON: only a number can be wrong in it (a Value with no kind became null on decode). */
function jsonProblem(json: unknown): Problem | undefined {
  if (typeof json === "number") return Number.isFinite(json) ? undefined : { why: notFinite, path: [] };
  if (typeof json !== "object" || json === null) return undefined;
  return Array.isArray(json) ? inItems(json as unknown[], jsonProblem) : inEntries(json as Record<string, unknown>, jsonProblem);
}

/** The fields of `desc` through which a checked type can be reached: worked out once, with those of every type reachable from it. */
function planOf(desc: DescMessage): Plan {
  const known = plans.get(desc);
  if (known !== undefined) return known;
  const all = new Set<DescMessage>();
  const visit = (d: DescMessage) => {
    if (all.has(d) || isChecked(d)) return;
    all.add(d);
    for (const f of d.fields) if (f.message !== undefined) visit(f.message);
  };
  visit(desc);
  const reaching = new Set<DescMessage>();
  const leads = (f: DescField) => f.message !== undefined && (isChecked(f.message) || reaching.has(f.message));
  // To a fixed point: a type reaches one when one of its fields is one, or of a type that does.
  for (let changed = true; changed; ) {
    changed = false;
    for (const d of all) {
      if (!reaching.has(d) && d.fields.some(leads)) {
        reaching.add(d);
        changed = true;
      }
    }
  }
  for (const d of all) if (!plans.has(d)) plans.set(d, d.fields.filter(leads));
  return plans.get(desc)!;
}
