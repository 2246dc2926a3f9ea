// What the proxy holds stays bounded whatever the peers do: tool catalogues shared between the
// sessions that list the same tools and bounded in total (a dropped one is logged), and request
// bodies held at once bounded in total (past it, 503 with Retry-After).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawServer, jsonRpcResult, type RawHandler } from '../fixtures/raw-server.ts';
import { post, rpc, sleep, within } from '../helpers/faults.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const closers: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const c of closers.reverse()) await c.close();
});

async function setup(handler: RawHandler, options: Parameters<typeof startProxy>[1] = {}): Promise<TestProxy> {
  const upstream = await startRawServer(handler);
  closers.push(upstream);
  const proxy = await startProxy(new URL('/mcp', upstream.url), options);
  closers.push(proxy);
  return proxy;
}

/** A catalogue of `n` tools whose schemas make it about `n` KiB. */
const catalogue = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    name: `${prefix}_${i}`,
    inputSchema: { type: 'object', properties: { q: { type: 'string', description: 'd'.repeat(1000) } } },
  }));

/** Initialize (the server issues `sid`), then tools/list on that session. */
async function listTools(proxy: TestProxy, sid: string): Promise<void> {
  const init = await post(
    proxy.url,
    rpc(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } }),
    { 'x-sid': sid },
  );
  await init.body.text();
  const list = await post(proxy.url, rpc(1, 'tools/list', {}), { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
  await list.body.text();
}

/** A server that issues the session id the test asks for, and lists `tools(sid)`. */
const issuing =
  (tools: (sid: string) => unknown[]): RawHandler =>
  (req, res, body) => {
    const text = body.toString();
    if (text.includes('"initialize"')) {
      const sid = String(req.headers['x-sid']);
      return jsonRpcResult(
        { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } },
        { 'mcp-session-id': sid },
      )(req, res, body);
    }
    return jsonRpcResult({ tools: tools(String(req.headers['mcp-session-id'])) })(req, res, body);
  };

describe('tool catalogues', () => {
  // Ten sessions are enough: held apiece they would be ten catalogues and 3 MiB, not one under 400 KiB.
  test('10 sessions listing the same 300 KiB of tools hold it once', async () => {
    const tools = catalogue('same', 300);
    const proxy = await setup(issuing(() => tools));
    for (let i = 0; i < 10; i++) await listTools(proxy, `s${i}`);
    assert.equal(proxy.sessions.size, 10);
    assert.equal(proxy.sessions.catalogueStats.catalogues, 1);
    assert.ok(proxy.sessions.catalogueStats.bytes < 400 * 1024);
    // The shared catalogue still judges: an unknown tool on any session is flagged.
    await (
      await post(proxy.url, rpc(2, 'tools/call', { name: 'nope', arguments: {} }), {
        'mcp-session-id': 's7',
        'mcp-protocol-version': '2025-06-18',
      })
    ).body.text();
    assert.ok(await proxy.log.waitFor((r) => r.msg === 'violation' && r.rule === 'unknown-tool-as-result' && r.session === 's7'));
  });

  test('distinct catalogues past the bound: the oldest is dropped, logged, and its session judges no tool as unknown', async () => {
    const proxy = await setup(
      issuing((sid) => catalogue(sid, 100)),
      { limits: { maxCatalogueBytes: 350 * 1024 } },
    );
    for (let i = 0; i < 5; i++) await listTools(proxy, `d${i}`);
    const stats = proxy.sessions.catalogueStats;
    assert.ok(stats.bytes <= 350 * 1024, `${stats.bytes} bytes held`);
    const dropped = await proxy.log.waitFor((r) => r.msg === 'catalogue dropped');
    assert.equal(dropped.tools, 100);
    assert.equal(dropped.sessions, 1);
    await (
      await post(proxy.url, rpc(3, 'tools/call', { name: 'nope', arguments: {} }), {
        'mcp-session-id': 'd0',
        'mcp-protocol-version': '2025-06-18',
      })
    ).body.text();
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 3);
    assert.equal(
      proxy.log.find((r) => r.msg === 'violation' && String(r.rule).startsWith('unknown-tool') && r.session === 'd0'),
      undefined,
    );
  });
});

describe('request bodies held at once', () => {
  test('past the total budget a POST gets 503 JSON-RPC with Retry-After; below it again, it is served', async () => {
    const held: Array<() => void> = [];
    const answer = jsonRpcResult({ content: [] });
    const proxy = await setup((req, res, body) => void held.push(() => void answer(req, res, body)), {
      limits: { maxRequestBytes: 1024 * 1024, maxBufferedRequestBytes: 2 * 1024 * 1024 },
    });
    const big = (id: number) => rpc(id, 'tools/call', { name: 'echo', arguments: { pad: 'p'.repeat(900 * 1024) } });
    const first = [post(proxy.url, big(1)), post(proxy.url, big(2))];
    await within(
      5000,
      'two held upstream',
      (async () => {
        while (held.length < 2) await sleep(10);
      })(),
    );
    const third = await post(proxy.url, big(3));
    assert.equal(third.statusCode, 503);
    assert.equal(third.headers['retry-after'], '1');
    const body = (await third.body.json()) as { jsonrpc: string; id: unknown; error: { code: number; data: { reason: string } } };
    assert.equal(body.error.data.reason, 'WARDEN_OVERLOADED');
    for (const release of held) release();
    for (const p of first) assert.equal((await p).statusCode, 200);
    await sleep(20);
    const fourth = post(proxy.url, big(4));
    await within(
      5000,
      'fourth upstream',
      (async () => {
        while (held.length < 3) await sleep(10);
      })(),
    );
    held[2]!();
    assert.equal((await fourth).statusCode, 200);
  });
});

describe('an answer over the audit limit under enforce', () => {
  const big = (id: unknown) =>
    JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'x'.repeat(300 * 1024) }] } });
  const serveBig: RawHandler = (_req, res, body) => {
    const { id } = JSON.parse(body.toString()) as { id: unknown };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(big(id));
  };

  test('unaudited-response: block: the client gets an error with its id instead of the unread body', async () => {
    const { compilePolicy } = await import('../../src/config/compile.ts');
    const policy = compilePolicy({ mode: 'enforce', rules: { 'unaudited-response': 'block' } }, { source: 'test' });
    const proxy = await setup(serveBig, { policy: () => policy, limits: { auditBodyBytes: 64 * 1024 } });
    const res = await post(proxy.url, rpc(21));
    assert.equal(res.statusCode, 200);
    const body = (await res.body.json()) as { id: unknown; error: { code: number; data: { reason: string; rule: string } } };
    assert.deepEqual(
      [body.id, body.error.code, body.error.data.reason, body.error.data.rule],
      [21, -32603, 'WARDEN_BLOCKED', 'unaudited-response'],
    );
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 21);
    assert.deepEqual([record.outcome, record.verdict], ['unaudited', 'block']);
  });

  test('the default (log) still relays it as it came, with the finding', async () => {
    const { compilePolicy } = await import('../../src/config/compile.ts');
    const policy = compilePolicy({ mode: 'enforce' }, { source: 'test' });
    const proxy = await setup(serveBig, { policy: () => policy, limits: { auditBodyBytes: 64 * 1024 } });
    const res = await post(proxy.url, rpc(22));
    assert.equal(await res.body.text(), big(22));
    assert.ok(await proxy.log.waitFor((r) => r.msg === 'violation' && r.rule === 'unaudited-response' && r.id === 22));
  });
});

describe('an SSE event over the audit limit under enforce', () => {
  const answer = (id: unknown) =>
    `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'y'.repeat(200 * 1024) }] } })}\n\n`;
  const serve: RawHandler = (_req, res, body) => {
    const { id } = JSON.parse(body.toString()) as { id: unknown };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': keepalive\n\n');
    res.end(answer(id));
  };

  test('unaudited-response: block: the event is withheld and the request gets an error with its id on the stream', async () => {
    const { compilePolicy } = await import('../../src/config/compile.ts');
    const policy = compilePolicy({ mode: 'enforce', rules: { 'unaudited-response': 'block' } }, { source: 'test' });
    const proxy = await setup(serve, { policy: () => policy, limits: { auditEventBytes: 32 * 1024 } });
    const res = await post(proxy.url, rpc(31));
    const text = await res.body.text();
    assert.ok(!text.includes('yyyy'), 'nothing of the unread event reached the client');
    const data = JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as { id: unknown; error: { data: { reason: string; rule: string } } };
    assert.deepEqual([data.id, data.error.data.reason, data.error.data.rule], [31, 'WARDEN_BLOCKED', 'unaudited-response']);
  });

  test('the default (log) relays it as it came', async () => {
    const { compilePolicy } = await import('../../src/config/compile.ts');
    const policy = compilePolicy({ mode: 'enforce' }, { source: 'test' });
    const proxy = await setup(serve, { policy: () => policy, limits: { auditEventBytes: 32 * 1024 } });
    const res = await post(proxy.url, rpc(32));
    assert.equal(await res.body.text(), `: keepalive\n\n${answer(32)}`);
  });
});
