import type { GeneratedFile } from "@bufbuild/protoplugin";
import type { HttpBindingModel } from "../model/http-binding.js";
import type { ServiceModel } from "../model/service-model.js";
import { names } from "../names.js";
import type { Renderer } from "./render.js";

/**
 * Per service: the method table (what every binding dispatches on), the
 * google.api.http rules in route precedence order, and the REQUIRED fields
 * of the messages the service reads and writes.
 */
export function emitMethods(f: GeneratedFile, r: Renderer, services: readonly ServiceModel[], runtimeImport: string): void {
  const internal = names.internalRuntime(runtimeImport);
  const httpRuleSpec = f.import("HttpRuleSpec", internal, true);
  const requiredFieldTable = f.import("RequiredFieldTable", internal, true);
  const methodSpec = f.import("MethodSpec", internal, true);
  const str = (s: string) => r.ref(f.string(s));
  const strings = (list: readonly string[]) => r.ref(f.array(list.map((s) => f.string(s))));
  r.print("methods", {
    services: services.map((s) => ({
      serviceName: s.desc.typeName,
      methodTable: r.ref(f.export("const", names.methodTable(s.desc))),
      methodSpec: r.ref(methodSpec),
      methods: s.methods.map((m) => ({
        jsDoc: r.ref(f.jsDoc(m.desc, "  ")),
        localName: m.desc.localName,
        name: str(m.desc.name),
        localNameLiteral: str(m.desc.localName),
        kind: str(m.kind),
        grpcPath: str(m.grpcPath),
        input: r.ref(f.importSchema(m.input)),
        output: r.ref(f.importSchema(m.output)),
      })),
      httpRules: r.ref(f.export("const", names.httpRules(s.desc))),
      httpRuleSpec: r.ref(httpRuleSpec),
      routes: s.routes.map((route) => ({
        method: str(route.method.localName),
        httpMethod: str(route.httpMethod),
        path: str(route.template.text),
        body: str(bodyName(route)),
        responseBody: str(route.responseBody?.localName ?? ""),
        additional: String(route.additional),
        derived: String(route.derived),
        query: strings(route.queryFields.map((path) => path.map((f) => f.jsonName).join("."))),
        pathParams: r.ref(
          f.array(
            route.pathParams.map((p) => [
              "{ variable: ",
              f.string(p.variable.fieldPath.join(".")),
              ", field: ",
              f.array(p.fields.map((field) => f.string(field.localName))),
              " }",
            ]),
          ),
        ),
      })),
      requiredFields: r.ref(f.export("const", names.requiredFields(s.desc))),
      requiredFieldTable: r.ref(requiredFieldTable),
      requiredTypes: s.requiredFields.map((t) => ({
        typeName: str(t.message.typeName),
        required: strings(t.required.map((field) => field.localName)),
        nested: strings(t.nested.map((field) => field.localName)),
      })),
    })),
  });
}

function bodyName(route: HttpBindingModel): string {
  if (route.body === undefined) return "";
  return route.body === "*" ? "*" : route.body.localName;
}
