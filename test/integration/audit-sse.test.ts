// A violation inside the 5th event of a streamed response is attributed to the right request,
// while the stream reaches the client unchanged and event by event.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startRawServer, type RawServer } from '../fixtures/raw-server.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const progress = (n: number) =>
  `event: message\nid: ${n}\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":${n},"total":4}}\n\n`;
const LEAKY =
  'event: message\nid: 5\ndata: {"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"TypeError: boom\\n    at handler (/srv/app/src/tools.js:42:17)"}}\n\n';

let upstream: RawServer;
let proxy: TestProxy;
after(async () => {
  await proxy.close();
  await upstream.close();
});

test("the 5th event's violation is logged against its request, and the client sees every byte as it comes", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  upstream = await startRawServer(async (_req, res, body) => {
    const { id } = JSON.parse(body.toString()) as { id: number };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (id === 6) {
      res.end('event: message\ndata: {"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"fine"}]}}\n\n');
      return;
    }
    for (let n = 1; n <= 4; n++) res.write(progress(n));
    res.write(LEAKY);
    await gate; // the 6th event is written only after the client has read the 5th
    res.end('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after"}}\n\n');
  });
  proxy = await startProxy(new URL('/mcp', upstream.url));
  const post = (id: number, tool: string) =>
    request(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 's-1' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: tool, arguments: {}, _meta: { progressToken: 'p' } },
      }),
    });

  const [streamed, other] = await Promise.all([post(5, 'build_report'), post(6, 'echo')]);
  await other.body.text();
  let received = '';
  for await (const chunk of streamed.body) {
    received += String(chunk);
    if (received.endsWith(LEAKY)) {
      // Event 5 reached the client while the upstream is still holding event 6 back.
      const violation = await proxy.log.waitFor((r) => r.msg === 'violation' && r.rule === 'leaked-stack-trace');
      assert.equal(violation.id, 5);
      assert.equal(violation.tool, 'build_report');
      assert.equal(violation.method, 'tools/call');
      assert.equal(violation.session, 's-1');
      release();
    }
  }
  assert.equal(
    received,
    `${[1, 2, 3, 4].map(progress).join('')}${LEAKY}event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after"}}\n\n`,
  );
  const records = proxy.exchanges();
  assert.equal(records.find((r) => r.id === 5)?.violations, proxy.log.records.filter((r) => r.msg === 'violation' && r.id === 5).length);
  assert.equal(proxy.log.records.filter((r) => r.msg === 'violation' && r.id === 6).length, 0, 'the other request is clean');
});
