// Review of #14 `check --baseline` (review-14): what a baseline accepts and reports fixed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyBaseline, baselineOf, type BaselineFile } from '../../src/check/baseline.ts';
import { placeOf } from '../../src/check/exec.ts';
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
  place: placeOf(`/response/result/tools/${index}/inputSchema`, {
    result: { tools: [...Array(index).fill({ name: 'other' }), { name: tool }] },
  }),
  evidence: '(absent)',
  fix: 'give every tool an inputSchema',
});

/** The finding of tool `names[index]` without an inputSchema, placed as exec.ts places it in that list. */
const noSchemaIn = (names: string[], index: number): CheckFinding => {
  const pointer = `/response/result/tools/${index}/inputSchema`;
  const place = placeOf(pointer, { result: { tools: names.map((name) => ({ name })) } });
  return { ...noSchema(names[index]!, index), ...(place ? { place } : { place: undefined }) };
};

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

  test('a tool newly broken at the index of an accepted (since fixed) tool is a new finding', () => {
    const baseline = baselineOf(report('ok', [probe([noSchema('alpha', 1)])]), new Date(0));
    const applied = applyBaseline(report('ok', [probe([noSchema('beta', 1)])]), baseline, 'baseline.json');
    assert.equal(applied.exitCode, 1, 'beta was never accepted');
    assert.deepEqual(applied.baseline?.fixed, [
      { probe: 'tools-list', rule: 'tools-list-shape', pointer: '/response/result/tools/1/inputSchema' },
    ]);
  });

  test('a reordered tools list keeps what the baseline accepted: a tool is known by its name', () => {
    const baseline = baselineOf(report('ok', [probe([noSchema('alpha', 1)])]), new Date(0));
    assert.equal(baseline.findings[0]!.place, '/response/result/tools/name=alpha/inputSchema');
    const applied = applyBaseline(report('ok', [probe([noSchema('alpha', 4)])]), baseline, 'baseline.json');
    assert.equal(applied.exitCode, 0);
    assert.equal(applied.summary.accepted, 1);
  });

  test('a tool name with a slash is escaped in its place (RFC 6901)', () => {
    assert.equal(
      placeOf('/response/result/tools/0/name', { result: { tools: [{ name: 'a/b~c' }] } }),
      '/response/result/tools/name=a~1b~0c/name',
    );
    assert.equal(placeOf('/response/result/tools', { result: { tools: [] } }), undefined, 'the list itself has no tool to name');
    assert.equal(placeOf('/response/result/tools/3/name', { result: { tools: [] } }), undefined, 'no tool at that index');
  });

  test('a tool name holding `$1` is its own place: not another tool, not its index', () => {
    const names = ['a', 'b', 'c', 'd', 't5', 't$1'];
    assert.equal(noSchemaIn(names, 5).place, '/response/result/tools/name=t$1/inputSchema');
    // The accepted finding is tool "t5"'s; next run "t5" is fixed and "t$1" breaks: that is new.
    const baseline = baselineOf(report('ok', [probe([noSchemaIn(names, 4)])]), new Date(0));
    const applied = applyBaseline(report('ok', [probe([noSchemaIn(names, 5)])]), baseline, 'baseline.json');
    assert.equal(applied.summary.accepted, 0, 'tool "t$1" was never accepted');
    assert.equal(applied.exitCode, 1);
  });

  test('a baseline written before places (no `place`) still accepts the same finding at the same pointer', () => {
    const names = ['other', 'alpha'];
    const old: BaselineFile = {
      'mcp-warden-baseline': 1,
      target: 'http://127.0.0.1:1/mcp',
      createdAt: new Date(0).toISOString(),
      findings: [
        {
          probe: 'tools-list',
          rule: 'tools-list-shape',
          pointer: '/response/result/tools/1/inputSchema',
          severity: 'error',
          message: 'tools/list tool "alpha" has no inputSchema',
        },
      ],
    };
    const applied = applyBaseline(report('ok', [probe([noSchemaIn(names, 1)])]), old, 'baseline.json');
    assert.equal(applied.summary.accepted, 1);
    assert.equal(applied.exitCode, 0);
    assert.deepEqual(applied.baseline?.fixed, []);
  });
});
