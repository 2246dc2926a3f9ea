// The official SDK server and @modelcontextprotocol/server-everything, driven through the proxy by
// the SDK client through a realistic session: every finding they produce must be one the README
// explains (a real departure from the spec), and nothing else may fire. Under enforce.yaml the
// client sees exactly what it sees under audit.yaml, except where a finding is.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startSdkServer } from '../fixtures/sdk-server.ts';
import { startEverythingServer } from '../fixtures/everything-server.ts';
import { connectSdkClient, type SdkClientHandle } from '../helpers/sdk-client.ts';
import { startProxy } from '../helpers/proxy.ts';
import type { LogRecord } from '../helpers/log-capture.ts';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';

/** What the client saw at each step: the result, or the JSON-RPC error it threw. */
type Seen = Array<[step: string, outcome: unknown]>;

function recorder(seen: Seen) {
  return async <T>(step: string, p: Promise<T>): Promise<T | undefined> => {
    try {
      const value = await p;
      seen.push([step, value]);
      return value;
    } catch (err) {
      seen.push([step, { rejected: (err as Error).message }]);
      return undefined;
    }
  };
}

async function sdkFixtureSession(c: SdkClientHandle, step: ReturnType<typeof recorder>): Promise<void> {
  await step('listTools()', c.client.listTools());
  await step('callTool({ name: "echo", arguments: { text: "hello" } })', c.client.callTool({ name: 'echo', arguments: { text: 'hello' } }));
  await step('callTool({ name: "add", arguments: { a: 1, b: 2 } })', c.client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }));
  await step('callTool({ name: "add", arguments: { a: "one", b: 2 } })', c.client.callTool({ name: 'add', arguments: { a: 'one', b: 2 } })); // bad arguments: an isError naming `a`
  await step('callTool({ name: "fail", arguments: {} })', c.client.callTool({ name: 'fail', arguments: {} }));
  await step(
    'callTool({ name: "countdown", arguments: { steps: 2 } }, und',
    c.client.callTool({ name: 'countdown', arguments: { steps: 2 } }, undefined, { onprogress: () => {} }),
  );
  await step('callTool({ name: "no_such_tool", arguments: {} })', c.client.callTool({ name: 'no_such_tool', arguments: {} })); // unknown tool
  await step('listResources()', c.client.listResources());
  await step('readResource({ uri: "fixture://hello" })', c.client.readResource({ uri: 'fixture://hello' }));
  await step('readResource({ uri: "fixture://missing" })', c.client.readResource({ uri: 'fixture://missing' }));
  await step('listPrompts()', c.client.listPrompts());
  await step('getPrompt({ name: "greet", arguments: { name: "Ada" } })', c.client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } }));
  await step('getPrompt({ name: "no_such_prompt" })', c.client.getPrompt({ name: 'no_such_prompt' }));
  await step('ping()', c.client.ping());
}

async function everythingSession(c: SdkClientHandle, step: ReturnType<typeof recorder>): Promise<void> {
  const { tools } = (await step('listTools()', c.client.listTools()))!;
  assert.ok(tools.length > 5);
  await step(
    'callTool({ name: "echo", arguments: { message: "hello" } })',
    c.client.callTool({ name: 'echo', arguments: { message: 'hello' } }),
  );
  await step('callTool({ name: "get-sum", arguments: { a: 2, b: 3 } })', c.client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } }));
  await step(
    'callTool({ name: "get-sum", arguments: { a: "two", b: 3 } })',
    c.client.callTool({ name: 'get-sum', arguments: { a: 'two', b: 3 } }),
  ); // bad arguments
  await step('callTool({ name: "get-tiny-image", arguments: {} })', c.client.callTool({ name: 'get-tiny-image', arguments: {} }));
  await step(
    'callTool({ name: "get-structured-content", arguments: { loca',
    c.client.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } }),
  );
  await step(
    'callTool({ name: "get-annotated-message", arguments: { messa',
    c.client.callTool({ name: 'get-annotated-message', arguments: { messageType: 'error', includeImage: false } }),
  );
  await step(
    'callTool({ name: "trigger-long-running-operation", arguments',
    c.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 2 } }, undefined, {
      onprogress: () => {},
    }),
  );
  await step('callTool({ name: "no_such_tool", arguments: {} })', c.client.callTool({ name: 'no_such_tool', arguments: {} })); // unknown tool
  const { resources } = (await step('listResources()', c.client.listResources()))!;
  await step('readResource({ uri: resources[0]!.uri })', c.client.readResource({ uri: resources[0]!.uri }));
  await step('readResource({ uri: "demo://resource/no-such-thing" })', c.client.readResource({ uri: 'demo://resource/no-such-thing' }));
  await step('listResourceTemplates()', c.client.listResourceTemplates());
  const { prompts } = (await step('listPrompts()', c.client.listPrompts()))!;
  await step('getPrompt({ name: prompts[0]!.name })', c.client.getPrompt({ name: prompts[0]!.name }));
  await step('getPrompt({ name: "no_such_prompt" })', c.client.getPrompt({ name: 'no_such_prompt' }));
  await step('setLoggingLevel("info")', c.client.setLoggingLevel('info'));
  await step('ping()', c.client.ping());
}

/** Findings the README explains, by server: each a known departure from the spec. */
const EXPLAINED: Record<string, Array<[rule: string, where: string]>> = {
  'SDK server (json)': [['unknown-tool-as-iserror', 'no_such_tool']],
  'SDK server (sse)': [['unknown-tool-as-iserror', 'no_such_tool']],
  // get-annotated-message({messageType: "error"}) answers "Error: Operation failed": asked for, not a silent failure.
  'server-everything': [['unknown-tool-as-iserror', 'no_such_tool']],
};

const servers = [
  { name: 'SDK server (json)', start: () => startSdkServer({ mode: 'json' }), session: sdkFixtureSession },
  { name: 'SDK server (sse)', start: () => startSdkServer({ mode: 'sse', eventStore: true }), session: sdkFixtureSession },
  { name: 'server-everything', start: startEverythingServer, session: everythingSession },
];

/** Runs a server's session through a proxy under `policy`; returns what the client saw and what the proxy logged. */
async function run(server: (typeof servers)[number], policy: Policy): Promise<{ seen: Seen; records: LogRecord[] }> {
  const upstream = await server.start();
  const proxy = await startProxy(upstream.url, { policy: () => policy });
  const seen: Seen = [];
  try {
    const c = await connectSdkClient(proxy.url);
    try {
      await server.session(c, recorder(seen));
      await c.transport.terminateSession();
    } finally {
      await c.close();
    }
    return { seen, records: proxy.log.records };
  } finally {
    await proxy.close();
    await upstream.close();
  }
}

async function shipped(name: string): Promise<Policy> {
  const loaded = await loadPolicyFile(`config/${name}`, { rewritable: REWRITABLE });
  assert.ok(loaded.ok);
  return loaded.policy;
}

for (const server of servers) {
  describe(`${server.name} through the proxy`, () => {
    let audit: Awaited<ReturnType<typeof run>>;
    let enforce: Awaited<ReturnType<typeof run>>;
    before(async () => {
      audit = await run(server, await shipped('audit.yaml'));
      enforce = await run(server, await shipped('enforce.yaml'));
    });

    test('every finding is a known, explained departure from the spec', () => {
      const violations = audit.records.filter((r) => r.msg === 'violation');
      const seen = violations.map((v) => [v.rule, v.tool ?? v.method]);
      assert.deepEqual(seen, EXPLAINED[server.name], JSON.stringify(violations, null, 1));
    });

    test('under enforce.yaml the client sees what it sees under audit.yaml, except where a finding is', () => {
      const rewritten = enforce.records.filter((r) => r.msg === 'rewrite').map((r) => [r.rule, r.tool ?? r.method]);
      assert.deepEqual(rewritten, EXPLAINED[server.name], 'a rewrite happens only where a finding is');
      assert.equal(enforce.seen.length, audit.seen.length);
      const changedTools = new Set(EXPLAINED[server.name]!.map(([, where]) => where));
      for (const [i, [step, outcome]] of audit.seen.entries()) {
        const [enforcedStep, enforced] = enforce.seen[i]!;
        assert.equal(enforcedStep, step);
        const tool = [...changedTools].find((t) => step.includes(`"${t}"`));
        if (tool) assert.notDeepEqual(enforced, outcome, `${step} was put right`);
        else assert.deepEqual(enforced, outcome, `${step} unchanged`);
      }
    });
  });
}
