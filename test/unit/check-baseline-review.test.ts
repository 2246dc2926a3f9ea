// Review of #14 `check --baseline` (review-14): what a baseline accepts and reports fixed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyBaseline, baselineOf } from '../../src/check/baseline.ts';
import { exitCodeOf, summarize, type CheckFinding, type CheckReport, type ProbeResult, type Reach } from '../../src/check/report.ts';

const probe = (findings: CheckFinding[]): ProbeResult => ({
  probe: 'tools-list',
  title: 'tools/list',
  version: '2025-11-25',
  rules: ['tools-list-shape'],
  verdict: findings.length > 0 ? 'fail' : 'pass',
  expected: '',
  got: '',
  fix: undefined,
  findings,
  request: undefined,
  status: 200,
  durationMs: 1,
});

const noSchema = (tool: string, index: number): CheckFinding => ({
  rule: 'tools-list-shape',
  severity: 'error',
  message: `tools/list tool "${tool}" has no inputSchema`,
  pointer: `/response/result/tools/${index}/inputSchema`,
  evidence: '(absent)',
  fix: 'give every tool an inputSchema',
});

function report(status: Reach, probes: ProbeResult[]): CheckReport {
  const summary = summarize(probes);
  return {
    tool: { name: 'mcp-warden', version: '0' },
    target: 'http://127.0.0.1:1/mcp',
    startedAt: new Date(0).toISOString(),
    durationMs: 1,
    protocol: { requested: 'auto', spoken: [], used: undefined, note: undefined },
    server: undefined,
    reach: { status, detail: undefined, challenge: undefined },
    probes,
    summary,
    exitCode: exitCodeOf(status, summary),
  };
}

describe('review-14: check --baseline', () => {
  test('a run that did not reach the server reports no baseline entry as fixed', () => {
    const baseline = baselineOf(report('ok', [probe([noSchema('alpha', 1)])]), new Date(0));
    const applied = applyBaseline(report('unreachable', []), baseline, 'baseline.json');
    assert.equal(applied.exitCode, 2);
    assert.deepEqual(applied.baseline?.fixed, []);
  });

  test('a tool newly broken at the index of an accepted (since fixed) tool is a new finding', {
    todo: 'bug: the baseline keys a finding by probe, rule and pointer, and tools-list-shape points by array index (/response/result/tools/1/...): another tool broken at that index is accepted, and a reordered tools list makes accepted findings new',
  }, () => {
    const baseline = baselineOf(report('ok', [probe([noSchema('alpha', 1)])]), new Date(0));
    const applied = applyBaseline(report('ok', [probe([noSchema('beta', 1)])]), baseline, 'baseline.json');
    assert.equal(applied.exitCode, 1, 'beta was never accepted');
  });
});
