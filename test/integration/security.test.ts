// The holes of the security issue, each on real sockets: the client's Host reaches the upstream,
// the proxy's own Host/Origin guard, every spelling of the MCP path judged, OAuth metadata at a
// custom location rebased, one client unable to crowd out another (open requests, sessions,
// idle connections, the connection cap), and `Expect: 100-continue`.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { request } from 'undici';
import { startRawServer, jsonRpcResult, type RawHandler, type RawServer } from '../fixtures/raw-server.ts';
import { ACCEPT, eventually, post, rpc, sleep, within } from '../helpers/faults.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

/** The client connections the proxy holds open. */
const connections = (proxy: TestProxy): Promise<number> =>
  new Promise((resolve, reject) => proxy.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

const started: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const s of started.reverse()) await s.close();
});

async function setup(
  handler: RawHandler,
  options: Parameters<typeof startProxy>[1] = {},
): Promise<{ upstream: RawServer; proxy: TestProxy }> {
  const upstream = await startRawServer(handler);
  started.push(upstream);
  const proxy = await startProxy(new URL('/mcp', upstream.url), options);
  started.push(proxy);
  return { upstream, proxy };
}

/** Sends raw bytes and resolves with everything the proxy wrote back until it closed. */
function rawExchange(port: number, bytes: string, timeoutMs = 5000): Promise<string> {
  return within(
    timeoutMs,
    'raw exchange',
    new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let got = '';
      socket.on('data', (c) => (got += c.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => resolve(got));
      socket.write(bytes);
    }),
  );
}

const jsonRpcBody = (raw: string): { jsonrpc: string; id: unknown; error: { code: number; message: string } } =>
  JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

describe("Host: the client's reaches the upstream (its DNS-rebinding check needs it)", () => {
  test('the upstream sees the Host the client sent, on the MCP endpoint and the pass-through', async () => {
    const { upstream, proxy } = await setup(jsonRpcResult({ content: [] }));
    const host = `localhost:${proxy.url.port}`;
    await (await post(proxy.url, rpc(1), { host })).body.text();
    await (await request(new URL('/.well-known/oauth-authorization-server', proxy.url), { headers: { host } })).body.text();
    assert.deepEqual(
      upstream.requests.map((r) => r.headers.host),
      [host, host],
    );
  });

  test("hostHeader: upstream sends the upstream URL's host instead (virtual-hosted upstreams)", async () => {
    const { upstream, proxy } = await setup(jsonRpcResult({ content: [] }), { hostHeader: 'upstream' });
    await (await post(proxy.url, rpc(1))).body.text();
    await (await request(new URL('/other', proxy.url))).body.text();
    assert.deepEqual(
      upstream.requests.map((r) => r.headers.host),
      [upstream.url.host, upstream.url.host],
    );
  });
});

describe('Host and Origin guard', () => {
  const refusedWith403 = async (res: Awaited<ReturnType<typeof request>>, reason: RegExp, message?: string): Promise<void> => {
    assert.equal(res.statusCode, 403);
    assert.match(String(res.headers['content-type']), /application\/json/);
    const body = (await res.body.json()) as {
      jsonrpc: string;
      id: unknown;
      error: { code: number; message: string; data: { reason: string } };
    };
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, null);
    assert.equal(body.error.code, -32600);
    assert.match(body.error.data.reason, reason);
    if (message !== undefined) assert.equal(body.error.message, message);
  };

  test('on loopback, a foreign Host gets 403 JSON-RPC and never reaches the upstream; loopback names pass', async () => {
    const { upstream, proxy } = await setup(jsonRpcResult({ content: [] }));
    // The answer names the Host it got and the setting that lets it through (#44: a balancer's name).
    await refusedWith403(
      await post(proxy.url, rpc(1), { host: 'evil.example.com' }),
      /FORBIDDEN_HOST/,
      'Host "evil.example.com" not allowed by the proxy: add it to --allowed-hosts (MCP_WARDEN_ALLOWED_HOSTS)',
    );
    await refusedWith403(
      await request(new URL('/.well-known/oauth-protected-resource', proxy.url), { headers: { host: 'evil.example.com:80' } }),
      /FORBIDDEN_HOST/,
    );
    assert.equal(upstream.requests.length, 0);
    for (const host of [`127.0.0.1:${proxy.url.port}`, `localhost:${proxy.url.port}`, 'LOCALHOST', `[::1]:${proxy.url.port}`]) {
      const res = await post(proxy.url, rpc(1), { host });
      assert.equal(res.statusCode, 200, host);
      await res.body.text();
    }
    const refused = proxy.log.records.filter((r) => r.msg === 'request refused');
    assert.equal(refused.length, 2);
    assert.equal(refused[0]!.reason, 'host');
  });

  test('on loopback, a foreign Origin gets 403 JSON-RPC; a loopback Origin or none passes', async () => {
    const { upstream, proxy } = await setup(jsonRpcResult({ content: [] }));
    await refusedWith403(
      await post(proxy.url, rpc(1), { origin: 'http://evil.example.com' }),
      /FORBIDDEN_ORIGIN/,
      'Origin "http://evil.example.com" not allowed by the proxy: add it to --allowed-origins (MCP_WARDEN_ALLOWED_ORIGINS)',
    );
    await refusedWith403(await post(proxy.url, rpc(1), { origin: 'null' }), /FORBIDDEN_ORIGIN/);
    assert.equal(upstream.requests.length, 0);
    for (const origin of [`http://localhost:${proxy.url.port}`, 'http://127.0.0.1:3000', 'https://[::1]']) {
      const res = await post(proxy.url, rpc(1), { origin });
      assert.equal(res.statusCode, 200, origin);
      await res.body.text();
    }
    assert.equal(upstream.requests.length, 3);
    assert.equal(upstream.requests[0]!.headers.origin, `http://localhost:${proxy.url.port}`, 'the Origin goes upstream unchanged');
  });

  test('configured lists replace the defaults; * allows any', async () => {
    const { proxy } = await setup(jsonRpcResult({ content: [] }), {
      guard: { allowedHosts: ['mcp.example.com'], allowedOrigins: ['https://app.example.com'] },
    });
    const ok = await post(proxy.url, rpc(1), { host: 'mcp.example.com', origin: 'https://app.example.com' });
    assert.equal(ok.statusCode, 200);
    await ok.body.text();
    await refusedWith403(await post(proxy.url, rpc(1)), /FORBIDDEN_HOST/);
    await refusedWith403(await post(proxy.url, rpc(1), { host: 'mcp.example.com', origin: 'http://app.example.com' }), /FORBIDDEN_ORIGIN/);
    const { proxy: open } = await setup(jsonRpcResult({ content: [] }), { guard: { allowedHosts: ['*'], allowedOrigins: ['*'] } });
    const any = await post(open.url, rpc(1), { host: 'evil.example.com', origin: 'http://evil.example.com' });
    assert.equal(any.statusCode, 200);
    await any.body.text();
  });
});

describe('every spelling of the MCP path is judged', () => {
  const silentFailure = jsonRpcResult({ content: [{ type: 'text', text: 'Error: failed to open file' }] });

  for (const path of ['/mcp/', '/MCP', '/Mcp/', '//mcp', '/mcp;x=1', '/%6dcp', '/a/../mcp', '/mcp?x=1']) {
    test(`POST ${path} goes through the pipeline and upstream to /mcp`, async () => {
      const { upstream, proxy } = await setup(silentFailure);
      // undici normalises some paths itself: write the target raw.
      const raw = await rawExchange(
        Number(proxy.url.port),
        `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: ${ACCEPT}\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(rpc(7))}\r\n\r\n${rpc(7)}`,
      );
      assert.match(raw, /^HTTP\/1\.1 200/);
      const exchange = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 7);
      assert.equal(exchange.method, 'tools/call');
      assert.ok(proxy.log.find((r) => r.msg === 'violation' && r.id === 7 && r.rule === 'silent-success'));
      assert.equal(upstream.requests.at(-1)!.url.split('?')[0], '/mcp');
    });
  }

  test('absolute form (POST http://proxy/mcp HTTP/1.1) is judged', async () => {
    const { proxy } = await setup(silentFailure);
    const raw = await rawExchange(
      Number(proxy.url.port),
      `POST http://127.0.0.1:${proxy.url.port}/MCP HTTP/1.1\r\nhost: 127.0.0.1:${proxy.url.port}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(rpc(8))}\r\n\r\n${rpc(8)}`,
    );
    assert.match(raw, /^HTTP\/1\.1 200/);
    assert.ok(await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 8));
  });

  test('a JSON-RPC POST to another path is judged too, and goes upstream to that path', async () => {
    const { upstream, proxy } = await setup(silentFailure);
    const res = await post(new URL('/mcpx', proxy.url), rpc(9));
    await res.body.text();
    const exchange = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 9);
    assert.equal(exchange.method, 'tools/call');
    assert.ok(proxy.log.find((r) => r.msg === 'violation' && r.id === 9 && r.rule === 'silent-success'));
    assert.equal(upstream.requests.at(-1)!.url, '/mcpx');
    assert.equal(
      proxy.log.find((r) => r.msg === 'passthrough'),
      undefined,
    );
  });
});

describe('OAuth metadata at a custom location', () => {
  test('the document a challenge points to is rebased too, wherever it lives', async () => {
    let origin = '';
    const { upstream, proxy } = await setup((req, res) => {
      if (req.url === '/custom/metadata/location.json') {
        const doc = JSON.stringify({ resource: `${origin}/mcp`, authorization_servers: [`${origin}/auth`] });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(doc) });
        res.end(doc);
        return;
      }
      res.writeHead(401, {
        'www-authenticate': `Bearer resource_metadata="${origin}/custom/metadata/location.json"`,
        'content-type': 'application/json',
      });
      res.end('{"error":"unauthorized"}');
    });
    origin = upstream.url.origin;
    const res = await post(proxy.url, rpc(1));
    await res.body.text();
    assert.equal(res.statusCode, 401);
    const challenge = String(res.headers['www-authenticate']);
    assert.match(challenge, new RegExp(`resource_metadata="${proxy.url.origin}/custom/metadata/location.json"`));
    const doc = (await (await request(new URL('/custom/metadata/location.json', proxy.url))).body.json()) as { resource: string };
    assert.equal(doc.resource, `${proxy.url.origin}/mcp`);
  });
});

describe('one client cannot crowd out another', () => {
  test("a session flooding open requests evicts its own, not another session's", async () => {
    // The upstream holds every call of `slow` until released; `quick` is answered at once.
    const held: Array<() => void> = [];
    const answer = jsonRpcResult({ content: [{ type: 'text', text: 'ok' }] });
    const { proxy } = await setup(
      (req, res, body) => {
        if (body.includes('"slow"')) held.push(() => void answer(req, res, body));
        else return answer(req, res, body);
      },
      { limits: { maxOpenRequests: 40, maxOpenRequestsPerSession: 10 } },
    );
    const calm = post(
      proxy.url,
      JSON.stringify({ jsonrpc: '2.0', id: 'calm', method: 'tools/call', params: { name: 'slow', arguments: {} } }),
      { 'mcp-session-id': 'calm' },
    );
    await within(
      2000,
      'calm held',
      (async () => {
        while (held.length < 1) await sleep(5);
      })(),
    );
    const flood = Array.from({ length: 60 }, (_, i) =>
      post(proxy.url, JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'slow', arguments: {} } }), {
        'mcp-session-id': 'flood',
      }),
    );
    await within(
      5000,
      'all held',
      (async () => {
        while (held.length < 61) await sleep(5);
      })(),
    );
    for (const release of held) release();
    await Promise.all([calm, ...flood].map(async (p) => (await p).body.text()));
    const calmRecord = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'calm');
    assert.equal(calmRecord.outcome, 'result', "the calm session's answer is still judged");
    const evicted = proxy.exchanges().filter((r) => r.expired === 'capacity');
    assert.equal(evicted.length, 50);
    assert.ok(evicted.every((r) => r.session === 'flood'));
  });

  test('sessions are learned only from ids the server answered on', async () => {
    const { proxy } = await setup((req, res, body) => {
      if (req.headers['mcp-session-id'] === 'issued') return jsonRpcResult({ tools: [] })(req, res, body);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Session not found' } }));
    });
    for (let i = 0; i < 20; i++) await (await post(proxy.url, rpc(i, 'tools/list', {}), { 'mcp-session-id': `forged-${i}` })).body.text();
    assert.equal(proxy.sessions.size, 0);
    await (await post(proxy.url, rpc(1, 'tools/list', {}), { 'mcp-session-id': 'issued' })).body.text();
    assert.equal(proxy.sessions.size, 1);
  });

  test('connections that never send a request head are closed after the header timeout, and their sockets destroyed', async () => {
    const { proxy } = await setup(jsonRpcResult({}), { limits: { clientHeadersTimeoutMs: 300 } });
    const open = (): Promise<number> => connections(proxy);
    let accepted = 0;
    proxy.server.on('connection', () => accepted++);
    // Clients that never read either: the proxy must not wait for them to close their side.
    const sockets = await Promise.all(
      Array.from(
        { length: 50 },
        () =>
          new Promise<Socket>((resolve) => {
            const s = connect(Number(proxy.url.port), '127.0.0.1', () => resolve(s));
            s.on('error', () => {});
            s.pause();
          }),
      ),
    );
    // Every one accepted (the proxy's side, not only the client's connect), then every one closed by the proxy.
    await eventually(
      4000,
      () => `${accepted}/50 connections accepted`,
      () => accepted === 50,
    );
    await within(
      4000,
      'idle sockets destroyed',
      (async () => {
        while ((await open()) > 0) await sleep(50);
      })(),
    );
    for (const s of sockets) s.destroy();
    const res = await post(proxy.url, rpc(1));
    assert.equal(res.statusCode, 200, 'a real client still gets through');
    await res.body.text();
  });

  test('past the connection cap a newcomer gets 503 JSON-RPC with Retry-After and is closed', async () => {
    const { proxy } = await setup(jsonRpcResult({}), { limits: { maxConnections: 3 } });
    const holders = await Promise.all(
      Array.from(
        { length: 3 },
        () =>
          new Promise<Socket>((resolve) => {
            const s = connect(Number(proxy.url.port), '127.0.0.1', () => resolve(s));
            s.on('error', () => {});
          }),
      ),
    );
    await eventually(
      4000,
      () => 'the 3 holders accepted',
      async () => (await connections(proxy)) === 3,
    );
    const raw = await rawExchange(Number(proxy.url.port), `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 2\r\n\r\n{}`);
    assert.match(raw, /^HTTP\/1\.1 503/);
    assert.match(raw, /retry-after: 1/i);
    const body = jsonRpcBody(raw);
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, null);
    for (const s of holders) s.destroy();
    await eventually(
      4000,
      () => 'the holders gone',
      async () => (await connections(proxy)) === 0,
    );
    const res = await post(proxy.url, rpc(1));
    assert.equal(res.statusCode, 200, 'below the cap again');
    await res.body.text();
  });
});

describe('Expect: 100-continue', () => {
  test('the client gets 100 Continue, the body is forwarded and answered', async () => {
    const { upstream, proxy } = await setup(jsonRpcResult({ content: [] }));
    const body = rpc(5);
    const answer = await within(
      3000,
      '100-continue exchange',
      new Promise<{ status: number; text: string; continued: boolean }>((resolve, reject) => {
        let continued = false;
        const req = httpRequest(proxy.url, {
          method: 'POST',
          headers: {
            expect: '100-continue',
            'content-type': 'application/json',
            accept: ACCEPT,
            'content-length': Buffer.byteLength(body),
          },
        });
        req.on('continue', () => {
          continued = true;
          req.end(body);
        });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text, continued }));
        });
        req.on('error', reject);
      }),
    );
    assert.equal(answer.continued, true);
    assert.equal(answer.status, 200);
    assert.equal((JSON.parse(answer.text) as { id: number }).id, 5);
    assert.equal(upstream.requests[0]!.body.toString(), body);
    assert.equal(upstream.requests[0]!.headers.expect, undefined);
  });
});

describe("the proxy's own answers to malformed HTTP are JSON-RPC errors with the right status", () => {
  for (const [name, bytes, status, reason] of [
    ['a garbage request line', 'NOT AN HTTP REQUEST\r\n\r\n', 400, 'WARDEN_BAD_REQUEST'],
    [
      'headers over 16 KiB',
      `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'WARDEN_HEADERS_TOO_LARGE',
    ],
  ] as const) {
    test(`${name}: ${status}`, async () => {
      const { proxy } = await setup(jsonRpcResult({}));
      const raw = await rawExchange(Number(proxy.url.port), bytes);
      assert.match(raw, new RegExp(`^HTTP/1\\.1 ${status} `));
      assert.match(raw, /content-type: application\/json/i);
      const body = jsonRpcBody(raw) as unknown as { jsonrpc: string; id: unknown; error: { code: number; data: { reason: string } } };
      assert.deepEqual([body.jsonrpc, body.id, body.error.code, body.error.data.reason], ['2.0', null, -32600, reason]);
    });
  }
});
