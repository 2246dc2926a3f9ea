// The official SDK server and @modelcontextprotocol/server-everything, driven through the proxy by
// the SDK client through a realistic session: every finding they produce must be one the README
// explains (a real departure from the spec), and nothing else may fire.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSdkServer } from '../fixtures/sdk-server.ts';
import { startEverythingServer } from '../fixtures/everything-server.ts';
import { connectSdkClient, type SdkClientHandle } from '../helpers/sdk-client.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import type { LogRecord } from '../helpers/log-capture.ts';

/** Calls whose rejection is part of the session (bad input on purpose); the SDK client throws on JSON-RPC errors. */
const settle = <T>(p: Promise<T>): Promise<T | Error> => p.catch((e: Error) => e);

async function sdkFixtureSession(c: SdkClientHandle): Promise<void> {
  await c.client.listTools();
  await c.client.callTool({ name: 'echo', arguments: { text: 'hello' } });
  await c.client.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
  await c.client.callTool({ name: 'add', arguments: { a: 'one', b: 2 } }); // bad arguments: an isError naming `a`
  await c.client.callTool({ name: 'fail', arguments: {} });
  await c.client.callTool({ name: 'countdown', arguments: { steps: 2 } }, undefined, { onprogress: () => {} });
  await c.client.callTool({ name: 'no_such_tool', arguments: {} }); // unknown tool
  await c.client.listResources();
  await c.client.readResource({ uri: 'fixture://hello' });
  await settle(c.client.readResource({ uri: 'fixture://missing' }));
  await c.client.listPrompts();
  await c.client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
  await settle(c.client.getPrompt({ name: 'no_such_prompt' }));
  await c.client.ping();
}

async function everythingSession(c: SdkClientHandle): Promise<void> {
  const { tools } = await c.client.listTools();
  assert.ok(tools.length > 5);
  await c.client.callTool({ name: 'echo', arguments: { message: 'hello' } });
  await c.client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
  await c.client.callTool({ name: 'get-sum', arguments: { a: 'two', b: 3 } }); // bad arguments
  await c.client.callTool({ name: 'get-tiny-image', arguments: {} });
  await c.client.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } });
  await c.client.callTool({ name: 'get-annotated-message', arguments: { messageType: 'error', includeImage: false } });
  await c.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } }, undefined, { onprogress: () => {} });
  await c.client.callTool({ name: 'no_such_tool', arguments: {} }); // unknown tool
  const { resources } = await c.client.listResources();
  await c.client.readResource({ uri: resources[0]!.uri });
  await settle(c.client.readResource({ uri: 'demo://resource/no-such-thing' }));
  await c.client.listResourceTemplates();
  const { prompts } = await c.client.listPrompts();
  await c.client.getPrompt({ name: prompts[0]!.name });
  await settle(c.client.getPrompt({ name: 'no_such_prompt' }));
  await c.client.setLoggingLevel('info');
  await c.client.ping();
}

/** Findings the README explains, by server: each a known departure from the spec. */
const EXPLAINED: Record<string, Array<[rule: string, where: string]>> = {
  'SDK server (json)': [['unknown-tool-as-iserror', 'no_such_tool']],
  'SDK server (sse)': [['unknown-tool-as-iserror', 'no_such_tool']],
  'server-everything': [
    ['silent-success', 'get-annotated-message'],
    ['unknown-tool-as-iserror', 'no_such_tool'],
  ],
};

const servers = [
  { name: 'SDK server (json)', start: () => startSdkServer({ mode: 'json' }), session: sdkFixtureSession },
  { name: 'SDK server (sse)', start: () => startSdkServer({ mode: 'sse', eventStore: true }), session: sdkFixtureSession },
  { name: 'server-everything', start: startEverythingServer, session: everythingSession },
];

for (const server of servers) {
  describe(`audit of ${server.name} through the proxy`, () => {
    let upstream: { url: URL; close(): Promise<void> };
    let proxy: TestProxy;
    let violations: LogRecord[];
    before(async () => {
      upstream = await server.start();
      proxy = await startProxy(upstream.url);
      const c = await connectSdkClient(proxy.url);
      try {
        await server.session(c);
        await c.transport.terminateSession();
      } finally {
        await c.close();
      }
      violations = proxy.log.records.filter((r) => r.msg === 'violation');
    });
    after(async () => {
      await proxy.close();
      await upstream.close();
    });

    test('every finding is a known, explained departure from the spec', () => {
      const seen = violations.map((v) => [v.rule, v.tool ?? v.method]);
      assert.deepEqual(seen, EXPLAINED[server.name], JSON.stringify(violations, null, 1));
    });
  });
}
