// OpenTelemetry traces, opt-in: one span per exchange, exported over OTLP/HTTP. The span continues
// the trace the request carried (its `_meta.traceparent`, else its HTTP `traceparent`); findings
// and the policy's rewrites and blocks are its events. Attribute names follow the OpenTelemetry
// semantic conventions for MCP (https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/):
// mcp.method.name, mcp.session.id, mcp.protocol.version, gen_ai.tool.name, jsonrpc.request.id,
// error.type. With export off nothing here is created: the proxy pays nothing for it. What a peer
// sends is bounded before it goes in a span (TRACE_BOUNDS): each string cut to `stringChars`, and
// the exporter's queue capped, so a collector that is down cannot grow memory.
import { context, defaultTextMapGetter, SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { TRACE_BOUNDS } from '../config/defaults.ts';
import { clip } from '../util/clip.ts';
import { peerText } from '../redact/peer.ts';
import type { ExchangeHttp, JudgedExchange } from '../engine/plans.ts';
import { requestKey } from '../exchange/table.ts';
import { otlpTracesUrl } from './otlp-url.ts';

export interface TracingOptions {
  /** --otlp-endpoint: the OTLP/HTTP traces URL (else the standard OTEL_EXPORTER_OTLP_* variables). */
  endpoint: string | undefined;
  env: NodeJS.ProcessEnv;
  version: string;
}

const propagator = new W3CTraceContextPropagator();

/** The context a W3C traceparent names, as a parent. */
const parentOf = (traceparent: string) => propagator.extract(context.active(), { traceparent }, defaultTextMapGetter);

/** Spans begun at forwarding and not yet ended, at most (past it the oldest is ended as it is). */
const MAX_BEGUN = 10_000;

export class Tracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  /** Spans begun when their request went upstream, by the request's key (exchange/table.ts requestKey), until its exchange completes. */
  private readonly begun = new Map<string, Span>();

  /** Tracing when export is asked for (--otlp-endpoint, OTEL_EXPORTER_OTLP_ENDPOINT or its traces variant), else undefined. */
  static fromOptions(o: TracingOptions): Tracing | undefined {
    const url = otlpTracesUrl(o.endpoint, o.env);
    return url ? new Tracing(url, o) : undefined;
  }

  private constructor(url: string, o: TracingOptions) {
    // The URL from the options given (the exporter itself would read process.env); headers from OTEL_EXPORTER_OTLP_HEADERS.
    const exporter = new OTLPTraceExporter({ url });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': o.env.OTEL_SERVICE_NAME ?? 'mcp-warden', 'service.version': o.version }),
      spanProcessors: [
        new BatchSpanProcessor(exporter, { maxQueueSize: TRACE_BOUNDS.maxQueueSize, maxExportBatchSize: TRACE_BOUNDS.maxExportBatchSize }),
      ],
    });
    this.tracer = this.provider.getTracer('mcp-warden', o.version);
  }

  /**
   * A request goes upstream with the client's `traceparent` header: its span begins now, and the
   * upstream gets the span's context in the client's place (it sees the proxy as its parent).
   */
  begin(request: string, clientTraceparent: string): string {
    const span = this.tracer.startSpan('mcp-warden', { kind: SpanKind.SERVER }, parentOf(clientTraceparent));
    if (this.begun.size >= MAX_BEGUN) {
      const [oldest, stale] = this.begun.entries().next().value!;
      this.begun.delete(oldest);
      stale.end();
    }
    this.begun.get(request)?.end();
    this.begun.set(request, span);
    const { traceId, spanId, traceFlags } = span.spanContext();
    return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
  }

  /** One span for a completed exchange, in the trace its request carried (the one begun when it went upstream, if any). */
  exchange(judged: JudgedExchange, http: ExchangeHttp): void {
    const c = judged.exchange;
    const r = c.request;
    const key = requestKey(r.scope, r.from, r.id, r.idToken);
    const begun = this.begun.get(key);
    if (begun) this.begun.delete(key);
    const end = Date.now();
    const cut = (value: string) => peerText(value, TRACE_BOUNDS.stringChars);
    const attributes: Attributes = {
      'mcp.method.name': cut(r.method),
      'jsonrpc.request.id': cut(String(r.id)),
      'mcp_warden.outcome': c.outcome,
      'mcp_warden.transport': http.transport,
    };
    // The session id joins a session's spans: cut, never masked.
    if (r.sessionId) attributes['mcp.session.id'] = clip(r.sessionId, TRACE_BOUNDS.stringChars);
    if (r.protocolVersion) attributes['mcp.protocol.version'] = cut(r.protocolVersion);
    if (r.tool) attributes['gen_ai.tool.name'] = cut(r.tool);
    if (http.status !== undefined) attributes['http.response.status_code'] = http.status;
    const name = cut(r.tool ? `${r.method} ${r.tool}` : r.method);
    const span =
      begun?.updateName(name).setAttributes(attributes) ??
      this.tracer.startSpan(
        name,
        { kind: r.from === 'client' ? SpanKind.SERVER : SpanKind.CLIENT, startTime: end - c.durationMs, attributes },
        r.traceparent ? parentOf(r.traceparent) : context.active(),
      );
    for (const f of [...r.verdict.findings, ...judged.findings])
      span.addEvent('mcp_warden.finding', { rule: f.rule, severity: f.severity, action: f.action }, end);
    const d = judged.decision;
    if (d.kind !== 'pass')
      span.addEvent(d.kind === 'mutate' ? 'mcp_warden.rewrite' : 'mcp_warden.block', { rules: d.rules.join(',') }, end);
    const failed = c.outcome.startsWith('error:') ? c.outcome.slice(6) : c.outcome === 'isError' ? 'tool_error' : http.proxyError;
    if (failed || c.outcome === 'no-response') {
      span.setAttribute('error.type', cut(failed ?? c.outcome));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(end);
  }

  /**
   * Sends what is batched and stops exporting (spans still waiting for their exchange end as they
   * are). Never rejects and takes at most `timeoutMs`: a collector that is down must not change how
   * the process ends.
   */
  async shutdown(timeoutMs = 2_000): Promise<void> {
    for (const span of this.begun.values()) span.end();
    this.begun.clear();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    });
    await Promise.race([this.provider.shutdown().catch(() => undefined), late]);
    clearTimeout(timer);
  }
}
