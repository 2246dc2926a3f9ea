// The legacy HTTP+SSE transport (2024-11-05) through the proxy: the reference server
// (server-everything in `sse` mode) under the SDK's SSEClientTransport, audit and enforce; and a
// raw fixture server for each fault, read with fetch: the endpoint event rewritten to the proxy,
// 202 POSTs accepted without a finding, answers judged on the session's stream, the stream ending
// or dying with requests open, a POST for a session the proxy does not know.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createGzip } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { startEverythingServer } from '../fixtures/everything-server.ts';
import { CRASH_PAGE, startLegacyServer, type LegacyServer } from '../fixtures/legacy-sse-server.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import { openLegacySession } from '../helpers/legacy-session.ts';
import { sseReader } from '../helpers/sse-reader.ts';

const loaded = await loadPolicyFile(new URL('../../config/enforce.yaml', import.meta.url).pathname, { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const enforce: Policy = loaded.policy;

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});
async function proxyFor(upstream: URL, options: Parameters<typeof startProxy>[1] = {}): Promise<TestProxy> {
  const proxy = await startProxy(upstream, options);
  closers.push(() => proxy.close());
  return proxy;
}
async function legacyServer(endpoint?: 'relative' | 'absolute'): Promise<LegacyServer> {
  const server = await startLegacyServer(endpoint);
  closers.push(() => server.close());
  return server;
}

const openSession = (proxy: TestProxy) => openLegacySession(proxy, closers);
const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { message: 'm' } } });
const init = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

describe('the SDK client and server-everything (sse) through the proxy', async () => {
  const upstream = await startEverythingServer('sse');
  closers.push(() => upstream.close());

  test('audit: the session works as without the proxy, each exchange judged on the stream', async () => {
    const proxy = await proxyFor(upstream.url);
    const client = new Client({ name: 'legacy-sdk-test', version: '1.0.0' });
    await client.connect(new SSEClientTransport(proxy.url));
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'echo'));
      const res = await client.callTool({ name: 'echo', arguments: { message: 'legacy' } });
      assert.deepEqual(res.content, [{ type: 'text', text: 'Echo: legacy' }]);
      const wrong = await client.callTool({ name: 'no-such-tool', arguments: {} });
      assert.equal(wrong.isError, true, 'audit changes nothing');
    } finally {
      await client.close();
    }
    const legacy = proxy.log.records.find((r) => r.msg === 'legacy session');
    assert.ok(legacy, 'the proxy learned the session from its endpoint event');
    const echo = proxy.exchanges().find((r) => r.tool === 'echo');
    assert.equal(echo?.transport, 'get-sse');
    assert.equal(echo?.outcome, 'result');
    assert.equal(echo?.session, legacy.session);
    assert.ok(proxy.log.records.some((r) => r.rule === 'unknown-tool-as-iserror'));
    const http = ['non-json-body', 'empty-body', 'response-content-type', 'notification-answered-with-body'];
    assert.deepEqual(
      proxy.log.records.filter((r) => http.includes(String(r.rule))),
      [],
      "a 202 Accepted is the legacy transport's answer to a POST, not a finding",
    );
  });

  test('enforce: an unknown tool reaches the SDK client as McpError -32602, rewritten inside the stream', async () => {
    const proxy = await proxyFor(upstream.url, { policy: () => enforce });
    const client = new Client({ name: 'legacy-sdk-test', version: '1.0.0' });
    await client.connect(new SSEClientTransport(proxy.url));
    try {
      await assert.rejects(
        client.callTool({ name: 'no-such-tool', arguments: {} }),
        (err: unknown) => err instanceof McpError && err.code === -32602,
      );
      const ok = await client.callTool({ name: 'echo', arguments: { message: 'fine' } });
      assert.deepEqual(ok.content, [{ type: 'text', text: 'Echo: fine' }]);
    } finally {
      await client.close();
    }
  });
});

/** A fixture session through the proxy under enforce, initialized and its tool catalogue listed. */
async function enforcedSession() {
  const server = await legacyServer();
  const proxy = await proxyFor(server.sse, { policy: () => enforce });
  const s = await openSession(proxy);
  await s.post(init);
  await s.events.next();
  await s.post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  await s.events.next();
  return { proxy, s };
}

describe('the legacy transport against a fixture server', () => {
  test('the endpoint event names the proxy: an absolute URL on the upstream is rebased (path and query kept), a relative one already resolves to it', async () => {
    for (const [style, expected] of [
      ['relative', () => '/message?sessionId=1'],
      ['absolute', (proxy: TestProxy) => `${proxy.url.origin}/message?sessionId=1`],
    ] as const) {
      const server = await legacyServer(style);
      const proxy = await proxyFor(server.sse);
      const { endpoint } = await openSession(proxy);
      assert.equal(endpoint, expected(proxy), style);
    }
  });

  test('--transport streamable-http: the endpoint event is relayed as it came', async () => {
    const server = await legacyServer('relative');
    const proxy = await proxyFor(server.sse, { transport: 'streamable-http' });
    const { endpoint } = await openSession(proxy);
    assert.equal(endpoint, '/message?sessionId=1');
  });

  test('a POST accepted with 202 is answered on the stream and judged there', async () => {
    const server = await legacyServer();
    const proxy = await proxyFor(server.sse);
    const s = await openSession(proxy);
    const accepted = await s.post(init);
    assert.equal(accepted.status, 202);
    assert.equal(await accepted.text(), 'Accepted', 'the body as the server sent it');
    const answer = await s.events.next();
    assert.equal(JSON.parse(answer.data).id, 0);
    const record = proxy.exchanges().find((r) => r.method === 'initialize');
    assert.equal(record?.outcome, 'result');
    assert.equal(record?.protocolVersion, '2024-11-05');
    assert.equal(record?.session, '1');
    assert.deepEqual(
      proxy.log.records.filter((r) => r.msg === 'violation'),
      [],
    );
  });

  test('enforce: a wrong answer is rewritten in the stream, event by event', async () => {
    const { s } = await enforcedSession();
    await s.post(call(2, 'missing'));
    const answer = JSON.parse((await s.events.next()).data);
    assert.equal(answer.id, 2);
    assert.equal(answer.error.code, -32602);
  });

  test('the stream ends with a request open: the client gets an error event for it, and the log a no-response finding', async () => {
    const server = await legacyServer();
    const proxy = await proxyFor(server.sse);
    const s = await openSession(proxy);
    await s.post(init);
    await s.events.next();
    await s.post(call(5, 'end-stream'));
    const [last] = await s.events.rest();
    const answer = JSON.parse(last!.data);
    assert.equal(answer.id, 5);
    assert.equal(answer.error.data.reason, 'WARDEN_UPSTREAM_RESET');
    const record = proxy.exchanges().find((r) => r.id === 5);
    assert.equal(record?.outcome, 'no-response');
    assert.ok(proxy.log.records.some((r) => r.rule === 'no-response' && r.id === 5));
    // The session is over: a POST that names it gets 404 from the proxy at once.
    const late = await s.post(call(6, 'echo'));
    assert.equal(late.status, 404);
    assert.equal(((await late.json()) as { id: unknown }).id, 6);
  });

  test('the upstream dies mid-stream: the open request gets its error, nothing hangs', async () => {
    const server = await legacyServer();
    const proxy = await proxyFor(server.sse);
    const s = await openSession(proxy);
    await s.post(init);
    await s.events.next();
    await s.post(call(8, 'die'));
    const rest = await s.events.rest(5_000);
    const answer = JSON.parse(rest.at(-1)!.data);
    assert.equal(answer.id, 8);
    assert.equal(answer.error.code, -32603);
    assert.equal(proxy.exchanges().find((r) => r.id === 8)?.outcome, 'no-response');
  });

  test('a POST for a session the proxy does not know: 404 with a JSON-RPC error carrying its id, never forwarded', async () => {
    const server = await legacyServer();
    const proxy = await proxyFor(server.sse);
    await openSession(proxy);
    const res = await fetch(new URL('/message?sessionId=999', proxy.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(call(9, 'echo')),
      signal: AbortSignal.timeout(5_000),
    });
    assert.equal(res.status, 404);
    const body = (await res.json()) as { id: unknown; error: { data: { reason: string } } };
    assert.equal(body.id, 9);
    assert.equal(body.error.data.reason, 'WARDEN_UNKNOWN_SESSION');
    assert.equal(server.requests.filter((r) => r.url.includes('999')).length, 0);
  });

  test('a POST the server refuses (400, text) is its answer: judged, relayed as it came under audit', async () => {
    const server = await legacyServer();
    const proxy = await proxyFor(server.sse);
    const s = await openSession(proxy);
    const res = await s.post(call(4, 'reject'));
    assert.equal(res.status, 400);
    assert.equal(await res.text(), 'Invalid message: refused by the fixture');
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 4);
    assert.equal(record.outcome, 'invalid-response');
    assert.equal(record.status, 400);
    assert.ok(proxy.log.find((r) => r.msg === 'violation' && r.id === 4 && r.rule === 'non-json-body'));
  });

  test('a message POSTed to another path the server routes to the session is judged too (enforce rewrites its answer)', async () => {
    const { proxy, s } = await enforcedSession();
    const elsewhere = new URL(s.endpoint.replace('/message?', '/messages?'), proxy.url);
    const res = await fetch(elsewhere, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(call(2, 'missing')),
    });
    assert.equal(res.status, 202);
    const answer = JSON.parse((await s.events.next()).data) as { id: unknown; error?: { code: number } };
    assert.equal(answer.id, 2);
    assert.equal(answer.error?.code, -32602);
    assert.equal(
      proxy.log.find((r) => r.msg === 'passthrough'),
      undefined,
    );
  });

  test("audit: a POST answered 500 with Express's HTML stack trace is judged, and reaches the client as it came", async () => {
    const server = await legacyServer();
    const proxy = await proxyFor(server.sse);
    const s = await openSession(proxy);
    const res = await s.post(call(11, 'crash'));
    assert.equal(res.status, 500);
    assert.equal(await res.text(), CRASH_PAGE);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 11);
    assert.equal(record.outcome, 'invalid-response');
    assert.equal(record.status, 500);
    const rules = proxy.log.records.filter((r) => r.msg === 'violation' && r.id === 11).map((r) => r.rule);
    assert.ok(rules.includes('html-body'), `violations: ${rules}`);
  });

  test('enforce: a POST answered 500 HTML becomes a JSON-RPC error with its id in the POST body, the 500 kept (never 202)', async () => {
    const server = await legacyServer();
    const proxy = await proxyFor(server.sse, { policy: () => enforce });
    const s = await openSession(proxy);
    const res = await s.post(call(12, 'crash'));
    assert.equal(res.status, 500, 'refused, as the server refused it: the client must still see a failure');
    const answer = (await res.json()) as { id: unknown; error?: { code: number; message: string } };
    assert.equal(answer.id, 12);
    assert.equal(typeof answer.error?.code, 'number');
    assert.doesNotMatch(JSON.stringify(answer), /node_modules|TypeError/);
    assert.ok(proxy.log.find((r) => r.msg === 'violation' && r.id === 12 && r.rule === 'html-body'));
  });
});

describe('a compressed legacy stream', () => {
  test('audit: the endpoint event (gzip, absolute URL on the upstream) still reaches the client rewritten to the proxy, decoded', async () => {
    const server = await startRawServer((req, res) => {
      if (req.method !== 'GET') return void res.writeHead(202).end('Accepted');
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      const gzip = createGzip();
      gzip.pipe(res);
      gzip.write(`event: endpoint\ndata: http://${req.headers.host}/message?sessionId=z\n\n`);
      gzip.flush();
    });
    closers.push(() => server.close());
    const proxy = await proxyFor(new URL('/sse', server.url));
    const res = await fetch(proxy.url, { headers: { accept: 'text/event-stream', 'accept-encoding': 'gzip' } });
    assert.equal(res.headers.get('content-encoding'), null, 'decoded for the client: an event can only be rewritten in the clear');
    const events = sseReader(res.body);
    closers.push(() => events.cancel());
    const first = await events.next();
    assert.equal(first.data, `${proxy.url.origin}/message?sessionId=z`);
  });
});
