// #24 item 7a: a text/event-stream answer whose body is an HTML error page (a stack trace in it)
// set no SSE field, so no event was read: audit found nothing and enforce let the page reach the
// client as it came, the client waiting for an answer that never came. A fieldless block that
// opens with `<` is now read as the broken answer it is: html-body under audit (the client gets
// the stream unchanged), and under config/enforce.yaml one JSON-RPC error event with the request's
// id in the page's place, none of the page's lines with it. Legitimate streams that only look like
// it (HTML inside a result's text, a comment line, a keep-alive) stay silent and unchanged.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { sseEvents, startRawServer } from '../fixtures/raw-server.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const enforce = loaded.policy;
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const PAGE = [
  '<!DOCTYPE html>\n<html><head><title>500</title></head>\n',
  '\n<body><h1>Internal Server Error</h1>\n<pre>Error: boom\n    at handler (/srv/app/server.js:10:5)\n</pre>\n\n</body></html>\n',
];
const CALL = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"export_report","arguments":{}}}';

async function run(chunks: string[], mode: 'audit' | 'enforce'): Promise<{ body: string; proxy: TestProxy }> {
  const upstream = await startRawServer(sseEvents(chunks));
  const proxy = await startProxy(new URL('/mcp', upstream.url), mode === 'enforce' ? { policy: () => enforce } : {});
  closers.push(upstream.close, proxy.close);
  const res = await request(new URL('/mcp', proxy.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: CALL,
  });
  const body = await res.body.text();
  await proxy.log.waitFor((r) => r.msg === 'exchange', 2000);
  return { body, proxy };
}

const rulesOf = (proxy: TestProxy): string[] => proxy.log.records.filter((r) => r.msg === 'violation').map((r) => String(r.rule));

describe('an HTML page sent as an event stream', () => {
  test('audit: html-body, and the client gets the stream byte for byte', async () => {
    const { body, proxy } = await run(PAGE, 'audit');
    assert.equal(body, PAGE.join(''));
    assert.ok(rulesOf(proxy).includes('html-body'), rulesOf(proxy).join());
    assert.equal(proxy.exchanges()[0]?.outcome, 'invalid-response');
  });

  test('enforce: one JSON-RPC error event with the request id takes the whole page’s place', async () => {
    const { body, proxy } = await run(PAGE, 'enforce');
    assert.doesNotMatch(body, /<html|<body|server\.js|boom/i);
    const events = body.split('\n\n').filter((e) => e !== '');
    assert.equal(events.length, 1, body);
    const data = events[0]!
      .split('\n')
      .find((l) => l.startsWith('data: '))!
      .slice(6);
    const message = JSON.parse(data) as { id: unknown; error?: { code: number } };
    assert.equal(message.id, 7);
    assert.equal(message.error?.code, -32603);
    assert.equal(proxy.exchanges()[0]?.verdict, 'rewrite');
  });

  for (const [name, chunks] of [
    [
      'HTML inside a result',
      [
        `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: '<!DOCTYPE html><html><body><pre>at x (/srv/a.js:1:1)</pre></body></html>' }] } })}\n\n`,
      ],
    ],
    [
      'a comment that holds a tag, then the result',
      [': <ping/>\n\n', `data: ${JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'ok' }] } })}\n\n`],
    ],
  ] as const) {
    test(`look-alike, ${name}: silent and unchanged under audit and enforce`, async () => {
      for (const mode of ['audit', 'enforce'] as const) {
        const { body, proxy } = await run([...chunks], mode);
        assert.equal(body, chunks.join(''), mode);
        assert.deepEqual(rulesOf(proxy), [], mode);
        assert.equal(proxy.exchanges()[0]?.outcome, 'result', mode);
      }
    });
  }
});
