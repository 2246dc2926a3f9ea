// Shadow decisions: under audit each violation record says what the shadow policy (--shadow,
// default the shipped enforce.yaml) would do with it, and mcp_warden_shadow_decisions_total counts
// it; under enforce there is no shadow (the policy in force says what is done).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { loadPolicyFile } from '../../src/config/load.ts';
import { defaultPolicy } from '../../src/config/compile.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { jsonRpcResult, startRawServer } from '../fixtures/raw-server.ts';
import { startProxy } from '../helpers/proxy.ts';
import { fixtureServer, initialize, startStdio, toolCall } from '../helpers/stdio.ts';

const loaded = await loadPolicyFile(new URL('../../config/enforce.yaml', import.meta.url).pathname, { rewritable: REWRITABLE });
if (!loaded.ok) throw new Error('config/enforce.yaml does not validate');
const ENFORCE: Policy = loaded.policy;
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

/** An upstream that answers every request with an isError "Unknown tool: nope" result (the tests call nope: unknown-tool-as-iserror). */
const upstream = await startRawServer(jsonRpcResult({ content: [{ type: 'text', text: 'Unknown tool: nope' }], isError: true }));
closers.push(() => upstream.close());

async function callThrough(policy: Policy) {
  const proxy = await startProxy(new URL('/mcp', upstream.url), { policy: () => policy, shadow: ENFORCE });
  closers.push(() => proxy.close());
  const res = await request(proxy.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'nope', arguments: {} } }),
  });
  await res.body.text();
  return proxy;
}

describe('shadow decisions', () => {
  test('under audit: the violation says what enforce.yaml would do, and the metric counts it', async () => {
    const proxy = await callThrough(defaultPolicy(REWRITABLE));
    const violation = proxy.log.records.find((r) => r.msg === 'violation' && r.rule === 'unknown-tool-as-iserror');
    assert.equal(violation?.action, 'log', 'audit: the policy in force only logs');
    assert.equal(violation?.shadow, 'rewrite', 'enforce.yaml would rewrite it');
    assert.match(
      await proxy.metrics.registry.metrics(),
      /^mcp_warden_shadow_decisions_total\{rule="unknown-tool-as-iserror",action="rewrite"\} 1$/m,
    );
  });

  test('under enforce: no shadow on the record (the action is what was done)', async () => {
    const proxy = await callThrough(ENFORCE);
    const violation = proxy.log.records.find((r) => r.msg === 'violation' && r.rule === 'unknown-tool-as-iserror');
    assert.equal(violation?.action, 'rewrite');
    assert.equal(violation?.shadow, undefined);
  });

  test('the stdio command shadows with the shipped enforce.yaml by default', async () => {
    const run = await startStdio(await fixtureServer());
    closers.push(() => run.close());
    run.send(initialize(1));
    run.send(toolCall(2, 'missing'));
    await run.waitFor((m) => m.id === 2);
    const violation = await run.waitForLog((r) => r.msg === 'violation' && r.rule === 'unknown-tool-as-iserror');
    assert.equal(violation.shadow, 'rewrite');
  });
});
