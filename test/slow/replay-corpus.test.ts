// Replay is the live proxy offline: the precision corpus (test/fixtures/corpus/) through a live
// proxy under config/enforce.yaml with capture on, then the capture replayed under the same
// policy. Every finding (rule, where, action) and every rewrite or block the live proxy made on
// an exchange, for every rule a replay judges, must come out of the replay, and nothing else.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayFile } from '../../src/commands/replay.ts';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import type { ReplayReport } from '../../src/replay/replay.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { FAILURES, LEGIT } from '../fixtures/corpus/index.ts';
import { runAll, startCorpusUpstream, type CorpusRun } from '../helpers/corpus-runner.ts';
import type { LogRecord } from '../helpers/log-capture.ts';
import { startProxy } from '../helpers/proxy.ts';
import { liveJudgements, replayedJudgements } from '../helpers/replay-compare.ts';

const CONCURRENCY = 4;
const ALL_CASES = [...LEGIT, ...FAILURES];

let dir: string;
let records: LogRecord[] = [];
let report: ReplayReport;
let policy: Policy;

describe('the precision corpus, live and replayed from its capture (config/enforce.yaml)', () => {
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'warden-replay-corpus-'));
    const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
    assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
    policy = { ...loaded.policy, capture: { path: join(dir, 'capture.jsonl') } };
    const upstream = await startCorpusUpstream();
    const proxy = await startProxy(upstream.url, { policy: () => policy });
    try {
      let n = 0;
      const runs: CorpusRun[] = ALL_CASES.flatMap((kase) =>
        kase.versions.map((version) => ({ key: `c${++n}`, kase, version, policy: 'enforce' as const })),
      );
      await runAll(proxy, upstream, runs, CONCURRENCY);
    } finally {
      // Closing the proxy flushes the capture.
      await proxy.close();
      await upstream.close();
    }
    records = proxy.log.records;
    report = await replayFile(policy.capture!.path, policy);
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('the replay reproduces every live finding and decision, and adds none', () => {
    const live = liveJudgements(records, new Set(report.coverage.judged.rules));
    const replayed = replayedJudgements(report);
    assert.ok(live.findings.length > 0 && live.decisions.length > 0, 'the corpus makes findings and decisions');
    assert.deepEqual(missingAndExtra(replayed.findings, live.findings), { missing: [], extra: [] }, 'findings');
    assert.deepEqual(missingAndExtra(replayed.decisions, live.decisions), { missing: [], extra: [] }, 'decisions');
  });

  test('every rule the corpus makes fire live is among those the replay judges, and fires in the replay', () => {
    const judged = new Set(report.coverage.judged.rules);
    const liveRules = new Set(records.filter((r) => r.msg === 'violation' && r.on === 'exchange').map((r) => String(r.rule)));
    const replayedRules = new Set(report.summary.byRule.map((r) => r.rule));
    for (const rule of liveRules) if (judged.has(rule)) assert.ok(replayedRules.has(rule), `${rule} fired live, not in the replay`);
    assert.equal(report.lines.bad, 0, JSON.stringify(report.badLines.slice(0, 5)));
  });
});

/** What `got` lacks of `want` and holds beyond it, as multisets. */
function missingAndExtra(got: readonly string[], want: readonly string[]): { missing: string[]; extra: string[] } {
  const left = [...got];
  const missing: string[] = [];
  for (const w of want) {
    const i = left.indexOf(w);
    if (i < 0) missing.push(w);
    else left.splice(i, 1);
  }
  return { missing, extra: left };
}
