import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { Agent, type Dispatcher } from 'undici';
import { createPassthrough, type Passthrough } from '../../src/transport/passthrough.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { closeServer, listen } from '../helpers/net.ts';
import { startProxy } from '../helpers/proxy.ts';

const BLOB = randomBytes(5 * 1024 * 1024);
const SECRETS = { bearer: 'sekrit-bearer-123', cookie: 'cookie-secret-456', query: 'query-secret-789' };
// Node adds these on either hop by itself.
const NODE_ADDED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length']);

let upstream: URL;
const sentHeaders = new Map<string, OutgoingHttpHeaders>();

function upstreamHandler(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '/';
  const writeHead = (status: number, headers: OutgoingHttpHeaders): void => {
    sentHeaders.set(path, headers);
    res.writeHead(status, headers);
  };
  if (path === '/.well-known/oauth-protected-resource/mcp') {
    res.setHeader('content-type', 'application/json');
    res.setHeader('x-upstream', 'prm');
    res.end(JSON.stringify({ resource: `${upstream.origin}/mcp`, authorization_servers: ['https://auth.example'] }));
  } else if (path === '/.well-known/oauth-protected-resource') {
    // Chunked, no content-length: the rewritten body must get one.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"resource":');
    res.end(`"${upstream.origin}","bearer_methods_supported":["header"]}`);
  } else if (path === '/.well-known/oauth-protected-resource/external') {
    writeHead(200, { 'content-type': 'application/json', 'x-pretty': 'yes' });
    res.end('{\n  "resource" : "https://elsewhere.example/mcp"\n}\n');
  } else if (path === '/.well-known/oauth-protected-resource/huge') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ resource: `${upstream.origin}/mcp`, pad: 'x'.repeat(2 * 1024 * 1024) }));
  } else if (path === '/protected') {
    res.writeHead(401, {
      'www-authenticate': `Bearer error="invalid_token", resource_metadata="${upstream.origin}/.well-known/oauth-protected-resource/mcp", Bearer resource_metadata="https://auth.example/prm"`,
      'content-type': 'text/plain',
    });
    res.end('no');
  } else if (path === '/blob') {
    writeHead(200, { 'content-type': 'application/octet-stream', 'x-custom': 'a  b', 'set-cookie': ['a=1; Path=/', 'b=2'], etag: '"v1"' });
    let offset = 0;
    const pump = (): void => {
      while (offset < BLOB.length) {
        const chunk = BLOB.subarray(offset, (offset += 64 * 1024));
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  } else if (path === '/token' && req.method === 'POST') {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => {
        writeHead(200, { 'content-type': req.headers['content-type'] ?? 'text/plain', 'cache-control': 'no-store' });
        res.end(Buffer.concat(chunks));
      });
  } else if (path === '/hang') {
    // Never answers: the proxy's timeout must.
  } else if (path === '/cut') {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.write(BLOB.subarray(0, 1024), () => res.destroy());
  } else {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ url: req.url, headers: req.headers }));
  }
}

/** Every header the upstream wrote arrives as written; nothing but what Node adds itself appears. */
function assertHeadersForwarded(res: Dispatcher.ResponseData, path: string): void {
  const sent = sentHeaders.get(path) ?? {};
  assert.ok(Object.keys(sent).length > 0);
  for (const [name, value] of Object.entries(sent)) assert.deepEqual(res.headers[name], value, name);
  for (const name of Object.keys(res.headers)) assert.ok(NODE_ADDED.has(name) || name in sent, `unexpected ${name}`);
}

describe('passthrough over real sockets', () => {
  const lines: string[] = [];
  const logger = createLogger({ destination: { write: (line: string) => void lines.push(line) } });
  const upstreamServer = createServer(upstreamHandler);
  const servers: Server[] = [upstreamServer];
  const passthroughs: Passthrough[] = [];
  // Bounded so a regression fails instead of hanging the run.
  const client = new Agent({ headersTimeout: 5000, bodyTimeout: 5000 });
  let proxy: URL;
  let refused: URL;

  async function mount(target: URL, timeoutMs?: number): Promise<URL> {
    // A path in the upstream URL (the MCP endpoint's) must not prefix passthrough paths.
    const passthrough = createPassthrough({ upstream: new URL('/mcp', target), logger, timeoutMs });
    passthroughs.push(passthrough);
    const server = createServer((req, res) => passthrough.handle(req, res));
    servers.push(server);
    return listen(server);
  }

  function call(base: URL, path: string, opts: Partial<Dispatcher.RequestOptions> = {}): Promise<Dispatcher.ResponseData> {
    return client.request({ origin: base.origin, path, method: 'GET', ...opts });
  }

  async function waitForLog(predicate: (record: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    for (let i = 0; i < 100; i++) {
      const found = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find(predicate);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('log record never written');
  }

  before(async () => {
    upstream = await listen(upstreamServer);
    proxy = await mount(upstream, 1000);
    const closed = createServer();
    const port = (await listen(closed)).port;
    await closeServer(closed);
    refused = await mount(new URL(`http://127.0.0.1:${port}/`));
  });

  after(async () => {
    for (const p of passthroughs) p.close();
    await Promise.all(servers.map(closeServer));
    await client.close();
  });

  test('a 5 MB streamed body and its headers arrive byte for byte', async () => {
    const res = await call(proxy, '/blob');
    assert.equal(res.statusCode, 200);
    assert.ok(Buffer.from(await res.body.arrayBuffer()).equals(BLOB));
    assertHeadersForwarded(res, '/blob');
  });

  test('POST /token: form body forwarded and echoed untouched', async () => {
    const form = 'grant_type=authorization_code&code=abc%20def&redirect_uri=http%3A%2F%2Flocalhost%2Fcb';
    const res = await call(proxy, '/token', {
      method: 'POST',
      body: form,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), form);
    assertHeadersForwarded(res, '/token');
  });

  test("raw path and query reach the upstream, with X-Forwarded-* and the client's Host; secrets never logged", async () => {
    const path = `/echo/%2e%2e//x?y=%2F&access_token=${SECRETS.query}&z`;
    const res = await call(proxy, path, { headers: { authorization: `Bearer ${SECRETS.bearer}`, cookie: `sid=${SECRETS.cookie}` } });
    const seen = (await res.body.json()) as { url: string; headers: Record<string, string> };
    assert.equal(seen.url, path);
    assert.equal(seen.headers.host, proxy.host);
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(seen.headers['x-forwarded-host'], proxy.host);
    assert.equal(seen.headers.authorization, `Bearer ${SECRETS.bearer}`);
    const record = await waitForLog((r) => typeof r.path === 'string' && r.path.startsWith('/echo/'));
    assert.equal(record.msg, 'passthrough');
    assert.equal(record.method, 'GET');
    assert.equal(record.status, 200);
    assert.equal(typeof record.durationMs, 'number');
    assert.match(String(record.path), /access_token=\[REDACTED\]/);
    for (const line of lines) for (const secret of Object.values(SECRETS)) assert.ok(!line.includes(secret), line);
  });

  test('protected-resource metadata: `resource` rebased onto the proxy origin, content-length fixed', async () => {
    const res = await call(proxy, '/.well-known/oauth-protected-resource/mcp');
    const text = await res.body.text();
    assert.deepEqual(JSON.parse(text), { resource: `${proxy.origin}/mcp`, authorization_servers: ['https://auth.example'] });
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(text)));
    assert.equal(res.headers['x-upstream'], 'prm');

    const root = await call(proxy, '/.well-known/oauth-protected-resource', { headers: { host: 'warden.example:8443' } });
    const rootText = await root.body.text();
    assert.equal(JSON.parse(rootText).resource, 'http://warden.example:8443');
    assert.equal(root.headers['content-length'], String(Buffer.byteLength(rootText)));
  });

  test('metadata naming another origin, or too large to buffer, passes as the original bytes', async () => {
    const res = await call(proxy, '/.well-known/oauth-protected-resource/external');
    const text = '{\n  "resource" : "https://elsewhere.example/mcp"\n}\n';
    assert.equal(await res.body.text(), text);
    assert.equal(res.headers['content-length'], String(text.length));
    assertHeadersForwarded(res, '/.well-known/oauth-protected-resource/external');
    const huge = await call(proxy, '/.well-known/oauth-protected-resource/huge');
    assert.equal(JSON.parse(await huge.body.text()).resource, `${upstream.origin}/mcp`);
  });

  test('401: resource_metadata rebased, other challenges and the status untouched', async () => {
    const res = await call(proxy, '/protected');
    assert.equal(res.statusCode, 401);
    assert.equal(
      res.headers['www-authenticate'],
      `Bearer error="invalid_token", resource_metadata="${proxy.origin}/.well-known/oauth-protected-resource/mcp", Bearer resource_metadata="https://auth.example/prm"`,
    );
    assert.equal(await res.body.text(), 'no');
  });

  test('refused upstream: 502 JSON, logged with its code', async () => {
    const res = await call(refused, '/.well-known/oauth-authorization-server', { headers: { authorization: `Bearer ${SECRETS.bearer}` } });
    assert.equal(res.statusCode, 502);
    assert.equal(res.headers['content-type'], 'application/json');
    const body = (await res.body.json()) as { error: string; message: string };
    assert.equal(body.error, 'upstream_unreachable');
    assert.equal(typeof body.message, 'string');
    const record = await waitForLog((r) => r.path === '/.well-known/oauth-authorization-server');
    assert.equal(record.error, 'ECONNREFUSED');
    assert.equal(record.status, 502);
  });

  test('silent upstream: 504 JSON; a body cut short resets the client; the proxy keeps serving', async () => {
    const slow = await call(proxy, '/hang');
    assert.equal(slow.statusCode, 504);
    assert.equal(((await slow.body.json()) as { error: string }).error, 'upstream_unreachable');
    assert.equal((await waitForLog((r) => r.path === '/hang')).error, 'ETIMEDOUT');

    const cut = await call(proxy, '/cut');
    assert.equal(cut.statusCode, 200);
    await assert.rejects(cut.body.arrayBuffer());
    assert.equal((await waitForLog((r) => r.path === '/cut')).error, 'ECONNRESET');

    const again = await call(proxy, '/still-alive');
    assert.equal(again.statusCode, 200);
    await again.body.dump();
  });

  test("the proxy's upstream timeout (--timeout) bounds the pass-through too, not only the MCP endpoint", async () => {
    const warden = await startProxy(new URL('/mcp', upstream), { limits: { upstreamHeadersTimeoutMs: 300 } });
    try {
      const started = Date.now();
      const slow = await call(new URL(warden.url), '/hang');
      assert.equal(slow.statusCode, 504);
      await slow.body.dump();
      // The client agent gives up at 5 s; the pass-through's own default is 60 s.
      assert.ok(Date.now() - started < 2500, `answered after ${Date.now() - started} ms`);
    } finally {
      await warden.close();
    }
  });

  test('a GET on a kept-alive socket the upstream drops as it is reused goes once more, on a fresh socket', async () => {
    // The race of a keep-alive pool: the server closes an idle socket just as the proxy reuses it.
    // Here the upstream drops every socket's second request before answering it.
    const perSocket = new WeakMap<object, number>();
    const dropping = createServer((req, res) => {
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      if (n > 1) return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
    });
    servers.push(dropping);
    const through = await mount(await listen(dropping));
    for (let i = 0; i < 3; i++) {
      const res = await call(through, '/.well-known/oauth-authorization-server');
      assert.equal(res.statusCode, 200, `GET ${i + 1}`);
      assert.equal(await res.body.text(), 'ok');
    }
    // A POST is never repeated: its body may have reached the server.
    const second = await call(through, '/token', { method: 'POST', body: 'grant_type=x' });
    await second.body.text();
    const posted = await call(through, '/token', { method: 'POST', body: 'grant_type=x' });
    await posted.body.text();
    assert.ok([second.statusCode, posted.statusCode].includes(502), 'a dropped POST is answered 502, not sent twice');
  });
});
