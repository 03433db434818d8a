/**
 * The SQL store's background work runs in a context of its own (D35, D74), on a Postgres server of
 * the suite's own with the real OpenTelemetry SDK and a webhook receiver over loopback: a store
 * made inside a span, and whose first follow of a task was inside a call's span, still sends the
 * notifications it takes over from a dead instance, and its reaper's FAILED, as root spans; and it
 * keeps neither span alive. Its timers, its LISTEN connection and the rows it took over ran in the
 * context current when each was started: the span that made the store was their parent, and that
 * span and the first caller's were kept for the life of the process.
 */
import { jest } from "@jest/globals";
import { create } from "@bufbuild/protobuf";
import * as api from "@opentelemetry/api";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import v8 from "node:v8";
import vm from "node:vm";
import { createPostgresTaskStore, createPushDelivery, type SqlTaskStore } from "protoc-gen-a2a/runtime/tasks";
import { MessageSchema, Role, SendMessageRequestSchema, TaskState } from "../../generated/a2a_pb.js";
import { createA2AServiceTaskHandler, type A2AServiceExecutor } from "../../generated/a2a_tasks.js";
import { startPostgres, type TestPostgres } from "../support/postgres.js";
import { Receiver, callContext, deferred } from "../support/task-clients.js";
import { installOtelSdk } from "../support/otel-sdk.js";

jest.setTimeout(30_000);

const { exporter, tracer, shutdown: shutdownSdk } = installOtelSdk();

let server: TestPostgres;
let receiver: Receiver;

beforeAll(async () => {
  [server, receiver] = await Promise.all([startPostgres(), new Receiver().start()]);
});

afterAll(async () => {
  await receiver?.stop();
  await server?.stop();
  await shutdownSdk();
});

const call = callContext("");
const allow = { allow: ["127.0.0.0/8"] };
const message = (text: string) => create(MessageSchema, { messageId: crypto.randomUUID(), role: Role.USER, parts: [{ content: { case: "text", value: text } }] });

/** What a notification body says: its payload's kind, with the state. */
function kindOf(body: string): string {
  const json = JSON.parse(body) as Record<string, { status?: { state: string } }>;
  if (json.task !== undefined) return "task";
  if (json.statusUpdate !== undefined) return `status:${json.statusUpdate.status?.state}`;
  return Object.keys(json).join(",");
}

test("the notifications a store takes over from a dead instance, and its reaper's FAILED, are root spans, though the store was made in a span and first followed a task in a call's", async () => {
  const gate = deferred();
  // "hold" stays WORKING (its lease lapses once A stops: the reaper's), "quick" completes (its rows lapse: taken over).
  const executor: A2AServiceExecutor = async function* (context) {
    yield { state: TaskState.WORKING };
    const part = context.message.parts[0]?.content;
    if (part?.case === "text" && part.value === "hold") await gate.promise;
  };
  // Instance A writes both tasks' notifications and delivers none (the receiver refuses them), then stops.
  let open = false;
  receiver.answer = () => (open ? 200 : 503);
  const pushA = createPushDelivery({ ...allow, tracing: false, backoffMs: 60_000, onError: () => undefined });
  const storeA = await createPostgresTaskStore({ connectionString: server.url, leaseMs: 400 });
  const a = createA2AServiceTaskHandler(executor, { store: storeA, push: pushA });
  const base = `/dead/${crypto.randomUUID()}`;
  const sendTo = async (text: string) => {
    const started = await a.sendMessage(
      create(SendMessageRequestSchema, {
        message: message(text),
        configuration: { returnImmediately: true, taskPushNotificationConfig: { id: "c", url: receiver.url(`${base}/${text}`), token: "" } },
      }),
      call,
    );
    if (started.payload.case !== "task") throw new Error("expected a task");
    return started.payload.value.id;
  };
  const heldId = await sendTo("hold");
  await sendTo("quick");
  await receiver.when("A's first attempts", () => receiver.received.filter((r) => r.path.startsWith(base)).length >= 2);
  await pushA.close();
  await storeA.close();
  await a.close();
  gate.resolve();
  open = true;
  exporter.reset();

  let storeB: SqlTaskStore | undefined;
  let b: ReturnType<typeof createA2AServiceTaskHandler> | undefined;
  try {
    const startup = await tracer.startActiveSpan("startup", async (span) => {
      storeB = await createPostgresTaskStore({ connectionString: server.url, leaseMs: 400 });
      b = createA2AServiceTaskHandler(executor, { store: storeB, push: { ...allow, tracing: api } });
      span.end();
      return span.spanContext();
    });
    // B follows the held task first inside a call's span: it opens its LISTEN connection there.
    const first = await tracer.startActiveSpan("first call", async (span) => {
      const stream = b!.subscribeToTask({ id: heldId }, call)[Symbol.asyncIterator]();
      await stream.next();
      await stream.return?.();
      span.end();
      return span.spanContext();
    });
    await receiver.when("the FAILED of the held task", () => receiver.on(`${base}/hold`).some((r) => kindOf(r.body) === "status:TASK_STATE_FAILED"), 10_000);
    await receiver.when("the quick task's notifications", () => receiver.on(`${base}/quick`).some((r) => kindOf(r.body) === "status:TASK_STATE_COMPLETED"), 10_000);
    await b!.close();
    const pushes = exporter.getFinishedSpans().filter((s) => s.kind === api.SpanKind.CLIENT);
    const delivered = receiver.received.filter((r) => r.path.startsWith(base) && r.headers.traceparent !== undefined);
    // The held task's WORKING and FAILED (and its task, when A's first attempt was another's), the quick task's WORKING at least.
    expect(delivered.length).toBeGreaterThanOrEqual(3);
    expect(pushes).toHaveLength(delivered.length);
    for (const push of pushes) {
      expect(push.parentSpanContext).toBeUndefined();
      expect([startup.traceId, first.traceId]).not.toContain(push.spanContext().traceId);
    }
  } finally {
    await b?.close();
    await storeB?.close();
    receiver.answer = () => 200;
  }
});

test("a store made in a span, whose first follow of a task was in a call's span, keeps neither span alive", async () => {
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  // Spans no exporter keeps: only what the store holds could keep them.
  const unexported = new BasicTracerProvider().getTracer("unexported");
  const inSpan = <T>(name: string, fn: () => T): { ref: WeakRef<object>; value: T } => {
    const span = unexported.startSpan(name);
    const value = api.context.with(api.trace.setSpan(api.context.active(), span), fn);
    span.end();
    return { ref: new WeakRef(span), value };
  };
  const madeIn = async (name: string): Promise<{ ref: WeakRef<object>; store: SqlTaskStore }> => {
    // Awaited here: the promise, made in the span's context, would keep it for as long as it is held.
    const { ref, value } = inSpan(name, () => createPostgresTaskStore({ connectionString: server.url, leaseMs: 400, terminalTtlMs: 60_000 }));
    return { ref, store: await value };
  };
  const made = await madeIn("startup");
  const store = made.store;
  try {
    const followed = inSpan("first call", () => store.follow("no-such-task", 0, () => undefined, false));
    // The LISTEN connection opened, the timers ran a few rounds (renewal, reaping).
    await new Promise((resolve) => setTimeout(resolve, 600));
    gc();
    expect(made.ref.deref()).toBeUndefined();
    expect(followed.ref.deref()).toBeUndefined();
    followed.value();
  } finally {
    await store.close();
  }
});
