// An upstream that speaks broken HTTP (a garbage status line, bad header bytes, headers over
// 16 KiB, two Content-Length values) is the upstream's fault: the client gets a 502 JSON-RPC error
// with its id and a clear reason, the log one line, never a 500 WARDEN_INTERNAL with a stack.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { eventually, post, rpc } from '../helpers/faults.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import { cliArgs } from '../helpers/bundle.ts';

/** `node ...CLI <command>` runs src/cli.ts (a bundle of it: test/helpers/bundle.ts). */
const CLI = await cliArgs();

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** A TCP server that answers every request with `raw` bytes, then closes. */
async function rawTcp(raw: string): Promise<URL> {
  const server: Server = createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', () => socket.end(raw));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  const { port } = server.address() as { port: number };
  return new URL(`http://127.0.0.1:${port}/mcp`);
}

const BODY = '{"jsonrpc":"2.0","id":1,"result":{}}';
const CASES: Record<string, string> = {
  'a garbage status line': `HTTP/1.1 2OO OK\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`,
  'bad header bytes': `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-bad\u0001: y\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`,
  'headers over 16 KiB': `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-big: ${'a'.repeat(20_000)}\r\ncontent-length: ${BODY.length}\r\n\r\n${BODY}`,
  'two Content-Length values': `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${BODY.length}\r\ncontent-length: 5\r\n\r\n${BODY}`,
};

describe('an upstream speaking broken HTTP gets a 502 with a clear reason', () => {
  for (const [name, raw] of Object.entries(CASES)) {
    test(name, async () => {
      const proxy: TestProxy = await startProxy(await rawTcp(raw));
      closers.push(() => proxy.close());
      const res = await post(proxy.url, rpc(42));
      assert.equal(res.statusCode, 502);
      const body = (await res.body.json()) as { id: unknown; error: { code: number; message: string; data: { reason: string } } };
      assert.equal(body.id, 42);
      assert.equal(body.error.code, -32603);
      assert.equal(body.error.data.reason, 'WARDEN_UPSTREAM_PROTOCOL');
      assert.match(body.error.message, /malformed HTTP response/);
      const exchange = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 42);
      assert.equal(exchange.proxyError, 'WARDEN_UPSTREAM_PROTOCOL');
      assert.equal(proxy.log.records.filter((r) => (r.level as number) >= 50).length, 0, 'no error-level record (no stack)');
    });
  }
});

describe('an HTML 403 or 404 page answering a POST is judged and, under enforce, rewritten like a 500', () => {
  const TRACE =
    'Error: forbidden\n    at authorize (/srv/app/src/auth.js:42:11)\n    at Layer.handle (/srv/app/node_modules/express/lib/router/layer.js:95:5)';
  for (const status of [403, 404]) {
    test(`HTML ${status}`, async () => {
      const { startRawServer } = await import('../fixtures/raw-server.ts');
      const { loadPolicyFile } = await import('../../src/config/load.ts');
      const { REWRITABLE } = await import('../../src/rewrite/rewriters.ts');
      const upstream = await startRawServer((_req, res) => {
        res.writeHead(status, { 'content-type': 'text/html' });
        res.end(`<!DOCTYPE html><html><body><h1>${status}</h1><pre>${TRACE}</pre></body></html>`);
      });
      closers.push(() => upstream.close());
      const audit = await startProxy(new URL('/mcp', upstream.url));
      closers.push(() => audit.close());
      const seen = await post(audit.url, rpc(5));
      assert.equal(seen.statusCode, status);
      assert.match(await seen.body.text(), /<html>/, 'audit: the page passes as it came');
      assert.ok(await audit.log.waitFor((r) => r.msg === 'violation' && r.rule === 'html-body' && r.id === 5));

      const loaded = await loadPolicyFile(new URL('../../config/enforce.yaml', import.meta.url).pathname, { rewritable: REWRITABLE });
      assert.ok(loaded.ok);
      const enforce = await startProxy(new URL('/mcp', upstream.url), { policy: () => loaded.policy });
      closers.push(() => enforce.close());
      const fixed = await post(enforce.url, rpc(6));
      assert.equal(fixed.statusCode, status, "the status is the server's word and stays");
      assert.match(String(fixed.headers['content-type']), /application\/json/);
      const text = await fixed.body.text();
      assert.doesNotMatch(text, /auth\.js|<html>/);
      const body = JSON.parse(text) as { id: number; error: { code: number; data: { reason: string; upstreamStatus: number } } };
      assert.deepEqual(
        [body.id, body.error.code, body.error.data.reason, body.error.data.upstreamStatus],
        [6, -32603, 'html-body', status],
      );
    });
  }
});

describe("slowloris: the proxy's file descriptors come back", () => {
  test('50 clients that trickle a head and never read: after the header timeout the proxy holds none of their sockets', {
    timeout: 30_000,
  }, async () => {
    const { spawn } = await import('node:child_process');
    const { readdirSync } = await import('node:fs');
    const { connect } = await import('node:net');
    const child = spawn(
      process.execPath,
      [...CLI, 'proxy', '--upstream', 'http://127.0.0.1:9/mcp', '--listen', '127.0.0.1:0', '--header-timeout', '1500ms', '--no-pretty'],
      {
        cwd: new URL('../../', import.meta.url),
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    closers.push(async () => void child.kill('SIGKILL'));
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    let port = 0;
    for (let i = 0; i < 400 && port === 0; i++) {
      port = Number(/"listen":"http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1] ?? 0);
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(port > 0, 'the proxy started');
    const fds = (): number => readdirSync(`/proc/${child.pid}/fd`).length;
    const baseline = fds();
    // Each sends half a request head, then neither writes nor reads again.
    const sockets = await Promise.all(
      Array.from(
        { length: 50 },
        () =>
          new Promise<import('node:net').Socket>((resolve) => {
            const socket = connect(port, '127.0.0.1', () => {
              socket.write('POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n');
              socket.pause();
              resolve(socket);
            });
            socket.on('error', () => {});
          }),
      ),
    );
    // Held until the header timeout (1.5 s: all 50 are accepted well before the first is dropped, under load too).
    await eventually(
      1500,
      () => `${fds()} fds held during the attack (baseline ${baseline})`,
      () => fds() >= baseline + 50,
    );
    let now = fds();
    for (let i = 0; i < 100 && now > baseline + 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
      now = fds();
    }
    assert.ok(now <= baseline + 2, `${now} fds still open after the timeout (baseline ${baseline})`);
    for (const socket of sockets) socket.destroy();
    child.kill('SIGTERM');
  });
});
