// An upstream that speaks broken HTTP (a garbage status line, bad header bytes, headers over
// 16 KiB, two Content-Length values) is the upstream's fault: the client gets a 502 JSON-RPC error
// with its id and a clear reason, the log one line, never a 500 WARDEN_INTERNAL with a stack.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { post, rpc } from '../helpers/faults.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

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
