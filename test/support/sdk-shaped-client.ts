/**
 * The generated client behind the @a2a-js/sdk Client methods that the
 * equivalence scenarios call (test/equivalence), so one scenario list runs
 * with either client kind and its outcomes are normalized and checked the
 * same way.
 *
 * The adapter converts only shapes, and only through ProtoJSON: a request
 * in the SDK's shape is written with the SDK's own `toJSON` and read with
 * protobuf-es's `fromJson` into the generated type; an answer of the
 * generated client is written with `toJson` and read with the SDK's
 * `fromJSON` (what the SDK's REST transport does with a response body).
 * What goes over the wire, and every error, is the generated client's: an
 * error is passed on as the generated client threw it.
 */
import { fromJson, toJson, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import {
  AgentCard as SdkAgentCard,
  CancelTaskRequest as SdkCancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest as SdkDeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest as SdkGetTaskPushNotificationConfigRequest,
  GetTaskRequest as SdkGetTaskRequest,
  ListTaskPushNotificationConfigsRequest as SdkListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse as SdkListTaskPushNotificationConfigsResponse,
  ListTasksRequest as SdkListTasksRequest,
  ListTasksResponse as SdkListTasksResponse,
  SendMessageRequest as SdkSendMessageRequest,
  SendMessageResponse as SdkSendMessageResponse,
  StreamResponse as SdkStreamResponse,
  SubscribeToTaskRequest as SdkSubscribeToTaskRequest,
  Task as SdkTask,
  TaskPushNotificationConfig as SdkTaskPushNotificationConfig,
  type Message as SdkMessage,
} from "@a2a-js/sdk";
import type { Client, RequestOptions } from "@a2a-js/sdk/client";
import type { ClientCallOptions } from "protoc-gen-a2a/runtime/internal";
import type { A2AServiceClient } from "../../generated/a2a_client.js";
import {
  AgentCardSchema,
  CancelTaskRequestSchema,
  DeleteTaskPushNotificationConfigRequestSchema,
  GetTaskPushNotificationConfigRequestSchema,
  GetTaskRequestSchema,
  ListTaskPushNotificationConfigsRequestSchema,
  ListTaskPushNotificationConfigsResponseSchema,
  ListTasksRequestSchema,
  ListTasksResponseSchema,
  SendMessageRequestSchema,
  SendMessageResponseSchema,
  StreamResponseSchema,
  SubscribeToTaskRequestSchema,
  TaskPushNotificationConfigSchema,
  TaskSchema,
} from "../../generated/a2a_pb.js";

/** The SDK Client's methods the scenarios call. */
export type ScenarioClient = Pick<
  Client,
  | "sendMessage"
  | "sendMessageStream"
  | "getTask"
  | "listTasks"
  | "cancelTask"
  | "resubscribeTask"
  | "createTaskPushNotificationConfig"
  | "getTaskPushNotificationConfig"
  | "listTaskPushNotificationConfig"
  | "deleteTaskPushNotificationConfig"
  | "getAgentCard"
>;

/** An SDK message's `toJSON` / `fromJSON` (its ts-proto codec). */
interface SdkCodec<T> {
  toJSON(message: T): unknown;
  fromJSON(json: unknown): T;
}

/** An SDK request as the generated type: SDK toJSON, then protobuf-es fromJson. */
const request = <T, D extends DescMessage>(sdk: SdkCodec<T>, desc: D, value: T): MessageShape<D> => fromJson(desc, sdk.toJSON(value) as JsonValue);

/** A generated answer in the SDK's shape: protobuf-es toJson, then SDK fromJSON. */
const answer = <T, D extends DescMessage>(desc: D, sdk: SdkCodec<T>, value: MessageShape<D>): T => sdk.fromJSON(toJson(desc, value));

/** The SDK's per-call options as the generated client's: its service parameters are headers. */
const callOptions = (options: RequestOptions | undefined): ClientCallOptions => ({ signal: options?.signal, headers: options?.serviceParameters });

/** `client`, called as the scenarios call an SDK Client. */
export function sdkShaped(client: A2AServiceClient): ScenarioClient {
  return {
    async sendMessage(params, options) {
      const sent = await client.sendMessage(request(SdkSendMessageRequest, SendMessageRequestSchema, params), callOptions(options));
      const result = answer(SendMessageResponseSchema, SdkSendMessageResponse, sent).payload;
      if (result === undefined) throw new Error("the agent answered SendMessage with neither a task nor a message");
      return result.value as SdkMessage | SdkTask;
    },
    async *sendMessageStream(params, options) {
      for await (const event of client.sendStreamingMessage(request(SdkSendMessageRequest, SendMessageRequestSchema, params), callOptions(options))) {
        yield answer(StreamResponseSchema, SdkStreamResponse, event);
      }
    },
    async *resubscribeTask(params, options) {
      for await (const event of client.subscribeToTask(request(SdkSubscribeToTaskRequest, SubscribeToTaskRequestSchema, params), callOptions(options))) {
        yield answer(StreamResponseSchema, SdkStreamResponse, event);
      }
    },
    getTask: async (params, options) => answer(TaskSchema, SdkTask, await client.getTask(request(SdkGetTaskRequest, GetTaskRequestSchema, params), callOptions(options))),
    cancelTask: async (params, options) => answer(TaskSchema, SdkTask, await client.cancelTask(request(SdkCancelTaskRequest, CancelTaskRequestSchema, params), callOptions(options))),
    listTasks: async (params, options) =>
      answer(ListTasksResponseSchema, SdkListTasksResponse, await client.listTasks(request(SdkListTasksRequest, ListTasksRequestSchema, params), callOptions(options))),
    createTaskPushNotificationConfig: async (params, options) =>
      answer(
        TaskPushNotificationConfigSchema,
        SdkTaskPushNotificationConfig,
        await client.createTaskPushNotificationConfig(request(SdkTaskPushNotificationConfig, TaskPushNotificationConfigSchema, params), callOptions(options)),
      ),
    getTaskPushNotificationConfig: async (params, options) =>
      answer(
        TaskPushNotificationConfigSchema,
        SdkTaskPushNotificationConfig,
        await client.getTaskPushNotificationConfig(
          request(SdkGetTaskPushNotificationConfigRequest, GetTaskPushNotificationConfigRequestSchema, params),
          callOptions(options),
        ),
      ),
    listTaskPushNotificationConfig: async (params, options) =>
      answer(
        ListTaskPushNotificationConfigsResponseSchema,
        SdkListTaskPushNotificationConfigsResponse,
        await client.listTaskPushNotificationConfigs(
          request(SdkListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsRequestSchema, params),
          callOptions(options),
        ),
      ),
    async deleteTaskPushNotificationConfig(params, options) {
      await client.deleteTaskPushNotificationConfig(
        request(SdkDeleteTaskPushNotificationConfigRequest, DeleteTaskPushNotificationConfigRequestSchema, params),
        callOptions(options),
      );
    },
    // The SDK's getAgentCard asks for the extended card when the card promises one, as every card the scenarios use does.
    getAgentCard: async (options) => answer(AgentCardSchema, SdkAgentCard, await client.getExtendedAgentCard({}, callOptions(options))),
  };
}
