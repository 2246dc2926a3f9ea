// Issue #25, the admin port under attack: the live report keeps bounded bytes whatever the traffic
// (1 MB tool names, a flood of exchanges) and answers a clear 503 when its page would be too large;
// /report and /report.json check Host and Origin as the MCP endpoint does, while probes and scrapes
// answer any Host; a span carries no peer string past its bound. Real sockets, real proxy.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { request } from 'undici';
import { LIVE_REPORT_BOUNDS, TRACE_BOUNDS } from '../../src/config/defaults.ts';
import { createAdminServer } from '../../src/proxy/admin.ts';
import { LiveReport } from '../../src/report/live.ts';
import { Tracing } from '../../src/sinks/tracing.ts';
import { jsonRpcResult, startRawServer } from '../fixtures/raw-server.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const UNKNOWN_TOOL = jsonRpcResult({ content: [{ type: 'text', text: 'Unknown tool' }], isError: true });

/** A tools/call of `name` through the proxy, answered. */
async function call(proxy: TestProxy, id: number, name: string): Promise<void> {
  const res = await request(proxy.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }),
  });
  await res.body.arrayBuffer();
}

/** A proxy feeding `report`, and an admin port serving it on 127.0.0.1. */
async function setup(report: LiveReport, admin: Partial<Parameters<typeof createAdminServer>[0]> = {}) {
  const upstream = await startRawServer(UNKNOWN_TOOL);
  closers.push(() => upstream.close());
  const proxy = await startProxy(new URL('/mcp', upstream.url), { report });
  closers.push(() => proxy.close());
  const server = createAdminServer({
    metrics: proxy.metrics,
    upstream: new URL('/mcp', upstream.url),
    readiness: [],
    report,
    ...admin,
  });
  const adminUrl = await server.listen(0, '127.0.0.1');
  closers.push(() => server.close());
  return { proxy, adminUrl };
}

/** A GET with the Host and Origin given (undici sets its own Host). */
function get(url: URL, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject).end();
  });
}

describe('admin port: the live report keeps bounded memory', () => {
  test('1 MB tool names are kept cut to the stated length, with a marker: /report.json stays small', async () => {
    const report = new LiveReport();
    const { proxy, adminUrl } = await setup(report);
    const huge = 'x'.repeat(1024 * 1024);
    for (let id = 1; id <= 12; id++) await call(proxy, id, `${id}${huge}`);
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 12);
    const json = await get(new URL('/report.json', adminUrl));
    assert.equal(json.status, 200);
    // Unbounded, the 12 names alone are 12 MB; cut, each is at most stringChars and its marker.
    assert.ok(json.body.length < 512 * 1024, `report.json is ${json.body.length} bytes`);
    const tools = (JSON.parse(json.body) as { tools: Array<{ key: string }> }).tools;
    assert.equal(tools.length, 12);
    for (const t of tools) {
      assert.ok(t.key.length <= LIVE_REPORT_BOUNDS.stringChars + 32, `a tool name of ${t.key.length} chars`);
      assert.match(t.key, /…\[104857\d chars\]$/);
    }
    const page = await get(new URL('/report', adminUrl));
    assert.equal(page.status, 200);
    assert.ok(page.body.length < 1024 * 1024, `the page is ${page.body.length} bytes`);
  });

  test('past its byte budget the report drops its oldest exchanges, whatever their count', async () => {
    // A budget of 64 KB with room for 10,000 exchanges by count: bytes decide.
    const report = new LiveReport(undefined, 10_000, undefined, { stringChars: 1024, ringBytes: 64 * 1024 });
    const { proxy, adminUrl } = await setup(report);
    for (let id = 1; id <= 200; id++) await call(proxy, id, `${id}-${'t'.repeat(1000)}`);
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 200);
    const json = await get(new URL('/report.json', adminUrl));
    const data = JSON.parse(json.body) as { summary: { exchanges: number }; tools: Array<{ key: string }> };
    // Each exchange holds over 2 KB (a 1,000-char name as UTF-16): 64 KB keeps fewer than 32 of the 200.
    assert.ok(data.summary.exchanges > 0 && data.summary.exchanges < 32, `${data.summary.exchanges} exchanges kept`);
    assert.ok(
      data.tools.some((t) => t.key.startsWith('200-')),
      'the newest is kept',
    );
    assert.ok(!data.tools.some((t) => t.key.startsWith('1-')), 'the oldest is dropped');
  });

  test('a report past renderBytes is a 503 that says so, never a crash; the proxy keeps serving', async () => {
    const report = new LiveReport();
    const { proxy, adminUrl } = await setup(report, { renderBytes: 4096 });
    for (let id = 1; id <= 8; id++) await call(proxy, id, `tool-${id}-${'n'.repeat(900)}`);
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 8);
    for (const path of ['/report', '/report.json']) {
      const res = await get(new URL(path, adminUrl));
      assert.equal(res.status, 503, path);
      assert.deepEqual(JSON.parse(res.body), { error: 'report too large', limit: 4096 });
    }
    await call(proxy, 9, 'after');
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 9);
  });
});

describe('admin port: /report checks Host and Origin as the MCP endpoint does', () => {
  test('on loopback: loopback names only for the report; probes and scrapes answer any Host', async () => {
    const { adminUrl } = await setup(new LiveReport());
    const port = adminUrl.port;
    for (const path of ['/report', '/report.json']) {
      const url = new URL(path, adminUrl);
      assert.equal((await get(url, { host: `evil.example:${port}` })).status, 403, `${path}: a rebound name`);
      const origin = await get(url, { host: `127.0.0.1:${port}`, origin: 'http://evil.example' });
      assert.equal(origin.status, 403, `${path}: a foreign Origin`);
      assert.deepEqual(JSON.parse(origin.body), { error: 'forbidden origin' });
      assert.equal((await get(url, { host: `localhost:${port}` })).status, 200, `${path}: localhost`);
      assert.equal((await get(url, { host: `127.0.0.1:${port}`, origin: `http://localhost:${port}` })).status, 200);
    }
    // Kubernetes probes and Prometheus send Host: <pod-ip>:port.
    for (const path of ['/healthz', '/metrics'])
      assert.equal((await get(new URL(path, adminUrl), { host: `10.1.2.3:${port}` })).status, 200, path);
  });

  test('the allowed hosts given (--allowed-hosts) admit their names and refuse the rest', async () => {
    const { adminUrl } = await setup(new LiveReport(), { guard: { allowedHosts: ['warden.internal'] } });
    const url = new URL('/report.json', adminUrl);
    assert.equal((await get(url, { host: 'warden.internal' })).status, 200);
    assert.equal((await get(url, { host: `localhost:${adminUrl.port}` })).status, 403);
  });
});

describe('tracing: peer strings in spans are bounded', () => {
  test('a 1 MB tool name reaches the span name and gen_ai.tool.name cut, with a marker; the export body stays small', async () => {
    const bodies: string[] = [];
    const receiver = await startRawServer((req, res, body) => {
      if (req.url === '/v1/traces') bodies.push(body.toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    closers.push(() => receiver.close());
    const upstream = await startRawServer(UNKNOWN_TOOL);
    closers.push(() => upstream.close());
    const tracing = Tracing.fromOptions({ endpoint: new URL('/v1/traces', receiver.url).href, env: {}, version: '0.0.0-test' });
    assert.ok(tracing);
    const proxy = await startProxy(new URL('/mcp', upstream.url), { tracing });
    closers.push(() => proxy.close());
    await call(proxy, 1, 'y'.repeat(1024 * 1024));
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 1);
    await tracing.shutdown();
    const total = bodies.reduce((n, b) => n + b.length, 0);
    assert.ok(total > 0 && total < 16 * 1024, `export bodies of ${total} bytes`);
    const span = (
      JSON.parse(bodies[0]!) as {
        resourceSpans: Array<{
          scopeSpans: Array<{ spans: Array<{ name: string; attributes: Array<{ key: string; value: { stringValue?: string } }> }> }>;
        }>;
      }
    ).resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    assert.ok(span.name.length <= TRACE_BOUNDS.stringChars + 32 && span.name.startsWith('tools/call yyy'), span.name.slice(0, 40));
    const tool = span.attributes.find((a) => a.key === 'gen_ai.tool.name')?.value.stringValue ?? '';
    assert.match(tool, /^y{256}…\[1048576 chars\]$/);
  });
});
