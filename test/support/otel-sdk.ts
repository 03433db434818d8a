/**
 * The real OpenTelemetry SDK as the tracing tests install it: spans kept in memory, the
 * AsyncLocalStorage context manager (the one a Node service uses), W3C trace context for
 * propagation, all set globally, so the runtime's `@opentelemetry/api` finds them as an
 * application's would.
 */
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base";

export interface TestOtelSdk {
  readonly exporter: InMemorySpanExporter;
  /** A tracer of the test's own, for the spans a test starts around a call. */
  readonly tracer: api.Tracer;
  /** Disables the context manager and shuts the provider down (afterAll). */
  shutdown(): Promise<void>;
}

/** Installs the SDK globally; `processors` are added after the exporter's. */
export function installOtelSdk(...processors: SpanProcessor[]): TestOtelSdk {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), ...processors] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  api.trace.setGlobalTracerProvider(provider);
  api.context.setGlobalContextManager(contextManager);
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    exporter,
    tracer: api.trace.getTracer("test"),
    async shutdown() {
      contextManager.disable();
      await provider.shutdown();
    },
  };
}
