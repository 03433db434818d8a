/**
 * D11 both ways, driven by the generated RequiredFieldTable: which REQUIRED
 * fields an input lacks (for InvalidParams + BadRequest), and ProtoJSON
 * output that keeps REQUIRED fields at their default (ListTasksResponse).
 */
import { create } from "@bufbuild/protobuf";
import {
  DescriptorProtoSchema,
  FieldDescriptorProtoSchema,
  FileOptionsSchema,
  UninterpretedOptionSchema,
} from "@bufbuild/protobuf/wkt";
import {
  AgentCardSchema,
  ListTasksResponseSchema,
  MessageSchema,
  PartSchema,
  Role,
  SendMessageRequestSchema,
  SendMessageResponseSchema,
  StreamResponseSchema,
  TaskSchema,
  TaskState,
} from "../../generated/a2a_pb.js";
import { A2AServiceRequiredFields as table } from "../../generated/a2a_methods.js";
import type { RequiredFieldTable } from "../../runtime/core/method-spec.js";
import { findMissingRequired, requiredFieldDescription, toJsonWithRequired } from "../../runtime/core/codec/required-fields.js";

/** Violations for these paths, in this order. */
const missing = (...fields: string[]) => fields.map((field) => ({ field, description: requiredFieldDescription }));

const validMessage = { messageId: "m-1", role: Role.USER, parts: [{ content: { case: "text" as const, value: "hi" } }] };

// The generated table stops at Part (it has no REQUIRED fields); this one
// also requires Part.text so oneof members and list paths can be exercised.
const partTable: RequiredFieldTable = {
  ...table,
  "lf.a2a.v1.Message": { required: ["messageId", "role", "parts"], nested: ["parts"] },
  "lf.a2a.v1.Part": { required: ["text"], nested: [] },
};

// google.protobuf.DescriptorProto nests itself: a recursive type without
// special JSON, and proto2, so its fields have explicit presence.
const descriptorTable: RequiredFieldTable = {
  "google.protobuf.DescriptorProto": { required: ["name"], nested: ["field", "nestedType"] },
  "google.protobuf.FieldDescriptorProto": { required: ["name", "number", "type"], nested: [] },
};

describe("findMissingRequired", () => {
  test("SendMessageRequest without message", () => {
    expect(findMissingRequired(SendMessageRequestSchema, create(SendMessageRequestSchema), table)).toStrictEqual(
      missing("message"),
    );
  });

  test("a message missing messageId, role and parts: '', enum 0 and [] count as missing", () => {
    const req = create(SendMessageRequestSchema, { message: { messageId: "", role: Role.UNSPECIFIED, parts: [] } });
    expect(findMissingRequired(SendMessageRequestSchema, req, table)).toStrictEqual(
      missing("message.messageId", "message.role", "message.parts"),
    );
  });

  test("a complete request has no violations", () => {
    const req = create(SendMessageRequestSchema, { message: validMessage });
    expect(findMissingRequired(SendMessageRequestSchema, req, table)).toStrictEqual([]);
  });

  test("a walk that threw half-way (a malformed value) leaves later walks their own paths and answers", () => {
    // A Part without its oneof object: isFieldSet throws deep in the walk, with a path and ancestors pushed.
    const broken = create(SendMessageRequestSchema, { message: validMessage });
    (broken.message?.parts[0] as unknown as Record<string, unknown>).content = undefined;
    expect(() => findMissingRequired(SendMessageRequestSchema, broken, partTable)).toThrow(TypeError);
    const req = create(SendMessageRequestSchema, { message: { ...validMessage, messageId: "", parts: [{ content: { case: "raw", value: new Uint8Array([1]) } }] } });
    const first = findMissingRequired(SendMessageRequestSchema, req, partTable);
    expect(first).toStrictEqual(missing("message.messageId", "message.parts[0].text"));
    // Each call answers its own array: the walk kept between calls does not hand out its state.
    expect(findMissingRequired(SendMessageRequestSchema, create(SendMessageRequestSchema, { message: validMessage }), partTable)).toStrictEqual([]);
    expect(first).toStrictEqual(missing("message.messageId", "message.parts[0].text"));
  });

  test("part list: element paths, and a oneof member is set only when its case is selected", () => {
    const msg = create(MessageSchema, {
      messageId: "m-1",
      role: Role.AGENT,
      parts: [
        { content: { case: "text", value: "ok" } },
        { content: { case: "raw", value: new Uint8Array([1]) } },
        { content: { case: "text", value: "" } },
        {},
      ],
    });
    // A selected member has explicit presence: text "" (parts[2]) is set.
    expect(findMissingRequired(MessageSchema, msg, partTable)).toStrictEqual(missing("parts[1].text", "parts[3].text"));
    const req = create(SendMessageRequestSchema, { message: msg });
    expect(findMissingRequired(SendMessageRequestSchema, req, partTable)).toStrictEqual(
      missing("message.parts[1].text", "message.parts[3].text"),
    );
  });

  test("Task: declaration order, depth first, through status, artifacts and history", () => {
    const task = create(TaskSchema, {
      id: "",
      status: {},
      artifacts: [{ artifactId: "a-1", parts: [{ content: { case: "text", value: "x" } }] }, {}],
      history: [{ messageId: "m-1", parts: [{ content: { case: "text", value: "x" } }] }],
    });
    expect(findMissingRequired(TaskSchema, task, table)).toStrictEqual(
      missing("id", "status.state", "artifacts[1].artifactId", "artifacts[1].parts", "history[0].role"),
    );
  });

  test("Task with status missing state, and the status message descended into", () => {
    const task = create(TaskSchema, { id: "t-1", status: { message: { messageId: "m-1" } } });
    expect(findMissingRequired(TaskSchema, task, table)).toStrictEqual(
      missing("status.state", "status.message.role", "status.message.parts"),
    );
    const complete = create(TaskSchema, { id: "t-1", status: { state: TaskState.WORKING } });
    expect(findMissingRequired(TaskSchema, complete, table)).toStrictEqual([]);
  });

  test("TaskPushNotificationConfig nested in configuration, and its authentication", () => {
    const req = create(SendMessageRequestSchema, {
      message: validMessage,
      configuration: { taskPushNotificationConfig: { token: "tok", authentication: {} } },
    });
    expect(findMissingRequired(SendMessageRequestSchema, req, table)).toStrictEqual(
      missing(
        "configuration.taskPushNotificationConfig.url",
        "configuration.taskPushNotificationConfig.authentication.scheme",
      ),
    );
  });

  test("unset nested messages are not descended into", () => {
    const req = create(SendMessageRequestSchema, { message: validMessage, configuration: {} });
    expect(findMissingRequired(SendMessageRequestSchema, req, table)).toStrictEqual([]);
  });

  test("oneof payloads are reached through their selected case only", () => {
    const stream = create(StreamResponseSchema, { payload: { case: "statusUpdate", value: { taskId: "t-1" } } });
    expect(findMissingRequired(StreamResponseSchema, stream, table)).toStrictEqual(
      missing("statusUpdate.contextId", "statusUpdate.status"),
    );
    const response = create(SendMessageResponseSchema, { payload: { case: "task", value: { id: "t-1" } } });
    expect(findMissingRequired(SendMessageResponseSchema, response, table)).toStrictEqual(missing("task.status"));
    // No case selected: nothing to check (the payload is not REQUIRED).
    expect(findMissingRequired(StreamResponseSchema, create(StreamResponseSchema), table)).toStrictEqual([]);
  });

  test("AgentCard: map values get a quoted key in the path, in declaration order", () => {
    const card = create(AgentCardSchema, {
      name: "agent",
      securitySchemes: {
        "api key": { scheme: { case: "apiKeySecurityScheme", value: { name: "X-Key" } } },
        oauth: {
          scheme: {
            case: "oauth2SecurityScheme",
            value: { flows: { flow: { case: "clientCredentials", value: { tokenUrl: "https://t" } } } },
          },
        },
        'say "hi"': { scheme: { case: "oauth2SecurityScheme", value: {} } },
      },
    });
    expect(findMissingRequired(AgentCardSchema, card, table)).toStrictEqual(
      missing(
        "description",
        "supportedInterfaces",
        "version",
        "capabilities",
        'securitySchemes["api key"].apiKeySecurityScheme.location',
        'securitySchemes["oauth"].oauth2SecurityScheme.flows.clientCredentials.scopes',
        'securitySchemes["say \\"hi\\""].oauth2SecurityScheme.flows',
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
      ),
    );
  });

  test("a message type outside the table has nothing to check", () => {
    expect(findMissingRequired(PartSchema, create(PartSchema), table)).toStrictEqual([]);
  });

  test("explicit presence: a set empty string is set", () => {
    const unset = create(DescriptorProtoSchema);
    expect(findMissingRequired(DescriptorProtoSchema, unset, descriptorTable)).toStrictEqual(missing("name"));
    const empty = create(DescriptorProtoSchema, { name: "" });
    expect(findMissingRequired(DescriptorProtoSchema, empty, descriptorTable)).toStrictEqual([]);
  });

  test("recursive types end where the data ends", () => {
    const desc = create(DescriptorProtoSchema, {
      name: "A",
      nestedType: [{ nestedType: [{ name: "C", field: [{ name: "f" }] }, {}] }],
    });
    expect(findMissingRequired(DescriptorProtoSchema, desc, descriptorTable)).toStrictEqual(
      missing(
        "nestedType[0].name",
        "nestedType[0].nestedType[0].field[0].number",
        "nestedType[0].nestedType[0].field[0].type",
        "nestedType[0].nestedType[1].name",
      ),
    );
  });

  test("a cyclic object graph is cut at the repeat", () => {
    const desc = create(DescriptorProtoSchema);
    desc.nestedType.push(desc);
    expect(findMissingRequired(DescriptorProtoSchema, desc, descriptorTable)).toStrictEqual(missing("name"));
  });

  test("a message of another type than the schema is refused", () => {
    const wrong = create(MessageSchema);
    const expected = "expected a message of type lf.a2a.v1.Task, got lf.a2a.v1.Message";
    expect(() => findMissingRequired(TaskSchema, wrong, table)).toThrow(expected);
    expect(() => toJsonWithRequired(TaskSchema, wrong, table)).toThrow(expected);
  });
});

describe("toJsonWithRequired", () => {
  test("empty ListTasksResponse keeps every REQUIRED field (Part B 15 #17, #18)", () => {
    const json = toJsonWithRequired(ListTasksResponseSchema, create(ListTasksResponseSchema), table);
    expect(json).toStrictEqual({ tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 });
  });

  test("last page: tasks descended into, optional and non-REQUIRED fields left as ProtoJSON writes them", () => {
    const res = create(ListTasksResponseSchema, {
      tasks: [
        { id: "t-1", status: { state: TaskState.UNSPECIFIED } },
        { id: "t-2", contextId: "c-1", status: { state: TaskState.COMPLETED }, artifacts: [{ parts: [] }] },
        {},
      ],
      pageSize: 50,
      totalSize: 3,
    });
    expect(toJsonWithRequired(ListTasksResponseSchema, res, table)).toStrictEqual({
      tasks: [
        { id: "t-1", status: { state: "TASK_STATE_UNSPECIFIED" } },
        // contextId is not REQUIRED; artifacts are descended into.
        { id: "t-2", contextId: "c-1", status: { state: "TASK_STATE_COMPLETED" }, artifacts: [{ artifactId: "", parts: [] }] },
        // A REQUIRED message (status) that is unset stays absent.
        { id: "" },
      ],
      nextPageToken: "",
      pageSize: 50,
      totalSize: 3,
    });
  });

  test("JSON write options are honoured", () => {
    const res = create(ListTasksResponseSchema, { tasks: [{ status: {} }] });
    expect(toJsonWithRequired(ListTasksResponseSchema, res, table, { useProtoFieldName: true })).toStrictEqual({
      tasks: [{ id: "", status: { state: "TASK_STATE_UNSPECIFIED" } }],
      next_page_token: "",
      page_size: 0,
      total_size: 0,
    });
    expect(toJsonWithRequired(ListTasksResponseSchema, res, table, { enumAsInteger: true })).toStrictEqual({
      tasks: [{ id: "", status: { state: 0 } }],
      nextPageToken: "",
      pageSize: 0,
      totalSize: 0,
    });
  });

  test("explicit presence is kept exactly: historyLength 0 stays, unset stays absent", () => {
    const withZero = create(SendMessageRequestSchema, {
      message: { messageId: "m-1", role: Role.USER },
      configuration: { historyLength: 0 },
    });
    expect(toJsonWithRequired(SendMessageRequestSchema, withZero, table)).toStrictEqual({
      message: { messageId: "m-1", role: "ROLE_USER", parts: [] },
      configuration: { historyLength: 0 },
    });
    const unset = create(SendMessageRequestSchema, { message: validMessage, configuration: {} });
    expect(toJsonWithRequired(SendMessageRequestSchema, unset, table)).toStrictEqual({
      message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hi" }] },
      configuration: {},
    });
  });

  test("a missing REQUIRED message stays absent", () => {
    expect(toJsonWithRequired(SendMessageRequestSchema, create(SendMessageRequestSchema), table)).toStrictEqual({});
  });

  test("TaskPushNotificationConfig in configuration", () => {
    const req = create(SendMessageRequestSchema, {
      message: validMessage,
      configuration: { taskPushNotificationConfig: { id: "cfg-1", authentication: {} } },
    });
    expect(toJsonWithRequired(SendMessageRequestSchema, req, table)).toStrictEqual({
      message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hi" }] },
      configuration: { taskPushNotificationConfig: { id: "cfg-1", url: "", authentication: { scheme: "" } } },
    });
  });

  test("oneof: the selected member is descended into; REQUIRED members of other cases are never added", () => {
    const stream = create(StreamResponseSchema, { payload: { case: "statusUpdate", value: {} } });
    expect(toJsonWithRequired(StreamResponseSchema, stream, table)).toStrictEqual({
      statusUpdate: { taskId: "", contextId: "" },
    });
    const msg = create(MessageSchema, {
      messageId: "m-1",
      role: Role.USER,
      parts: [{ content: { case: "raw", value: new Uint8Array([1, 2]) } }, {}, { content: { case: "text", value: "" } }],
    });
    expect(toJsonWithRequired(MessageSchema, msg, partTable)).toStrictEqual({
      messageId: "m-1",
      role: "ROLE_USER",
      parts: [{ raw: "AQI=" }, {}, { text: "" }],
    });
  });

  test("AgentCard: map values descended into, required maps and lists default to {} and []", () => {
    const card = create(AgentCardSchema, {
      securitySchemes: {
        key: { scheme: { case: "apiKeySecurityScheme", value: {} } },
        oauth: {
          scheme: {
            case: "oauth2SecurityScheme",
            value: { flows: { flow: { case: "authorizationCode", value: { tokenUrl: "https://t" } } } },
          },
        },
      },
      capabilities: {},
    });
    expect(toJsonWithRequired(AgentCardSchema, card, table)).toStrictEqual({
      name: "",
      description: "",
      supportedInterfaces: [],
      version: "",
      capabilities: {},
      securitySchemes: {
        key: { apiKeySecurityScheme: { location: "", name: "" } },
        oauth: {
          oauth2SecurityScheme: { flows: { authorizationCode: { authorizationUrl: "", tokenUrl: "https://t", scopes: {} } } },
        },
      },
      defaultInputModes: [],
      defaultOutputModes: [],
      skills: [],
    });
  });

  test("well-known types with their own JSON form are left alone", () => {
    const structTable: RequiredFieldTable = {
      ...table,
      "lf.a2a.v1.Task": { required: ["id", "status"], nested: ["metadata"] },
      "google.protobuf.Struct": { required: ["fields"], nested: [] },
    };
    const task = create(TaskSchema, { id: "t-1", status: { state: TaskState.WORKING }, metadata: { a: 1 } });
    expect(toJsonWithRequired(TaskSchema, task, structTable)).toStrictEqual({
      id: "t-1",
      status: { state: "TASK_STATE_WORKING" },
      metadata: { a: 1 },
    });
  });

  test("a type outside the table is plain ProtoJSON", () => {
    expect(toJsonWithRequired(PartSchema, create(PartSchema, { filename: "" }), table)).toStrictEqual({});
  });

  test("recursive types", () => {
    const desc = create(DescriptorProtoSchema, { nestedType: [{ nestedType: [{ name: "C" }] }] });
    expect(toJsonWithRequired(DescriptorProtoSchema, desc, descriptorTable)).toStrictEqual({
      name: "",
      nestedType: [{ name: "", nestedType: [{ name: "C" }] }],
    });
  });

  test("proto2 defaults: closed enum without 0, declared defaults, 64-bit integers and bytes", () => {
    const field = create(FieldDescriptorProtoSchema);
    expect(toJsonWithRequired(FieldDescriptorProtoSchema, field, descriptorTable)).toStrictEqual({
      name: "",
      number: 0,
      type: "TYPE_DOUBLE",
    });
    const optionsTable: RequiredFieldTable = {
      "google.protobuf.FileOptions": { required: ["javaPackage", "optimizeFor", "ccEnableArenas"], nested: [] },
      "google.protobuf.UninterpretedOption": {
        required: ["name", "identifierValue", "positiveIntValue", "negativeIntValue", "doubleValue", "stringValue"],
        nested: [],
      },
    };
    expect(toJsonWithRequired(FileOptionsSchema, create(FileOptionsSchema), optionsTable)).toStrictEqual({
      javaPackage: "",
      optimizeFor: "SPEED",
      ccEnableArenas: true,
    });
    expect(
      toJsonWithRequired(UninterpretedOptionSchema, create(UninterpretedOptionSchema), optionsTable),
    ).toStrictEqual({
      name: [],
      identifierValue: "",
      positiveIntValue: "0",
      negativeIntValue: "0",
      doubleValue: 0,
      stringValue: "",
    });
  });

  test("the message itself is not changed", () => {
    const res = create(ListTasksResponseSchema);
    toJsonWithRequired(ListTasksResponseSchema, res, table);
    expect(res).toStrictEqual(create(ListTasksResponseSchema));
  });
});
