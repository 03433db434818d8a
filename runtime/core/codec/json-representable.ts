/**
 * What ProtoJSON cannot write in a message that protobuf binary carried: a
 * google.protobuf.Value with no kind set, or a number that is NaN or
 * infinite in a Value, ListValue or Struct. A request holding one came in on
 * gRPC, and a JSON binding could not answer with it afterwards: a task whose
 * message held one answered every JSON GetTask with Internal, and its push
 * notifications failed (found by the fuzz campaign). The gRPC binding
 * refuses such a request as the JSON bindings refuse what does not decode
 * (D90).
 *
 * The walk is planned once per message type, by reflection: only the fields
 * through which a Value, ListValue or Struct can be reached. protobuf-es
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
const isJsonType = (desc: DescMessage) => desc.typeName === valueType || desc.typeName === listType || desc.typeName === structType;

const noKind = "a google.protobuf.Value must have a value (ProtoJSON has no form for one without)";
const notFinite = "a number in a google.protobuf.Value cannot be NaN or infinite in ProtoJSON";

/** The first value of `message` (of `desc`) that ProtoJSON cannot write, described with its field path; undefined when there is none. */
export function jsonProblemOf(desc: DescMessage, message: object): string | undefined {
  const problem = walk(planOf(desc), message);
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
    let problem: Problem | undefined;
    if (field.fieldKind === "list") {
      const items = value as unknown[];
      for (let i = 0; i < items.length; i++) {
        if ((problem = itemProblem(type, items[i])) !== undefined) {
          problem.path.push(`[${i}]`);
          break;
        }
      }
    } else if (field.fieldKind === "map") {
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        if ((problem = itemProblem(type, item)) !== undefined) {
          problem.path.push(`[${JSON.stringify(key)}]`);
          break;
        }
      }
    } else {
      problem = itemProblem(type, value);
    }
    if (problem !== undefined) {
      problem.path.push(`.${field.localName}`);
      return problem;
    }
  }
  return undefined;
}

function itemProblem(desc: DescMessage, item: unknown): Problem | undefined {
  switch (desc.typeName) {
    case valueType:
      return valueProblem(item as object);
    case listType:
      return listProblem(item as object);
    case structType:
      // A JSON object here (protobuf-es's form of a Struct field).
      return jsonProblem(item);
    default:
      return walk(planOf(desc), item as object);
  }
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
    case "structValue": {
      const fields = (kind.value as { fields?: Record<string, object> } | undefined)?.fields ?? {};
      for (const [key, inner] of Object.entries(fields)) {
        const problem = valueProblem(inner);
        if (problem !== undefined) {
          problem.path.push(`[${JSON.stringify(key)}]`);
          return problem;
        }
      }
      return undefined;
    }
    case "listValue":
      return listProblem(kind.value as object);
    default:
      return undefined;
  }
}

function listProblem(list: object): Problem | undefined {
  const values = (list as { values?: object[] }).values ?? [];
  for (let i = 0; i < values.length; i++) {
    const problem = valueProblem(values[i]!);
    if (problem !== undefined) {
      problem.path.push(`[${i}]`);
      return problem;
    }
  }
  return undefined;
}

/** A Struct field's JSON: only a number can be wrong in it (a Value with no kind became null on decode). */
function jsonProblem(json: unknown): Problem | undefined {
  if (typeof json === "number") return Number.isFinite(json) ? undefined : { why: notFinite, path: [] };
  if (typeof json !== "object" || json === null) return undefined;
  if (Array.isArray(json)) {
    for (let i = 0; i < json.length; i++) {
      const problem = jsonProblem(json[i]);
      if (problem !== undefined) {
        problem.path.push(`[${i}]`);
        return problem;
      }
    }
    return undefined;
  }
  for (const [key, inner] of Object.entries(json)) {
    const problem = jsonProblem(inner);
    if (problem !== undefined) {
      problem.path.push(`[${JSON.stringify(key)}]`);
      return problem;
    }
  }
  return undefined;
}

/** The fields of `desc` through which a Value, ListValue or Struct can be reached, worked out once per type. */
function planOf(desc: DescMessage): Plan {
  let plan = plans.get(desc);
  if (plan === undefined) {
    const reaching = typesReachingJson(desc);
    plan = desc.fields.filter((f) => f.message !== undefined && (isJsonType(f.message) || reaching.has(f.message)));
    plans.set(desc, plan);
  }
  return plan;
}

/** The message types reachable from `root` (itself included) from which a Value, ListValue or Struct field can be reached. */
function typesReachingJson(root: DescMessage): Set<DescMessage> {
  const all = new Set<DescMessage>();
  const visit = (desc: DescMessage) => {
    if (all.has(desc) || isJsonType(desc)) return;
    all.add(desc);
    for (const f of desc.fields) if (f.message !== undefined) visit(f.message);
  };
  visit(root);
  const reaching = new Set<DescMessage>();
  // To a fixed point: a type reaches one when one of its fields is one, or of a type that does.
  for (let changed = true; changed; ) {
    changed = false;
    for (const desc of all) {
      if (reaching.has(desc)) continue;
      if (desc.fields.some((f) => f.message !== undefined && (isJsonType(f.message) || reaching.has(f.message)))) {
        reaching.add(desc);
        changed = true;
      }
    }
  }
  return reaching;
}
