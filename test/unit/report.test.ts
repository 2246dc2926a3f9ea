// The report's core, on records written by hand: tallies and timeline stay bounded and exact, log
// violations join their exchange, a log and a capture of the same traffic count once, what a
// policy would change comes from the replay, the shadow decisions or the verdicts, and whatever the
// report shows is masked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPolicy } from '../../src/config/compile.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { BoundedTally } from '../../src/report/tally.ts';
import { Timeline } from '../../src/report/timeline.ts';
import { ReportTables } from '../../src/report/tables.ts';
import { ReportReader } from '../../src/report/reader.ts';
import { whatIfOf } from '../../src/report/what-if.ts';
import type { ReportExchange } from '../../src/report/model.ts';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

const exchangeRecord = (o: Record<string, unknown> = {}) =>
  JSON.stringify({
    level: 30,
    time: at(0),
    msg: 'exchange',
    method: 'tools/call',
    id: 1,
    tool: 'search',
    session: 's1',
    protocolVersion: '2025-11-25',
    outcome: 'result',
    status: 200,
    durationMs: 3,
    clientName: 'cursor',
    clientVersion: '1.0',
    ...o,
  });
const violationRecord = (o: Record<string, unknown> = {}) =>
  JSON.stringify({
    level: 40,
    time: at(0),
    msg: 'violation',
    rule: 'silent-success',
    severity: 'warning',
    message: 'looks failed',
    evidence: 'Error: x',
    method: 'tools/call',
    id: 1,
    tool: 'search',
    session: 's1',
    action: 'log',
    ...o,
  });

const x = (o: Partial<ReportExchange> = {}): ReportExchange => ({
  time: T0,
  method: 'tools/call',
  tool: 'search',
  session: 's1',
  protocolVersion: '2025-11-25',
  client: 'cursor 1.0',
  outcome: 'result',
  status: 200,
  durationMs: 1,
  verdict: undefined,
  findings: [],
  ...o,
});

test('a bounded tally keeps its heaviest keys and counts the ones it dropped', () => {
  const tally = new BoundedTally(
    4,
    (key) => ({ key, n: 0 }),
    (r) => r.n,
  );
  for (let i = 0; i < 4; i++) tally.row(`k${i}`).n = i * 10;
  assert.equal(tally.size, 4);
  tally.row('new').n = 1; // full: the lighter half goes
  assert.deepEqual(
    tally.top(10).map((r) => r.key),
    ['k3', 'k2', 'new'],
  );
  assert.equal(tally.dropped, 2);
  for (let i = 0; i < 1000; i++) tally.row(`peer-chosen-${i}`);
  assert.ok(tally.size <= 4, 'never more keys than its bound');
});

test('the timeline sums exactly into round buckets, at most maxBuckets of them, whatever the span', () => {
  const t = new Timeline(10);
  t.exchange(T0);
  t.finding(T0 + 5, 'error');
  t.exchange(T0 + 25);
  let d = t.data();
  assert.equal(d.bucketMs, 10);
  assert.deepEqual(d.exchanges, [1, 0, 1]);
  assert.deepEqual(d.findings.error, [1, 0, 0]);
  // A record an hour later: the width climbs the ladder; nothing is lost or counted twice.
  t.finding(T0 + 3_600_000, 'warning');
  t.exchange(T0 - 1);
  d = t.data();
  assert.ok(d.exchanges.length <= 10, `${d.exchanges.length} buckets`);
  assert.ok([10 * 60_000, 30 * 60_000, 3_600_000].includes(d.bucketMs), `a round width: ${d.bucketMs}`);
  assert.equal(
    d.exchanges.reduce((a, b) => a + b),
    3,
  );
  assert.equal(
    d.findings.error.reduce((a, b) => a + b),
    1,
  );
  assert.equal(
    d.findings.warning.reduce((a, b) => a + b),
    1,
  );
  assert.equal(d.start % d.bucketMs, 0);
});

test('tables: error share per method, worst exchanges by severity then count, examples capped per rule', () => {
  const tables = new ReportTables();
  const warn = { rule: 'silent-success', severity: 'warning' as const, message: 'm', evidence: '' };
  const error = { rule: 'leaked-stack-trace', severity: 'error' as const, message: 'trace', evidence: '' };
  tables.exchange(x());
  tables.exchange(x({ outcome: 'isError' }));
  tables.exchange(x({ outcome: 'error:-32602', findings: [warn, { ...warn, message: 'm2' }] }));
  tables.exchange(x({ outcome: 'no-response', findings: [error] }));
  tables.exchange(x({ method: 'tools/list', tool: undefined }));
  for (let i = 0; i < 5; i++) tables.exchange(x({ findings: [{ ...warn, message: `other ${i}` }] }));
  const d = tables.data();
  const call = d.methods.find((m) => m.key === 'tools/call')!;
  assert.equal(call.exchanges, 9);
  assert.equal(call.errors, 3, 'isError, a JSON-RPC error and no response are failures');
  assert.equal(call.errorShare, 3 / 9);
  assert.equal(d.summary.exchanges, 10);
  assert.equal(d.summary.flagged, 7);
  assert.deepEqual(d.summary.findings, { error: 1, warning: 7, info: 0 });
  assert.equal(d.worst[0]!.outcome, 'no-response', 'an error finding first');
  assert.equal(d.worst[1]!.findings.length, 2, 'then the most findings');
  assert.equal(d.rules[0]!.rule, 'leaked-stack-trace', 'rules by severity first');
  assert.equal(d.rules.find((r) => r.rule === 'silent-success')!.count, 7);
  assert.equal(d.rules.find((r) => r.rule === 'silent-success')!.examples.length, 3);
  assert.deepEqual(
    d.versions.map((v) => [v.version, v.exchanges]),
    [['2025-11-25', 10]],
  );
  assert.equal(d.sessions[0]!.client, 'cursor 1.0');
  assert.equal(d.tools[0]!.example, 'silent-success: m', 'each row keeps the first finding seen under it');
  assert.equal(d.methods.find((m) => m.key === 'tools/list')!.example, null);
});

test('the reader joins each violation to the exchange record after it, and keeps the rest as loose findings', () => {
  const reader = new ReportReader(defaultPolicy(REWRITABLE));
  reader.line(violationRecord());
  reader.line(violationRecord({ rule: 'leaked-path', severity: 'error' }));
  reader.line(exchangeRecord({ outcome: 'result' }));
  reader.line(exchangeRecord({ id: 2, time: at(1500) }));
  // A POST-level finding: no exchange record follows with its key.
  reader.line(violationRecord({ rule: 'html-body', severity: 'error', method: undefined, id: null, time: at(2000) }));
  reader.line('{"msg":"stream","level":30}');
  reader.line('not json');
  reader.line('');
  const d = reader.data(['log']);
  assert.equal(d.input.lines, 8);
  assert.deepEqual(d.input.records, { exchange: 2, violation: 3, decision: 0, capture: 0, other: 1 });
  assert.equal(d.input.bad, 1);
  assert.equal(d.input.tablesFrom, 'log');
  assert.equal(d.summary.exchanges, 2);
  assert.equal(d.summary.flagged, 1, 'both violations on exchange 1');
  assert.deepEqual(d.summary.findings, { error: 2, warning: 1, info: 0 });
  assert.equal(d.worst[0]!.findings.length, 2);
  assert.equal(d.clients[0]!.key, 'cursor 1.0');
  assert.equal(d.whatIf.source, 'none', 'no capture, no shadow, no verdict');
  assert.equal(d.summary.first, at(0));
  assert.equal(d.summary.last, at(2000));
});

test('what a policy would change: the shadow decisions under audit, else the verdicts under enforce', () => {
  const audit = new ReportReader(defaultPolicy(REWRITABLE));
  audit.line(violationRecord({ shadow: 'rewrite' }));
  audit.line(exchangeRecord());
  audit.line(violationRecord({ id: 2, rule: 'html-body', shadow: 'block' }));
  audit.line(violationRecord({ id: 2, rule: 'silent-success', shadow: 'rewrite' }));
  audit.line(exchangeRecord({ id: 2 }));
  audit.line(exchangeRecord({ id: 3 }));
  const a = audit.data(['log']).whatIf;
  assert.equal(a.source, 'shadow');
  assert.deepEqual(a.decisions, { pass: 1, rewrite: 1, block: 1 });
  assert.deepEqual(a.byRule.find((r) => r.rule === 'silent-success')!.actions, { rewrite: 2 });

  const enforce = new ReportReader(defaultPolicy(REWRITABLE));
  enforce.line(violationRecord({ action: 'rewrite' }));
  enforce.line(exchangeRecord({ verdict: 'rewrite' }));
  enforce.line(exchangeRecord({ id: 2 }));
  const e = enforce.data(['log']);
  assert.equal(e.whatIf.source, 'enforced');
  assert.deepEqual(e.whatIf.decisions, { pass: 1, rewrite: 1, block: 0 });
  assert.equal(e.summary.verdicts.rewrite, 1);
  assert.deepEqual(e.tools[0]!.rewritten, 1);

  assert.deepEqual(
    whatIfOf(x({ findings: [{ rule: 'r', severity: 'info', message: '', evidence: '', shadow: 'log' }] }), true).would,
    { kind: 'pass' },
    'a shadow that only logs changes nothing',
  );
});

const capture = (id: number, result: unknown, o: Record<string, unknown> = {}) =>
  JSON.stringify({
    v: 1,
    time: at(id),
    session: 's1',
    protocolVersion: '2025-11-25',
    request: {
      from: 'client',
      headers: {},
      message: { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'nope', arguments: {} } },
    },
    response: {
      outcome: 'isError',
      status: 200,
      contentType: 'application/json',
      transport: 'json',
      message: { jsonrpc: '2.0', id, result },
      bodyProblem: null,
      unmatched: [],
      proxyError: null,
    },
    ...o,
  });
const init = JSON.stringify({
  v: 1,
  time: at(0),
  session: 's1',
  protocolVersion: '2025-11-25',
  request: {
    from: 'client',
    headers: {},
    message: {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'vscode', version: '1.99' } },
    },
  },
  response: {
    outcome: 'result',
    status: 200,
    contentType: 'application/json',
    transport: 'json',
    message: {
      jsonrpc: '2.0',
      id: 0,
      result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } },
    },
    bodyProblem: null,
    unmatched: [],
    proxyError: null,
  },
});
const toolNotFound = { content: [{ type: 'text', text: 'Unknown tool: nope' }], isError: true };

test('captures alone fill the tables from the replay; with a log of the same traffic they only say what the policy would change', async () => {
  const { loadPolicyFile } = await import('../../src/config/load.ts');
  const loaded = await loadPolicyFile(new URL('../../config/enforce.yaml', import.meta.url).pathname, { rewritable: REWRITABLE });
  assert.ok(loaded.ok);
  const alone = new ReportReader(loaded.policy);
  for (const line of [init, capture(1, toolNotFound), capture(2, toolNotFound)]) alone.line(line);
  const a = alone.data(['capture']);
  assert.equal(a.input.tablesFrom, 'capture');
  assert.equal(a.summary.exchanges, 3);
  assert.equal(a.clients[0]!.key, 'vscode 1.99', "the client from its session's initialize");
  assert.equal(a.whatIf.source, 'replay');
  assert.equal(a.whatIf.decisions.rewrite, 2, 'enforce.yaml rewrites an unknown tool as isError into -32602');
  assert.equal(a.whatIf.examples[0]!.kind, 'rewrite');
  assert.match(a.whatIf.examples[0]!.after ?? '', /-32602/);

  const both = new ReportReader(loaded.policy);
  both.line(exchangeRecord({ id: 1, outcome: 'isError' }));
  for (const line of [init, capture(1, toolNotFound), '{"v":1,"request":{},"response":{}}']) both.line(line);
  const b = both.data(['log', 'capture']);
  assert.equal(b.input.tablesFrom, 'log');
  assert.equal(b.summary.exchanges, 1, 'the capture does not count the same traffic again');
  assert.equal(b.whatIf.source, 'replay');
  assert.equal(b.whatIf.exchanges, 2);
  assert.equal(b.input.bad, 1, 'a capture line that could not be replayed');
});

test('whatever the report shows is masked, by name and by shape, even from a log that was not', () => {
  const reader = new ReportReader(defaultPolicy(REWRITABLE));
  const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
  reader.line(violationRecord({ message: `leaked Authorization: Bearer ${token}`, evidence: `token=${token}` }));
  reader.line(exchangeRecord({ tool: `t ${token}` }));
  const text = JSON.stringify(reader.data(['log']));
  assert.ok(!text.includes(token), text);
  assert.match(text, /REDACTED/);
});

test('the live report keeps the newest findings of its window, in a fixed ring', async () => {
  const { LiveReport } = await import('../../src/report/live.ts');
  let clock = T0;
  const live = new LiveReport(1000, 3, () => clock);
  const where = { method: 'tools/call', id: 1, tool: 't', session: 's', protocolVersion: undefined };
  const f = (rule: string) => ({
    rule,
    severity: 'warning' as const,
    message: 'm',
    evidence: '',
    pointer: '',
    fix: '',
    versions: [],
    action: 'log' as const,
  });
  live.findings([f('old')], where);
  clock += 900;
  live.findings([f('a'), f('b')], where);
  clock += 200; // 'old' is now 1100 ms old: out of the window
  assert.deepEqual(
    live
      .data()
      .rules.map((r) => r.rule)
      .sort(),
    ['a', 'b'],
  );
  live.findings([f('c'), f('d')], where); // the ring holds 3: 'old' and 'a' are overwritten
  const d = live.data();
  assert.deepEqual(d.rules.map((r) => r.rule).sort(), ['b', 'c', 'd']);
  assert.equal(d.input.tablesFrom, 'live');
  assert.deepEqual(d.input.window, { from: new Date(clock - 1000).toISOString(), to: new Date(clock).toISOString(), maxExchanges: 3 });
});
