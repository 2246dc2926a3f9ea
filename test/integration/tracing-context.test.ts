// The span's context goes upstream the way the client sent its own: the HTTP header, the message's
// `_meta.traceparent`, or both; over Streamable HTTP and stdio. A body is edited only where that
// changes nothing else (one occurrence, same length, not compressed); otherwise it goes as it came.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { Tracing } from '../../src/sinks/tracing.ts';
import { jsonRpcResult, startRawServer } from '../fixtures/raw-server.ts';
import { startProxy } from '../helpers/proxy.ts';
import { fixtureServer, initialize, startStdio, toolCall } from '../helpers/stdio.ts';

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const CLIENT = `00-${TRACE}-${PARENT}-01`;

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

/** A real OTLP/HTTP receiver: the spans that reach it, decoded. */
async function receiver(): Promise<{ url: string; spans: Span[] }> {
  const spans: Span[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Span[] }> }> };
      spans.push(...body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, spans };
}

async function setup() {
  const otlp = await receiver();
  const upstream = await startRawServer(jsonRpcResult({ content: [{ type: 'text', text: 'ok' }] }));
  closers.push(() => upstream.close());
  const tracing = Tracing.fromOptions({ endpoint: otlp.url, env: {}, version: '0.0.0-test' })!;
  const proxy = await startProxy(new URL('/mcp', upstream.url), { tracing });
  closers.push(() => proxy.close());
  const post = async (id: number, body: Buffer | string, headers: Record<string, string> = {}) => {
    const res = await request(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });
    await res.body.text();
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === id);
    return upstream.requests.find((r) => r.body.toString().includes(`"id":${id}`) || r.headers['content-encoding'] === 'gzip')!;
  };
  return { otlp, tracing, upstream, post };
}

const call = (id: number, meta?: string, args: Record<string, unknown> = {}) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'echo', arguments: args, ...(meta ? { _meta: { traceparent: meta } } : {}) },
  });

describe('trace context upstream, the way the client sent it', () => {
  test('in _meta only: the span continues it, the upstream finds the span in _meta, no header is added, no other byte changes', async () => {
    const { otlp, tracing, post } = await setup();
    const body = call(1, CLIENT, { note: 'trace me' });
    const seen = await post(1, body);
    await tracing.shutdown();
    const span = otlp.spans.find((s) => s.name === 'tools/call echo')!;
    assert.equal(span.traceId, TRACE);
    assert.equal(span.parentSpanId, PARENT);
    assert.equal(seen.headers.traceparent, undefined, 'the client sent no header: none is added');
    assert.equal(seen.body.toString(), body.replace(CLIENT, `00-${TRACE}-${span.spanId}-01`));
  });

  test('in the header and _meta alike: both carry the span', async () => {
    const { otlp, tracing, post } = await setup();
    const seen = await post(2, call(2, CLIENT), { traceparent: CLIENT });
    await tracing.shutdown();
    const span = otlp.spans.find((s) => s.name === 'tools/call echo')!;
    const own = `00-${TRACE}-${span.spanId}-01`;
    assert.equal(seen.headers.traceparent, own);
    assert.equal(seen.body.toString(), call(2, own));
  });

  test('a body it cannot edit without touching more goes as it came: the value twice, or compressed', async () => {
    const { otlp, tracing, post } = await setup();
    const twice = call(3, CLIENT, { copy: CLIENT });
    assert.equal((await post(3, twice)).body.toString(), twice);
    const zipped = gzipSync(call(4, CLIENT));
    const seen = await post(4, zipped, { 'content-encoding': 'gzip' });
    assert.deepEqual(seen.body, zipped);
    await tracing.shutdown();
    assert.equal(otlp.spans.filter((s) => s.parentSpanId === PARENT).length, 2, 'both spans still continue the client trace');
  });
});

test('stdio: the child finds the span in the line _meta, in the client trace', async () => {
  const otlp = await receiver();
  const run = await startStdio(await fixtureServer(), { flags: ['--otlp-endpoint', otlp.url] });
  closers.push(() => run.close());
  run.send(initialize(1));
  await run.waitFor((m) => m.id === 1);
  run.send({
    ...toolCall(2, 'echo', { message: 'hi' }),
    params: { name: 'echo', arguments: { message: 'hi' }, _meta: { traceparent: CLIENT } },
  });
  const answer = await run.waitFor((m) => m.id === 2);
  const text = JSON.stringify(answer);
  const said = /\[traceparent (00-[\da-f]{32}-([\da-f]{16})-01)\]/.exec(text);
  assert.ok(said, text);
  assert.equal(said[1]!.slice(3, 35), TRACE, 'the same trace');
  assert.notEqual(said[2], PARENT, "the proxy's span in the client's place");
  run.child.kill('SIGTERM');
  await run.exit;
  const span = otlp.spans.find((s) => s.spanId === said[2]);
  assert.ok(span, `the span the child saw is exported: ${JSON.stringify(otlp.spans.map((s) => s.spanId))}`);
  assert.equal(span.parentSpanId, PARENT);
});
