/**
 * `<file>_codec.ts`: each message's codec specialised at build time, as
 * ts-proto specialises its messages, beside protoc-gen-es's `_pb.ts`. Per
 * message: a zero message (`newTask`), a binary writer and reader
 * (`writeTask`, `readTask`, and `readTaskGroup` where a field holds it as
 * a group), a ProtoJSON writer with the REQUIRED fields (`writeTaskJson`),
 * and `TaskCodec`, all of them as the runtime takes them (GenCodec); then
 * the same for the messages of files the run generates nothing for (the
 * well-known types) that the file reaches. Last, the file's list of codecs
 * (`a2aCodecs`), with those of the codec files it imports, which the
 * generated method table registers with the runtime.
 *
 * Nothing is compiled at run time: the code is printed here, from the
 * descriptors, through protoplugin (imports through f.import and
 * f.importSchema). Which messages get a codec, and in which file, is
 * decided by codec-plan.ts; the binary rules are in codec-binary.ts, the
 * JSON and zero rules in codec-json.ts.
 */
import type { DescFile, DescMessage } from "@bufbuild/protobuf";
import type { GeneratedFile } from "@bufbuild/protoplugin";
import { names } from "../names.js";
import { emitReaders, emitWriter } from "./codec-binary.js";
import { createCodecContext, type CodecContext } from "./codec-context.js";
import { emitJsonWriter, emitZero, requiredFields } from "./codec-json.js";
import type { CodecFilePlan, CodecPlan } from "./codec-plan.js";
import { printList } from "./shared.js";

export { planCodecs, type CodecPlan } from "./codec-plan.js";

export function emitCodec(f: GeneratedFile, plan: CodecPlan, file: CodecFilePlan, runtimeImport: string): void {
  const ctx = createCodecContext(f, plan, file, runtimeImport);
  for (const desc of [...file.own, ...file.foreign]) {
    emitZero(ctx, desc);
    emitWriter(ctx, desc);
    emitReaders(ctx, desc);
    emitJsonWriter(ctx, desc);
    emitCodecObject(ctx, desc, runtimeImport);
  }
  const list = [
    ...file.imports.map((other) => ["...", f.import(other.list, names.importPath(names.codecFile(other.file)))]),
    ...[...file.own, ...file.foreign].map((desc) => plan.namesOf(desc, file, f, (m) => ctx.shape(m).name).codec),
  ];
  printList(
    f,
    {
      doc: f.jsDoc(`The codecs of this file${file.imports.length > 0 ? " and of the codec files it imports" : ""}, for registerCodecs().`),
      name: file.list,
      type: f.import("GenCodec", names.internalRuntime(runtimeImport), true),
      items: list,
    },
    (entry) => f.print("  ", entry, ","),
  );
}

function emitCodecObject(ctx: CodecContext, desc: DescMessage, runtimeImport: string): void {
  const { f, plan, file } = ctx;
  const n = plan.namesOf(desc, file, f, (m) => ctx.shape(m).name);
  const schema = ctx.schema(desc);
  const foreign = file.foreign.includes(desc) ? `\n\nEmitted here since this run generates no code for ${desc.file.proto.name}.` : "";
  f.print(f.jsDoc(`The codec of ${desc.typeName}: binary, ProtoJSON and zero messages,\nspecialised at build time.${foreign}\n\n@generated from message ${desc.typeName}`));
  f.print(f.export("const", n.codec), ": ", f.import("GenCodec", names.internalRuntime(runtimeImport), true), "<typeof ", schema, "> = {");
  f.print("  schema: ", schema, ",");
  f.print("  required: ", f.array(requiredFields(desc).map((name) => f.string(name))), ",");
  f.print("  zero: ", n.zero, ",");
  f.print("  write: ", n.write, ",");
  f.print("  read: ", n.read, ",");
  f.print("  toJson: ", n.toJson, ",");
  f.print("};");
  f.print();
}

/**
 * Registers the codecs a file's services read and write, at the end of its
 * method table (`<file>_methods.ts`, which every generated binding file
 * imports), so the runtime finds them by descriptor.
 */
export function emitCodecRegistration(f: GeneratedFile, plan: CodecPlan, file: DescFile, roots: Iterable<DescMessage>, runtimeImport: string): void {
  const lists = plan.listsFor(file, roots);
  if (lists.length === 0) return;
  const args = lists.flatMap((p, i) => [i === 0 ? "" : ", ", f.import(p.list, names.importPath(names.codecFile(p.file)))]);
  f.print("// The codecs of the messages these services read and write, specialised at");
  f.print("// build time (", lists.map((p) => names.codecFile(p.file).replace(/^.*\//, "")).join(", "), "): the runtime finds them by descriptor.");
  f.print(f.import("registerCodecs", names.internalRuntime(runtimeImport)), "(", ...args, ");");
}
