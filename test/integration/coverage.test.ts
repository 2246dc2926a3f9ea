// Coverage you can see (issue #24): every exchange relayed without full judging carries its reason
// on its exchange record (at warn), is counted in mcp_warden_unjudged_total{reason}, and the report
// (from the log, and the admin port's live one) says "judged N of M"; an exchange judged in full
// says nothing of the kind.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { loadPolicyText } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { defaultPolicy } from '../../src/config/compile.ts';
import { LiveReport } from '../../src/report/live.ts';
import { ReportReader } from '../../src/report/reader.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { summaryLine } from '../../src/commands/report.ts';
import { startRawServer, type RawHandler } from '../fixtures/raw-server.ts';
import { post, rpc } from '../helpers/faults.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const started: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const s of started.reverse()) await s.close();
});

const result = (id: number, text: string): string => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });

/** Answers by the request's id: 1 small, 2 over the audit limit, 3 in a coding the proxy cannot undo, 4 nested too deep. */
const answers: RawHandler = (_req, res, body) => {
  const { id } = JSON.parse(body.toString()) as { id: number };
  const json = { 'content-type': 'application/json' };
  if (id === 2) return void res.writeHead(200, json).end(result(id, 'x'.repeat(20_000)));
  if (id === 3) return void res.writeHead(200, { ...json, 'content-encoding': 'x-custom' }).end(gzipSync(result(id, 'ok')));
  if (id === 4) {
    const deep = `${'['.repeat(200)}1${']'.repeat(200)}`;
    return void res.writeHead(200, json).end(`{"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"v":${deep}}}}`);
  }
  res.writeHead(200, json).end(result(id, 'ok'));
};

function policy(yaml: string): Policy {
  const loaded = loadPolicyText(yaml, 'test.yaml', { rewritable: REWRITABLE });
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
  return loaded.policy;
}

async function drive(proxy: TestProxy): Promise<void> {
  for (const id of [1, 2, 3, 4]) await (await post(proxy.url, rpc(id))).body.arrayBuffer();
  await (await post(new URL('/scoped/x', proxy.url), rpc(5))).body.arrayBuffer();
  await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 4);
  await proxy.log.waitFor((r) => r.msg === 'passthrough');
}

describe('coverage', () => {
  test('each exchange not judged in full says why, at warn; the rest say nothing; the metric counts by reason', async () => {
    const upstream = await startRawServer(answers);
    started.push(upstream);
    const report = new LiveReport();
    const proxy = await startProxy(new URL('/mcp', upstream.url), {
      limits: { auditBodyBytes: 10_000 },
      policy: () => policy('scope:\n  passthrough: ["/scoped/*"]\n'),
      report,
    });
    started.push(proxy);
    await drive(proxy);
    const byId = new Map(proxy.exchanges().map((r) => [r.id, r]));
    assert.equal(byId.get(1)?.unjudged, undefined);
    assert.equal(byId.get(1)?.level, 30);
    assert.deepEqual(
      [2, 3, 4].map((id) => [byId.get(id)?.unjudged, byId.get(id)?.level]),
      [
        ['too-large', 40],
        ['unknown-coding', 40],
        ['too-deep', 40],
      ],
    );
    const metrics = await proxy.metrics.registry.metrics();
    for (const reason of ['too-large', 'unknown-coding', 'too-deep', 'scoped-out'])
      assert.match(metrics, new RegExp(`mcp_warden_unjudged_total\\{reason="${reason}"\\} 1\\b`), reason);

    // The report read from the log, and the admin port's live one, say the same.
    const reader = new ReportReader(defaultPolicy(REWRITABLE));
    for (const r of proxy.log.records) reader.line(JSON.stringify(r));
    const fromLog = reader.data(['log']);
    const expected = { judged: 1, of: 5, unjudged: { 'too-large': 1, 'unknown-coding': 1, 'too-deep': 1, 'scoped-out': 1 } };
    assert.deepEqual(fromLog.summary.coverage, expected);
    assert.match(summaryLine(fromLog), /judged 1 of 5 exchanges/);
    assert.deepEqual(report.data().summary.coverage, expected);
  });

  test('a clean run: judged N of N', async () => {
    const upstream = await startRawServer(answers);
    started.push(upstream);
    const proxy = await startProxy(new URL('/mcp', upstream.url));
    started.push(proxy);
    for (const id of [1, 6, 7]) await (await post(proxy.url, rpc(id))).body.arrayBuffer();
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 7);
    const reader = new ReportReader(defaultPolicy(REWRITABLE));
    for (const r of proxy.log.records) reader.line(JSON.stringify(r));
    assert.deepEqual(reader.data(['log']).summary.coverage, { judged: 3, of: 3, unjudged: {} });
    assert.doesNotMatch(await proxy.metrics.registry.metrics(), /mcp_warden_unjudged_total\{/);
  });

  test('scope.unjudged: block stops, under enforce, what the proxy cannot judge; relay (the default) sends it on', async () => {
    const upstream = await startRawServer(answers);
    started.push(upstream);
    for (const [yaml, blocked] of [
      ['mode: enforce\nscope:\n  unjudged: block\n', true],
      ['mode: enforce\n', false],
    ] as const) {
      const enforce = policy(yaml);
      const proxy = await startProxy(new URL('/mcp', upstream.url), { limits: { auditBodyBytes: 10_000 }, policy: () => enforce });
      started.push(proxy);
      for (const id of [1, 2, 3, 4]) {
        const res = await post(proxy.url, rpc(id));
        const text = Buffer.from(await res.body.arrayBuffer());
        if (id === 1) {
          assert.equal(JSON.parse(text.toString()).result.content[0].text, 'ok', yaml);
          continue;
        }
        if (!blocked) {
          assert.equal(res.headers['content-encoding'], id === 3 ? 'x-custom' : undefined, yaml);
          continue;
        }
        const body = JSON.parse(text.toString()) as { id: number; error?: { code: number } };
        assert.equal(body.id, id, `${yaml}: id ${id}`);
        assert.equal(typeof body.error?.code, 'number', `${yaml}: id ${id} got ${text.toString().slice(0, 200)}`);
      }
    }
  });
});
