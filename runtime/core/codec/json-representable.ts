/**
 * What ProtoJSON cannot write in a message that protobuf binary carried: a
 * google.protobuf.Value with no kind set, or a number Value that is NaN or
 * infinite. A request holding one came in on gRPC, and a JSON binding could
 * not answer with it afterwards: a task whose message part held one answered
 * every JSON GetTask with Internal, and its push notifications failed (found
 * by the fuzz campaign). The gRPC binding refuses such a request as the JSON
 * bindings refuse what does not decode (D90).
 *
 * The walk is planned once per message type, by reflection: only the fields
 * through which a Value or ListValue can be reached. google.protobuf.Struct
 * fields are JSON objects already (protobuf-es converts them on decode, which
 * refuses the same values).
 */
import type { DescField, DescMessage } from "@bufbuild/protobuf";

type Plan = readonly DescField[];

const plans = new WeakMap<DescMessage, Plan>();

const valueType = "google.protobuf.Value";
const listType = "google.protobuf.ListValue";
const structType = "google.protobuf.Struct";

/** The first value of `message` (of `desc`) that ProtoJSON cannot write, described; undefined when there is none. */
export function jsonProblemOf(desc: DescMessage, message: object): string | undefined {
  return walk(planOf(desc), message, desc.typeName);
}

function walk(plan: Plan, message: object, path: string): string | undefined {
  for (const field of plan) {
    const at = `${path}.${field.localName}`;
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
    let problem: string | undefined;
    if (field.fieldKind === "list") {
      const items = value as object[];
      for (let i = 0; i < items.length && problem === undefined; i++) problem = itemProblem(type, items[i]!, `${at}[${i}]`);
    } else if (field.fieldKind === "map") {
      for (const [key, item] of Object.entries(value as Record<string, object>)) if ((problem = itemProblem(type, item, `${at}["${key}"]`)) !== undefined) break;
    } else {
      problem = itemProblem(type, value as object, at);
    }
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function itemProblem(desc: DescMessage, item: object, where: string): string | undefined {
  if (desc.typeName === valueType) return valueProblem(item, where);
  if (desc.typeName === listType) return listProblem(item, where);
  return walk(planOf(desc), item, where);
}

interface ValueLike {
  kind?: { case?: string; value?: unknown };
}

function valueProblem(value: object, where: string): string | undefined {
  const kind = (value as ValueLike).kind;
  switch (kind?.case) {
    case undefined:
      return `${where}: a google.protobuf.Value must have a value (ProtoJSON has no form for one without)`;
    case "numberValue":
      return Number.isFinite(kind.value) ? undefined : `${where}: a google.protobuf.Value number cannot be NaN or infinite in ProtoJSON`;
    case "structValue": {
      const fields = (kind.value as { fields?: Record<string, object> } | undefined)?.fields ?? {};
      for (const [key, inner] of Object.entries(fields)) {
        const problem = valueProblem(inner, `${where}.${key}`);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    case "listValue":
      return listProblem(kind.value as object, where);
    default:
      return undefined;
  }
}

function listProblem(list: object, where: string): string | undefined {
  const values = (list as { values?: object[] }).values ?? [];
  for (const [i, inner] of values.entries()) {
    const problem = valueProblem(inner, `${where}[${i}]`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The fields of `desc` through which a Value or ListValue can be reached, worked out once per type. */
function planOf(desc: DescMessage): Plan {
  let plan = plans.get(desc);
  if (plan === undefined) {
    const reaching = typesReachingValues(desc);
    plan = desc.fields.filter((f) => f.message !== undefined && f.message.typeName !== structType && (isValueType(f.message) || reaching.has(f.message)));
    plans.set(desc, plan);
  }
  return plan;
}

const isValueType = (desc: DescMessage) => desc.typeName === valueType || desc.typeName === listType;

/** The message types reachable from `root` (itself included) from which a Value or ListValue field can be reached. */
function typesReachingValues(root: DescMessage): Set<DescMessage> {
  const all = new Set<DescMessage>();
  const visit = (desc: DescMessage) => {
    if (all.has(desc) || isValueType(desc) || desc.typeName === structType) return;
    all.add(desc);
    for (const f of desc.fields) if (f.message !== undefined) visit(f.message);
  };
  visit(root);
  const reaching = new Set<DescMessage>();
  // To a fixed point: a type reaches a Value when one of its fields is one, or a type that does.
  for (let changed = true; changed; ) {
    changed = false;
    for (const desc of all) {
      if (reaching.has(desc)) continue;
      if (desc.fields.some((f) => f.message !== undefined && f.message.typeName !== structType && (isValueType(f.message) || reaching.has(f.message)))) {
        reaching.add(desc);
        changed = true;
      }
    }
  }
  return reaching;
}
