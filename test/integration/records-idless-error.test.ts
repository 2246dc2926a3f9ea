// #24 item 5, truthful records: an error without an id (id null) that came as the whole answer to
// a POST's one request is that request's answer for its record. server-everything's 400 "Server
// not initialized" (99 bytes) was logged `responseBytes: 0`, `outcome: invalid-response`, and
// counted `code="none"`: a reader concluded the server had sent nothing. Now the record says what
// came (its code, its bytes) and the client gets the body as it came; the rules still judge it.
// Where the error cannot be one request's answer (a batch of two), nothing is attributed.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { type RawHandler, sseEvents, startRawServer } from '../fixtures/raw-server.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const IDLESS = '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}';
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function through(handler: RawHandler): Promise<TestProxy> {
  const upstream = await startRawServer(handler);
  const proxy = await startProxy(new URL('/mcp', upstream.url));
  closers.push(upstream.close, proxy.close);
  return proxy;
}

const post = async (proxy: TestProxy, body: string) => {
  const res = await request(new URL('/mcp', proxy.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
  });
  return { status: res.statusCode, body: await res.body.text() };
};

const recordsOf = async (proxy: TestProxy, n: number) => {
  for (let i = 0; i < 100 && proxy.exchanges().length < n; i++) await new Promise((r) => setTimeout(r, 10));
  return proxy.exchanges();
};

const exchangesMetric = async (proxy: TestProxy): Promise<string[]> =>
  (await proxy.metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('mcp_warden_exchanges_total{'));

describe('an error without an id answering the one request', () => {
  test('a 400 JSON body: the record has its code and its 99 bytes, the metric its code; the client gets it as it came', async () => {
    const proxy = await through((_req, res) => void res.writeHead(400, { 'content-type': 'application/json' }).end(IDLESS));
    const answer = await post(proxy, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    assert.deepEqual(answer, { status: 400, body: IDLESS });
    const [record] = await recordsOf(proxy, 1);
    assert.equal(record?.outcome, 'error:-32000');
    assert.equal(record?.responseBytes, Buffer.byteLength(IDLESS));
    assert.equal(record?.status, 400);
    assert.deepEqual(await exchangesMetric(proxy), [
      'mcp_warden_exchanges_total{method="tools/list",status="400",code="-32000",is_error="none"} 1',
    ]);
  });

  test('an SSE event: the record has its code and the event bytes', async () => {
    const event = `event: message\ndata: ${IDLESS}\n\n`;
    const proxy = await through(sseEvents([event]));
    const answer = await post(proxy, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
    assert.equal(answer.body, event);
    const [record] = await recordsOf(proxy, 1);
    assert.equal(record?.outcome, 'error:-32000');
    assert.equal(record?.responseBytes, Buffer.byteLength(event));
  });

  test('a batch of two answered by one id-less error: neither request is given it', async () => {
    const proxy = await through((_req, res) => void res.writeHead(400, { 'content-type': 'application/json' }).end(IDLESS));
    await post(proxy, '[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"}]');
    const records = await recordsOf(proxy, 2);
    assert.deepEqual(
      records.map((r) => [r.id, r.outcome, r.responseBytes]),
      [
        [1, 'invalid-response', 0],
        [2, 'invalid-response', 0],
      ],
    );
  });

  test('an answer with its id is recorded as before', async () => {
    const body = '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}';
    const proxy = await through((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    await post(proxy, '{"jsonrpc":"2.0","id":1,"method":"nope/nothing"}');
    const [record] = await recordsOf(proxy, 1);
    assert.deepEqual([record?.outcome, record?.responseBytes], ['error:-32601', Buffer.byteLength(body)]);
  });
});
