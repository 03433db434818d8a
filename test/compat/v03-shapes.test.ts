/**
 * The 0.3 <-> 1.0 translation (runtime/a2a/compat, D110, D111), one test per
 * message and per field that exists in both versions, in both 0.3 dialects
 * (JSON-RPC's types and the v0.3.0 proto's ProtoJSON): 1.0 to 0.3 gives the
 * 0.3 spelling, 0.3 to 1.0 gives back the 1.0 value, and what 0.3 produces
 * parses as the 1.0 message with the generated schema (strict ProtoJSON).
 * What has no counterpart is checked to be dropped or filled as D110 says.
 */
import { fromJson, type DescMessage, type JsonObject } from "@bufbuild/protobuf";
import { cardTo03, v03CardFields } from "../../runtime/a2a/compat/v03-card.js";
import { v03Methods } from "../../runtime/a2a/compat/v03-methods.js";
import {
  artifactFrom03,
  artifactTo03,
  artifactUpdateFrom03,
  artifactUpdateTo03,
  messageFrom03,
  messageTo03,
  partFrom03,
  partTo03,
  pushConfigFrom03,
  sendParamsFrom03,
  stateFrom03,
  stateTo03,
  statusUpdateFrom03,
  statusUpdateTo03,
  streamResponseFrom03,
  streamResponseTo03,
  taskFrom03,
  taskPushConfigTo03,
  taskTo03,
  type Dialect,
} from "../../runtime/a2a/compat/v03-shapes.js";
import {
  ArtifactSchema,
  CancelTaskRequestSchema,
  GetTaskPushNotificationConfigRequestSchema,
  GetTaskRequestSchema,
  MessageSchema,
  PartSchema,
  SendMessageRequestSchema,
  StreamResponseSchema,
  TaskArtifactUpdateEventSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
  TaskStatusUpdateEventSchema,
} from "../../generated/a2a_pb.js";
import * as v03 from "../../runtime/gen/a2a/v0_3/a2a_pb.js";

const DIALECTS: Dialect[] = ["jsonrpc", "proto"];
/** Strict ProtoJSON of the v0.3.0 proto (generated types): the proto dialect is exactly 0.3's HTTP+JSON and gRPC JSON. */
const valid03 = (schema: DescMessage, json: JsonObject) => expect(() => fromJson(schema, json)).not.toThrow();
/** Strict ProtoJSON: a translated 1.0 value must be the 1.0 message, no unknown keys. */
const valid = (schema: DescMessage, json: JsonObject) => expect(() => fromJson(schema, json)).not.toThrow();

const meta = { source: "test", n: 1 };
const textPart = { text: "hi" };

describe("Part", () => {
  // [field, 1.0 part, 0.3 JSON-RPC part, 0.3 proto part]
  const rows: [string, JsonObject, JsonObject, JsonObject][] = [
    ["text", { text: "hello" }, { kind: "text", text: "hello" }, { text: "hello" }],
    ["raw (file bytes)", { raw: "aGk=", mediaType: "text/plain" }, { kind: "file", file: { bytes: "aGk=", mimeType: "text/plain" } }, { file: { fileWithBytes: "aGk=", mimeType: "text/plain" } }],
    ["url (file uri)", { url: "https://x/y.png", mediaType: "image/png" }, { kind: "file", file: { uri: "https://x/y.png", mimeType: "image/png" } }, { file: { fileWithUri: "https://x/y.png", mimeType: "image/png" } }],
    ["filename (file name)", { url: "https://x/y", filename: "y.txt" }, { kind: "file", file: { uri: "https://x/y", name: "y.txt" } }, { file: { fileWithUri: "https://x/y" } }],
    ["data", { data: { a: [1, "b"] } }, { kind: "data", data: { a: [1, "b"] } }, { data: { data: { a: [1, "b"] } } }],
    ["metadata", { text: "m", metadata: meta }, { kind: "text", text: "m", metadata: meta }, { text: "m" }],
  ];
  it.each(rows)("%s", (_field, v1, rpc, proto) => {
    expect(partTo03(v1, "jsonrpc")).toEqual(rpc);
    expect(partTo03(v1, "proto")).toEqual(proto);
    valid03(v03.PartSchema, proto);
    expect(partFrom03(rpc)).toEqual(v1);
    valid(PartSchema, partFrom03(proto));
    // The proto dialect has no file name and no part metadata: the rest comes back.
    const { filename: _f, metadata: _m, ...kept } = v1;
    expect(partFrom03(proto)).toEqual(kept);
  });

  it("a data part that is not an object goes to 0.3 wrapped as {value}", () => {
    expect(partTo03({ data: [1, 2] }, "jsonrpc")).toEqual({ kind: "data", data: { value: [1, 2] } });
    expect(partTo03({ data: "s" }, "proto")).toEqual({ data: { data: { value: "s" } } });
  });
});

describe("a part of none of 0.3's kinds", () => {
  it.each([
    ["1.0's url and mediaType", { kind: "file", url: "https://x/y.pdf", mediaType: "application/pdf" }],
    ["1.0's raw", { raw: "aGk=" }],
    ["a kind 0.3 has not", { kind: "image" }],
    ["nothing", {}],
  ])("is refused, not read as empty text: %s", (_what, part) => {
    expect(() => partFrom03(part)).toThrow(/^a part has none of 0\.3's text, file or data/);
  });
});

describe("Message", () => {
  const base = { messageId: "m1", role: "ROLE_USER", parts: [textPart] };
  const rows: [string, JsonObject, JsonObject, JsonObject][] = [
    ["messageId", {}, { messageId: "m1" }, { messageId: "m1" }],
    ["role user", {}, { role: "user" }, { role: "ROLE_USER" }],
    ["role agent", { role: "ROLE_AGENT" }, { role: "agent" }, { role: "ROLE_AGENT" }],
    ["parts (proto: content)", {}, { parts: [{ kind: "text", text: "hi" }] }, { content: [{ text: "hi" }] }],
    ["contextId", { contextId: "c1" }, { contextId: "c1" }, { contextId: "c1" }],
    ["taskId", { taskId: "t1" }, { taskId: "t1" }, { taskId: "t1" }],
    ["metadata", { metadata: meta }, { metadata: meta }, { metadata: meta }],
    ["extensions", { extensions: ["urn:x"] }, { extensions: ["urn:x"] }, { extensions: ["urn:x"] }],
  ];
  it.each(rows)("%s", (_field, extra, rpc, proto) => {
    const v1 = { ...base, ...extra };
    expect(messageTo03(v1, "jsonrpc")).toMatchObject({ kind: "message", ...rpc });
    expect(messageTo03(v1, "proto")).toMatchObject(proto);
    expect(messageTo03(v1, "proto")).not.toHaveProperty("kind");
    valid03(v03.MessageSchema, messageTo03(v1, "proto"));
    for (const d of DIALECTS) {
      const back = messageFrom03(messageTo03(v1, d));
      expect(back).toEqual(v1);
      valid(MessageSchema, back);
    }
  });

  it("referenceTaskIds: JSON-RPC has them, the 0.3 proto does not", () => {
    const v1 = { ...base, referenceTaskIds: ["t0"] };
    expect(messageTo03(v1, "jsonrpc").referenceTaskIds).toEqual(["t0"]);
    expect(messageTo03(v1, "proto")).not.toHaveProperty("referenceTaskIds");
    expect(messageFrom03(messageTo03(v1, "jsonrpc"))).toEqual(v1);
  });
});

describe("TaskState", () => {
  const rows: [string, string, string][] = [
    ["TASK_STATE_SUBMITTED", "submitted", "TASK_STATE_SUBMITTED"],
    ["TASK_STATE_WORKING", "working", "TASK_STATE_WORKING"],
    ["TASK_STATE_COMPLETED", "completed", "TASK_STATE_COMPLETED"],
    ["TASK_STATE_FAILED", "failed", "TASK_STATE_FAILED"],
    ["TASK_STATE_CANCELED", "canceled", "TASK_STATE_CANCELLED"],
    ["TASK_STATE_INPUT_REQUIRED", "input-required", "TASK_STATE_INPUT_REQUIRED"],
    ["TASK_STATE_REJECTED", "rejected", "TASK_STATE_REJECTED"],
    ["TASK_STATE_AUTH_REQUIRED", "auth-required", "TASK_STATE_AUTH_REQUIRED"],
    ["TASK_STATE_UNSPECIFIED", "unknown", "TASK_STATE_UNSPECIFIED"],
  ];
  it.each(rows)("%s", (v1, rpc, proto) => {
    expect(stateTo03(v1, "jsonrpc")).toBe(rpc);
    expect(stateTo03(v1, "proto")).toBe(proto);
    expect(stateFrom03(rpc)).toBe(v1);
    expect(stateFrom03(proto)).toBe(v1);
  });
});

const status = { state: "TASK_STATE_WORKING", timestamp: "2026-01-02T03:04:05.678Z", message: { messageId: "s1", role: "ROLE_AGENT", parts: [textPart] } };
const artifact = { artifactId: "a1", name: "n", description: "d", parts: [textPart], metadata: meta, extensions: ["urn:e"] };

describe("Task and TaskStatus", () => {
  const base = { id: "t1", contextId: "c1", status: { state: "TASK_STATE_COMPLETED" } };
  const rows: [string, JsonObject, JsonObject][] = [
    ["id", {}, { id: "t1" }],
    ["contextId", {}, { contextId: "c1" }],
    ["status.state", {}, { status: { state: "completed" } }],
    ["status.message", { status }, { status: { state: "working", message: { kind: "message", messageId: "s1", role: "agent" } } }],
    ["status.timestamp", { status }, { status: { timestamp: "2026-01-02T03:04:05.678Z" } }],
    ["artifacts", { artifacts: [artifact] }, { artifacts: [{ artifactId: "a1", parts: [{ kind: "text", text: "hi" }] }] }],
    ["history", { history: [status.message] }, { history: [{ kind: "message", messageId: "s1" }] }],
    ["metadata", { metadata: meta }, { metadata: meta }],
  ];
  it.each(rows)("%s", (_field, extra, rpc) => {
    const v1 = { ...base, ...extra };
    expect(taskTo03(v1, "jsonrpc")).toMatchObject({ kind: "task", ...rpc });
    valid03(v03.TaskSchema, taskTo03(v1, "proto"));
    for (const d of DIALECTS) {
      const back = taskFrom03(taskTo03(v1, d));
      valid(TaskSchema, back);
      expect(back).toMatchObject({ id: "t1", contextId: "c1" });
    }
    expect(taskFrom03(taskTo03(v1, "jsonrpc"))).toEqual(v1);
  });

  it("CANCELED is the proto's TASK_STATE_CANCELLED", () => {
    expect(taskTo03({ id: "t", status: { state: "TASK_STATE_CANCELED" } }, "proto")).toMatchObject({ status: { state: "TASK_STATE_CANCELLED" }, contextId: "" });
  });
});

describe("Artifact", () => {
  it.each(Object.keys(artifact))("%s", (field) => {
    for (const d of DIALECTS) {
      const out = artifactTo03(artifact, d);
      expect(out).toHaveProperty(field);
      const back = artifactFrom03(out);
      valid(ArtifactSchema, back);
      expect(back[field]).toEqual((artifact as JsonObject)[field]);
    }
  });
});

describe("TaskStatusUpdateEvent", () => {
  const event = { taskId: "t1", contextId: "c1", status, metadata: meta };
  it.each(Object.keys(event))("%s", (field) => {
    for (const d of DIALECTS) {
      if (d === "proto") valid03(v03.TaskStatusUpdateEventSchema, statusUpdateTo03(event, d));
      const back = statusUpdateFrom03(statusUpdateTo03(event, d));
      valid(TaskStatusUpdateEventSchema, back);
      expect(back[field]).toEqual((event as JsonObject)[field]);
    }
  });
  it("final (0.3 only) is true where a 1.0 stream closes", () => {
    expect(statusUpdateTo03(event, "jsonrpc")).toMatchObject({ kind: "status-update", final: false });
    for (const state of ["TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED", "TASK_STATE_CANCELED"]) {
      expect(statusUpdateTo03({ ...event, status: { state } }, "proto").final).toBe(true);
    }
  });
});

describe("TaskArtifactUpdateEvent", () => {
  const event = { taskId: "t1", contextId: "c1", artifact, append: true, lastChunk: true, metadata: meta };
  it.each(Object.keys(event))("%s", (field) => {
    expect(artifactUpdateTo03(event, "jsonrpc").kind).toBe("artifact-update");
    for (const d of DIALECTS) {
      if (d === "proto") valid03(v03.TaskArtifactUpdateEventSchema, artifactUpdateTo03(event, d));
      const back = artifactUpdateFrom03(artifactUpdateTo03(event, d));
      valid(TaskArtifactUpdateEventSchema, back);
      expect(back[field]).toEqual((event as JsonObject)[field]);
    }
  });
});

describe("StreamResponse and SendMessageResponse", () => {
  const cases: [string, JsonObject, string][] = [
    ["task", { task: { id: "t1", contextId: "c1", status: { state: "TASK_STATE_WORKING" } } }, "task"],
    ["message", { message: { messageId: "m", role: "ROLE_AGENT", parts: [textPart] } }, "message"],
    ["statusUpdate", { statusUpdate: { taskId: "t1", contextId: "c1", status: { state: "TASK_STATE_WORKING" } } }, "status-update"],
    ["artifactUpdate", { artifactUpdate: { taskId: "t1", contextId: "c1", artifact } }, "artifact-update"],
  ];
  it.each(cases)("%s: bare with its kind on JSON-RPC, wrapped in the proto dialect", (key, v1, kind) => {
    expect(streamResponseTo03(v1, "jsonrpc").kind).toBe(kind);
    expect(Object.keys(streamResponseTo03(v1, "proto"))).toEqual([key]);
    valid03(v03.StreamResponseSchema, streamResponseTo03(v1, "proto"));
    for (const d of DIALECTS) {
      const back = streamResponseFrom03(streamResponseTo03(v1, d));
      valid(StreamResponseSchema, back);
      expect(Object.keys(back)).toEqual([key]);
    }
  });
});

describe("SendMessageRequest (MessageSendParams)", () => {
  const message = { kind: "message", messageId: "m", role: "user", parts: [{ kind: "text", text: "x" }] };
  const rows: [string, JsonObject, JsonObject][] = [
    ["message", {}, { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } }],
    ["metadata", { metadata: meta }, { metadata: meta }],
    ["configuration.acceptedOutputModes", { configuration: { acceptedOutputModes: ["text/plain"], blocking: true } }, { configuration: { acceptedOutputModes: ["text/plain"], returnImmediately: false } }],
    ["configuration.historyLength", { configuration: { historyLength: 3, blocking: true } }, { configuration: { historyLength: 3 } }],
    ["configuration.blocking false", { configuration: { blocking: false } }, { configuration: { returnImmediately: true } }],
    ["configuration.blocking absent (checklist 16: not blocking)", {}, { configuration: { returnImmediately: true } }],
    [
      "configuration.pushNotificationConfig (JSON-RPC)",
      { configuration: { blocking: true, pushNotificationConfig: { url: "https://h/p", token: "k", authentication: { schemes: ["Bearer", "Basic"], credentials: "c" } } } },
      { configuration: { taskPushNotificationConfig: { url: "https://h/p", token: "k", authentication: { scheme: "Bearer", credentials: "c" } } } },
    ],
    ["configuration.pushNotification (proto)", { configuration: { pushNotification: { id: "p", url: "https://h/p" } } }, { configuration: { taskPushNotificationConfig: { id: "p", url: "https://h/p" } } }],
  ];
  it.each(rows)("%s", (_field, extra, v1) => {
    const out = sendParamsFrom03({ message, ...extra });
    expect(out).toMatchObject(v1);
    valid(SendMessageRequestSchema, out);
  });
  it("the proto dialect's message `content`", () => {
    expect(sendParamsFrom03({ message: { messageId: "m", role: "ROLE_USER", content: [{ text: "x" }] } }).message).toEqual({ messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] });
  });
});

describe("TaskPushNotificationConfig", () => {
  const v1 = { taskId: "t1", id: "c1", url: "https://h/p", token: "k", authentication: { scheme: "Bearer", credentials: "s" } };
  const inner = { id: "c1", url: "https://h/p", token: "k", authentication: { schemes: ["Bearer"], credentials: "s" } };
  it.each(["taskId", "id", "url", "token", "authentication"])("%s", (field) => {
    expect(taskPushConfigTo03(v1, "jsonrpc")).toEqual({ taskId: "t1", pushNotificationConfig: inner });
    expect(taskPushConfigTo03(v1, "proto")).toEqual({ name: "tasks/t1/pushNotificationConfigs/c1", pushNotificationConfig: inner });
    valid03(v03.TaskPushNotificationConfigSchema, taskPushConfigTo03(v1, "proto"));
    const back = pushConfigFrom03(inner, "t1");
    valid(TaskPushNotificationConfigSchema, back);
    expect(back[field]).toEqual((v1 as JsonObject)[field]);
  });
});

describe("the request params of each 0.3 method", () => {
  const rows: [string, JsonObject, JsonObject, DescMessage][] = [
    ["tasks/get", { id: "t", historyLength: 2, metadata: meta }, { id: "t", historyLength: 2 }, GetTaskRequestSchema],
    ["tasks/cancel", { id: "t", metadata: meta }, { id: "t", metadata: meta }, CancelTaskRequestSchema],
    ["tasks/resubscribe", { id: "t" }, { id: "t" }, GetTaskRequestSchema],
    ["tasks/pushNotificationConfig/set", { taskId: "t", pushNotificationConfig: { url: "https://h" } }, { taskId: "t", id: "t", url: "https://h" }, TaskPushNotificationConfigSchema],
    ["tasks/pushNotificationConfig/get", { id: "t", pushNotificationConfigId: "c" }, { taskId: "t", id: "c" }, GetTaskPushNotificationConfigRequestSchema],
    ["tasks/pushNotificationConfig/get", { id: "t" }, { taskId: "t", id: "t" }, GetTaskPushNotificationConfigRequestSchema],
    ["tasks/pushNotificationConfig/list", { id: "t" }, { taskId: "t" }, GetTaskPushNotificationConfigRequestSchema],
    ["tasks/pushNotificationConfig/delete", { id: "t", pushNotificationConfigId: "c" }, { taskId: "t", id: "c" }, GetTaskPushNotificationConfigRequestSchema],
  ];
  it.each(rows)("%s %j", (name, params, v1, schema) => {
    const out = v03Methods[name]!.request(params);
    expect(out).toEqual(v1);
    valid(schema, out);
  });
  it("results: the push list is an array on JSON-RPC, and delete answers null", () => {
    const list = v03Methods["tasks/pushNotificationConfig/list"]!;
    expect(list.result({ configs: [{ taskId: "t", id: "c", url: "u" }] }, "jsonrpc")).toEqual([{ taskId: "t", pushNotificationConfig: { id: "c", url: "u" } }]);
    expect(list.result({ configs: [], nextPageToken: "n" }, "proto")).toEqual({ configs: [], nextPageToken: "n" });
    expect(v03Methods["tasks/pushNotificationConfig/delete"]!.result({}, "jsonrpc")).toBeNull();
  });
});

describe("AgentCard", () => {
  const card = {
    name: "A",
    description: "D",
    version: "1",
    provider: { organization: "O", url: "https://o" },
    documentationUrl: "https://doc",
    iconUrl: "https://icon",
    capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true, extensions: [{ uri: "urn:x", required: false }] },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "s", name: "S", description: "d", tags: ["t"], securityRequirements: [{ schemes: { bearer: { list: ["read"] } } }] }],
    supportedInterfaces: [
      { url: "http://h/a2a/jsonrpc", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: "http://h/a2a/rest", protocolBinding: "HTTP+JSON", protocolVersion: "0.3" },
    ],
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    securitySchemes: {
      bearer: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } },
      key: { apiKeySecurityScheme: { location: "header", name: "X-Key", description: "k" } },
      oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: "https://t", scopes: { a: "b" } } }, oauth2MetadataUrl: "https://m" } },
      oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: "https://oidc" } },
      mtls: { mtlsSecurityScheme: { description: "m" } },
    },
    signatures: [{ protected: "p", signature: "s" }],
  };
  const out = cardTo03(card, "jsonrpc");
  it.each(["name", "description", "version", "provider", "documentationUrl", "iconUrl", "defaultInputModes", "defaultOutputModes"])("%s is kept", (field) => {
    expect(out[field]).toEqual((card as JsonObject)[field]);
  });
  it("signatures are left out: they cover the 1.0 form, and over the 0.3 one they could only fail (D111)", () => {
    expect(out).not.toHaveProperty("signatures");
  });
  it("supportedInterfaces: the 0.3 ones become url, preferredTransport, additionalInterfaces", () => {
    expect(out).toMatchObject({ protocolVersion: "0.3.0", url: "http://h/a2a/rest", preferredTransport: "HTTP+JSON", additionalInterfaces: [{ url: "http://h/a2a/rest", transport: "HTTP+JSON" }] });
    expect(out).not.toHaveProperty("supportedInterfaces");
    expect(v03CardFields({ supportedInterfaces: card.supportedInterfaces.slice(0, 1) }, "jsonrpc")).toMatchObject({ url: "http://h/a2a/jsonrpc", preferredTransport: "JSONRPC" });
  });
  it("capabilities: streaming, pushNotifications and extensions kept; extendedAgentCard is supportsAuthenticatedExtendedCard", () => {
    expect(out.capabilities).toEqual({ streaming: true, pushNotifications: true, extensions: [{ uri: "urn:x", required: false }] });
    expect(out.supportsAuthenticatedExtendedCard).toBe(true);
  });
  it("securityRequirements are 0.3's security, on the card and on skills", () => {
    expect(out.security).toEqual([{ bearer: [] }]);
    expect(out.skills).toEqual([{ id: "s", name: "S", description: "d", tags: ["t"], security: [{ bearer: ["read"] }] }]);
    expect(cardTo03(card, "proto").security).toEqual(card.securityRequirements);
  });
  it("securitySchemes are OpenAPI-style on JSON-RPC and as they were in the proto dialect", () => {
    expect(out.securitySchemes).toEqual({
      bearer: { type: "http", scheme: "Bearer", bearerFormat: "JWT" },
      key: { type: "apiKey", in: "header", name: "X-Key", description: "k" },
      oauth: { type: "oauth2", flows: { clientCredentials: { tokenUrl: "https://t", scopes: { a: "b" } } }, oauth2MetadataUrl: "https://m" },
      oidc: { type: "openIdConnect", openIdConnectUrl: "https://oidc" },
      mtls: { type: "mutualTLS", description: "m" },
    });
    expect(cardTo03(card, "proto").securitySchemes).toEqual(card.securitySchemes);
  });
  it("a scheme named __proto__ stays a scheme, in the map and in security requirements", () => {
    const named = JSON.parse('{"securitySchemes":{"__proto__":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}},"securityRequirements":[{"schemes":{"__proto__":{"list":["r"]}}}]}') as JsonObject;
    const translated = cardTo03(named, "jsonrpc");
    expect(Object.keys(translated.securitySchemes as JsonObject)).toEqual(["__proto__"]);
    expect(Object.getOwnPropertyDescriptor(translated.securitySchemes, "__proto__")?.value).toEqual({ type: "http", scheme: "Bearer" });
    expect(Object.getOwnPropertyDescriptor((translated.security as JsonObject[])[0], "__proto__")?.value).toEqual(["r"]);
  });
  it("the proto dialect's card is the v0.3.0 proto's AgentCard (which has no iconUrl)", () => {
    valid03(v03.AgentCardSchema, cardTo03(card, "proto"));
    expect(cardTo03(card, "proto")).not.toHaveProperty("iconUrl");
  });
});
