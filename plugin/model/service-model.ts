import type { DescFile, DescMessage, DescMethod, DescService } from "@bufbuild/protobuf";
import { nestedTypes, safeObjectProperty } from "@bufbuild/protobuf/reflect";
import { a2aServiceName, agentCardTypeName } from "../../runtime/a2a/names.js";
import type { MethodKind } from "../../runtime/core/method-spec.js";
import { compareTemplatePrecedence, templateKey } from "../../runtime/core/http/path-template.js";
import { names } from "../names.js";
import { createA2ATaskModel, type A2ATaskModel } from "./a2a-tasks.js";
import { createDiagnostics, type Diagnostics } from "./diagnostics.js";
import { createHttpBindings, type HttpBindingModel } from "./http-binding.js";
import { collectRequiredFields, messageOf, type RequiredFieldsModel } from "./required-fields.js";

/** One RPC, as every binding emitter needs it. */
export interface MethodModel {
  readonly desc: DescMethod;
  /** Its name in the handler, the method table and the clients: names.handlerMethod (D118). */
  readonly localName: string;
  readonly kind: MethodKind;
  readonly input: DescMessage;
  readonly output: DescMessage;
  /** `/package.Service/Method`. */
  readonly grpcPath: string;
  /** The method's `google.api.http` rules, default binding first. */
  readonly http: readonly HttpBindingModel[];
}

/** What the generator knows of A2A's service: it is served with the A2A profile, and hands out this Agent Card. */
export interface A2AModel {
  /** `lf.a2a.v1.AgentCard` when an RPC returns it: the public card's type, which `serve<Service>` takes. */
  readonly card: DescMessage | undefined;
  /** The messages the task runtime works with (`createA2AServiceTaskHandler`). */
  readonly tasks: A2ATaskModel | undefined;
}

export interface ServiceModel {
  readonly desc: DescService;
  readonly methods: readonly MethodModel[];
  /** Every HTTP rule of the service, ordered by route precedence (decision D6). */
  readonly routes: readonly HttpBindingModel[];
  /** REQUIRED fields of every message the service reads or writes. */
  readonly requiredFields: readonly RequiredFieldsModel[];
  /**
   * Set for `lf.a2a.v1.A2AService` alone, recognised by its full name: its
   * bindings are generated with the A2A profile (versions, extensions,
   * capability gating, stream rules, A2A errors) and a `serve` function.
   * Every other service gets the bindings' own rules only.
   */
  readonly a2a: A2AModel | undefined;
}

export interface FileModel {
  readonly desc: DescFile;
  readonly services: readonly ServiceModel[];
}

/**
 * Builds the binding model of the given files. All validation happens here,
 * so emitters never fail; problems are thrown together as one ModelError.
 */
export function createFileModels(files: readonly DescFile[]): FileModel[] {
  const diag = createDiagnostics();
  const models = files.map((desc) => ({
    desc,
    services: desc.services.map((s) => createServiceModel(s, diag)),
  }));
  reportObjectMembers(files, diag);
  diag.throwIfAny();
  return models;
}

/**
 * D118: the members of Object.prototype that protobuf-es leaves unescaped as a field's name
 * (it escapes constructor, toString, toJSON and valueOf with a `$`): hasOwnProperty, isPrototypeOf,
 * propertyIsEnumerable, toLocaleString, and the `__` ones no field name can give.
 */
const unescapedObjectMembers = new Set(Object.getOwnPropertyNames(Object.prototype).filter((n) => safeObjectProperty(n) === n));

/**
 * D118: a field or oneof of a message the generated code reads or writes (the files' own messages
 * and every message they and their RPCs reach) whose property would be a member of every object:
 * an unset one reads as Object.prototype's method, so protobuf-es's own encoding takes it for set,
 * and the generated codecs do not type-check. A file's own messages are checked whether it has a
 * service or not: each gets a codec in the file's `_codec.ts`, which the services of files importing
 * it (in this run or another: buf may run the plugin once per directory) register. Implicit
 * presence does not save a field: the clients and handlers take partial objects (init shapes), and
 * the codec's writer reads a field left out of one from Object.prototype.
 */
function reportObjectMembers(files: readonly DescFile[], diag: Diagnostics): void {
  const seen = new Set<DescMessage>();
  const pending: DescMessage[] = files.flatMap((f) => [
    ...[...nestedTypes(f)].filter((t): t is DescMessage => t.kind === "message"),
    ...f.services.flatMap((s) => s.methods.flatMap((m) => [m.input, m.output])),
  ]);
  const ordered: DescMessage[] = [];
  for (let m = pending.shift(); m !== undefined; m = pending.shift()) {
    if (seen.has(m)) continue;
    seen.add(m);
    ordered.push(m);
    for (const f of m.fields) {
      const child = messageOf(f);
      if (child !== undefined) pending.push(child);
    }
  }
  for (const message of ordered) {
    for (const member of message.members) {
      if (!unescapedObjectMembers.has(member.localName)) continue;
      diag.field(
        member,
        `its property would be ${member.localName}, a member of every JavaScript object, which protobuf-es does not escape: ` +
          "an unset value reads as Object.prototype's method, and the generated types and codecs cannot hold it" +
          (files.includes(message.file)
            ? ` (${names.codecFile(message.file)} has a codec for every message of ${message.file.proto.name}, ` +
              "which the services of any file importing it use, so a file without a service is no exception); "
            : "; ") +
          (member.kind === "field" ? "rename the field (a json_name option keeps its JSON name)" : "rename the oneof (its name is not on the wire)"),
      );
    }
  }
}

function createServiceModel(desc: DescService, diag: Diagnostics): ServiceModel {
  const methods = desc.methods.flatMap((m) => {
    const model = createMethodModel(m, diag);
    return model === undefined ? [] : [model];
  });
  reportNameCollisions(methods, diag);
  const routes = withStreamingPostTwins(methods.flatMap((m) => m.http)).sort(compareRoutes);
  reportDuplicateRoutes(routes, diag);
  const requiredFields = collectRequiredFields(methods.flatMap((m) => [m.input, m.output]));
  return { desc, methods, routes, requiredFields, a2a: a2aModel(desc, diag) };
}

function a2aModel(desc: DescService, diag: Diagnostics): A2AModel | undefined {
  if (desc.typeName !== a2aServiceName) return undefined;
  // An A2AService that hands out no card still gets A2A's rules, without the one-call server.
  return { card: desc.methods.map((m) => m.output).find((m) => m.typeName === agentCardTypeName), tasks: createA2ATaskModel(desc, diag) };
}

/**
 * D1: the spec's prose calls SubscribeToTask with POST where a2a.proto says
 * GET, and clients send either. So the GET rule of a server-streaming RPC
 * is also served on POST (with an empty body or `{}`), unless the service
 * already has a POST rule of that shape.
 */
function withStreamingPostTwins(rules: readonly HttpBindingModel[]): HttpBindingModel[] {
  const taken = new Set(rules.map((r) => `${r.httpMethod} ${templateKey(r.template)}`));
  const twins = rules
    .filter((r) => r.httpMethod === "GET" && r.method.methodKind === "server_streaming")
    .filter((r) => !taken.has(`POST ${templateKey(r.template)}`))
    .map((r) => ({ ...r, httpMethod: "POST", derived: true, display: `${r.display} (also served on POST)` }));
  return [...rules, ...twins];
}

function createMethodModel(desc: DescMethod, diag: Diagnostics): MethodModel | undefined {
  if (desc.methodKind !== "unary" && desc.methodKind !== "server_streaming") {
    diag.method(
      desc,
      `${desc.methodKind.replace("_", " ")} RPCs cannot be served over JSON-RPC or HTTP+JSON; ` +
        "A2A bindings serve unary and server-streaming RPCs only",
    );
    return undefined;
  }
  const form = nonObjectJson.get(desc.input.typeName);
  if (form !== undefined) {
    diag.method(
      desc,
      `its request ${desc.input.typeName} is ${form}; JSON-RPC params and an HTTP+JSON request ` +
        "are a JSON object, so no JSON call could reach the RPC: take a request message that holds the value " +
        `(message ${desc.name}Request { ${desc.input.typeName} value = 1; })`,
    );
    return undefined;
  }
  return {
    desc,
    localName: names.handlerMethod(desc),
    kind: desc.methodKind,
    input: desc.input,
    output: desc.output,
    grpcPath: `/${desc.parent.typeName}/${desc.name}`,
    http: createHttpBindings(desc, diag),
  };
}

/**
 * D7: the well-known types whose ProtoJSON is not an object, with what it is. A request of one of
 * them could be served on gRPC only, where every RPC is served on all three bindings: JSON-RPC
 * params go by name (D31) and an HTTP+JSON request is built into an object from path, body and query.
 */
const nonObjectJson: ReadonlyMap<string, string> = new Map([
  ...["DoubleValue", "FloatValue", "Int32Value", "UInt32Value"].map((t) => [`google.protobuf.${t}`, "a number in JSON, not an object"] as const),
  ...["Int64Value", "UInt64Value", "StringValue", "BytesValue", "Timestamp", "Duration", "FieldMask"].map(
    (t) => [`google.protobuf.${t}`, "a string in JSON, not an object"] as const,
  ),
  ["google.protobuf.BoolValue", "a boolean in JSON, not an object"],
  ["google.protobuf.ListValue", "an array in JSON, not an object"],
  ["google.protobuf.Value", "any JSON value, not always an object"],
]);

/**
 * D6: structural precedence first; at equal shape the default binding beats
 * additional bindings; the rest only makes the order deterministic.
 */
function compareRoutes(a: HttpBindingModel, b: HttpBindingModel): number {
  return (
    compareTemplatePrecedence(a.template, b.template) ||
    Number(a.additional) - Number(b.additional) ||
    Number(a.derived) - Number(b.derived) ||
    // `custom { kind: "*" }` matches any method, so it comes after the specific ones.
    Number(a.httpMethod === "*") - Number(b.httpMethod === "*") ||
    compareStrings(a.httpMethod, b.httpMethod) ||
    a.method.parent.methods.indexOf(a.method) - b.method.parent.methods.indexOf(b.method) ||
    a.index - b.index
  );
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * D118: RPCs whose handler methods would have one name (`Get` and `get`; `Constructor` and
 * `constructor`, both `constructor$`): the handler, the method table and the clients have one
 * member per name, so one RPC would silently take the other's place.
 */
function reportNameCollisions(methods: readonly MethodModel[], diag: Diagnostics): void {
  const byName = new Map<string, MethodModel>();
  for (const m of methods) {
    const first = byName.get(m.localName);
    if (first === undefined) {
      byName.set(m.localName, m);
      continue;
    }
    diag.method(
      m.desc,
      `its handler method would be ${m.localName}, as rpc ${first.desc.name}'s is; ` +
        "the handler, the method table and the clients have one member per name: rename one of the two RPCs",
    );
  }
}

function reportDuplicateRoutes(routes: readonly HttpBindingModel[], diag: Diagnostics): void {
  const seenByPath = new Map<string, HttpBindingModel[]>();
  for (const route of routes) {
    const path = templateKey(route.template);
    const seen = seenByPath.get(path) ?? [];
    // A `custom { kind: "*" }` rule answers every method, so it clashes with any rule of its path.
    const first = seen.find((r) => r.httpMethod === route.httpMethod || r.httpMethod === "*" || route.httpMethod === "*");
    seenByPath.set(path, [...seen, route]);
    if (first === undefined) continue;
    diag.method(
      route.method,
      `same HTTP method and path pattern as ${first.display} of rpc ${first.method.name}; ` +
        "no request could tell them apart, change one of the paths",
      route.display,
    );
  }
}
