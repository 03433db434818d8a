import type { GeneratedFile } from "@bufbuild/protoplugin";
import { getComments } from "../protoplugin.js";
import type { ServiceModel } from "../model/service-model.js";
import { globals, names } from "../names.js";
import { importSchema, importShape } from "./type-imports.js";

/**
 * The handler interface: one optional method per RPC, typed with
 * protoc-gen-es's message types. What an implementation leaves out is
 * answered with the matching error by the bindings.
 */
export function emitHandler(f: GeneratedFile, services: readonly ServiceModel[], runtimeImport: string): void {
  const internal = names.internalRuntime(runtimeImport);
  const initShape = f.import("MessageInitShape", "@bufbuild/protobuf", true);
  for (const s of services) {
    // A2A's handler learns the protocol version, extensions and tenant too.
    const context = f.import(s.a2a === undefined ? "CallContext" : "A2ACallContext", internal, true);
    f.print(f.jsDoc(serviceDoc(s), ""));
    f.print(f.export("interface", names.handler(s.desc)), " {");
    s.methods.forEach((m, i) => {
      if (i > 0) f.print();
      const returns =
        m.kind === "unary"
          ? [globals.Promise, "<", initShape, "<typeof ", importSchema(f, m.output, true), ">>"]
          : [globals.AsyncIterable, "<", importShape(f, m.output), ">"];
      f.print(f.jsDoc(m.desc, "  "));
      f.print("  ", m.localName, "?(request: ", importShape(f, m.input), ", context: ", context, "): ", returns, ";");
    });
    f.print("}");
    f.print();
  }
}

/** Proto comment text as protoplugin lays it out: one leading space dropped per line. */
function commentText(text: string | undefined): string[] {
  if (text === undefined) return [];
  const lines = text.replace(/\n$/, "").split("\n").map((l) => (l.startsWith(" ") ? l.slice(1) : l));
  return [...lines, ""];
}

function serviceDoc(s: ServiceModel): string {
  const comments = getComments(s.desc);
  const lines = [
    ...commentText(comments.leading),
    ...commentText(comments.trailing),
    `Implement this interface once to serve ${s.desc.name} on every binding. Each method is`,
    "optional: a method left out is answered with the spec's error for it. Unary methods may",
    "return a message or its init shape; streaming methods yield the stream's messages.",
    "",
    `@generated from service ${s.desc.typeName}`,
  ];
  if (s.desc.deprecated) lines.push("@deprecated");
  return lines.join("\n");
}
