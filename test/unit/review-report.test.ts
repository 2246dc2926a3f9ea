// Review of #14 (report): each test showed a bug the review found (each
// failed before its fix).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
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
