// OpenTelemetry traces, opt-in: one span per exchange, exported over OTLP/HTTP. The span continues
// the trace the request carried (its `_meta.traceparent`, else its HTTP `traceparent`); findings
// and the policy's rewrites and blocks are its events. Attribute names follow the OpenTelemetry
// semantic conventions for MCP (https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/):
// mcp.method.name, mcp.session.id, mcp.protocol.version, gen_ai.tool.name, jsonrpc.request.id,
// error.type. With export off nothing here is created: the proxy pays nothing for it.
import { context, defaultTextMapGetter, SpanKind, SpanStatusCode, type Attributes, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ExchangeHttp, JudgedExchange } from '../engine/plans.ts';

export interface TracingOptions {
  /** --otlp-endpoint: the OTLP/HTTP traces URL (else the standard OTEL_EXPORTER_OTLP_* variables). */
  endpoint: string | undefined;
  env: NodeJS.ProcessEnv;
  version: string;
}

const propagator = new W3CTraceContextPropagator();

export class Tracing {
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;

  /** Tracing when export is asked for (--otlp-endpoint, OTEL_EXPORTER_OTLP_ENDPOINT or its traces variant), else undefined. */
  static fromOptions(o: TracingOptions): Tracing | undefined {
    const asked = o.endpoint ?? o.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? o.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    return asked ? new Tracing(o) : undefined;
  }

  private constructor(o: TracingOptions) {
    // Without --otlp-endpoint the exporter reads OTEL_EXPORTER_OTLP_* (endpoint, headers) itself.
    const exporter = new OTLPTraceExporter(o.endpoint ? { url: o.endpoint } : {});
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': o.env.OTEL_SERVICE_NAME ?? 'mcp-warden', 'service.version': o.version }),
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    this.tracer = this.provider.getTracer('mcp-warden', o.version);
  }

  /** One span for a completed exchange, in the trace its request carried. */
  exchange(judged: JudgedExchange, http: ExchangeHttp): void {
    const c = judged.exchange;
    const r = c.request;
    const parent = r.traceparent
      ? propagator.extract(context.active(), { traceparent: r.traceparent }, defaultTextMapGetter)
      : context.active();
    const end = Date.now();
    const attributes: Attributes = {
      'mcp.method.name': r.method,
      'jsonrpc.request.id': String(r.id),
      'mcp_warden.outcome': c.outcome,
      'mcp_warden.transport': http.transport,
    };
    if (r.sessionId) attributes['mcp.session.id'] = r.sessionId;
    if (r.protocolVersion) attributes['mcp.protocol.version'] = r.protocolVersion;
    if (r.tool) attributes['gen_ai.tool.name'] = r.tool;
    if (http.status !== undefined) attributes['http.response.status_code'] = http.status;
    const span = this.tracer.startSpan(
      r.tool ? `${r.method} ${r.tool}` : r.method,
      { kind: r.from === 'client' ? SpanKind.SERVER : SpanKind.CLIENT, startTime: end - c.durationMs, attributes },
      parent,
    );
    for (const f of [...r.verdict.findings, ...judged.findings])
      span.addEvent('mcp_warden.finding', { rule: f.rule, severity: f.severity, action: f.action }, end);
    const d = judged.decision;
    if (d.kind !== 'pass')
      span.addEvent(d.kind === 'mutate' ? 'mcp_warden.rewrite' : 'mcp_warden.block', { rules: d.rules.join(',') }, end);
    const failed = c.outcome.startsWith('error:') ? c.outcome.slice(6) : c.outcome === 'isError' ? 'tool_error' : http.proxyError;
    if (failed || c.outcome === 'no-response') {
      span.setAttribute('error.type', failed ?? c.outcome);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(end);
  }

  /** Sends what is batched and stops exporting. */
  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}
