// Hot reload at the proxy: a policy swapped in while an exchange is in flight does not change
// that exchange; the next exchange runs under the new policy; a file that does not validate is
// rejected and the policy in force stays.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { PolicyStore } from '../../src/config/store.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { startRawServer, type RawServer } from '../fixtures/raw-server.ts';
import { createLogCapture } from '../helpers/log-capture.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const AUDIT = 'mode: audit\n';
const ENFORCE = 'mode: enforce\nrules:\n  silent-success: rewrite\n';

let dir: string;
let upstream: RawServer;
let proxy: TestProxy;
after(async () => {
  await proxy?.close();
  await upstream?.close();
  await rm(dir, { recursive: true, force: true });
});

test('an in-flight exchange keeps its policy; the next one gets the new one; a bad file is rejected', async () => {
  dir = await mkdtemp(join(tmpdir(), 'warden-reload-'));
  const file = join(dir, 'policy.yaml');
  await writeFile(file, AUDIT);
  const log = createLogCapture();
  const opened = await PolicyStore.open({ path: file, logger: createLogger({ destination: log.stream }), rewritable: REWRITABLE });
  assert.ok(opened.ok);
  const store = opened.store;

  // Every call reads as a failure without isError; the first one waits until the test lets it go.
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let calls = 0;
  upstream = await startRawServer(async (_req, res, body) => {
    const { id } = JSON.parse(body.toString()) as { id: number };
    if (++calls === 1) await gate;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'Error: disk full' }] } }));
  });
  proxy = await startProxy(new URL('/mcp', upstream.url), { policy: () => store.current() });
  const call = (id: number) =>
    request(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'save', arguments: {} } }),
    }).then(async (r) => (await r.body.json()) as { result: { isError?: boolean } });

  const inFlight = call(1);
  while (calls < 1) await new Promise((r) => setTimeout(r, 5));
  await writeFile(file, ENFORCE);
  assert.deepEqual(await store.reload(), { ok: true });
  assert.equal(store.current().mode, 'enforce');
  release();
  assert.equal((await inFlight).result.isError, undefined, 'the in-flight exchange finished under audit: unchanged');
  assert.equal((await call(2)).result.isError, true, 'the next exchange is rewritten under enforce');

  await writeFile(file, 'mode: enforse\n');
  const rejected = await store.reload();
  assert.equal(rejected.ok, false);
  assert.equal(store.current().mode, 'enforce', 'the policy in force stays');
  assert.ok(log.find((r) => r.msg === 'policy rejected'));
  assert.equal((await call(3)).result.isError, true);
  store.close();
});
