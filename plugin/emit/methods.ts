import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { HttpBindingModel } from "../model/http-binding.js";
import type { ServiceModel } from "../model/service-model.js";
import { names, propertyKey } from "../names.js";
import { docLines, printList } from "./shared.js";
import { importSchema } from "./type-imports.js";

/**
 * Per service: the method table (what every binding dispatches on), the
 * google.api.http rules in route precedence order, and the REQUIRED fields
 * of the messages the service reads and writes.
 */
export function emitMethods(f: GeneratedFile, services: readonly ServiceModel[], runtimeImport: string): void {
  const internal = names.internalRuntime(runtimeImport);
  const httpRuleSpec = f.import("HttpRuleSpec", internal, true);
  const requiredFieldTable = f.import("RequiredFieldTable", internal, true);
  const methodSpec = f.import("MethodSpec", internal, true);
  const strings = (list: readonly string[]) => f.array(list.map((s) => f.string(s)));
  for (const s of services) {
    const serviceName = s.desc.typeName;
    f.print(
      docLines(f, [
        `The RPCs of ${serviceName}, keyed by their name in the handler interface.`,
        `The bindings dispatch on this table.`,
        ``,
        `@generated from service ${serviceName}`,
      ]),
    );
    // Typed where it is declared (the docs on the type, where an editor shows them), so a build with
    // isolatedDeclarations can write its declaration without inferring it.
    f.print(f.export("const", names.methodTable(s.desc)), ": {");
    for (const m of s.methods) {
      f.print(f.jsDoc(m.desc, "  "));
      f.print("  readonly ", m.localName, ": ", methodSpec, "<typeof ", importSchema(f, m.input), ", typeof ", importSchema(f, m.output), ", ", f.string(m.kind), ">;");
    }
    f.print("} = {");
    for (const m of s.methods) {
      f.print("  ", m.localName, ": {");
      f.print("    name: ", f.string(m.desc.name), ",");
      f.print("    localName: ", f.string(m.localName), ",");
      f.print("    kind: ", f.string(m.kind), ",");
      f.print("    grpcPath: ", f.string(m.grpcPath), ",");
      f.print("    input: ", importSchema(f, m.input), ",");
      f.print("    output: ", importSchema(f, m.output), ",");
      f.print("  },");
    }
    f.print("};");
    f.print();
    const rules = {
      doc: docLines(f, [
        `Every google.api.http rule of ${serviceName}, additional_bindings`,
        `included, in route precedence order (decision D6): at the first differing`,
        `segment a literal beats \`*\` and \`*\` beats \`**\`; a shorter path comes`,
        `first; a path with a custom verb comes before the same path without one;`,
        `at equal shape the default binding beats an additional one, then HTTP`,
        `methods sort by name.`,
        ``,
        `@generated from service ${serviceName}`,
      ]),
      name: names.httpRules(s.desc),
      type: httpRuleSpec,
      items: s.routes,
    };
    printList(f, rules, (route) => {
      const pathParams = f.array(
        route.pathParams.map((p) => [
          "{ variable: ",
          f.string(p.variable.fieldPath.join(".")),
          ", field: ",
          f.array(p.fields.map((field) => f.string(field.localName))),
          " }",
        ]),
      );
      f.print("  {");
      f.print("    method: ", f.string(names.handlerMethod(route.method)), ",");
      f.print("    httpMethod: ", f.string(route.httpMethod), ",");
      f.print("    path: ", f.string(route.template.text), ",");
      f.print("    body: ", f.string(bodyName(route)), ",");
      f.print("    responseBody: ", f.string(route.responseBody?.localName ?? ""), ",");
      f.print("    additional: ", String(route.additional), ",");
      f.print("    derived: ", String(route.derived), ",");
      f.print("    pathParams: ", pathParams, ",");
      f.print("    query: ", strings(route.queryFields.map((path) => path.map((field) => field.jsonName).join("."))), ",");
      f.print("  },");
    });
    f.print();
    f.print(
      docLines(f, [
        `The google.api.field_behavior = REQUIRED fields (and proto2 \`required\``,
        `ones) of every message ${serviceName} reads or writes, by message type.`,
        `\`nested\` lists the message fields that lead to more required fields.`,
        ``,
        `@generated from service ${serviceName}`,
      ]),
    );
    f.print(f.export("const", names.requiredFields(s.desc)), ": ", requiredFieldTable, " = {");
    for (const t of s.requiredFields) {
      f.print("  ", propertyKey(t.message.typeName, (n) => f.string(n)), ": { required: ", strings(t.required.map((field) => field.localName)), ", nested: ", strings(t.nested.map((field) => field.localName)), " },");
    }
    f.print("};");
    f.print();
  }
}

function bodyName(route: HttpBindingModel): string {
  if (route.body === undefined) return "";
  return route.body === "*" ? "*" : route.body.localName;
}
