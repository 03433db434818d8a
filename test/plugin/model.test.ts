/**
 * Unit tests of createFileModels: the binding model of a small inline proto,
 * of the real a2a.proto v1.0.1 (route order per decision D6, checklist part
 * 1.1) and v0.3.0, and REQUIRED-field collection on recursive types.
 * The pinned protos are read from vendor/ at test time, never copied.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { create, createFileRegistry, type DescField, type DescFile } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import type { HttpBindingModel } from "../../plugin/model/http-binding.js";
import type { RequiredFieldsModel } from "../../plugin/model/required-fields.js";
import { createFileModels, type FileModel, type ServiceModel } from "../../plugin/model/service-model.js";
import { createRequest, projectRoot } from "../support/protos.js";

/** Compiles `files` with buf and returns the DescFile of `name`. */
function compile(files: Record<string, string>, name: string): DescFile {
  const req = createRequest(files);
  const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: req.protoFile }));
  const desc = registry.getFile(name);
  if (desc === undefined) throw new Error(`${name} not in the image`);
  return desc;
}

function only<T>(items: readonly T[]): T {
  expect(items).toHaveLength(1);
  return items[0] as T;
}

const vendored = (version: string) => readFileSync(join(projectRoot, "vendor/a2a", version, "a2a.proto"), "utf8");
const route = (r: HttpBindingModel) => `${r.httpMethod} ${r.template.text}`;
const names = (fields: readonly DescField[]) => fields.map((f) => f.name);
const requiredOf = (service: ServiceModel, typeName: string): RequiredFieldsModel | undefined =>
  service.requiredFields.find((r) => r.message.typeName === typeName);

// ---------------------------------------------------------------------------
// A small inline proto.
// ---------------------------------------------------------------------------

describe("createFileModels on an inline proto", () => {
  const source = `syntax = "proto3";
package shop.v1;
import "google/api/annotations.proto";
import "google/api/field_behavior.proto";

message Item {
  string sku = 1 [(google.api.field_behavior) = REQUIRED];
  int32 qty = 2;
}
message Cart {
  string id = 1;
  repeated Item items = 2;
  map<string, Item> saved = 3;
}
message GetCartRequest {
  string shop = 1;
  Cart cart = 2;
  string name = 3;
}
message AddRequest {
  string cart_id = 1 [(google.api.field_behavior) = REQUIRED];
  Item item = 2;
}
message Empty {}

service Shop {
  rpc GetCart(GetCartRequest) returns (Cart) {
    option (google.api.http) = {
      get: "/carts/{cart.id}"
      additional_bindings { get: "/{shop}/carts/{cart.id}" }
      additional_bindings { get: "/v1/{name=shops/*/carts/*}" }
    };
  }
  rpc Add(AddRequest) returns (Cart) {
    option (google.api.http) = { post: "/carts/{cart_id}:add" body: "item" response_body: "items" };
  }
  rpc Watch(GetCartRequest) returns (stream Cart) {
    option (google.api.http) = { custom: { kind: "SUBSCRIBE" path: "/carts/{cart.id}/**" } };
  }
  rpc Ping(Empty) returns (Empty);
}

service Other {}
`;
  let file: FileModel;
  let shop: ServiceModel;
  beforeAll(() => {
    const desc = compile({ "shop/v1/shop.proto": source }, "shop/v1/shop.proto");
    file = only(createFileModels([desc]));
    shop = file.services[0] as ServiceModel;
  });

  test("one model per file, one per service, in declaration order", () => {
    expect(file.desc.name).toBe("shop/v1/shop");
    expect(file.services.map((s) => s.desc.typeName)).toEqual(["shop.v1.Shop", "shop.v1.Other"]);
    const other = file.services[1] as ServiceModel;
    expect(other.methods).toEqual([]);
    expect(other.routes).toEqual([]);
    expect(other.requiredFields).toEqual([]);
  });

  test("a file without services gives a model without services", () => {
    const desc = compile({ "plain.proto": 'syntax = "proto3";\npackage plain;\nmessage M { string a = 1; }\n' }, "plain.proto");
    const model = only(createFileModels([desc]));
    expect(model.desc).toBe(desc);
    expect(model.services).toEqual([]);
  });

  test.each<[string, string, string, string, string]>([
    ["GetCart", "unary", "/shop.v1.Shop/GetCart", "shop.v1.GetCartRequest", "shop.v1.Cart"],
    ["Add", "unary", "/shop.v1.Shop/Add", "shop.v1.AddRequest", "shop.v1.Cart"],
    ["Watch", "server_streaming", "/shop.v1.Shop/Watch", "shop.v1.GetCartRequest", "shop.v1.Cart"],
    ["Ping", "unary", "/shop.v1.Shop/Ping", "shop.v1.Empty", "shop.v1.Empty"],
  ])("method %s: %s, %s", (name, kind, grpcPath, input, output) => {
    const m = shop.methods.find((x) => x.desc.name === name);
    expect(m).toBeDefined();
    expect(m?.kind).toBe(kind);
    expect(m?.grpcPath).toBe(grpcPath);
    expect(m?.input.typeName).toBe(input);
    expect(m?.output.typeName).toBe(output);
  });

  test("methods keep declaration order; a method without google.api.http has no rules", () => {
    expect(shop.methods.map((m) => m.desc.name)).toEqual(["GetCart", "Add", "Watch", "Ping"]);
    expect(shop.methods[3]?.http).toEqual([]);
  });

  test("a method's rules: default first, then additional_bindings in order", () => {
    const getCart = shop.methods[0]?.http ?? [];
    expect(getCart.map((r) => [r.index, r.additional, r.display])).toEqual([
      [0, false, 'get "/carts/{cart.id}"'],
      [1, true, 'get "/{shop}/carts/{cart.id}"'],
      [2, true, 'get "/v1/{name=shops/*/carts/*}"'],
    ]);
    for (const r of getCart) expect(r.method).toBe(shop.methods[0]?.desc);
  });

  test("path params resolve to field chains from the request message", () => {
    const getCart = shop.methods[0]?.http ?? [];
    const params = getCart.map((r) =>
      r.pathParams.map((p) => ({ variable: p.variable.fieldPath.join("."), fields: p.fields.map((f) => `${f.parent.typeName}.${f.name}`), multi: p.variable.multiSegment })),
    );
    expect(params).toEqual([
      [{ variable: "cart.id", fields: ["shop.v1.GetCartRequest.cart", "shop.v1.Cart.id"], multi: false }],
      [
        { variable: "shop", fields: ["shop.v1.GetCartRequest.shop"], multi: false },
        { variable: "cart.id", fields: ["shop.v1.GetCartRequest.cart", "shop.v1.Cart.id"], multi: false },
      ],
      [{ variable: "name", fields: ["shop.v1.GetCartRequest.name"], multi: true }],
    ]);
  });

  test("body and response_body resolve to fields; no body is undefined", () => {
    const [add] = shop.methods[1]?.http ?? [];
    expect(add?.httpMethod).toBe("POST");
    expect(add?.template.verb).toBe("add");
    expect((add?.body as DescField).name).toBe("item");
    expect((add?.body as DescField).parent.typeName).toBe("shop.v1.AddRequest");
    expect(add?.responseBody?.name).toBe("items");
    expect(add?.responseBody?.parent.typeName).toBe("shop.v1.Cart");
    const [get] = shop.methods[0]?.http ?? [];
    expect(get?.body).toBeUndefined();
    expect(get?.responseBody).toBeUndefined();
  });

  test("a custom pattern keeps its kind as the HTTP method, and ** is multi-segment", () => {
    const [watch] = shop.methods[2]?.http ?? [];
    expect(watch?.httpMethod).toBe("SUBSCRIBE");
    expect(watch?.display).toBe('custom "SUBSCRIBE" "/carts/{cart.id}/**"');
    expect(watch?.template.segments).toEqual([{ kind: "literal", value: "carts" }, { kind: "wildcard" }, { kind: "deep_wildcard" }]);
  });

  test("routes: every rule of the service in D6 order", () => {
    expect(shop.routes.map(route)).toEqual([
      // literal "carts" first; within it: verb before verbless, then longer.
      "POST /carts/{cart_id}:add",
      "GET /carts/{cart.id}",
      "SUBSCRIBE /carts/{cart.id}/**",
      // literal "v1" after "carts".
      "GET /v1/{name=shops/*/carts/*}",
      // a leading variable last.
      "GET /{shop}/carts/{cart.id}",
    ]);
    expect(shop.routes).toHaveLength(shop.methods.reduce((n, m) => n + m.http.length, 0));
  });

  test("requiredFields: reachable types with REQUIRED fields or a path to one, sorted by type name", () => {
    expect(
      shop.requiredFields.map((r) => ({ type: r.message.typeName, required: names(r.required), nested: names(r.nested) })),
    ).toEqual([
      { type: "shop.v1.AddRequest", required: ["cart_id"], nested: ["item"] },
      // repeated and map values lead to Item too.
      { type: "shop.v1.Cart", required: [], nested: ["items", "saved"] },
      { type: "shop.v1.GetCartRequest", required: [], nested: ["cart"] },
      { type: "shop.v1.Item", required: ["sku"], nested: [] },
    ]);
  });
});

// ---------------------------------------------------------------------------
// The real a2a.proto, v1.0.1.
// ---------------------------------------------------------------------------

describe("createFileModels on a2a.proto v1.0.1", () => {
  let service: ServiceModel;
  beforeAll(() => {
    const desc = compile({ "a2a.proto": vendored("v1.0.1") }, "a2a.proto");
    const file = only(createFileModels([desc]));
    expect(file.desc).toBe(desc);
    service = only(file.services);
  });

  test("the service", () => {
    expect(service.desc.typeName).toBe("lf.a2a.v1.A2AService");
  });

  test("11 methods, in proto order, with kind and gRPC path", () => {
    expect(service.methods.map((m) => [m.desc.name, m.kind, m.grpcPath])).toEqual([
      ["SendMessage", "unary", "/lf.a2a.v1.A2AService/SendMessage"],
      ["SendStreamingMessage", "server_streaming", "/lf.a2a.v1.A2AService/SendStreamingMessage"],
      ["GetTask", "unary", "/lf.a2a.v1.A2AService/GetTask"],
      ["ListTasks", "unary", "/lf.a2a.v1.A2AService/ListTasks"],
      ["CancelTask", "unary", "/lf.a2a.v1.A2AService/CancelTask"],
      ["SubscribeToTask", "server_streaming", "/lf.a2a.v1.A2AService/SubscribeToTask"],
      ["CreateTaskPushNotificationConfig", "unary", "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig"],
      ["GetTaskPushNotificationConfig", "unary", "/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig"],
      ["ListTaskPushNotificationConfigs", "unary", "/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs"],
      ["GetExtendedAgentCard", "unary", "/lf.a2a.v1.A2AService/GetExtendedAgentCard"],
      ["DeleteTaskPushNotificationConfig", "unary", "/lf.a2a.v1.A2AService/DeleteTaskPushNotificationConfig"],
    ]);
    expect(service.methods.filter((m) => m.kind === "server_streaming")).toHaveLength(2);
  });

  // Checklist part 1.1: every method has its default route and the /{tenant} one.
  test.each<[string, string, string, string, string]>([
    ["SendMessage", "SendMessageRequest", "SendMessageResponse", "POST /message:send", "POST /{tenant}/message:send"],
    ["SendStreamingMessage", "SendMessageRequest", "StreamResponse", "POST /message:stream", "POST /{tenant}/message:stream"],
    ["GetTask", "GetTaskRequest", "Task", "GET /tasks/{id=*}", "GET /{tenant}/tasks/{id=*}"],
    ["ListTasks", "ListTasksRequest", "ListTasksResponse", "GET /tasks", "GET /{tenant}/tasks"],
    ["CancelTask", "CancelTaskRequest", "Task", "POST /tasks/{id=*}:cancel", "POST /{tenant}/tasks/{id=*}:cancel"],
    ["SubscribeToTask", "SubscribeToTaskRequest", "StreamResponse", "GET /tasks/{id=*}:subscribe", "GET /{tenant}/tasks/{id=*}:subscribe"],
    [
      "CreateTaskPushNotificationConfig",
      "TaskPushNotificationConfig",
      "TaskPushNotificationConfig",
      "POST /tasks/{task_id=*}/pushNotificationConfigs",
      "POST /{tenant}/tasks/{task_id=*}/pushNotificationConfigs",
    ],
    [
      "GetTaskPushNotificationConfig",
      "GetTaskPushNotificationConfigRequest",
      "TaskPushNotificationConfig",
      "GET /tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
      "GET /{tenant}/tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
    ],
    [
      "ListTaskPushNotificationConfigs",
      "ListTaskPushNotificationConfigsRequest",
      "ListTaskPushNotificationConfigsResponse",
      "GET /tasks/{task_id=*}/pushNotificationConfigs",
      "GET /{tenant}/tasks/{task_id=*}/pushNotificationConfigs",
    ],
    ["GetExtendedAgentCard", "GetExtendedAgentCardRequest", "AgentCard", "GET /extendedAgentCard", "GET /{tenant}/extendedAgentCard"],
    [
      "DeleteTaskPushNotificationConfig",
      "DeleteTaskPushNotificationConfigRequest",
      "google.protobuf.Empty",
      "DELETE /tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
      "DELETE /{tenant}/tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
    ],
  ])("%s(%s) returns %s: %s, additional %s", (name, input, output, defaultRoute, tenantRoute) => {
    const m = service.methods.find((x) => x.desc.name === name);
    const qualify = (t: string) => (t.includes(".") ? t : `lf.a2a.v1.${t}`);
    expect(m?.input.typeName).toBe(qualify(input));
    expect(m?.output.typeName).toBe(qualify(output));
    expect(m?.http.map((r) => [route(r), r.additional, r.index])).toEqual([
      [defaultRoute, false, 0],
      [tenantRoute, true, 1],
    ]);
    for (const r of m?.http ?? []) {
      // Part 1.1: all path variables are single-segment.
      expect(r.pathParams.every((p) => !p.variable.multiSegment)).toBe(true);
      // And the tenant route binds tenant, the default route does not.
      expect(r.pathParams.some((p) => p.variable.fieldPath.join(".") === "tenant")).toBe(r.additional);
    }
  });

  test("24 routes in D6 order: the 22 of the proto plus D1's POST twins of SubscribeToTask, literals before variables segment by segment, verbs before the bare path, default before tenant", () => {
    const defaults = [
      "GET /extendedAgentCard",
      "POST /message:send",
      "POST /message:stream",
      "GET /tasks",
      "POST /tasks/{id=*}:cancel",
      "GET /tasks/{id=*}:subscribe",
      "POST /tasks/{id=*}:subscribe",
      "GET /tasks/{id=*}",
      "GET /tasks/{task_id=*}/pushNotificationConfigs",
      "POST /tasks/{task_id=*}/pushNotificationConfigs",
      "DELETE /tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
      "GET /tasks/{task_id=*}/pushNotificationConfigs/{id=*}",
    ];
    const tenants = defaults.map((r) => r.replace(" /", " /{tenant}/"));
    expect(service.routes).toHaveLength(24);
    expect(service.routes.map(route)).toEqual([...defaults, ...tenants]);
    expect(service.routes.map((r) => r.additional)).toEqual([...Array(12).fill(false), ...Array(12).fill(true)]);
    expect(service.routes.filter((r) => r.derived).map(route)).toEqual([
      "POST /tasks/{id=*}:subscribe",
      "POST /{tenant}/tasks/{id=*}:subscribe",
    ]);
  });

  test("D6: GET /tasks/tasks is GetTask(id=tasks): /tasks/{id} precedes /{tenant}/tasks", () => {
    const order = service.routes.map(route);
    expect(order.indexOf("GET /tasks/{id=*}")).toBeLessThan(order.indexOf("GET /{tenant}/tasks"));
  });

  test("pathParams of /{tenant}/tasks/{task_id=*}/pushNotificationConfigs/{id=*}", () => {
    const rule = service.routes.find((r) => r.template.text === "/{tenant}/tasks/{task_id=*}/pushNotificationConfigs/{id=*}" && r.httpMethod === "GET");
    expect(rule?.method.name).toBe("GetTaskPushNotificationConfig");
    expect(
      rule?.pathParams.map((p) => ({
        variable: p.variable.fieldPath,
        segments: [p.variable.start, p.variable.end],
        fields: p.fields.map((f) => `${f.parent.typeName}.${f.name}`),
        json: p.fields.map((f) => f.jsonName),
      })),
    ).toEqual([
      { variable: ["tenant"], segments: [0, 1], fields: ["lf.a2a.v1.GetTaskPushNotificationConfigRequest.tenant"], json: ["tenant"] },
      { variable: ["task_id"], segments: [2, 3], fields: ["lf.a2a.v1.GetTaskPushNotificationConfigRequest.task_id"], json: ["taskId"] },
      { variable: ["id"], segments: [4, 5], fields: ["lf.a2a.v1.GetTaskPushNotificationConfigRequest.id"], json: ["id"] },
    ]);
  });

  test.each<[string, string | undefined]>([
    ["SendMessage", "*"],
    ["SendStreamingMessage", "*"],
    ["CancelTask", "*"],
    ["CreateTaskPushNotificationConfig", "*"],
    ["GetTask", undefined],
    ["ListTasks", undefined],
    ["SubscribeToTask", undefined],
    ["GetTaskPushNotificationConfig", undefined],
    ["ListTaskPushNotificationConfigs", undefined],
    ["GetExtendedAgentCard", undefined],
    ["DeleteTaskPushNotificationConfig", undefined],
  ])("%s body: %s on both routes, no response_body", (name, body) => {
    const m = service.methods.find((x) => x.desc.name === name);
    expect(m?.http.map((r) => r.body)).toEqual([body, body]);
    expect(m?.http.map((r) => r.responseBody)).toEqual([undefined, undefined]);
  });

  test.each<[string, string[], string[]]>([
    ["lf.a2a.v1.SendMessageRequest", ["message"], ["message", "configuration"]],
    ["lf.a2a.v1.SendMessageConfiguration", [], ["task_push_notification_config"]],
    ["lf.a2a.v1.TaskPushNotificationConfig", ["url"], ["authentication"]],
    ["lf.a2a.v1.ListTasksResponse", ["tasks", "next_page_token", "page_size", "total_size"], ["tasks"]],
    ["lf.a2a.v1.Message", ["message_id", "role", "parts"], []],
    ["lf.a2a.v1.Task", ["id", "status"], ["status", "artifacts", "history"]],
    ["lf.a2a.v1.TaskStatus", ["state"], ["message"]],
    ["lf.a2a.v1.GetTaskRequest", ["id"], []],
    ["lf.a2a.v1.GetTaskPushNotificationConfigRequest", ["task_id", "id"], []],
    ["lf.a2a.v1.StreamResponse", [], ["task", "message", "status_update", "artifact_update"]],
    ["lf.a2a.v1.SendMessageResponse", [], ["task", "message"]],
  ])("required fields of %s: %j, nested %j", (typeName, required, nested) => {
    const r = requiredOf(service, typeName);
    expect(r).toBeDefined();
    expect(names(r?.required ?? [])).toEqual(required);
    expect(names(r?.nested ?? [])).toEqual(nested);
  });

  test("ListTasksResponse required fields by JSON name (D11: emitted even at default)", () => {
    expect(requiredOf(service, "lf.a2a.v1.ListTasksResponse")?.required.map((f) => f.jsonName)).toEqual([
      "tasks",
      "nextPageToken",
      "pageSize",
      "totalSize",
    ]);
    expect(requiredOf(service, "lf.a2a.v1.Message")?.required.map((f) => f.jsonName)).toEqual(["messageId", "role", "parts"]);
  });

  test("types with no REQUIRED field anywhere below are left out; the list is sorted and has no duplicates", () => {
    const types = service.requiredFields.map((r) => r.message.typeName);
    expect(types).toEqual([...types].sort());
    expect(new Set(types).size).toBe(types.length);
    for (const absent of ["lf.a2a.v1.Part", "lf.a2a.v1.ListTasksRequest", "lf.a2a.v1.GetExtendedAgentCardRequest", "google.protobuf.Struct", "google.protobuf.Empty"]) {
      expect(types).not.toContain(absent);
    }
    // Every listed type has a REQUIRED field or a nested field leading to a listed type.
    for (const r of service.requiredFields) {
      expect(r.required.length + r.nested.length).toBeGreaterThan(0);
    }
  });
});

// ---------------------------------------------------------------------------
// a2a.proto v0.3.0 (package a2a.v1): multi-segment variables.
// ---------------------------------------------------------------------------

describe("createFileModels on a2a.proto v0.3.0", () => {
  let service: ServiceModel;
  beforeAll(() => {
    const desc = compile({ "a2a.proto": vendored("v0.3.0") }, "a2a.proto");
    service = only(only(createFileModels([desc])).services);
  });

  test("builds without errors", () => {
    expect(service.desc.typeName).toBe("a2a.v1.A2AService");
    expect(service.methods.map((m) => m.desc.name)).toEqual([
      "SendMessage",
      "SendStreamingMessage",
      "GetTask",
      "CancelTask",
      "TaskSubscription",
      "CreateTaskPushNotificationConfig",
      "GetTaskPushNotificationConfig",
      "ListTaskPushNotificationConfig",
      "GetAgentCard",
      "DeleteTaskPushNotificationConfig",
    ]);
    // 10 from the proto, plus the POST twin of the streaming GET (D1).
    expect(service.routes).toHaveLength(11);
    expect(service.routes.filter((r) => r.derived).map(route)).toEqual(["POST /v1/{name=tasks/*}:subscribe"]);
  });

  test.each<[string, string, boolean, [number, number]]>([
    ["/v1/{name=tasks/*}", "name", true, [1, 3]],
    ["/v1/{name=tasks/*}:cancel", "name", true, [1, 3]],
    ["/v1/{name=tasks/*/pushNotificationConfigs/*}", "name", true, [1, 5]],
    ["/v1/{parent=tasks/*}/pushNotificationConfigs", "parent", true, [1, 3]],
  ])("%s binds %s, multiSegment %s", (text, field, multiSegment, span) => {
    const rule = service.routes.find((r) => r.template.text === text);
    const param = only(rule?.pathParams ?? []);
    expect(param.variable.fieldPath).toEqual([field]);
    expect(param.variable.multiSegment).toBe(multiSegment);
    expect([param.variable.start, param.variable.end]).toEqual(span);
    expect(names(param.fields)).toEqual([field]);
  });

  test("the body of CreateTaskPushNotificationConfig is the config field", () => {
    const m = service.methods.find((x) => x.desc.name === "CreateTaskPushNotificationConfig");
    const body = m?.http[0]?.body as DescField;
    expect(body.name).toBe("config");
    expect(body.parent.typeName).toBe("a2a.v1.CreateTaskPushNotificationConfigRequest");
  });
});

// ---------------------------------------------------------------------------
// Recursive types.
// ---------------------------------------------------------------------------

describe("REQUIRED fields of recursive types", () => {
  const header = `syntax = "proto3";
package rec.v1;
import "google/api/field_behavior.proto";
`;
  function requiredFields(body: string): { type: string; required: string[]; nested: string[] }[] {
    const desc = compile({ "rec.proto": header + body }, "rec.proto");
    const service = only(only(createFileModels([desc])).services);
    return service.requiredFields.map((r) => ({ type: r.message.typeName, required: names(r.required), nested: names(r.nested) }));
  }

  test("a self-recursive message with a REQUIRED field appears once, nested through itself", () => {
    expect(
      requiredFields(`
message Node {
  Node child = 1;
  string id = 2 [(google.api.field_behavior) = REQUIRED];
}
service S { rpc Get(Node) returns (Node); }
`),
    ).toEqual([{ type: "rec.v1.Node", required: ["id"], nested: ["child"] }]);
  });

  test("mutual recursion where only one side has a REQUIRED field: both listed, each nested to the other", () => {
    expect(
      requiredFields(`
message A { B b = 1; repeated A more = 2; }
message B { A a = 1; string key = 2 [(google.api.field_behavior) = REQUIRED]; }
message Req { A a = 1; }
message Res {}
service S { rpc Get(Req) returns (Res); }
`),
    ).toEqual([
      { type: "rec.v1.A", required: [], nested: ["b", "more"] },
      { type: "rec.v1.B", required: ["key"], nested: ["a"] },
      { type: "rec.v1.Req", required: [], nested: ["a"] },
    ]);
  });

  test("a recursive type with no REQUIRED field anywhere is left out", () => {
    expect(
      requiredFields(`
message Tree { repeated Tree children = 1; map<string, Tree> named = 2; string label = 3; }
service S { rpc Get(Tree) returns (Tree); }
`),
    ).toEqual([]);
  });

  test("a REQUIRED field deep below a recursive cycle makes every type on the way matter", () => {
    expect(
      requiredFields(`
message Loop { Loop next = 1; Exit exit = 2; }
message Exit { Leaf leaf = 1; }
message Leaf { string v = 1 [(google.api.field_behavior) = REQUIRED]; }
message Other { string x = 1; }
service S { rpc Get(Loop) returns (Other); }
`),
    ).toEqual([
      { type: "rec.v1.Exit", required: [], nested: ["leaf"] },
      { type: "rec.v1.Leaf", required: ["v"], nested: [] },
      { type: "rec.v1.Loop", required: [], nested: ["next", "exit"] },
    ]);
  });
});
