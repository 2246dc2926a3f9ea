// Review of #14 (report, check --baseline places): each test showed a bug the review found (each
// failed before its fix).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyBaseline, baselineOf, type BaselineFile } from '../../src/check/baseline.ts';
import { placeOf } from '../../src/check/exec.ts';
import { exitCodeOf, summarize, type CheckFinding, type CheckReport, type ProbeResult } from '../../src/check/report.ts';
import { defaultPolicy } from '../../src/config/compile.ts';
import { ReportReader } from '../../src/report/reader.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

const exchangeRecord = (o: Record<string, unknown> = {}) =>
  JSON.stringify({
    level: 30,
    time: T0,
    msg: 'exchange',
    method: 'tools/call',
    id: 1,
    tool: 'search',
    session: 's1',
    outcome: 'result',
    status: 200,
    ...o,
  });

describe('review-report: report reader', () => {
  test('a log record whose numeric time is outside the range of a Date does not crash the report', () => {
    const reader = new ReportReader(defaultPolicy(REWRITABLE));
    reader.line(exchangeRecord());
    reader.line(exchangeRecord({ id: 2, time: 1e300 }));
    assert.doesNotThrow(() => reader.data(['log']));
  });

  test('an exchange record after very many violations of its key: line() never throws', () => {
    const reader = new ReportReader(defaultPolicy(REWRITABLE));
    reader.line(exchangeRecord({ id: 0, outcome: 'isError' })); // the worst exchanges are not empty
    const violation = JSON.stringify({
      level: 40,
      time: T0,
      msg: 'violation',
      rule: 'silent-success',
      severity: 'warning',
      message: 'm',
      evidence: 'e',
      method: 'tools/call',
      id: 1,
      tool: 'search',
      session: 's1',
    });
    for (let i = 0; i < 300_000; i++) reader.line(violation);
    assert.doesNotThrow(() => reader.line(exchangeRecord()));
    assert.equal(reader.data(['log']).summary.exchanges, 2);
  });
});

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

/** The finding of tool `names[index]` without an inputSchema, placed as exec.ts places it. */
const noSchema = (names: string[], index: number): CheckFinding => {
  const pointer = `/response/result/tools/${index}/inputSchema`;
  const place = placeOf(pointer, { result: { tools: names.map((name) => ({ name })) } });
  return {
    rule: 'tools-list-shape',
    severity: 'error',
    message: `tools/list tool "${names[index]}" has no inputSchema`,
    pointer,
    ...(place ? { place } : {}),
    evidence: '(absent)',
    fix: 'give every tool an inputSchema',
  };
};

function report(probes: ProbeResult[]): CheckReport {
  const summary = summarize(probes);
  return {
    tool: { name: 'mcp-warden', version: '0' },
    target: 'http://127.0.0.1:1/mcp',
    startedAt: new Date(0).toISOString(),
    durationMs: 1,
    protocol: { requested: 'auto', spoken: [], used: undefined, note: undefined },
    server: undefined,
    reach: { status: 'ok', detail: undefined, challenge: undefined },
    probes,
    summary,
    exitCode: exitCodeOf('ok', summary),
  };
}

describe('review-report: check --baseline places', () => {
  test('a tool name holding `$1` is its own place: not another tool, not its index', () => {
    const names = ['a', 'b', 'c', 'd', 't5', 't$1'];
    assert.equal(noSchema(names, 5).place, '/response/result/tools/name=t$1/inputSchema');
    // The accepted finding is tool "t5"'s; next run "t5" is fixed and "t$1" breaks: that is new.
    const baseline = baselineOf(report([probe([noSchema(names, 4)])]), new Date(0));
    const applied = applyBaseline(report([probe([noSchema(names, 5)])]), baseline, 'baseline.json');
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
    const applied = applyBaseline(report([probe([noSchema(names, 1)])]), old, 'baseline.json');
    assert.equal(applied.summary.accepted, 1);
    assert.equal(applied.exitCode, 0);
    assert.deepEqual(applied.baseline?.fixed, []);
  });
});
