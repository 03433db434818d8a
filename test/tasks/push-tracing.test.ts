/**
 * Push notifications traced (D35, D27) with the real OpenTelemetry SDK over real sockets: each
 * attempt a CLIENT span by OTel's HTTP client conventions (a resend a span of its own), child of
 * the span active when the notification was queued (through the task handler: the call whose task
 * update it is), a root span otherwise, and its context in the POST's `traceparent`. By default
 * the installed API is loaded, as serveA2AService's tracing is; with `tracing: false`, no span and
 * no header. POSTs went out with no trace context at all.
 */
import { jest } from "@jest/globals";
import * as api from "@opentelemetry/api";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { TaskState as S } from "@a2a-js/sdk";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import v8 from "node:v8";
import vm from "node:vm";
import type { AddressInfo } from "node:net";
import { TaskState } from "../../generated/a2a_pb.js";
import { createPushDelivery, type PushDelivery } from "../../runtime/a2a/tasks/push-delivery.js";
import { loadTracingApi } from "../../runtime/core/tracing.js";
import { Scripts, asTask, chunk, send, startAgent, type TestAgent } from "../support/task-clients.js";
import { installOtelSdk } from "../support/otel-sdk.js";

jest.setTimeout(30_000);

const { exporter, tracer, shutdown: shutdownSdk } = installOtelSdk();

/** A webhook receiver answering each request with the next of `statuses` (then 200), keeping their headers. */
class Receiver {
  readonly headers: IncomingHttpHeaders[] = [];
  statuses: number[] = [];
  readonly #server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      this.headers.push(req.headers);
      res.statusCode = this.statuses.shift() ?? 200;
      res.end();
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return this;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

let receiver: Receiver;
let delivery: PushDelivery;

beforeAll(async () => {
  receiver = await new Receiver().start();
});

afterAll(async () => {
  await receiver.stop();
  await shutdownSdk();
});

beforeEach(() => {
  exporter.reset();
  receiver.headers.length = 0;
  receiver.statuses = [];
});

afterEach(async () => {
  await delivery?.close();
});

const clientSpans = (): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.kind === api.SpanKind.CLIENT);
const traceparentOf = (span: ReadableSpan) => `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;
const body = JSON.stringify({ statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" } } });

test("an attempt is a CLIENT span, child of the span it was queued in, and its traceparent goes out with the POST", async () => {
  delivery = createPushDelivery({ allow: ["127.0.0.1"], tracing: api });
  const caller = tracer.startActiveSpan("task update", (span) => {
    delivery.deliver("t", [{ url: receiver.url("/hook?sig=s3cret&flag&x=1"), token: "" }], body);
    span.end();
    return span.spanContext();
  });
  await delivery.idle();
  const [span, ...more] = clientSpans();
  expect(more).toEqual([]);
  expect(span!.name).toBe("POST");
  expect(span!.spanContext().traceId).toBe(caller.traceId);
  expect(span!.parentSpanContext?.spanId).toBe(caller.spanId);
  expect(span!.attributes).toEqual({
    "http.request.method": "POST",
    // A query's values are not recorded: a webhook's signature or key often rides there.
    "url.full": receiver.url("/hook?sig=REDACTED&flag&x=REDACTED"),
    "server.address": "127.0.0.1",
    "server.port": receiver.port,
    "http.response.status_code": 200,
  });
  expect(span!.status.code).toBe(api.SpanStatusCode.UNSET);
  expect(receiver.headers.map((h) => h.traceparent)).toEqual([traceparentOf(span!)]);
});

test("a receiver that fails once: a span per attempt, the first ERROR with its status, the resend counted", async () => {
  delivery = createPushDelivery({ allow: ["127.0.0.1"], tracing: api, backoffMs: 10 });
  receiver.statuses = [503];
  const caller = tracer.startActiveSpan("task update", (span) => {
    delivery.deliver("t", [{ url: receiver.url("/hook"), token: "" }], body);
    span.end();
    return span.spanContext();
  });
  await delivery.idle();
  const spans = clientSpans();
  expect(spans.map((s) => [s.attributes["http.response.status_code"], s.attributes["error.type"], s.attributes["http.request.resend_count"], s.status.code])).toEqual([
    [503, "503", undefined, api.SpanStatusCode.ERROR],
    [200, undefined, 1, api.SpanStatusCode.UNSET],
  ]);
  // Both children of the call's span, each attempt with its own traceparent.
  expect(spans.map((s) => s.parentSpanContext?.spanId)).toEqual([caller.spanId, caller.spanId]);
  expect(receiver.headers.map((h) => h.traceparent)).toEqual(spans.map(traceparentOf));
});

test("a receiver that is not there: the attempt's span says what failed", async () => {
  const gone = await new Receiver().start();
  const url = gone.url("/hook");
  await gone.stop();
  delivery = createPushDelivery({ allow: ["127.0.0.1"], tracing: api, maxAttempts: 1, onError: () => undefined });
  delivery.deliver("t", [{ url, token: "" }], body);
  await delivery.idle();
  const [span] = clientSpans();
  expect(span!.status.code).toBe(api.SpanStatusCode.ERROR);
  expect(span!.attributes["error.type"]).toBe("ECONNREFUSED");
  expect(span!.attributes["http.response.status_code"]).toBeUndefined();
});

test("queued with no span active: a root span", async () => {
  delivery = createPushDelivery({ allow: ["127.0.0.1"], tracing: api });
  delivery.deliver("t", [{ url: receiver.url("/hook"), token: "" }], body);
  await delivery.idle();
  const [span] = clientSpans();
  expect(span!.parentSpanContext).toBeUndefined();
  expect(receiver.headers.map((h) => h.traceparent)).toEqual([traceparentOf(span!)]);
});

test("by default, the installed @opentelemetry/api is loaded and used, as serveA2AService's tracing is", async () => {
  delivery = createPushDelivery({ allow: ["127.0.0.1"] });
  // The delivery asked for it first: it has its tracer once this resolves.
  await loadTracingApi();
  tracer.startActiveSpan("task update", (span) => {
    delivery.deliver("t", [{ url: receiver.url("/hook"), token: "" }], body);
    span.end();
  });
  await delivery.idle();
  expect(clientSpans()).toHaveLength(1);
  expect(receiver.headers.map((h) => h.traceparent)).toEqual([traceparentOf(clientSpans()[0]!)]);
});

test("tracing: false: no span, no traceparent, even inside a span", async () => {
  delivery = createPushDelivery({ allow: ["127.0.0.1"], tracing: false });
  tracer.startActiveSpan("task update", (span) => {
    delivery.deliver("t", [{ url: receiver.url("/hook"), token: "" }], body);
    span.end();
  });
  await delivery.idle();
  expect(clientSpans()).toEqual([]);
  expect(receiver.headers).toHaveLength(1);
  expect(receiver.headers[0]!.traceparent).toBeUndefined();
});

test("a header the propagator writes that HTTP cannot carry is left out: the POST goes out, with the rest of the trace context (tracing never fails a delivery)", async () => {
  // W3C baggage sends an entry's metadata as it is given (not encoded): one with a character outside Latin-1.
  api.propagation.disable();
  api.propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  try {
    delivery = createPushDelivery({ allow: ["127.0.0.1"], tracing: api, maxAttempts: 2, backoffMs: 10, onError: () => undefined });
    const baggage = api.propagation.createBaggage({ user: { value: "zoe", metadata: api.baggageEntryMetadataFromString("note=Zoë’s") } });
    api.context.with(api.propagation.setBaggage(api.context.active(), baggage), () => {
      tracer.startActiveSpan("task update", (span) => {
        delivery.deliver("t", [{ url: receiver.url("/hook"), token: "tok" }], body);
        span.end();
      });
    });
    await delivery.idle();
    expect(receiver.headers).toHaveLength(1);
    const [span] = clientSpans();
    expect(receiver.headers[0]!.traceparent).toBe(traceparentOf(span!));
    expect(receiver.headers[0]!["x-a2a-notification-token"]).toBe("tok");
    expect(receiver.headers[0]!.baggage).toBeUndefined();
  } finally {
    api.propagation.disable();
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  }
});

test("a propagator writing a header delivery sets itself (the token, authorization) changes nothing of it", async () => {
  api.propagation.disable();
  api.propagation.setGlobalPropagator({
    inject: (_context, carrier: Record<string, string>) => {
      carrier["x-a2a-notification-token"] = "forged";
      carrier["authorization"] = "Bearer forged";
      carrier["content-type"] = "text/plain";
    },
    extract: (context) => context,
    fields: () => ["x-a2a-notification-token", "authorization", "content-type"],
  });
  try {
    delivery = createPushDelivery({ allow: ["127.0.0.1"], tracing: api });
    delivery.deliver("t", [{ url: receiver.url("/hook"), token: "tok", authentication: { scheme: "Bearer", credentials: "real" } }], body);
    await delivery.idle();
    expect(receiver.headers.map((h) => [h["x-a2a-notification-token"], h.authorization, h["content-type"]])).toEqual([["tok", "Bearer real", "application/a2a+json"]]);
  } finally {
    api.propagation.disable();
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  }
});

test("by default, notifications queued before the API has loaded go untraced: none is made a child of another call's span (the lane's)", async () => {
  await loadTracingApi();
  delivery = createPushDelivery({ allow: ["127.0.0.1"] });
  // Both queued at once, before the delivery has its tracer, in two calls' spans: one lane runs them.
  tracer.startActiveSpan("first call", (span) => {
    delivery.deliver("t", [{ url: receiver.url("/hook"), token: "" }], body);
    span.end();
  });
  tracer.startActiveSpan("second call", (span) => {
    delivery.deliver("t", [{ url: receiver.url("/hook"), token: "" }], body);
    span.end();
  });
  await delivery.idle();
  expect(receiver.headers).toHaveLength(2);
  expect(clientSpans()).toEqual([]);
  expect(receiver.headers.map((h) => h.traceparent)).toEqual([undefined, undefined]);
});

test("a queued notification keeps its parent's span context, not the span: a call's span is collectable while its notification waits", async () => {
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  // A span no exporter keeps: only what delivery holds could keep it.
  const unexported = new BasicTracerProvider().getTracer("unexported");
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const slow = createServer((req, res) => {
    req.resume();
    void held.then(() => res.end());
  });
  await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`;
  try {
    delivery = createPushDelivery({ allow: ["127.0.0.1"], tracing: api });
    const queued = (): { ref: WeakRef<object>; traceId: string; spanId: string } => {
      const span = unexported.startSpan("task update");
      api.context.with(api.trace.setSpan(api.context.active(), span), () => {
        // The first is sent (and held by the receiver), the second waits behind it.
        delivery.deliver("t", [{ url, token: "" }], body);
        delivery.deliver("t", [{ url, token: "" }], body);
      });
      span.end();
      return { ref: new WeakRef(span), ...span.spanContext() };
    };
    const { ref, traceId, spanId } = queued();
    // A WeakRef keeps its target to the end of the job that made it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    gc();
    expect(ref.deref()).toBeUndefined();
    release();
    await delivery.idle();
    const spans = clientSpans();
    expect(spans).toHaveLength(2);
    expect(spans.map((s) => [s.spanContext().traceId, s.parentSpanContext?.spanId])).toEqual([
      [traceId, spanId],
      [traceId, spanId],
    ]);
  } finally {
    release();
    slow.closeAllConnections();
    await new Promise<void>((resolve) => slow.close(() => resolve()));
  }
});

// The SQL store's outbox (D74): the writer sends its rows after the commit, in the call's context.
describe.each(["memory:", "pglite:"])("through the task handler, store %s", (store) => {
  const scripts = new Scripts();
  let agent: TestAgent;
  const quick = scripts.add("quick", async function* () {
    yield { state: TaskState.WORKING };
    yield chunk("made", "out");
  });

  beforeAll(async () => {
    agent = await startAgent(scripts.executor, { store, push: { allow: ["127.0.0.0/8"], tracing: api } });
  });

  afterAll(async () => {
    await agent.close();
  });

  test("every notification of a task's updates is a child of the SendMessage call that made them", async () => {
    const client = await agent.client("JSONRPC");
    const task = asTask(await client.sendMessage(send(quick, { push: { url: receiver.url("/task-hook") } })));
    expect(task.status?.state).toBe(S.TASK_STATE_COMPLETED);
    await agent.handler.close();
    const call = exporter.getFinishedSpans().find((s) => s.kind === api.SpanKind.SERVER && s.name.endsWith("/SendMessage"));
    const pushes = clientSpans();
    expect(pushes.length).toBeGreaterThanOrEqual(3);
    for (const push of pushes) {
      expect(push.spanContext().traceId).toBe(call!.spanContext().traceId);
      expect(push.parentSpanContext?.spanId).toBe(call!.spanContext().spanId);
    }
    expect(receiver.headers.map((h) => h.traceparent)).toEqual(pushes.map(traceparentOf));
  });
});
