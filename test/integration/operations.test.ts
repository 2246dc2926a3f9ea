// Operations: the admin port (health, readiness, Prometheus metrics with bounded labels), graceful
// shutdown with a deadline, and configuration from the environment.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { createAdminServer } from '../../src/proxy/admin.ts';
import { LiveReport } from '../../src/report/live.ts';
import { createProxy } from '../../src/proxy/server.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { startRawServer, type RawServer } from '../fixtures/raw-server.ts';
import { createLogCapture } from '../helpers/log-capture.ts';
import { cliArgs } from '../helpers/bundle.ts';

/** `node ...CLI <command>` runs src/cli.ts (a bundle of it: test/helpers/bundle.ts). */
const CLI = await cliArgs();

const ROOT = new URL('../../', import.meta.url);
const post = (url: URL, body: unknown) =>
  request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function setup(handler: Parameters<typeof startRawServer>[0]) {
  const upstream: RawServer = await startRawServer(handler);
  const proxy = createProxy({ upstream: new URL('/mcp', upstream.url), logger: createLogger({ destination: createLogCapture().stream }) });
  const running = await proxy.listen(0, '127.0.0.1');
  const admin = createAdminServer({
    metrics: proxy.metrics,
    upstream: new URL('/mcp', upstream.url),
    readiness: [{ status: 'draining', holds: () => !proxy.draining() }],
  });
  const adminUrl = await admin.listen(0, '127.0.0.1');
  closers.push(
    () => upstream.close(),
    () => running.close(),
    () => admin.close(),
  );
  return { upstream, proxy, url: running.url, adminUrl };
}

describe('admin port', () => {
  test('healthz, readyz and upstreamz (upstream up, then down) and metrics with bounded labels', async () => {
    const { upstream, url, adminUrl } = await setup((_req, res, body) => {
      const msg = JSON.parse(body.toString()) as { id: number; method: string; params?: { name?: string } };
      res.writeHead(200, { 'content-type': 'application/json' });
      if (msg.method === 'tools/list')
        return void res.end(
          JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] } }),
        );
      if (msg.params?.name === 'echo')
        return void res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'hi' }] } }));
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'Unknown tool' }], isError: true } }));
    });
    assert.equal((await request(new URL('/healthz', adminUrl))).statusCode, 200);
    const ready = await request(new URL('/readyz', adminUrl));
    assert.equal(ready.statusCode, 200);
    await ready.body.text();

    await (await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).body.text();
    await (await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {} } })).body.text();
    for (let i = 0; i < 5; i++)
      await (
        await post(url, { jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: `made_up_${i}`, arguments: {} } })
      ).body.text();
    await (await post(url, { jsonrpc: '2.0', id: 20, method: `vendor/${Math.random()}` })).body.text();
    const metrics = await (await request(new URL('/metrics', adminUrl))).body.text();
    assert.match(metrics, /mcp_warden_exchanges_total\{method="tools\/call",status="200",code="none",is_error="false"\} 1/);
    assert.match(metrics, /mcp_warden_exchanges_total\{method="tools\/call",status="200",code="none",is_error="true"\} 5/);
    assert.match(metrics, /mcp_warden_exchanges_total\{method="other",/, 'an unknown method folds into other');
    assert.match(metrics, /mcp_warden_tool_calls_total\{tool="echo",outcome="result"\} 1/);
    assert.match(metrics, /mcp_warden_tool_calls_total\{tool="other",outcome="isError"\} 5/, 'made-up tool names fold into other');
    assert.doesNotMatch(metrics, /made_up_/);
    assert.match(metrics, /mcp_warden_findings_total\{rule="unknown-tool-as-iserror",severity="error"\} 5/);
    assert.match(metrics, /mcp_warden_upstream_duration_seconds_bucket\{le="0.1",method="tools\/call"\}/);
    assert.match(metrics, /mcp_warden_exchange_duration_seconds_bucket\{le="0.1",method="tools\/call"\}/);
    assert.match(metrics, /mcp_warden_sessions \d+/);
    assert.match(metrics, /mcp_warden_open_sse_streams 0/);
    // The process under its conventional names, and what is running.
    assert.match(metrics, /^process_cpu_seconds_total \d/m);
    assert.match(metrics, /^nodejs_heap_size_used_bytes \d/m);
    assert.doesNotMatch(metrics, /mcp_warden_process_/);
    const { version } = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { version: string };
    assert.match(
      metrics,
      new RegExp(
        `^mcp_warden_build_info\\{version="${version.replace(/\./g, '\\.')}",node="${process.versions.node.replace(/\./g, '\\.')}"\\} 1$`,
        'm',
      ),
    );
    assert.match(metrics, /^mcp_warden_config_last_reload_successful 1$/m);
    // The proxy's own answers, by reason: a foreign Host refused (403).
    const refused = await request(url, {
      method: 'POST',
      headers: { host: 'evil.example', 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(refused.statusCode, 403);
    await refused.body.text();
    const after = await (await request(new URL('/metrics', adminUrl))).body.text();
    assert.match(after, /^mcp_warden_proxy_errors_total\{reason="WARDEN_FORBIDDEN_HOST"\} 1$/m);

    assert.match(after, /^mcp_warden_upstream_up 1$/m);
    const up = await request(new URL('/upstreamz', adminUrl));
    assert.equal(up.statusCode, 200);
    assert.deepEqual(await up.body.json(), { status: 'up', upstream: upstream.url.origin });

    // The upstream down: this process can still serve (its own JSON-RPC errors), so it stays ready;
    // /upstreamz and mcp_warden_upstream_up say the upstream is down.
    await upstream.close();
    const stillReady = await request(new URL('/readyz', adminUrl));
    assert.equal(stillReady.statusCode, 200);
    assert.deepEqual(await stillReady.body.json(), { status: 'ready' });
    const down = await request(new URL('/upstreamz', adminUrl));
    assert.equal(down.statusCode, 503);
    assert.deepEqual(await down.body.json(), { status: 'down', upstream: upstream.url.origin });
    assert.match(await (await request(new URL('/metrics', adminUrl))).body.text(), /^mcp_warden_upstream_up 0$/m);
    const answered = await post(url, { jsonrpc: '2.0', id: 30, method: 'tools/list' });
    assert.equal(answered.statusCode, 502);
    const error = (await answered.body.json()) as { id: number; error: { code: number; data: { reason: string } } };
    assert.equal(error.id, 30, "the proxy's own JSON-RPC error, with the request's id");
    assert.equal(error.error.data.reason, 'WARDEN_UPSTREAM_UNREACHABLE');
  });
});

describe('admin port: proxy errors count answers', () => {
  test('a batch the proxy answers itself (the upstream is down) counts once, not once per request', async () => {
    const proxy = createProxy({
      upstream: new URL('http://127.0.0.1:9/mcp'),
      logger: createLogger({ destination: createLogCapture().stream }),
    });
    const running = await proxy.listen(0, '127.0.0.1');
    closers.push(() => running.close());
    const batch = [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: {} } }));
    const res = await post(running.url, batch);
    assert.equal(res.statusCode, 502);
    assert.equal(((await res.body.json()) as unknown[]).length, 3, 'each request has its error');
    const text = await proxy.metrics.registry.metrics();
    assert.match(text, /^mcp_warden_proxy_errors_total\{reason="WARDEN_UPSTREAM_UNREACHABLE"\} 1$/m);
    const single = await post(running.url, batch[0]);
    await single.body.text();
    assert.match(await proxy.metrics.registry.metrics(), /^mcp_warden_proxy_errors_total\{reason="WARDEN_UPSTREAM_UNREACHABLE"\} 2$/m);
  });
});

describe('admin port: the live report', () => {
  test('/report and /report.json only where a live report is fed; HEAD without a body; other methods 405', async () => {
    const { proxy, adminUrl } = await setup((_req, res) => void res.end());
    const off = await request(new URL('/report.json', adminUrl));
    assert.equal(off.statusCode, 404);
    assert.deepEqual(((await off.body.json()) as { paths: string[] }).paths, ['/healthz', '/readyz', '/upstreamz', '/metrics']);

    const admin = createAdminServer({
      metrics: proxy.metrics,
      upstream: new URL('http://127.0.0.1:9/'),
      readiness: [],
      report: new LiveReport(),
    });
    const on = await admin.listen(0, '127.0.0.1');
    closers.push(() => admin.close());
    const head = await request(new URL('/report', on), { method: 'HEAD' });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(await head.body.text(), '');
    const data = await request(new URL('/report.json', on));
    assert.equal(data.statusCode, 200);
    const body = (await data.body.json()) as { summary: { exchanges: number }; input: { window: { maxExchanges: number } } };
    assert.equal(body.summary.exchanges, 0);
    assert.equal(body.input.window.maxExchanges, 10_000);
    const post = await request(new URL('/report', on), { method: 'POST' });
    assert.equal(post.statusCode, 405);
    await post.body.text();
  });
});

describe('graceful shutdown', () => {
  test('in-flight streams finish before the deadline; new connections are refused', async () => {
    const { proxy, url, adminUrl } = await setup(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n');
      await new Promise((r) => setTimeout(r, 300));
      res.end('data: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\n');
    });
    const streaming = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: {} } });
    const body = streaming.body.text();
    const stopping = proxy.shutdown(3000);
    const ready = await request(new URL('/readyz', adminUrl));
    assert.equal(ready.statusCode, 503, 'not ready while draining');
    await ready.body.text();
    await assert.rejects(post(url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }), 'no new connections');
    assert.match(await body, /"id":1,"result"/, 'the in-flight stream finished');
    assert.equal(await stopping, true);
  });

  test('past the deadline what is left is closed', async () => {
    const { proxy, url } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
    });
    const streaming = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'endless', arguments: {} } });
    const started = Date.now();
    assert.equal(await proxy.shutdown(200), false);
    assert.ok(Date.now() - started < 2000);
    await streaming.body.text().catch(() => undefined);
  });
});

describe('environment', () => {
  test('options come from MCP_WARDEN_* variables through the same validation', async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [...CLI, 'proxy'],
        {
          cwd: ROOT,
          timeout: 15_000,
          env: { ...process.env, MCP_WARDEN_UPSTREAM: 'http://127.0.0.1:9/mcp', MCP_WARDEN_TIMEOUT: 'soon' },
        },
        (_err, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /--timeout <duration>.*expected a duration such as 30s/s);
  });
});
