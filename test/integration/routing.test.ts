// JSON-RPC is MCP traffic by what it is, not by where it arrives (issue #24, case 1): with
// `--upstream` naming no path (the whole server) or another path than the one clients use, the
// official SDK client's session on /mcp is judged and enforced; a JSON POST that is not JSON-RPC
// (OAuth dynamic client registration) passes through byte for byte; a policy can scope a path out,
// and what it scopes out is logged and counted.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { loadPolicyText } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { startRawServer, jsonRpcResult } from '../fixtures/raw-server.ts';
import { startSdkServer } from '../fixtures/sdk-server.ts';
import { post, rpc } from '../helpers/faults.ts';
import { startProxy } from '../helpers/proxy.ts';
import { connectSdkClient } from '../helpers/sdk-client.ts';

const started: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const s of started.reverse()) await s.close();
});

function policy(yaml: string): Policy {
  const result = loadPolicyText(yaml, 'test.yaml', { rewritable: REWRITABLE });
  assert.ok(result.ok, JSON.stringify(!result.ok && result.errors));
  return result.policy;
}
const enforce = policy('mode: enforce\nrules:\n  unknown-tool: rewrite\n');

async function sdkSession(proxyMcp: URL): Promise<unknown> {
  const c = await connectSdkClient(proxyMcp, { capabilities: {} });
  started.push(c);
  await c.client.listTools();
  try {
    return await c.client.callTool({ name: 'no_such_tool', arguments: {} });
  } catch (err) {
    return err;
  }
}

describe('the MCP endpoint is where the JSON-RPC is', () => {
  for (const upstreamPath of ['', '/elsewhere']) {
    test(`--upstream ${upstreamPath || '(no path)'}: an SDK session on /mcp is judged and enforced`, async () => {
      const server = await startSdkServer({ mode: 'json' });
      started.push(server);
      const proxy = await startProxy(new URL(upstreamPath || '/', server.url), { policy: () => enforce });
      started.push(proxy);
      const outcome = await sdkSession(new URL('/mcp', proxy.url));
      // The SDK server answers an unknown tool with an isError result; enforce makes it -32602.
      assert.equal((outcome as { code?: number }).code, -32602, `the client got ${JSON.stringify(outcome)}`);
      const records = proxy.exchanges();
      assert.deepEqual(
        records.map((r) => r.method),
        ['initialize', 'tools/list', 'tools/call'],
      );
      assert.ok(proxy.log.find((r) => r.msg === 'violation' && r.rule === 'unknown-tool-as-iserror'));
      assert.equal(
        proxy.log.find((r) => r.msg === 'passthrough'),
        undefined,
        'nothing went through the pass-through',
      );
      // Each request went to the path it came on (/mcp), not to the upstream URL's path.
      assert.ok(server.requests.length >= 3 && server.requests.every((r) => r.url.startsWith('/mcp')));
    });
  }

  test('a JSON POST that is not JSON-RPC passes through as it came, and is not judged', async () => {
    const upstream = await startRawServer((req, res, body) => {
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: body.toString(), path: req.url }));
    });
    started.push(upstream);
    const proxy = await startProxy(new URL('/mcp', upstream.url));
    started.push(proxy);
    const registration = JSON.stringify({ client_name: 'x', redirect_uris: ['http://127.0.0.1/cb'] });
    const res = await request(new URL('/register', proxy.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: registration,
    });
    assert.equal(res.statusCode, 201);
    assert.deepEqual(await res.body.json(), { echo: registration, path: '/register' });
    const record = await proxy.log.waitFor((r) => r.msg === 'passthrough' && r.path === '/register');
    assert.equal(record.unjudged, undefined);
    assert.equal(proxy.exchanges().length, 0);
  });

  test('the GET and DELETE of a path that carried JSON-RPC are MCP traffic too', async () => {
    const upstream = await startRawServer((req, res) => {
      if (req.method === 'POST') return void jsonRpcResult({ content: [{ type: 'text', text: 'ok' }] })(req, res, Buffer.alloc(0));
      res.writeHead(405, { allow: 'POST' }).end();
    });
    started.push(upstream);
    const proxy = await startProxy(new URL('/mcp', upstream.url));
    started.push(proxy);
    await (await post(new URL('/rpc', proxy.url), rpc(1))).body.text();
    await (await request(new URL('/rpc', proxy.url), { method: 'DELETE' })).body.text();
    assert.equal(proxy.exchanges().length, 1);
    assert.equal(
      proxy.log.find((r) => r.msg === 'passthrough'),
      undefined,
    );
    assert.ok(
      proxy.log.find((r) => r.msg === 'session end'),
      'the DELETE went through the MCP endpoint',
    );
  });

  test('scope.passthrough relays a JSON-RPC path unjudged, at warn, counted by reason', async () => {
    const upstream = await startRawServer(jsonRpcResult({ content: [{ type: 'text', text: 'Error: failed to open file' }] }));
    started.push(upstream);
    const scoped = policy('scope:\n  passthrough: ["/legacy-api/*"]\n');
    const proxy = await startProxy(new URL('/mcp', upstream.url), { policy: () => scoped });
    started.push(proxy);
    await (await post(new URL('/legacy-api/v1', proxy.url), rpc(3))).body.text();
    await (await post(new URL('/other', proxy.url), rpc(4))).body.text();
    const record = await proxy.log.waitFor((r) => r.msg === 'passthrough' && r.path === '/legacy-api/v1');
    assert.equal(record.unjudged, 'scoped-out');
    assert.equal(record.level, 40);
    assert.deepEqual(
      proxy.exchanges().map((r) => r.id),
      [4],
    );
    assert.match(await proxy.metrics.registry.metrics(), /mcp_warden_unjudged_total\{reason="scoped-out"\} 1/);
  });

  test('an upstream that answers MCP requests with 404 pages: one error record names --upstream and the paths seen', async () => {
    const upstream = await startRawServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<!DOCTYPE html><html><body>Cannot POST /wrong</body></html>');
    });
    started.push(upstream);
    const proxy = await startProxy(new URL('/wrong', upstream.url));
    started.push(proxy);
    for (const id of [1, 2, 3, 4]) await (await post(proxy.url, rpc(id))).body.text();
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 4);
    const records = proxy.log.records.filter((r) => r.msg === 'upstream probably misconfigured');
    assert.equal(records.length, 1);
    assert.equal(records[0]!.level, 50);
    assert.equal(records[0]!.upstream, new URL('/wrong', upstream.url).href);
    assert.deepEqual(records[0]!.paths, ['/wrong']);
    assert.equal(records[0]!.status, 404);
  });

  test('a 404 an MCP server gives (JSON-RPC, session not found) is no misconfiguration', async () => {
    const upstream = await startRawServer((_req, res) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
      res.writeHead(404, { 'content-type': 'application/json' }).end(body);
    });
    started.push(upstream);
    const proxy = await startProxy(new URL('/mcp', upstream.url));
    started.push(proxy);
    for (const id of [1, 2, 3]) await (await post(proxy.url, rpc(id))).body.text();
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 3);
    assert.equal(
      proxy.log.find((r) => r.msg === 'upstream probably misconfigured'),
      undefined,
    );
  });
});
