/**
 * How the binary codec reaches each field of a message: one plan per field
 * (which property, what presence rule, which value writer or reader), made
 * into per-message code two ways from the same plans.
 *
 * - Compiled (the default): once per message type, a function whose source
 *   names every property literally (`value["contextId"]`), so each access is
 *   its own inline cache. Closures shared by every field of every message
 *   (`value[name]`) make every access megamorphic: a generic lookup per
 *   field, which made encoding 3-4x slower than ts-proto's static code.
 * - Closures: the same plans as one closure per field. What runs where code
 *   generation from strings is disallowed (`--disallow-code-generation-from-strings`,
 *   some sandboxes), and what the property test holds the compiled code to.
 *
 * Only descriptor data reaches the source, and only quoted (JSON.stringify
 * of names, integers of field numbers); readers and writers are passed in,
 * in one array (as parameters, thousands of fields would overflow the
 * call's stack), never spelled out.
 */
import type { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { generate, type Ref } from "./code-generation.js";

/** A message or an init shape, as the codec reads it. */
export type Fields = Record<string, unknown>;

/** What the readers of one decodeBinary call share. */
export interface ReadContext {
  /** The buffer being read (BinaryReader keeps its own private). */
  readonly buf: Uint8Array;
  readonly readUnknownFields: boolean;
  readonly recursionLimit: number;
  /** Messages entered so far, counted as fromBinary counts them. */
  depth: number;
}

export type ValueWrite = (w: BinaryWriter, v: unknown) => void;
/** Reads a message value into `existing` (or a new message) and returns it. */
export type ChildRead = (existing: unknown, r: BinaryReader, ctx: ReadContext) => unknown;
/** Reads one record of a list or map field into its container. */
export type ContainerRead = (container: unknown, r: BinaryReader, ctx: ReadContext, wireType: WireType) => void;
/** Reads one record of any field, after its tag. */
export type FieldReader = (message: Fields, r: BinaryReader, ctx: ReadContext, wireType: WireType) => void;

/** How one field is written, in field-number order. */
export type WritePlan =
  /** Implicit presence: written when not null and not its zero (`convert` first, for bytes given as number[]). */
  | { readonly kind: "implicit"; readonly name: string; readonly isSet: (v: unknown) => boolean; readonly convert?: (v: unknown) => unknown; readonly write: ValueWrite }
  /** Explicit presence: a message's own property, or an init shape's non-null one; `required` is the error when missing. */
  | { readonly kind: "explicit"; readonly name: string; readonly required?: string; readonly write: ValueWrite }
  /** A oneof member: written when the oneof's case is this field. */
  | { readonly kind: "oneof"; readonly oneof: string; readonly name: string; readonly write: ValueWrite }
  /** A list or map: its writer gets the non-null container. */
  | { readonly kind: "container"; readonly name: string; readonly write: ValueWrite };

/** How one record of a field is read into the message. */
export type ReadPlan =
  /** A scalar or open enum. */
  | { readonly kind: "assign"; readonly name: string; readonly read: (r: BinaryReader) => unknown }
  | { readonly kind: "oneofAssign"; readonly oneof: string; readonly name: string; readonly read: (r: BinaryReader) => unknown }
  /** A message: a repeated record merges into the one read before. */
  | { readonly kind: "merge"; readonly name: string; readonly read: ChildRead }
  | { readonly kind: "oneofMerge"; readonly oneof: string; readonly name: string; readonly read: ChildRead }
  /** A list or map: the record is added to the message's container. */
  | { readonly kind: "container"; readonly name: string; readonly read: ContainerRead }
  /** Anything else (closed enums, unboxed wrappers): a reader of its own. */
  | { readonly kind: "custom"; readonly read: FieldReader };

export interface FieldPlan {
  readonly number: number;
  readonly write: WritePlan;
  readonly read: ReadPlan;
}

/** Writes a message's or an init shape's fields; `isMessage` tells them apart. */
type WriteFields = (w: BinaryWriter, value: Fields, isMessage: boolean) => void;
/** Writes a message or init shape: its fields, and a message's unknown fields. */
export type WriteMessage = (w: BinaryWriter, value: Fields) => void;
/** Reads one record into `message` if `fieldNo` is a field of its type; false if it is not. */
export type ReadField = (message: Fields, r: BinaryReader, ctx: ReadContext, fieldNo: number, wireType: WireType) => boolean;

export interface FieldCode {
  readonly write: WriteMessage;
  readonly readField: ReadField;
  readonly compiled: boolean;
}

/** A message's unknown fields, as toBinary writes them (create() does not carry them over from an init shape). */
function writeUnknown(w: BinaryWriter, unknown: unknown): void {
  if (unknown === undefined) return;
  const fields = unknown as readonly { no: number; wireType: WireType; data: Uint8Array }[];
  for (let i = 0; i < fields.length; i++) {
    const u = fields[i] as (typeof fields)[number];
    w.tag(u.no, u.wireType).raw(u.data);
  }
}

/** The plans as closures, one per field. */
export function closureCode(typeName: string, plans: readonly FieldPlan[]): FieldCode {
  const writers = plans.map((p) => closureWriter(p.write));
  // Readers by number; numbers past the dense table go in a map.
  const dense: (FieldReader | undefined)[] = [];
  const sparse = new Map<number, FieldReader>();
  for (const p of plans) {
    const read = closureReader(p.read);
    if (p.number < 1024) {
      while (dense.length <= p.number) dense.push(undefined);
      dense[p.number] = read;
    } else {
      sparse.set(p.number, read);
    }
  }
  return {
    write(w, value) {
      const isMessage = value.$typeName === typeName;
      for (let i = 0; i < writers.length; i++) (writers[i] as WriteFields)(w, value, isMessage);
      if (isMessage) writeUnknown(w, value.$unknown);
    },
    readField(message, r, ctx, fieldNo, wireType) {
      const read = fieldNo < dense.length ? dense[fieldNo] : sparse.get(fieldNo);
      if (read === undefined) return false;
      read(message, r, ctx, wireType);
      return true;
    },
    compiled: false,
  };
}

function closureWriter(plan: WritePlan): WriteFields {
  const { name, write } = plan;
  switch (plan.kind) {
    case "implicit": {
      const { isSet, convert } = plan;
      return (w, value) => {
        const v = convert === undefined ? value[name] : convert(value[name]);
        if (v != null && isSet(v)) write(w, v);
      };
    }
    case "explicit": {
      const required = plan.required;
      return (w, value, isMessage) => {
        const v = value[name];
        // create() sets what is not null; toBinary writes a message's own property
        // (proto2 defaults live on the prototype).
        if (isMessage ? v !== undefined && Object.hasOwn(value, name) : v != null) write(w, v);
        else if (required !== undefined) throw new Error(required);
      };
    }
    case "oneof": {
      const oneof = plan.oneof;
      return (w, value) => {
        const o = value[oneof] as { case?: unknown; value?: unknown } | undefined;
        if (o != null && o.case === name) write(w, o.value);
      };
    }
    case "container":
      return (w, value) => {
        const v = value[name];
        if (v != null) write(w, v);
      };
  }
}

function closureReader(plan: ReadPlan): FieldReader {
  switch (plan.kind) {
    case "assign": {
      const { name, read } = plan;
      return (message, r) => {
        message[name] = read(r);
      };
    }
    case "oneofAssign": {
      const { oneof, name, read } = plan;
      return (message, r) => {
        message[oneof] = { case: name, value: read(r) };
      };
    }
    case "merge": {
      const { name, read } = plan;
      return (message, r, ctx) => {
        message[name] = read(message[name], r, ctx);
      };
    }
    case "oneofMerge": {
      const { oneof, name, read } = plan;
      return (message, r, ctx) => {
        const o = message[oneof] as { case?: unknown; value?: unknown };
        message[oneof] = { case: name, value: read(o.case === name ? o.value : undefined, r, ctx) };
      };
    }
    case "container": {
      const { name, read } = plan;
      return (message, r, ctx, wireType) => read(message[name], r, ctx, wireType);
    }
    case "custom":
      return plan.read;
  }
}

/**
 * The plans as one writer and one reader function for the message;
 * undefined where code generation is not allowed (see code-generation.ts).
 */
export function compiledCode(typeName: string, plans: readonly FieldPlan[]): FieldCode | undefined {
  return generate<FieldCode>((ref) => fieldSource(typeName, plans, ref));
}

function fieldSource(typeName: string, plans: readonly FieldPlan[], ref: Ref): string {
  const writeUnknownRef = ref(writeUnknown);
  const q = (name: string) => JSON.stringify(name);
  const write: string[] = [];
  for (const p of plans) {
    const plan = p.write;
    const w = ref(plan.write);
    switch (plan.kind) {
      case "implicit":
        write.push(`v = ${plan.convert === undefined ? `value[${q(plan.name)}]` : `${ref(plan.convert)}(value[${q(plan.name)}])`};`);
        write.push(`if (v != null && ${ref(plan.isSet)}(v)) ${w}(w, v);`);
        break;
      case "explicit":
        write.push(`v = value[${q(plan.name)}];`);
        write.push(`if (isMessage ? v !== undefined && Object.hasOwn(value, ${q(plan.name)}) : v != null) ${w}(w, v);`);
        if (plan.required !== undefined) write.push(`else throw new Error(${q(plan.required)});`);
        break;
      case "oneof":
        write.push(`v = value[${q(plan.oneof)}];`);
        write.push(`if (v != null && v.case === ${q(plan.name)}) ${w}(w, v.value);`);
        break;
      case "container":
        write.push(`v = value[${q(plan.name)}];`);
        write.push(`if (v != null) ${w}(w, v);`);
        break;
    }
  }
  const read: string[] = [];
  for (const p of plans) {
    const plan = p.read;
    const r = ref(plan.read);
    read.push(`case ${String(Math.trunc(p.number))}:`);
    switch (plan.kind) {
      case "assign":
        read.push(`  message[${q(plan.name)}] = ${r}(r);`);
        break;
      case "oneofAssign":
        read.push(`  message[${q(plan.oneof)}] = { case: ${q(plan.name)}, value: ${r}(r) };`);
        break;
      case "merge":
        read.push(`  message[${q(plan.name)}] = ${r}(message[${q(plan.name)}], r, ctx);`);
        break;
      case "oneofMerge":
        read.push(`  o = message[${q(plan.oneof)}];`);
        read.push(`  message[${q(plan.oneof)}] = { case: ${q(plan.name)}, value: ${r}(o.case === ${q(plan.name)} ? o.value : undefined, r, ctx) };`);
        break;
      case "container":
        read.push(`  ${r}(message[${q(plan.name)}], r, ctx, wireType);`);
        break;
      case "custom":
        read.push(`  ${r}(message, r, ctx, wireType);`);
        break;
    }
    read.push("  return true;");
  }
  return [
    "return {",
    "write(w, value) {",
    `const isMessage = value.$typeName === ${q(typeName)};`,
    "let v;",
    ...write,
    `if (isMessage) ${writeUnknownRef}(w, value.$unknown);`,
    "},",
    "readField(message, r, ctx, fieldNo, wireType) {",
    "let o;",
    "switch (fieldNo) {",
    ...read,
    "}",
    "return false;",
    "},",
    "compiled: true,",
    "};",
  ].join("\n");
}
