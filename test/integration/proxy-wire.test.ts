// The proxy on the wire, against a programmable upstream: bytes pass unchanged, headers follow the
// forwarding rules, the modern era's headers survive, and every upstream failure reaches the
// client as a JSON-RPC error with its request's id.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request } from 'undici';
import { startRawServer, html500, jsonRpcResult, resetAfter, sseEvents, stall, type RawServer } from '../fixtures/raw-server.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import { brokenStream } from '../helpers/faults.ts';

const ACCEPT = 'application/json, text/event-stream';
const rpc = (id: unknown, method = 'tools/call', params: unknown = { name: 'echo', arguments: {} }) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, params });

const post = (url: URL, body: string, headers: Record<string, string> = {}) =>
  request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers } });

function rawPost(url: URL, body: string, headers: Record<string, string>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const running: Array<{ close(): Promise<void> }> = [];
async function setup(
  handler: Parameters<typeof startRawServer>[0],
  options: Parameters<typeof startProxy>[1] = {},
): Promise<{ upstream: RawServer; proxy: TestProxy }> {
  const upstream = await startRawServer(handler);
  const proxy = await startProxy(new URL('/mcp', upstream.url), options);
  running.push(proxy, upstream);
  return { upstream, proxy };
}
after(async () => {
  for (const r of running.reverse()) await r.close();
});

describe('SSE passes byte for byte, event by event', () => {
  const CHUNKS = [
    '\uFEFFid: 0\r\ndata: \r\n\r\n', // BOM, then a priming event with empty data
    ': keepalive\n\nretry: 1500\n\n',
    'id: 8\n\n', // id-only block
    'event: message\nid: 9\ndata: {"jsonrpc":"2.0","method":"notifications/progress",',
    '"params":{"progressToken":1,"progress":1,"message":"caf\xC3',
    '\xA9 😀"}}\r',
    '\n\r\nevent: message\rid: 10\rdata: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}\r\r',
  ].map((s) => Buffer.from(s, 'latin1'));

  test('priming, comments, retry, id-only blocks, CR/CRLF and split multibyte characters arrive unchanged', async () => {
    const { proxy } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      (async () => {
        for (const c of CHUNKS) {
          res.write(c);
          await new Promise((r) => setTimeout(r, 5));
        }
        res.end();
      })();
    });
    const res = await post(proxy.url, rpc(7));
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream');
    const got = Buffer.from(await res.body.arrayBuffer());
    assert.deepEqual(got, Buffer.concat(CHUNKS));
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 7);
    assert.equal(record.outcome, 'result');
    assert.equal(record.transport, 'sse');
  });

  test('each event reaches the client before the upstream writes the next', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { proxy } = await setup(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"first"}}\n\n');
      await gate;
      res.end('data: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\n');
    });
    const res = await post(proxy.url, rpc(1));
    const reader = res.body[Symbol.asyncIterator]();
    const first = await reader.next();
    assert.match(String(first.value), /first/);
    release();
    let rest = '';
    for (let r = await reader.next(); !r.done; r = await reader.next()) rest += String(r.value);
    assert.match(rest, /"id":1/);
  });
});

describe('headers', () => {
  test('a 2026-07-28 request keeps its MCP headers, loses hop-by-hop ones, gains X-Forwarded-*', async () => {
    const { upstream, proxy } = await setup(jsonRpcResult({ resultType: 'complete', content: [] }));
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 'a-1',
      method: 'tools/call',
      params: {
        name: 'get_weather',
        arguments: { region: 'eu' },
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
      },
    });
    // node:http, not undici: undici rewrites the Connection header this test needs to send.
    const res = await rawPost(proxy.url, body, {
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'get_weather',
      'mcp-param-region': 'eu',
      authorization: 'Bearer canary-token-1',
      connection: 'keep-alive, x-hop',
      'x-hop': 'dropped',
      te: 'trailers',
    });
    assert.equal(res.statusCode, 200);
    const seen = upstream.requests.at(-1)!;
    assert.equal(seen.body.toString(), body, 'body forwarded byte for byte');
    assert.equal(seen.headers['mcp-protocol-version'], '2026-07-28');
    assert.equal(seen.headers['mcp-method'], 'tools/call');
    assert.equal(seen.headers['mcp-name'], 'get_weather');
    assert.equal(seen.headers['mcp-param-region'], 'eu');
    assert.equal(seen.headers.authorization, 'Bearer canary-token-1');
    assert.equal(seen.headers['x-hop'], undefined);
    assert.equal(seen.headers.te, undefined);
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(seen.headers['x-forwarded-host'], proxy.url.host);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'a-1');
    assert.equal(record.protocolVersion, '2026-07-28');
    assert.equal(record.session, null);
    assert.equal(record.tool, 'get_weather');
  });

  test('ids 1 and "1" in one session are different requests', async () => {
    const { proxy } = await setup(async (_req, res, body) => {
      const msg = JSON.parse(body.toString());
      // The numeric one is answered last, so a key that ignored the type would mismatch them.
      await new Promise((r) => setTimeout(r, typeof msg.id === 'number' ? 60 : 0));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { method: msg.method } }));
    });
    const headers = { 'mcp-session-id': 'sess-ids' };
    const [a, b] = await Promise.all([
      post(proxy.url, rpc(1, 'tools/list', {}), headers),
      post(proxy.url, rpc('1', 'prompts/list', {}), headers),
    ]);
    await Promise.all([a.body.text(), b.body.text()]);
    const records = proxy.exchanges();
    assert.equal(records.find((r) => r.id === 1)?.method, 'tools/list');
    assert.equal(records.find((r) => r.id === '1')?.method, 'prompts/list');
  });

  test('WWW-Authenticate on a 401 names the proxy, the body passes unchanged', async () => {
    const { upstream, proxy } = await setup((_req, res) => {
      res.writeHead(401, {
        'www-authenticate': `Bearer realm="mcp", resource_metadata="${upstream.url.origin}/.well-known/oauth-protected-resource/mcp"`,
        'content-type': 'application/json',
      });
      res.end('{"error":"invalid_token"}');
    });
    const res = await post(proxy.url, rpc(2));
    assert.equal(res.statusCode, 401);
    assert.equal(
      res.headers['www-authenticate'],
      `Bearer realm="mcp", resource_metadata="${proxy.url.origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    assert.equal(await res.body.text(), '{"error":"invalid_token"}');
  });
});

describe('other paths', () => {
  test('a non-MCP path is forwarded through the pass-through; protected-resource metadata names the proxy', async () => {
    const { upstream, proxy } = await setup((req, res) => {
      if (req.url === '/.well-known/oauth-protected-resource/mcp') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ resource: `${upstream.url.origin}/mcp`, authorization_servers: ['https://auth.example.com'] }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain', 'x-custom': 'kept' });
      res.end(`you asked for ${req.url}`);
    });
    const prm = await request(new URL('/.well-known/oauth-protected-resource/mcp', proxy.url));
    assert.deepEqual(await prm.body.json(), { resource: `${proxy.url.origin}/mcp`, authorization_servers: ['https://auth.example.com'] });
    const other = await request(new URL('/health?deep=1', proxy.url));
    assert.equal(other.headers['x-custom'], 'kept');
    assert.equal(await other.body.text(), 'you asked for /health?deep=1');
    assert.ok(proxy.log.find((r) => r.msg === 'passthrough' && r.path === '/health?deep=1' && r.status === 200));
    assert.equal(proxy.exchanges().length, 0, 'no MCP exchange for other paths');
  });
});

describe('upstream failures become JSON-RPC errors with the request id', () => {
  test('refused connection: 502', async () => {
    const dead = await startRawServer(() => {});
    const url = new URL('/mcp', dead.url);
    await dead.close();
    const proxy = await startProxy(url);
    running.push(proxy);
    const res = await post(proxy.url, rpc('r-1'));
    assert.equal(res.statusCode, 502);
    assert.equal(res.headers['content-type'], 'application/json');
    const body = (await res.body.json()) as { id: unknown; error: { code: number; data: { reason: string } } };
    assert.equal(body.id, 'r-1');
    assert.equal(body.error.code, -32603);
    assert.equal(body.error.data.reason, 'WARDEN_UPSTREAM_UNREACHABLE');
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'r-1');
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_UNREACHABLE');
    assert.equal(record.status, 502);
  });

  test('too slow: 504 after the headers timeout', async () => {
    const { proxy } = await setup(stall(), { limits: { upstreamHeadersTimeoutMs: 150 } });
    const res = await post(proxy.url, rpc(42));
    assert.equal(res.statusCode, 504);
    const body = (await res.body.json()) as { id: unknown; error: { data: { reason: string } } };
    assert.equal(body.id, 42);
    assert.equal(body.error.data.reason, 'WARDEN_UPSTREAM_TIMEOUT');
  });

  test('silent between events: the stream ends cleanly after the idle timeout', async () => {
    const { proxy } = await setup(
      sseEvents(['data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n'], 0, { end: false }),
      {
        limits: { upstreamBodyTimeoutMs: 150 },
      },
    );
    const res = await post(proxy.url, rpc(43));
    assert.equal(res.statusCode, 200);
    assert.match(await res.body.text(), /notifications\/message/);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 43);
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_TIMEOUT');
  });

  test('reset in the middle of a JSON body: 502 with the id', async () => {
    const { proxy } = await setup(resetAfter('{"jsonrpc":"2.0","id":5,"resu', { contentType: 'application/json' }));
    const res = await post(proxy.url, rpc(5));
    assert.equal(res.statusCode, 502);
    const body = (await res.body.json()) as { id: unknown; error: { data: { reason: string } } };
    assert.equal(body.id, 5);
    assert.equal(body.error.data.reason, 'WARDEN_UPSTREAM_RESET');
  });

  test('reset in the middle of an SSE stream: delivered events arrive, then an error with the id, then a clean end', async () => {
    const first = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n';
    const { proxy } = await setup(resetAfter(`${first}data: {"jsonrpc":"2.0","id":6,`));
    const res = await post(proxy.url, rpc(6));
    assert.equal(res.statusCode, 200);
    const got = brokenStream(await res.body.text(), first);
    assert.equal(got.head, first, 'the whole first event, none of the broken one');
    assert.deepEqual(got.error, { id: 6, code: -32603, reason: 'WARDEN_UPSTREAM_RESET' });
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 6);
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_RESET');
    assert.ok(proxy.log.find((r) => r.msg === 'stream broken'));
  });

  test('an HTML 500 passes unchanged and is recorded as undecodable', async () => {
    const { proxy } = await setup(html500());
    const res = await post(proxy.url, rpc(8));
    assert.equal(res.statusCode, 500);
    assert.match(await res.body.text(), /<h1>Internal Server Error<\/h1>/);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 8);
    assert.equal(record.outcome, 'invalid-response');
    assert.ok(proxy.log.find((r) => r.msg === 'undecodable' && r.problem === 'html' && r.from === 'server'));
  });
});

describe('client side', () => {
  test('a body over the limit gets 413 with a JSON-RPC error and never reaches the upstream', async () => {
    const { upstream, proxy } = await setup(jsonRpcResult({}), { limits: { maxRequestBytes: 1024 } });
    const res = await post(proxy.url, rpc(9, 'tools/call', { name: 'echo', arguments: { text: 'x'.repeat(5000) } }));
    assert.equal(res.statusCode, 413);
    const body = (await res.body.json()) as { id: unknown; error: { code: number } };
    assert.equal(body.id, null);
    assert.equal(body.error.code, -32600);
    assert.equal(upstream.requests.length, 0);
  });

  test('a client that closes its connection aborts the upstream request', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((r) => (upstreamClosed = r));
    const { proxy } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      res.on('close', () => upstreamClosed());
    });
    const controller = new AbortController();
    const pending = request(proxy.url, {
      method: 'POST',
      body: rpc(11),
      headers: { 'content-type': 'application/json', accept: ACCEPT },
      signal: controller.signal,
    });
    const r = await pending;
    const it = r.body[Symbol.asyncIterator]();
    await it.next();
    controller.abort();
    await Promise.race([closed, new Promise((_, reject) => setTimeout(() => reject(new Error('upstream request still open')), 2000))]);
    const record = await proxy.log.waitFor((x) => x.msg === 'exchange' && x.id === 11);
    assert.equal(record.outcome, 'client-closed');
  });

  test('secrets never reach the log', async () => {
    const { proxy } = await setup(jsonRpcResult({ content: [] }));
    const res = await post(new URL('?access_token=canary-query-3&x=1', proxy.url), rpc(12), {
      authorization: 'Bearer canary-bearer-1',
      cookie: 'sid=canary-cookie-2',
    });
    await res.body.text();
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 12);
    const all = proxy.log.records.map((r) => JSON.stringify(r)).join('\n');
    for (const canary of ['canary-bearer-1', 'canary-cookie-2', 'canary-query-3']) assert.ok(!all.includes(canary), canary);
  });
});
