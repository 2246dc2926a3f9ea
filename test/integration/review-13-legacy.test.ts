// Review of #13 (legacy HTTP+SSE): the proxy and `check` against raw legacy servers, each test a
// bug the review found (each failed before its fix).
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, describe, test } from 'node:test';
import { CHECK_DEFAULTS } from '../../src/check/defaults.ts';
import { runCheck } from '../../src/check/run.ts';
import { loadPolicyFile, loadPolicyText } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { startLegacyServer } from '../fixtures/legacy-sse-server.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import { openLegacySession } from '../helpers/legacy-session.ts';

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});
async function proxyFor(upstream: URL, options: Parameters<typeof startProxy>[1] = {}): Promise<TestProxy> {
  const proxy = await startProxy(upstream, options);
  closers.push(() => proxy.close());
  return proxy;
}

describe('review #13: legacy HTTP+SSE through the proxy', () => {
  test("enforce, a client-side block in a legacy session: the block's error reaches the client's stream", async () => {
    const loaded = loadPolicyText('mode: enforce\nrules:\n  request-envelope: block\n', 'test.yaml', { rewritable: REWRITABLE });
    assert.ok(loaded.ok);
    const policy = loaded.policy;
    const server = await startLegacyServer();
    closers.push(() => server.close());
    const proxy = await proxyFor(server.sse, { policy: () => policy });
    const { events, post } = await openLegacySession(proxy, closers);
    // A notification method sent with an id: request-envelope, blocked by the policy.
    const posted = await post({ jsonrpc: '2.0', id: 'b', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } });
    // The SDK's SSEClientTransport only checks response.ok, then waits for the answer on the stream.
    assert.equal(posted.ok, true, 'precondition: the POST looks accepted to a legacy client');
    await posted.text();
    const answer = await events.next(2_000).catch(() => undefined);
    assert.ok(answer, 'the error for id "b" must come on the session stream (the legacy transport answers nothing else)');
    assert.equal(JSON.parse(answer.data).id, 'b');
  });

  test('enforce (shipped policy), the upstream drops a legacy POST: the no-response rewrite reaches the client on the stream', async () => {
    const loaded = await loadPolicyFile(new URL('../../config/enforce.yaml', import.meta.url).pathname, { rewritable: REWRITABLE });
    assert.ok(loaded.ok);
    const enforce = loaded.policy;
    const server = await startRawServer((req, res) => {
      if (req.method === 'POST') return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: /message?sessionId=1\n\n');
    });
    closers.push(() => server.close());
    const proxy = await proxyFor(new URL('/sse', server.url), { policy: () => enforce });
    const { events, post } = await openLegacySession(proxy, closers);
    const posted = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    const body = await posted.text();
    // Either the POST fails (the SDK client then rejects the request), or the answer comes on the stream.
    if (posted.ok) {
      const answer = await events.next(2_000).catch(() => undefined);
      assert.ok(answer, `HTTP ${posted.status} ${body}: the answer for id 3 never comes on the stream`);
    }
  });

  test('behind a TLS terminator (no --public-url): a correct relative endpoint is rewritten to an http:// URL the SDK client refuses', async () => {
    const server = await startLegacyServer('relative');
    closers.push(() => server.close());
    const proxy = await proxyFor(server.sse, { guard: { allowedHosts: ['mcp.example.com'] } });
    // As nginx/a load balancer sends it on: the client used https://mcp.example.com/sse.
    const data = await new Promise<string>((resolve, reject) => {
      const req = request(
        proxy.url,
        { headers: { host: 'mcp.example.com', accept: 'text/event-stream', 'x-forwarded-proto': 'https' } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => {
            text += c.toString('utf8');
            const m = /data: (.*)\n\n/.exec(text);
            if (m) {
              resolve(m[1]!);
              req.destroy();
            }
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    const clientUrl = new URL('https://mcp.example.com/sse');
    // SSEClientTransport: `if (this._endpoint.origin !== this._url.origin) throw new Error('Endpoint origin does not match connection origin')`.
    assert.equal(new URL(data, clientUrl).origin, clientUrl.origin, `endpoint event data: ${data}`);
  });
});

describe('review #13: check over legacy SSE', () => {
  test('an endpoint event whose data is not a URL: check hangs instead of reporting the server unreachable', async () => {
    const server = await startRawServer((req, res) => {
      if (req.method !== 'GET') return void res.writeHead(202).end('Accepted');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: endpoint\ndata: http://[::1/message?sessionId=1\n\n');
    });
    closers.push(() => server.close());
    const run = runCheck({
      url: new URL('/sse', server.url),
      transport: 'sse',
      headers: {},
      safeTools: [],
      toolCalls: false,
      ...CHECK_DEFAULTS,
      protocol: '2024-11-05',
      probeTimeoutMs: 1_000,
      timeoutMs: 3_000,
      clientVersion: '0.0.0-test',
    });
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((r) => {
      timer = setTimeout(() => r('hung'), 6_000);
    });
    const outcome = await Promise.race([run, hung]);
    clearTimeout(timer);
    // Let the server drop the stream so nothing of the hung check keeps the process alive.
    await server.close();
    assert.notEqual(outcome, 'hung', 'runCheck did not settle within twice its own --timeout');
    assert.equal((outcome as Awaited<typeof run>).reach.status, 'unreachable');
  });
});
