// The official SDK client talks to the official SDK server through the proxy, in both response
// modes: everything the client sees is what a direct connection gives, and the proxy logs one
// record per exchange with the right fields.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSdkServer, type SdkServer } from '../fixtures/sdk-server.ts';
import { answerFor, connectSdkClient } from '../helpers/sdk-client.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

/** A realistic session; returns everything the client saw, with session-specific values removed. */
async function session(url: URL, mode: 'json' | 'sse') {
  const c = await connectSdkClient(url);
  try {
    const seen: Record<string, unknown> = {};
    seen.server = c.client.getServerVersion();
    seen.capabilities = c.client.getServerCapabilities();
    seen.tools = await c.client.listTools();
    seen.echo = await c.client.callTool({ name: 'echo', arguments: { text: 'héllo 😀' } });
    seen.add = await c.client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
    seen.fail = await c.client.callTool({ name: 'fail', arguments: {} });
    const progress: number[] = [];
    seen.countdown = await c.client.callTool({ name: 'countdown', arguments: { steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    // In json mode the fixture's progress travels on the GET stream, which may not be open yet.
    if (mode === 'sse') seen.progress = progress;
    seen.ask = await c.client.callTool({ name: 'ask', arguments: {} });
    seen.resource = await c.client.readResource({ uri: 'fixture://hello' });
    seen.unknownTool = await c.client.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: Error) => ({ rejected: e.message }));
    const sessionId = c.transport.sessionId;
    await c.transport.terminateSession();
    return { seen, sessionId };
  } finally {
    await c.close();
  }
}

for (const mode of ['json', 'sse'] as const) {
  describe(`SDK client -> proxy -> SDK server (${mode} responses)`, () => {
    let upstream: SdkServer;
    let proxy: TestProxy;
    let direct: Awaited<ReturnType<typeof session>>;
    let proxied: Awaited<ReturnType<typeof session>>;

    before(async () => {
      upstream = await startSdkServer({ mode, eventStore: mode === 'sse' });
      proxy = await startProxy(upstream.url);
      direct = await session(upstream.url, mode);
      proxied = await session(proxy.url, mode);
    });
    after(async () => {
      await proxy.close();
      await upstream.close();
    });

    test('the client sees exactly what a direct connection gives', () => {
      assert.deepEqual(proxied.seen, direct.seen);
      assert.equal((proxied.seen.ask as { content: [{ text: string }] }).content[0].text, answerFor('What is the answer?'));
      if (mode === 'sse') assert.deepEqual(proxied.seen.progress, [1, 2, 3], 'progress notifications reach the client');
    });

    test('one exchange record per request, with the fields dashboards read', () => {
      const records = proxy.exchanges().filter((r) => r.session === proxied.sessionId);
      const methods = records.filter((r) => r.from === 'client').map((r) => `${r.method}${r.tool ? `:${r.tool}` : ''}`);
      assert.deepEqual(methods, [
        'initialize',
        'tools/list',
        'tools/call:echo',
        'tools/call:add',
        'tools/call:fail',
        'tools/call:countdown',
        'tools/call:ask',
        'resources/read',
        'tools/call:no_such_tool',
      ]);
      for (const r of records) {
        assert.equal(r.protocolVersion, '2025-11-25');
        assert.equal(typeof r.durationMs, 'number');
        assert.equal(typeof r.requestBytes, 'number');
        assert.ok((r.requestBytes as number) > 0);
      }
      const byTool = (tool: string) => records.find((r) => r.tool === tool)!;
      assert.equal(byTool('echo').outcome, 'result');
      assert.equal(byTool('echo').status, 200);
      assert.equal(byTool('echo').transport, mode === 'json' ? 'json' : 'sse');
      assert.ok((byTool('echo').responseBytes as number) > 0);
      assert.equal(byTool('fail').outcome, 'isError');
      const unknown = byTool('no_such_tool').outcome as string;
      assert.ok(unknown === 'isError' || unknown.startsWith('error:'), `unknown tool outcome ${unknown}`);
      // The server's elicitation request, answered by the client, is an exchange too.
      const elicit = records.find((r) => r.method === 'elicitation/create');
      assert.ok(elicit, 'server-to-client request logged');
      assert.equal(elicit.from, 'server');
      assert.equal(elicit.outcome, 'result');
    });

    test('the session end is forwarded and logged', () => {
      assert.ok(!upstream.sessionIds().includes(proxied.sessionId!), 'upstream closed the session');
      assert.ok(proxy.log.find((r) => r.msg === 'session end' && r.session === proxied.sessionId && r.status === 200));
    });
  });
}
