// The check reporters on hand-built reports (every verdict, a finding with markup and pipes, a
// server that needs credentials): SARIF validates against the SARIF 2.1.0 schema, JUnit parses
// back into the same probes and counts, Markdown escapes what would break a table, the table
// has its columns and colours only when asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderJson } from '../../src/check/report-json.ts';
import { renderJunit } from '../../src/check/report-junit.ts';
import { mdCell, renderMarkdown } from '../../src/check/report-markdown.ts';
import { renderSarif } from '../../src/check/report-sarif.ts';
import { renderTable } from '../../src/check/report-table.ts';
import { exitCodeOf, summarize, summaryLine, type CheckReport, type ProbeResult, type Verdict } from '../../src/check/report.ts';
import { sarifValidator } from '../fixtures/sarif-schema.ts';
import { docsUrl, explanationMarkdown, ruleFix } from '../../src/rules/explain.ts';
import { RULES } from '../../src/rules/index.ts';

// ---- a strict little XML parser: elements, attributes, text, the five entities, comments and the
// declaration; anything else (a tag left open, a stray '<' or '&') throws. Enough to read JUnit back.
interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function decode(text: string): string {
  if (/&(?!(amp|lt|gt|quot|apos);)/.test(text) || /</.test(text)) throw new Error(`bad character data: ${text.slice(0, 40)}`);
  return text.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => ENTITIES[e]!);
}

function parseXml(xml: string): XmlElement {
  let i = 0;
  const skip = (): void => {
    for (;;) {
      const ws = /^\s*/.exec(xml.slice(i))![0].length;
      i += ws;
      if (xml.startsWith('<?', i)) i = xml.indexOf('?>', i) + 2;
      else if (xml.startsWith('<!--', i)) i = xml.indexOf('-->', i) + 3;
      else return;
    }
  };
  const element = (): XmlElement => {
    const open = /^<([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>/.exec(xml.slice(i));
    if (!open) throw new Error(`expected an element at ${i}: ${xml.slice(i, i + 40)}`);
    i += open[0].length;
    const attributes: Record<string, string> = {};
    for (const m of open[2]!.matchAll(/([A-Za-z_][\w.-]*)="([^"]*)"/g)) attributes[m[1]!] = decode(m[2]!);
    const node: XmlElement = { name: open[1]!, attributes, children: [], text: '' };
    if (open[3] === '/') return node;
    for (;;) {
      const lt = xml.indexOf('<', i);
      if (lt < 0) throw new Error(`unclosed <${node.name}>`);
      node.text += decode(xml.slice(i, lt));
      i = lt;
      if (xml.startsWith(`</${node.name}>`, i)) {
        i += node.name.length + 3;
        node.text = node.children.length > 0 ? node.text.trim() : node.text;
        return node;
      }
      if (xml.startsWith('</', i)) throw new Error(`mismatched close at ${i}: ${xml.slice(i, i + 30)}`);
      node.children.push(element());
    }
  };
  skip();
  const root = element();
  skip();
  if (i !== xml.length) throw new Error(`content after the root element: ${xml.slice(i, i + 40)}`);
  return root;
}

function probe(id: string, verdict: Verdict, findings: ProbeResult['findings'] = []): ProbeResult {
  return {
    probe: id,
    title: `the ${id} probe`,
    version: '2025-11-25',
    rules: [],
    verdict,
    expected: 'error -32601 | on <HTTP 200>',
    got: verdict === 'skip' ? 'skipped: the server declares no tools capability' : 'HTTP 200, error -32000 "Not <found> & | gone"',
    fix: verdict === 'pass' || verdict === 'skip' ? undefined : 'answer with -32601 & "Method not found"',
    findings,
    request: { method: 'POST', headers: { accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"x"}' },
    status: 200,
    durationMs: 12,
  };
}

const ERROR = {
  rule: 'unknown-method-wrong-code',
  severity: 'error' as const,
  message: 'x was answered with -32000 "<b>Not found</b>" | instead of -32601',
  pointer: '/response/error/code',
  evidence: '{"code":-32000,"message":"<b>Not found</b> \u0001"}',
  fix: 'answer with -32601 & nothing else',
};
const WARNING = {
  rule: 'legacy-range-code',
  severity: 'warning' as const,
  message: 'error code -32000 is in the legacy range',
  pointer: '/response/error/code',
  evidence: '-32000',
  fix: 'use -32600',
};
const TIMEOUT = {
  rule: 'probe/ping',
  severity: 'error' as const,
  message: 'no complete answer within 300 ms',
  pointer: '/response',
  evidence: 'no answer (timed out)',
  fix: 'answer every request promptly',
};

function report(over: Partial<CheckReport> = {}): CheckReport {
  const probes = over.probes ?? [
    probe('initialize', 'pass'),
    probe('unknown-method', 'fail', [ERROR, WARNING]),
    probe('wrong-accept', 'warn', [WARNING]),
    probe('ping', 'timeout', [TIMEOUT]),
    probe('tools-list', 'skip'),
  ];
  const reach = over.reach ?? { status: 'ok' as const, detail: undefined, challenge: undefined };
  const summary = summarize(probes);
  return {
    tool: { name: 'mcp-warden', version: '0.1.0' },
    target: 'http://127.0.0.1:3000/mcp',
    startedAt: '2026-12-02T10:00:00.000Z',
    durationMs: 1234,
    protocol: { requested: 'auto', spoken: ['2025-11-25'], used: '2025-11-25', note: undefined },
    server: { name: 'fixture', version: '1.0.0' },
    probes,
    summary,
    exitCode: exitCodeOf(reach.status, summary),
    ...over,
    reach,
  };
}

const needsCredentials = (): CheckReport =>
  report({
    probes: [probe('discover', 'skip')],
    reach: {
      status: 'needs-credentials',
      detail: 'HTTP 401 to server/discover',
      challenge: 'Bearer resource_metadata="http://127.0.0.1:3000/.well-known/oauth-protected-resource"',
    },
    exitCode: 2,
  });

test('summary, verdict counts and exit codes', () => {
  const r = report();
  assert.deepEqual(r.summary, { probes: 5, pass: 1, warn: 1, fail: 1, timeout: 1, skip: 1, errors: 2, warnings: 2 });
  assert.equal(r.exitCode, 1);
  assert.equal(summaryLine(r), '5 probes under 2025-11-25: 1 pass, 1 warn, 1 fail, 1 timeout, 1 skip; 2 errors, 2 warnings (exit 1)');
  assert.equal(exitCodeOf('ok', summarize([probe('a', 'pass'), probe('b', 'warn', [WARNING])])), 0);
  assert.equal(exitCodeOf('needs-credentials', summarize([])), 2);
  assert.match(
    summaryLine(needsCredentials()),
    /^needs credentials: HTTP 401 to server\/discover \(WWW-Authenticate: Bearer resource_metadata=.*\); pass them with --header 'Authorization: Bearer \.\.\.' \(exit 2\)$/,
  );
});

test('SARIF validates against the SARIF 2.1.0 schema, one result per finding, rules described', () => {
  const validate = sarifValidator();
  for (const r of [report(), needsCredentials(), report({ probes: [] })]) {
    const log = JSON.parse(renderSarif(r)) as {
      version: string;
      runs: Array<{
        results: Array<{ ruleId: string; ruleIndex: number; level: string }>;
        tool: { driver: { rules: Array<{ id: string }> } };
        invocations: Array<{ exitCode: number }>;
      }>;
    };
    assert.ok(validate(log), JSON.stringify(validate.errors, null, 1));
    const run = log.runs[0]!;
    assert.equal(run.invocations[0]!.exitCode, r.exitCode);
    for (const result of run.results) assert.equal(run.tool.driver.rules[result.ruleIndex]!.id, result.ruleId);
  }
  // The validator is not vacuous: a wrong level, a missing message or an unknown property fail it.
  const bad = JSON.parse(renderSarif(report())) as { runs: Array<{ results: Array<Record<string, unknown>> }> };
  bad.runs[0]!.results[0]!.level = 'fatal';
  assert.equal(validate(bad), false);
  const noMessage = JSON.parse(renderSarif(report())) as { runs: Array<{ results: Array<Record<string, unknown>> }> };
  delete noMessage.runs[0]!.results[0]!.message;
  assert.equal(validate(noMessage), false);
  assert.equal(validate({ ...JSON.parse(renderSarif(report())), extra: 1 }), false);
  const run = (JSON.parse(renderSarif(report())) as { runs: Array<{ results: Array<{ ruleId: string; level: string }> }> }).runs[0]!;
  assert.deepEqual(
    run.results.map((x) => [x.ruleId, x.level]),
    [
      ['unknown-method-wrong-code', 'error'],
      ['legacy-range-code', 'warning'],
      ['legacy-range-code', 'warning'],
      ['probe/ping', 'error'],
    ],
  );
  const reach = (
    JSON.parse(renderSarif(needsCredentials())) as { runs: Array<{ results: Array<{ ruleId: string; message: { text: string } }> }> }
  ).runs[0]!;
  assert.equal(reach.results[0]!.ruleId, 'reach/needs-credentials');
  assert.match(reach.results[0]!.message.text, /WWW-Authenticate: Bearer resource_metadata=/);
});

const children = (e: XmlElement, name: string): XmlElement[] => e.children.filter((c) => c.name === name);

test('JUnit XML parses back: one testcase per probe, failures, errors and skips where the verdicts say', () => {
  const r = report();
  const root = parseXml(renderJunit(r));
  assert.equal(root.name, 'testsuites');
  const [suite] = children(root, 'testsuite');
  assert.ok(suite);
  assert.deepEqual(
    [suite.attributes.tests, suite.attributes.failures, suite.attributes.errors, suite.attributes.skipped],
    ['5', '1', '1', '1'],
  );
  const cases = children(suite, 'testcase');
  assert.deepEqual(
    cases.map((c) => c.attributes.name),
    r.probes.map((p) => `${p.probe}: ${p.title}`),
  );
  const kinds = cases.map((c) => c.children.map((x) => x.name).join(','));
  assert.deepEqual(kinds, ['', 'failure', 'system-out', 'error', 'skipped']);
  const failure = children(cases[1]!, 'failure')[0]!;
  assert.equal(failure.attributes.type, 'unknown-method-wrong-code');
  assert.match(failure.attributes.message!, /^expected error -32601 \| on <HTTP 200>; got HTTP 200, error -32000 "Not <found> & \| gone"$/);
  assert.match(failure.text, /x was answered with -32000 "<b>Not found<\/b>" \| instead of -32601/);
  assert.ok(!failure.text.includes('\u0001'), 'characters XML forbids are dropped');

  const denied = parseXml(renderJunit(needsCredentials()));
  const deniedCases = children(children(denied, 'testsuite')[0]!, 'testcase');
  const reach = deniedCases.find((c) => c.attributes.name === 'reach')!;
  assert.equal(children(reach, 'error')[0]!.attributes.type, 'needs-credentials');
  assert.match(children(reach, 'error')[0]!.text, /^WWW-Authenticate: Bearer resource_metadata=/);
});

test('Markdown: a table that survives pipes and markup, findings in a collapsed section', () => {
  const md = renderMarkdown(report());
  const rows = md.split('\n').filter((l) => l.startsWith('| `'));
  assert.equal(rows.length, 5);
  for (const row of rows) assert.equal(row.split(/(?<!\\)\|/).length, 7, row); // 5 cells between 6 unescaped pipes
  assert.ok(!/<b>|<HTTP/.test(md.replace(/`[^`]*`/g, '')), 'no raw HTML from the server reaches the comment outside code spans');
  assert.match(md, /<details><summary>4 findings<\/summary>/);
  assert.equal(mdCell('a|b\nc <d>'), 'a\\|b c &lt;d&gt;');
  assert.match(renderMarkdown(needsCredentials()), /WWW-Authenticate: `Bearer resource_metadata=/);
});

test('table: columns and findings without colours; colours only when asked', () => {
  const plain = renderTable(report(), { color: false });
  assert.ok(!plain.includes('\x1b['));
  assert.match(plain, /^ {2}PROBE +EXPECTED +GOT +VERDICT {2}FIX$/m);
  assert.match(plain, /^ {2}unknown-method +error -32601 .+ fail {5}answer with -32601 & "Method not found"$/m);
  assert.match(plain, /^ {2}error {3}unknown-method {2}unknown-method-wrong-code$/m);
  assert.ok(plain.trimEnd().endsWith('(exit 1)'));
  const colored = renderTable(report(), { color: true });
  assert.ok(colored.includes('\x1b[31mfail'));
  assert.ok(colored.includes('\x1b[32mpass'));
});

test('JSON is the report itself', () => {
  const r = report();
  assert.deepEqual(JSON.parse(renderJson(r)), JSON.parse(JSON.stringify(r)));
});

test("each finding links its rule's explanation: text and Markdown under its fix, SARIF as the rule's helpUri and help", () => {
  const r = report();
  const text = renderTable(r, { color: false });
  const md = renderMarkdown(r);
  for (const f of [ERROR, WARNING]) {
    assert.ok(text.includes(`fix: ${f.fix}\n          docs: ${docsUrl(f.rule)}\n`), `text: ${f.rule}'s fix, then its docs link`);
    assert.ok(md.includes(`([${f.rule}](${docsUrl(f.rule)}))`), `markdown: ${f.rule}'s docs link`);
  }
  assert.ok(!text.includes(docsUrl(TIMEOUT.rule)) && !md.includes(docsUrl(TIMEOUT.rule)), "a probe's own expectation has no docs section");
  const rules = (
    JSON.parse(renderSarif(r)) as {
      runs: Array<{ tool: { driver: { rules: Array<{ id: string; helpUri?: string; help?: { text: string; markdown: string } }> } } }>;
    }
  ).runs[0]!.tool.driver.rules;
  for (const id of [ERROR.rule, WARNING.rule]) {
    const d = rules.find((x) => x.id === id)!;
    const rule = RULES.find((x) => x.id === id)!;
    assert.equal(d.helpUri, docsUrl(id));
    assert.deepEqual(d.help, { text: ruleFix(id), markdown: explanationMarkdown(rule) });
  }
});
