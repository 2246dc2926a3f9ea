// Capture, then replay, on the two other transports: a stdio child behind `mcp-warden stdio` and a
// legacy HTTP+SSE session through the proxy. The capture says which transport each exchange came
// on; the replay judges it in its session as the proxy did (the version learned from initialize,
// the tool catalogue from tools/list) and runs no rule of Streamable HTTP on it.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { replayCaptureSync } from '../../src/replay/replay.ts';
import { startLegacyServer } from '../fixtures/legacy-sse-server.ts';
import { startProxy } from '../helpers/proxy.ts';
import { sseReader } from '../helpers/sse-reader.ts';
import { fixtureServer, initialize, startStdio, toolCall } from '../helpers/stdio.ts';

const dir = mkdtempSync(join(tmpdir(), 'mcp-warden-replay-transports-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const enforce = await loadPolicyFile(new URL('../../config/enforce.yaml', import.meta.url).pathname, { rewritable: REWRITABLE });
assert.ok(enforce.ok);
const HTTP_ONLY = ['header-mismatch', 'accept-header', 'response-content-type', 'legacy-version-header', 'unknown-method-status'];

/** A policy file that captures to `name` in audit mode. */
function capturing(name: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, `mode: audit\ncapture: { path: ./${name}.jsonl }\n`);
  return file;
}
const lines = (name: string): string[] =>
  readFileSync(join(dir, `${name}.jsonl`), 'utf8')
    .split('\n')
    .filter((l) => l !== '');

describe('capture and replay beyond Streamable HTTP', () => {
  test('stdio: each exchange captured with wire stdio, replayed in one session under enforce', async () => {
    const run = await startStdio(await fixtureServer(), { flags: ['--policy', capturing('stdio')] });
    try {
      run.send(initialize(1));
      await run.waitFor((m) => m.id === 1);
      run.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      await run.waitFor((m) => m.id === 2);
      run.send(toolCall(3, 'missing'));
      await run.waitFor((m) => m.id === 3);
      run.child.stdin!.end();
      assert.deepEqual(await run.exit, { code: 0, signal: null });
    } finally {
      await run.close();
    }
    const captured = lines('stdio').map((l) => JSON.parse(l) as { wire?: string; response: { transport: string } });
    assert.equal(captured.length, 3);
    assert.ok(captured.every((r) => r.wire === 'stdio' && r.response.transport === 'stdio'));
    const report = replayCaptureSync(lines('stdio'), enforce.policy);
    assert.equal(report.lines.bad, 0);
    const missing = report.exchanges.find((e) => e.tool === 'missing');
    assert.equal(missing?.protocolVersion, '2025-06-18', 'the version learned from initialize');
    assert.deepEqual(
      missing?.findings.map((f) => f.rule),
      ['unknown-tool-as-iserror'],
    );
    assert.equal(missing?.decision.kind, 'rewrite');
    assert.deepEqual(
      report.exchanges.flatMap((e) => e.findings.map((f) => f.rule)).filter((r) => HTTP_ONLY.includes(r)),
      [],
    );
  });

  test('legacy SSE: each exchange captured with its session and wire sse, replayed in that session', async () => {
    const server = await startLegacyServer();
    const loaded = await loadPolicyFile(capturing('legacy'), { rewritable: REWRITABLE });
    assert.ok(loaded.ok);
    const proxy = await startProxy(server.sse, { policy: () => loaded.policy });
    try {
      const res = await fetch(proxy.url, { headers: { accept: 'text/event-stream' } });
      const events = sseReader(res.body);
      const endpoint = new URL((await events.next()).data, proxy.url);
      const post = (m: unknown) =>
        fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(m) });
      for (const m of [initialize(0, '2024-11-05'), { jsonrpc: '2.0', id: 1, method: 'tools/list' }, toolCall(2, 'missing')]) {
        await post(m);
        await events.next();
      }
      await events.cancel();
    } finally {
      await proxy.close();
      await server.close();
    }
    const captured = lines('legacy').map((l) => JSON.parse(l) as { wire?: string; session: string });
    assert.equal(captured.length, 3);
    assert.ok(captured.every((r) => r.wire === 'sse' && r.session === '1'));
    const report = replayCaptureSync(lines('legacy'), enforce.policy);
    const missing = report.exchanges.find((e) => e.tool === 'missing');
    assert.equal(missing?.protocolVersion, '2024-11-05');
    assert.deepEqual(
      missing?.findings.map((f) => f.rule),
      ['unknown-tool-as-iserror'],
    );
    assert.equal(report.sessions, 1);
  });
});
