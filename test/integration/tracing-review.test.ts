// Review of #14 traces (review-14): a span begun when a request goes upstream must end with its
// exchange, one span per request (the one the upstream saw as its parent).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { Tracing } from '../../src/sinks/tracing.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import { startProxy } from '../helpers/proxy.ts';

const closers: Array<() => Promise<void>> = [];
after(async () => {
  // The proxy, then the tracing (its last export), then the servers.
  for (const close of closers.reverse()) await close();
});

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const begunOf = (t: Tracing): Map<string, unknown> => (t as unknown as { begun: Map<string, unknown> }).begun;

/** A proxy with export on; the upstream answers once `hold` requests are in flight together. */
async function setup(answer: (msg: { id?: number }) => string | undefined, hold = 1) {
  const exported: string[] = [];
  const receiver = await startRawServer((_req, res, body) => {
    const spans = JSON.stringify(JSON.parse(body.toString('utf8'))).match(/"spanId":"[\da-f]+"/g) ?? [];
    exported.push(...spans.map((s) => s.slice(10, -1)));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  closers.push(() => receiver.close());
  const held: Array<() => void> = [];
  const upstream = await startRawServer((_req, res, body) => {
    const text = answer(JSON.parse(body.toString()) as { id?: number });
    held.push(() => {
      if (text === undefined) res.writeHead(202).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    });
    if (held.length >= hold) for (const send of held.splice(0)) send();
  });
  closers.push(() => upstream.close());
  const tracing = Tracing.fromOptions({ endpoint: new URL('/v1/traces', receiver.url).href, env: {}, version: '0.0.0-test' })!;
  closers.push(() => tracing.shutdown());
  const proxy = await startProxy(new URL('/mcp', upstream.url), { tracing });
  closers.push(() => proxy.close());
  const post = async (body: unknown) => {
    const res = await request(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', traceparent: TRACEPARENT },
      body: JSON.stringify(body),
    });
    await res.body.text();
  };
  return { tracing, proxy, upstream, post, exported };
}

describe('review-14: traces', () => {
  test('a notification POST with a traceparent leaves no span begun (it has no exchange to end it)', async () => {
    const { tracing, post } = await setup(() => undefined);
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(begunOf(tracing).size, 0);
  });

  test('two requests in flight with the same traceparent: both spans the upstream saw as parents are exported', async () => {
    const { tracing, proxy, upstream, post, exported } = await setup(
      (msg) => JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: {} }),
      2,
    );
    await Promise.all([post({ jsonrpc: '2.0', id: 1, method: 'ping' }), post({ jsonrpc: '2.0', id: 2, method: 'ping' })]);
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 1);
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 2);
    await tracing.shutdown();
    const parents = upstream.requests.map((r) => String(r.headers.traceparent).slice(36, 52));
    assert.equal(new Set(parents).size, 2);
    for (const spanId of parents) assert.ok(exported.includes(spanId), `span ${spanId} (a request's parent upstream) exported`);
  });
});
