// Who and which trace, in every exchange record: the W3C trace id (the message's _meta traceparent,
// else the HTTP header), the client's address and User-Agent, and its self-reported name and
// version (initialize's clientInfo, remembered by the session; 2026-07-28: _meta on every request).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { startRawServer } from '../fixtures/raw-server.ts';
import { startProxy } from '../helpers/proxy.ts';

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const OTHER = '0af7651916cd43dd8448eb211c80319c';

describe('who and which trace', async () => {
  const upstream = await startRawServer((_req, res, body) => {
    const msg = JSON.parse(body.toString()) as { id: number; method: string };
    res.writeHead(200, { 'content-type': 'application/json', ...(msg.method === 'initialize' ? { 'mcp-session-id': 's-1' } : {}) });
    const result =
      msg.method === 'initialize' ? { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 's', version: '1' } } : {};
    res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
  });
  closers.push(() => upstream.close());
  const proxy = await startProxy(new URL('/mcp', upstream.url));
  closers.push(() => proxy.close());
  const post = async (body: unknown, headers: Record<string, string> = {}) => {
    const res = await request(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'user-agent': 'agent/1.2', ...headers },
      body: JSON.stringify(body),
    });
    await res.body.text();
  };

  test('legacy session: clientInfo from initialize on every later exchange; the trace from the header', async () => {
    await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'my-agent', version: '3.1.0' } },
    });
    await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': 's-1', traceparent: `00-${TRACE}-00f067aa0ba902b7-01` });
    const ping = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 2);
    assert.equal(ping.traceId, TRACE);
    assert.equal(ping.clientName, 'my-agent');
    assert.equal(ping.clientVersion, '3.1.0');
    assert.equal(ping.userAgent, 'agent/1.2');
    assert.equal(ping.peer, '127.0.0.1');
    const init = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 1);
    assert.equal(init.clientName, 'my-agent', 'the initialize itself names its client');
    assert.equal(init.traceId, undefined, 'no traceparent, no trace id');
  });

  test("2026-07-28: the request's own _meta clientInfo and traceparent win", async () => {
    await post(
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/list',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'modern-agent', version: '0.9' },
            traceparent: `00-${OTHER}-b7ad6b7169203331-01`,
          },
        },
      },
      { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` },
    );
    const list = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 3);
    assert.equal(list.traceId, OTHER);
    assert.equal(list.clientName, 'modern-agent');
    assert.equal(list.clientVersion, '0.9');
  });

  test('a traceparent that is not one (all-zero id, garbage) gives no trace id', async () => {
    await post({ jsonrpc: '2.0', id: 4, method: 'ping' }, { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` });
    await post({ jsonrpc: '2.0', id: 5, method: 'ping' }, { traceparent: 'not-a-trace' });
    assert.equal((await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 4)).traceId, undefined);
    assert.equal((await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 5)).traceId, undefined);
  });
});
