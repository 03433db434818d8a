/**
 * The HTTP+JSON endpoint for A2A 0.3 callers as well (D110): 0.3's routes
 * (the v0.3.0 proto's, under `/v1` below the same base path) are read into
 * the 0.3 method and params of v03-methods.ts, sent to the same 1.0 endpoint
 * on the 1.0 route, and the answer translated back to the v0.3 proto's
 * ProtoJSON. Errors become `{code, message, data}` with the A2A JSON-RPC
 * code, the form 0.3 clients read (0.3 left the REST error body unspecified).
 * A 1.0 call passes through untouched.
 */
import { fromJson, toJson, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { SendMessageRequestSchema as SendMessageRequestSchema03 } from "../../gen/a2a/v0_3/a2a_pb.js";
import { BodyRefusedError, decodeUtf8, isJsonMediaType, type CoreResponse, type Endpoint } from "../../core/transport.js";
import { parsePathTemplate } from "../../core/http/path-template.js";
import { createRequestEncoder, jsonNamesOf, type HttpRequestParts, type RequestEncoder } from "../../core/http/request-encoding.js";
import { createRouter, type RouteInput } from "../../core/http/router.js";
import type { HttpRuleSpec, MethodSpec } from "../../core/method-spec.js";
import { A2AErrorTable } from "../errors.js";
import { noV03Counterpart, v03Methods, type V03Method } from "./v03-methods.js";
import { bytesBody, failedBody, isV03Request, jsonBytes, jsonResponse, mapEvents, translatedRequest, translationFailure } from "./v03-request.js";
import { obj, type Obj } from "./v03-shapes.js";

export interface V03HttpJsonOptions {
  /** The base path the 1.0 routes are under (`/a2a/rest`); 0.3's are under `<basePath>/v1`. */
  readonly basePath: string;
  /** The 1.0 service's method table and HTTP rules (the generated ones). */
  readonly methods: Readonly<Record<string, MethodSpec>>;
  readonly rules: readonly HttpRuleSpec[];
  readonly bodyLimit: number;
  readonly bodyTimeoutMs: number;
}

/** A 0.3 route: the 0.3 method, and its params from the path's values, the query and the body. */
interface Route03 {
  readonly name: string;
  readonly params: (values: readonly string[], query: URLSearchParams, body: Obj) => Obj;
  readonly hasBody: boolean;
  /**
   * The v0.3 proto message the body is: read as ProtoJSON reads it (proto field names and
   * json_names, `request` and `message`, `message_id` and `messageId`) and written back in its
   * canonical form before it is translated, which picks the json_names only. A body that is not
   * that message's ProtoJSON is translated as it came.
   */
  readonly body?: DescMessage;
}

const getTask: Route03 = {
  name: "tasks/get",
  params: ([id], query) => {
    const historyLength = query.get("historyLength") ?? query.get("history_length");
    return { id: id!, ...(historyLength === null ? {} : { historyLength: Number(historyLength) }) };
  },
  hasBody: false,
};

/**
 * 0.3's routes below `/v1`, as 0.3's clients send them: the v0.3.0 proto's
 * `google.api.http` paths with plain ids where its rules bind AIP resource
 * names (`{name=tasks/*}`), so the proto's rules alone would refuse them
 * (D110). Each is under `tasks/` and under `task/`, the proto's own typo.
 * Matched by the core's router: its verbs, percent-decoding and precedence
 * are the 1.0 routes' own.
 */
type Row03 = readonly [httpMethod: string, path: string, route: Route03 | "ListTasks"];

const routes03: readonly Row03[] = [
  ["POST", "/message:send", { name: "message/send", params: (_v, _q, b) => b, hasBody: true, body: SendMessageRequestSchema03 }],
  ["POST", "/message:stream", { name: "message/stream", params: (_v, _q, b) => b, hasBody: true, body: SendMessageRequestSchema03 }],
  ["GET", "/card", { name: "agent/getAuthenticatedExtendedCard", params: () => ({}), hasBody: false }],
  ...["tasks", "task"].flatMap((tasks): Row03[] => {
    const resubscribe: Route03 = { name: "tasks/resubscribe", params: ([id]) => ({ id: id! }), hasBody: false };
    const configs = `/${tasks}/{id}/pushNotificationConfigs`;
    return [
      ["GET", `/${tasks}`, "ListTasks"],
      ["GET", `/${tasks}/{id}`, getTask],
      ["POST", `/${tasks}/{id}:cancel`, { name: "tasks/cancel", params: ([id], _q, b) => ({ ...b, id: id! }), hasBody: true }],
      ["GET", `/${tasks}/{id}:subscribe`, resubscribe],
      ["POST", `/${tasks}/{id}:subscribe`, resubscribe],
      ["GET", configs, { name: "tasks/pushNotificationConfig/list", params: ([id]) => ({ id: id! }), hasBody: false }],
      // The body is the TaskPushNotificationConfig (`body: "config"`), its config under pushNotificationConfig.
      [
        "POST",
        configs,
        {
          name: "tasks/pushNotificationConfig/set",
          params: ([taskId], _q, b) => ({ taskId: taskId!, pushNotificationConfig: (b.pushNotificationConfig ?? obj(b.config).pushNotificationConfig ?? b) as JsonValue }),
          hasBody: true,
        },
      ],
      ["GET", `${configs}/{cfg}`, { name: "tasks/pushNotificationConfig/get", params: ([id, cfg]) => ({ id: id!, pushNotificationConfigId: cfg! }), hasBody: false }],
      ["DELETE", `${configs}/{cfg}`, { name: "tasks/pushNotificationConfig/delete", params: ([id, cfg]) => ({ id: id!, pushNotificationConfigId: cfg! }), hasBody: false }],
    ];
  }),
];

// 0.3's paths were split on "/" as they came: a trailing slash is an empty last value (a 0.3
// client asking for config "" sends `…/pushNotificationConfigs/`), not the list it would be for 1.0.
const router03 = createRouter<Route03 | "ListTasks">(
  routes03.map(([httpMethod, path, target]): RouteInput<Route03 | "ListTasks"> => ({ httpMethod, template: parsePathTemplate(path), target })),
  undefined,
  { trailingSlash: "empty-value" },
);

/**
 * The 1.0 route that serves a translated request, made from a2a.proto's own
 * HTTP rules by the encoder the generated client uses (the inverse of the
 * server's transcoding): path, query and body.
 */
function createRoutes10(methods: Readonly<Record<string, MethodSpec>>, rules: readonly HttpRuleSpec[]): (v1: string, request: JsonObject) => HttpRequestParts {
  const encoders = new Map<string, RequestEncoder>();
  for (const spec of Object.values(methods)) {
    const own = rules.filter((r) => r.method === spec.localName);
    if (own.length > 0) encoders.set(spec.name, createRequestEncoder(spec.name, own, (field) => jsonNamesOf(spec.input, field)));
  }
  return (v1, request) => {
    const encoder = encoders.get(v1);
    if (encoder === undefined) throw new Error(`${v1} has no HTTP rule in this service`);
    return encoder.encode(request);
  };
}

export function createV03HttpJsonEndpoint(inner: Endpoint, options: V03HttpJsonOptions): Endpoint {
  const base = `${options.basePath}/v1`;
  const route10 = createRoutes10(options.methods, options.rules);
  return {
    report: (err, url) => inner.report?.(err, url),
    async handle(req) {
      if (!isV03Request(req)) return inner.handle(req);
      const report = (err: unknown) => inner.report?.(err, req.url);
      const [fullPath = "/", queryText = ""] = req.url.split("?");
      if (fullPath !== base && !fullPath.startsWith(`${base}/`)) {
        return error03(404, -32601, `no A2A 0.3 route for ${req.method} ${fullPath}: 0.3's routes are under ${base}, and a request without A2A-Version is A2A 0.3 (spec 3.6.2); send A2A-Version: 1.0 for the 1.0 routes`);
      }
      const found = router03.match(req.method, fullPath.slice(base.length));
      if (found.kind === "bad_path") return error03(400, -32602, `the path ${fullPath} is not valid percent-encoding: ${found.reason}`);
      if (found.kind !== "found") return error03(404, -32601, `no A2A 0.3 route for ${req.method} ${fullPath}`);
      const route = found.route.target;
      if (route === "ListTasks") return error03(404, -32601, noV03Counterpart.ListTasks!);
      let body: Obj = {};
      // A body that is not JSON (D9): the 1.0 endpoint gets it as it came, and refuses it (415) as it
      // refuses its own; the translated call is sent as JSON, so a text/plain POST (a browser's
      // cross-origin "simple request") would run. An empty one is no fields, as for 1.0.
      let notJson: Uint8Array | undefined;
      if (route.hasBody) {
        let bytes: Uint8Array;
        try {
          bytes = await req.body(options.bodyLimit, options.bodyTimeoutMs);
        } catch (err) {
          if (!(err instanceof BodyRefusedError)) throw err;
          return answerTo03(await inner.handle(translatedRequest(req, `${options.basePath}/message:send`, failedBody(err))), undefined, report);
        }
        const text = decodeUtf8(bytes) ?? "\0";
        if (text.trim() !== "" && !isJsonMediaType(req.header("content-type"))) notJson = bytes;
        else {
          try {
            body = text.trim() === "" ? {} : obj(JSON.parse(text));
          } catch {
            return error03(400, -32700, "the request body is not valid JSON");
          }
          if (route.body !== undefined && text.trim() !== "") {
            try {
              body = obj(toJson(route.body, fromJson(route.body, body as JsonValue, { ignoreUnknownFields: true })));
            } catch {
              // Not the proto's ProtoJSON (a role written "user", as 0.3's JSON-RPC has it): read as it
              // came, by the translation's own leniency, which answers what it cannot take.
            }
          }
        }
      }
      const method = v03Methods[route.name]!;
      let target: HttpRequestParts;
      let bodyBytes: Uint8Array;
      try {
        target = route10(method.v1, method.request(route.params(found.values, new URLSearchParams(queryText), body)));
        bodyBytes = jsonBytes(target.body ?? {});
      } catch (err) {
        // A request 1.0's routes cannot carry (an empty task id, say), or one the translation
        // cannot take (nested past the stack): the caller's mistake, not ours.
        return error03(400, -32602, translationFailure(err));
      }
      const call =
        notJson === undefined
          ? translatedRequest(req, `${options.basePath}${target.path}`, bytesBody(bodyBytes), { method: target.method, json: true })
          : translatedRequest(req, `${options.basePath}${target.path}`, bytesBody(notJson), { method: target.method });
      return answerTo03(await inner.handle(call), method, report);
    },
  };
}

function error03(status: number, code: number, message: string, data?: JsonValue): CoreResponse {
  return jsonResponse(status, { code, message, ...(data === undefined ? {} : { data }) });
}

/** The ErrorInfo reasons of A2A's table, each to its JSON-RPC code: what a 0.3 REST error body carries. */
const codeByReason = new Map<string, number>(Object.values(A2AErrorTable).map((e) => [e.reason, e.jsonRpcCode]));
const codeByStatus: Readonly<Record<string, number>> = { INVALID_ARGUMENT: -32602, NOT_FOUND: -32601, UNIMPLEMENTED: -32601, UNAUTHENTICATED: -31401, PERMISSION_DENIED: -31403 };

/** An AIP-193 error body as 0.3's `{code, message, data}`: the code from the ErrorInfo reason, the details as data. */
export function errorBodyTo03(body: Obj): JsonObject {
  const e = obj(body.error);
  const details = Array.isArray(e.details) ? e.details : [];
  const reason = details.map(obj).find((d) => typeof d.reason === "string")?.reason;
  const code = (typeof reason === "string" ? codeByReason.get(reason) : undefined) ?? codeByStatus[String(e.status)] ?? -32603;
  return { code, message: typeof e.message === "string" ? e.message : "", ...(details.length > 0 ? { data: details } : {}) };
}

/** The 1.0 answer in 0.3's shapes; a stream event that does not translate is told to `report`. */
function answerTo03(answer: CoreResponse, method: V03Method | undefined, report: (err: unknown) => void): CoreResponse {
  const translate = (text: string, ok: boolean): string => {
    const value = obj(JSON.parse(text));
    return JSON.stringify(ok && method !== undefined ? method.result(value, "proto") : errorBodyTo03(value));
  };
  if (answer.kind === "body") return { ...answer, headers: { ...answer.headers, "content-type": "application/json" }, body: translate(answer.body, answer.status < 300) };
  if (answer.kind === "stream") return { ...answer, events: mapEvents(answer.events, (data, event) => ({ data: translate(data, event !== "error"), event }), report) };
  return answer;
}
