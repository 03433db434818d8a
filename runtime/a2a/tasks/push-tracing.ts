/**
 * A CLIENT span per push notification attempt (D35, D27), when push delivery is given
 * `@opentelemetry/api` (`tracing`): OpenTelemetry's HTTP client conventions, where every resend
 * is a span of its own (`http.request.resend_count` counting them), parented on the context that
 * was active when the notification was queued (the span of the call whose task update it is, or
 * none: a root span), and written into the POST's headers by the API's propagator (`traceparent`),
 * so the receiver's trace continues the agent's. Nothing here runs without `tracing`.
 */
import { validateHeaderName, validateHeaderValue } from "node:http";
import { instrumentationName, type TraceAttributes, type TraceContext, type TraceSpan, type TraceTracer, type TracingApi } from "../../core/tracing.js";

export class PushTracer {
  readonly #api: TracingApi;
  /** Once per delivery, as the server spans' tracer is made once per dispatcher (getTracer makes one per call). */
  readonly #tracer: TraceTracer;

  constructor(api: TracingApi) {
    this.#api = api;
    // The server spans' instrumentation scope (D35).
    this.#tracer = api.trace.getTracer(instrumentationName);
  }

  /**
   * The context a notification queued now is sent in: its attempts' parent. Its span is replaced
   * by the span's context (ids and flags, all a child takes from it): a notification waits for
   * as long as its receiver keeps it waiting (retries, a lane behind a slow one), and the span
   * object, with its attributes and events, would be kept as long. Undefined when the API threw:
   * that notification goes untraced, never parented on another call's context.
   */
  parent(): TraceContext | undefined {
    const { trace, context } = this.#api;
    try {
      const active = context.active();
      if (trace.getSpan(active) === undefined || trace.getSpanContext === undefined || trace.setSpanContext === undefined) return active;
      const spanContext = trace.getSpanContext(active);
      return spanContext === undefined ? active : trace.setSpanContext(active, spanContext as never);
    } catch {
      return undefined;
    }
  }

  /**
   * Starts one attempt's span and adds its context to `headers` (what the propagator writes, but
   * a header delivery sets itself or one HTTP cannot carry); undefined when tracing failed (a
   * sampler or propagator that throws): the POST goes out untraced, never fails for it.
   */
  start(parent: TraceContext, url: URL, resends: number, headers: Record<string, string>): PushSpan | undefined {
    const api = this.#api;
    try {
      const attributes: Record<string, string | number> = {
        "http.request.method": "POST",
        "url.full": fullUrl(url),
        "server.address": url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
        "server.port": url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port),
      };
      if (resends > 0) attributes["http.request.resend_count"] = resends;
      // No URL template is known: the span is named by the method alone (OTel's HTTP client span name).
      const span = this.#tracer.startSpan("POST", { kind: api.SpanKind.CLIENT, attributes: attributes as TraceAttributes }, parent);
      try {
        const carrier: Record<string, unknown> = {};
        api.propagation.inject(api.trace.setSpan(parent, span), carrier);
        addHeaders(headers, carrier);
      } catch {
        // A propagator that throws: the span stays, the receiver gets no traceparent.
      }
      return new PushSpan(api, span);
    } catch {
      return undefined;
    }
  }
}

/**
 * The propagator's headers added to the POST's, but for one the POST sets itself (its token,
 * authorization, content type: a propagator changes nothing of the delivery) and one that HTTP
 * cannot carry (W3C baggage writes an entry's metadata as given, a character outside Latin-1 for
 * one): undici would refuse the whole request, every attempt of it.
 */
function addHeaders(headers: Record<string, string>, carrier: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(carrier)) {
    if (typeof value !== "string" || Object.hasOwn(headers, name.toLowerCase())) continue;
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      continue;
    }
    headers[name.toLowerCase()] = value;
  }
}

/**
 * The URL as `url.full` records it: never its credentials, and each query value as `REDACTED`
 * (a webhook's signature or key often rides in its query; OTel's conventions redact the known
 * names, and a receiver's own names are not known here).
 */
function fullUrl(url: URL): string {
  if (url.username === "" && url.password === "" && url.search === "") return url.href;
  const copy = new URL(url.href);
  copy.username = "";
  copy.password = "";
  if (copy.search !== "") copy.search = copy.search.slice(1).split("&").map((pair) => (pair.includes("=") ? `${pair.slice(0, pair.indexOf("="))}=REDACTED` : pair)).join("&");
  return copy.href;
}

/** One attempt's span: what it ended with. Never throws (tracing never fails a delivery). */
export class PushSpan {
  constructor(
    private readonly api: TracingApi,
    private readonly span: TraceSpan,
  ) {}

  /** The receiver answered `status`: 4xx and 5xx are the attempt's failure (OTel's HTTP client spans). */
  answered(status: number): void {
    try {
      this.span.setAttribute("http.response.status_code", status);
      if (status >= 400) {
        this.span.setAttribute("error.type", String(status));
        this.span.setStatus({ code: this.api.SpanStatusCode.ERROR });
      }
    } catch {
      // See the class.
    }
  }

  /** No answer: the connection failed, was refused by the SSRF guard, or timed out. */
  failed(error: unknown, timedOut: boolean): void {
    try {
      // Read as it is, not through instanceof: an error of another realm (a VM context) is one too.
      const { code, name, message } = (typeof error === "object" && error !== null ? error : {}) as { code?: unknown; name?: unknown; message?: unknown };
      const type = timedOut ? "timeout" : typeof code === "string" && code !== "" ? code : typeof name === "string" && name !== "" ? name : "_OTHER";
      this.span.setAttribute("error.type", type);
      this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: typeof message === "string" ? message : String(error) });
    } catch {
      // See the class.
    }
  }

  end(): void {
    try {
      this.span.end();
    } catch {
      // See the class.
    }
  }
}
