// mcp-warden as a library, imported by its package name from the built dist/ (npm ci builds it):
// the exports map resolves, createProxy serves in front of a real server, and the judging works
// on its own (a policy compiled, the rule catalogue, replay).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRawServer, jsonRpcResult } from '../fixtures/raw-server.ts';
import { createLogCapture } from '../helpers/log-capture.ts';
import { post, rpc } from '../helpers/faults.ts';

type Library = typeof import('../../src/index.ts');
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

test('import "mcp-warden": createProxy in front of a server, a compiled policy, the rules and replay', async () => {
  const lib = (await import('mcp-warden' as string)) as Library;
  assert.equal(typeof lib.createProxy, 'function');
  assert.ok(lib.RULES.length > 50);
  const upstream = await startRawServer(jsonRpcResult({ content: [{ type: 'text', text: 'Error: failed to open file' }] }));
  closers.push(() => upstream.close());
  const log = createLogCapture();
  const policy = lib.compilePolicy(
    { mode: 'enforce', rules: { 'silent-success': 'rewrite' } },
    { source: 'library test', rewritable: lib.REWRITABLE },
  );
  const proxy = lib.createProxy({
    upstream: new URL('/mcp', upstream.url),
    logger: lib.createLogger({ destination: log.stream }),
    policy: () => policy,
  });
  const running = await proxy.listen(0, '127.0.0.1');
  closers.push(() => running.close());
  const res = await post(running.url, rpc(1));
  const body = (await res.body.json()) as { result: { isError?: boolean } };
  assert.equal(body.result.isError, true, 'the policy rewrote the silent failure');
  const report = await lib.replayCapture([], policy);
  assert.equal(typeof report, 'object');
});
