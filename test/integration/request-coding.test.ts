// A client's request body with a Content-Encoding is decoded to be judged (its rules and blocks
// see the message), forwarded as the client's own bytes; a coding the proxy cannot read is
// refused with 415, corrupt data with 400, a bomb with 413: never passed unread.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { brotliCompressSync, brotliDecompressSync, deflateSync, gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { request } from 'undici';
import { startRawServer, jsonRpcResult, type RawServer } from '../fixtures/raw-server.ts';
import { ACCEPT, rpc } from '../helpers/faults.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const closers: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const c of closers.reverse()) await c.close();
});

async function setup(): Promise<{ upstream: RawServer; proxy: TestProxy }> {
  // A server that reads compressed requests, as body-parser does.
  const answer = jsonRpcResult({ content: [{ type: 'text', text: 'ok' }] });
  const DECODE: Record<string, (b: Buffer) => Buffer> = { gzip: gunzipSync, deflate: inflateSync, br: brotliDecompressSync };
  const upstream = await startRawServer((req, res, body) =>
    answer(req, res, DECODE[String(req.headers['content-encoding'])]?.(body) ?? body),
  );
  const proxy = await startProxy(new URL('/mcp', upstream.url), { limits: { maxRequestBytes: 64 * 1024 } });
  closers.push(upstream, proxy);
  return { upstream, proxy };
}

const send = (proxy: TestProxy, body: Buffer, encoding: string) =>
  request(proxy.url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', accept: ACCEPT, 'content-encoding': encoding },
  });

describe('request Content-Encoding', () => {
  for (const [name, encode] of [
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ] as const) {
    test(`${name}: judged as the message it holds, forwarded as sent`, async () => {
      const { upstream, proxy } = await setup();
      const wire = encode(Buffer.from(rpc(11, 'tools/call', { name: 'echo', arguments: { q: 'x' } })));
      const res = await send(proxy, wire, name);
      assert.equal(res.statusCode, 200);
      await res.body.text();
      const exchange = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 11);
      assert.equal(exchange.method, 'tools/call');
      assert.equal(exchange.tool, 'echo');
      assert.equal(exchange.requestBytes, wire.length);
      assert.deepEqual(upstream.requests[0]!.body, wire);
      assert.equal(upstream.requests[0]!.headers['content-encoding'], name);
    });
  }

  test('a coding the proxy cannot read gets 415 JSON-RPC and never reaches the server', async () => {
    const { upstream, proxy } = await setup();
    const res = await send(proxy, Buffer.from('xyz'), 'compress');
    assert.equal(res.statusCode, 415);
    const body = (await res.body.json()) as { id: unknown; error: { code: number; data: { reason: string } } };
    assert.deepEqual([body.id, body.error.code, body.error.data.reason], [null, -32600, 'WARDEN_UNSUPPORTED_ENCODING']);
    assert.equal(upstream.requests.length, 0);
  });

  test('corrupt gzip gets 400, a bomb past the body limit 413', async () => {
    const { upstream, proxy } = await setup();
    const corrupt = await send(proxy, Buffer.from('definitely not gzip'), 'gzip');
    assert.equal(corrupt.statusCode, 400);
    assert.equal(((await corrupt.body.json()) as { error: { data: { reason: string } } }).error.data.reason, 'WARDEN_BAD_REQUEST');
    const bomb = gzipSync(Buffer.from(rpc(1, 'tools/call', { name: 'echo', arguments: { pad: ' '.repeat(10 * 1024 * 1024) } })));
    assert.ok(bomb.length < 64 * 1024);
    const big = await send(proxy, bomb, 'gzip');
    assert.equal(big.statusCode, 413);
    await big.body.text();
    assert.equal(upstream.requests.length, 0);
  });
});
