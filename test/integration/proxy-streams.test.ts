// Streams through the proxy: a server-to-client request on the standalone GET stream, and a
// response that arrives on another stream than its request (resumption with Last-Event-ID).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSdkServer, type SdkServer, DEFAULT_QUESTION } from '../fixtures/sdk-server.ts';
import { answerFor, connectSdkClient } from '../helpers/sdk-client.ts';
import { sseReader } from '../helpers/sse-reader.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const VERSION = '2025-11-25';

describe('streams through the proxy', () => {
  let upstream: SdkServer;
  let proxy: TestProxy;
  before(async () => {
    upstream = await startSdkServer({ mode: 'sse', eventStore: true });
    proxy = await startProxy(upstream.url);
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  test('a server request on the GET stream reaches the client, and its answer is correlated', async () => {
    const c = await connectSdkClient(proxy.url);
    try {
      const result = await c.client.callTool({ name: 'ask_on_get', arguments: {} });
      assert.deepEqual(result.content, [{ type: 'text', text: answerFor(DEFAULT_QUESTION) }]);
      const elicit = await proxy.log.waitFor(
        (r) => r.msg === 'exchange' && r.method === 'elicitation/create' && r.session === c.transport.sessionId,
      );
      assert.equal(elicit.from, 'server');
      assert.equal(elicit.outcome, 'result');
      assert.equal(elicit.status, 202, "the server accepted the client's answer");
    } finally {
      await c.transport.terminateSession();
      await c.close();
    }
  });

  test('the SDK client resumes a stream the server closed early, through the proxy', async () => {
    const c = await connectSdkClient(proxy.url);
    try {
      const progress: number[] = [];
      const result = await c.client.callTool({ name: 'countdown', arguments: { steps: 4, closeStreamAfter: 2 } }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      });
      assert.deepEqual(progress, [1, 2, 3, 4]);
      assert.deepEqual(result.content, [{ type: 'text', text: 'done' }]);
      const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.tool === 'countdown' && r.session === c.transport.sessionId);
      assert.equal(record.outcome, 'result');
      assert.equal(record.transport, 'get-sse', 'the response came on the resumed GET stream');
    } finally {
      await c.transport.terminateSession();
      await c.close();
    }
  });

  test('a POST stream cut short is resumed on a GET with Last-Event-ID, and the response is attributed to its request', async () => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const post = (body: unknown) => fetch(proxy.url, { method: 'POST', headers, body: JSON.stringify(body) });
    const init = await post({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const sessionId = init.headers.get('mcp-session-id');
    assert.ok(sessionId);
    await sseReader(init.body).until((e) => e.data.includes('"id":0'));
    headers['mcp-session-id'] = sessionId;
    headers['mcp-protocol-version'] = VERSION;
    assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);

    const call = await post({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'countdown', arguments: { steps: 4 }, _meta: { progressToken: 't' } },
    });
    const stream = sseReader(call.body);
    const seen = await stream.until((e) => e.data.includes('notifications/progress'));
    const lastId = seen.at(-1)!.id;
    assert.ok(lastId, 'events carry ids');
    await stream.cancel(); // the client drops the stream; in the legacy era that is not cancellation

    // The upstream answers 409 until it has seen the old stream close; a client waits `retry:` too.
    let resumed: Response;
    for (let attempt = 0; ; attempt++) {
      resumed = await fetch(proxy.url, { headers: { ...headers, accept: 'text/event-stream', 'last-event-id': lastId } });
      if (resumed.status !== 409 || attempt === 20) break;
      await resumed.body?.cancel();
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(resumed.status, 200);
    const replay = sseReader(resumed.body);
    const events = await replay.until((e) => e.data.includes('"id":7'), 3000);
    await replay.cancel();
    assert.ok(
      events.some((e) => e.data.includes('"progress":2') || e.data.includes('"progress":3')),
      'later progress replayed',
    );
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 7 && r.session === sessionId);
    assert.equal(record.outcome, 'result');
    assert.equal(record.transport, 'get-sse');
    assert.equal(record.method, 'tools/call');
    assert.equal(record.tool, 'countdown');
    await fetch(proxy.url, { method: 'DELETE', headers });
  });
});
