import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { isRequired as hasRequiredBehavior } from "../../runtime/core/codec/field-behavior.js";

/**
 * Whether a field is required of a request (D11): marked `google.api.field_behavior = REQUIRED`, or
 * a proto2 `required` field (editions: `features.field_presence = LEGACY_REQUIRED`), which
 * protobuf-es reads as the presence LEGACY_REQUIRED. The generated table lists both, so a request
 * without one is InvalidParams on every binding before the handler runs.
 */
export function isRequired(field: DescField): boolean {
  return isLegacyRequired(field) || hasRequiredBehavior(field);
}

/**
 * A proto2 `required` field (or LEGACY_REQUIRED): set means present, whatever its value, and an
 * answer without it cannot be encoded, so no default is written for it (D11).
 */
export function isLegacyRequired(field: DescField): boolean {
  return field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED;
}

/** The REQUIRED fields of one message type, and the message fields that lead to more. */
export interface RequiredFieldsModel {
  readonly message: DescMessage;
  /** Fields marked `google.api.field_behavior = REQUIRED`, and proto2 `required` ones, in declaration order. */
  readonly required: readonly DescField[];
  /** Message-typed fields (singular, repeated or map values) whose type has REQUIRED fields somewhere below. */
  readonly nested: readonly DescField[];
}

/** The message a field holds (singular, list item or map value), if any. */
export function messageOf(field: DescField): DescMessage | undefined {
  switch (field.fieldKind) {
    case "message":
      return field.message;
    case "list":
      return field.listKind === "message" ? field.message : undefined;
    case "map":
      return field.mapKind === "message" ? field.message : undefined;
    default:
      return undefined;
  }
}

/**
 * Collects the REQUIRED fields of every message reachable from `roots`,
 * nested ones included. Recursive types are fine: a type is listed when it
 * has REQUIRED fields or a path to a type that does. Sorted by type name so
 * the output is deterministic.
 */
export function collectRequiredFields(roots: Iterable<DescMessage>): RequiredFieldsModel[] {
  const reachable = new Map<string, DescMessage>();
  const pending = [...roots];
  for (let m = pending.pop(); m !== undefined; m = pending.pop()) {
    if (reachable.has(m.typeName)) continue;
    reachable.set(m.typeName, m);
    for (const f of m.fields) {
      const child = messageOf(f);
      if (child !== undefined) pending.push(child);
    }
  }
  const matters = new Set<string>();
  for (const m of reachable.values()) {
    if (m.fields.some(isRequired)) matters.add(m.typeName);
  }
  // Fixpoint: a type matters when one of its message fields leads to a type that does.
  for (let changed = true; changed; ) {
    changed = false;
    for (const m of reachable.values()) {
      if (matters.has(m.typeName)) continue;
      if (m.fields.some((f) => matters.has(messageOf(f)?.typeName ?? ""))) {
        matters.add(m.typeName);
        changed = true;
      }
    }
  }
  return [...matters]
    .sort()
    .map((typeName) => reachable.get(typeName) as DescMessage)
    .map((message) => ({
      message,
      required: message.fields.filter(isRequired),
      nested: message.fields.filter((f) => matters.has(messageOf(f)?.typeName ?? "")),
    }));
}
