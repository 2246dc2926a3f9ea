// OpenTelemetry export: the proxy in front of a server, export on, against a real OTLP/HTTP
// receiver started here. What arrives is decoded and checked: the span's name and MCP attributes,
// the client's trace continued (its trace id, its span as the parent), the span's context seen by
// the upstream, findings as events; with export off nothing is created.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { Tracing } from '../../src/sinks/tracing.ts';
import { jsonRpcResult, startRawServer } from '../fixtures/raw-server.ts';
import { startProxy } from '../helpers/proxy.ts';

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: OtlpValue }>;
  events?: Array<{ name: string; attributes: Array<{ key: string; value: OtlpValue }> }>;
  status?: { code?: number };
}

describe('OpenTelemetry export', () => {
  test('a span per exchange, in the trace the client sent, with the MCP attributes and the findings as events', async () => {
    const bodies: unknown[] = [];
    const receiver = await startRawServer((req, res, body) => {
      if (req.url === '/v1/traces') bodies.push(JSON.parse(body.toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    closers.push(() => receiver.close());
    const upstream = await startRawServer(jsonRpcResult({ content: [{ type: 'text', text: 'Unknown tool: nope' }], isError: true }));
    closers.push(() => upstream.close());
    const tracing = Tracing.fromOptions({ endpoint: new URL('/v1/traces', receiver.url).href, env: {}, version: '0.0.0-test' });
    assert.ok(tracing);
    const proxy = await startProxy(new URL('/mcp', upstream.url), { tracing });
    closers.push(() => proxy.close());
    /** A POST in the client's trace (the traceparent header). */
    const post = async (message: unknown) => {
      const res = await request(proxy.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          traceparent: `00-${TRACE}-${PARENT}-01`,
        },
        body: JSON.stringify(message),
      });
      await res.body.text();
    };
    await post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'nope', arguments: {} } });
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 9);
    // A notification has no exchange to end a span: none is begun for it (none is exported).
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await tracing.shutdown();

    const spans = bodies.flatMap((b) =>
      (b as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> }).resourceSpans.flatMap((r) =>
        r.scopeSpans.flatMap((s) => s.spans),
      ),
    );
    assert.equal(spans.length, 1, 'one span: the exchange, none for the notification');
    const span = spans[0]!;
    assert.equal(span.traceId, TRACE, 'the client trace continues');
    assert.equal(span.parentSpanId, PARENT, "the client's span is the parent");
    // The upstream saw the proxy's span as its parent, in the client's trace, as the client sent it (the header).
    const seen = upstream.requests.find((r) => r.body.toString().includes('"id":9'))?.headers.traceparent;
    assert.equal(seen, `00-${TRACE}-${span.spanId}-01`);
    assert.equal(span.name, 'tools/call nope');
    const attr = Object.fromEntries(span.attributes.map((a) => [a.key, a.value.stringValue ?? a.value.intValue]));
    assert.equal(attr['mcp.method.name'], 'tools/call');
    assert.equal(attr['gen_ai.tool.name'], 'nope');
    assert.equal(attr['jsonrpc.request.id'], '9');
    assert.equal(attr['error.type'], 'tool_error');
    assert.equal(span.status?.code, 2, 'status error');
    const finding = span.events?.find((e) => e.name === 'mcp_warden.finding');
    assert.equal(finding?.attributes.find((a) => a.key === 'rule')?.value.stringValue, 'unknown-tool-as-iserror');
  });

  test('export off: nothing is created', () => {
    assert.equal(Tracing.fromOptions({ endpoint: undefined, env: {}, version: '0' }), undefined);
  });

  test('the standard variable alone turns export on', async () => {
    const tracing = Tracing.fromOptions({ endpoint: undefined, env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' }, version: '0' });
    assert.ok(tracing);
    await tracing.shutdown();
  });
});
