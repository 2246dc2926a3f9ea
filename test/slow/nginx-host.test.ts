// Issue #44, item 6: a stock nginx in front (`proxy_pass http://mcp`, no Host of its own) sends the
// upstream block's name as Host; the proxy's 403 names that host and the flag that lets it through.
// With `proxy_set_header Host $http_host` (docs/operations.md, "A balancer in front") the client's
// Host reaches the proxy and the request passes. Debian's nginx; without it, this test skips.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startRawServer } from '../fixtures/raw-server.ts';
import { findNginx, startNginx } from '../helpers/nginx.ts';
import { startProxy } from '../helpers/proxy.ts';

const nginx = findNginx();
const skip = nginx ? false : 'nginx is not installed (apt-get install nginx-light)';
const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const call = (port: number) =>
  request(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

test('a stock nginx in front gets a 403 naming the Host it sent and --allowed-hosts; with $http_host it passes', { skip }, async () => {
  const upstream = await startRawServer((_req, res, body) => {
    const { id } = JSON.parse(body.toString()) as { id: number };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [] } }));
  });
  closers.push(() => upstream.close());
  const proxy = await startProxy(new URL('/mcp', upstream.url));
  closers.push(() => proxy.close());

  const stock = await startNginx(nginx!, proxy.url, '', null);
  closers.push(() => stock.stop());
  const refused = await call(stock.port);
  assert.equal(refused.statusCode, 403);
  const body = (await refused.body.json()) as { error: { message: string; data: { reason: string } } };
  assert.equal(body.error.data.reason, 'WARDEN_FORBIDDEN_HOST');
  assert.equal(body.error.message, 'Host "mcp" not allowed by the proxy: add it to --allowed-hosts (MCP_WARDEN_ALLOWED_HOSTS)');

  const passing = await startNginx(nginx!, proxy.url, '', '$http_host');
  closers.push(() => passing.stop());
  const answered = await call(passing.port);
  assert.equal(answered.statusCode, 200);
  assert.deepEqual(await answered.body.json(), { jsonrpc: '2.0', id: 1, result: { tools: [] } });
  assert.equal(upstream.requests.length, 1);
  assert.equal(upstream.requests[0]!.headers.host, `127.0.0.1:${passing.port}`, "the client's Host, as it came");
});
