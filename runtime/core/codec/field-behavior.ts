/**
 * `google.api.field_behavior = REQUIRED`, read off a field's descriptor
 * options. Shared by the plugin (which turns it into the generated REQUIRED
 * tables) and the canonical form of signed cards (D100), which reads it at
 * run time so any message's REQUIRED fields count without a table.
 */
import { getOption, type DescField } from "@bufbuild/protobuf";
import { FieldBehavior, field_behavior } from "../../gen/google/api/field_behavior_pb.js";

// Asked for each field by the model, by every codec the field's message is in and by each
// canonicalization; reading an option decodes it from the field's unknown fields each time.
const required = new WeakMap<DescField, boolean>();

/** Whether `field` is marked `google.api.field_behavior = REQUIRED`. */
export function isRequired(field: DescField): boolean {
  let is = required.get(field);
  if (is === undefined) {
    is = getOption(field, field_behavior).includes(FieldBehavior.REQUIRED);
    required.set(field, is);
  }
  return is;
}
