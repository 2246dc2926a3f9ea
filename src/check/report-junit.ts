// The report as JUnit XML, for CI test reports: one testsuite per run, one testcase per probe. A
// fail is a <failure>, a timeout an <error>, a skip <skipped>; a warn passes with its findings in
// <system-out>.
import { redactedReport, type CheckReport, type ProbeResult } from './report.ts';

/** Text as XML character data or attribute value: markup escaped, characters XML 1.0 forbids dropped. */
export function xml(text: string): string {
  return text
    .replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const seconds = (ms: number): string => (ms / 1000).toFixed(3);

function details(p: ProbeResult): string {
  return p.findings.map((f) => `${f.severity} ${f.rule}: ${f.message}\n  evidence: ${f.evidence}\n  fix: ${f.fix}`).join('\n');
}

function testcase(p: ProbeResult, suite: string): string {
  const open = `    <testcase classname="${xml(suite)}" name="${xml(`${p.probe}: ${p.title}`)}" time="${seconds(p.durationMs)}"`;
  const summary = `expected ${p.expected}; got ${p.got}`;
  const body: string[] = [];
  if (p.verdict === 'skip') body.push(`      <skipped message="${xml(p.got)}"/>`);
  else if (p.verdict === 'fail')
    body.push(
      `      <failure message="${xml(summary)}" type="${xml(p.findings.find((f) => f.severity === 'error')?.rule ?? 'fail')}">${xml(details(p))}</failure>`,
    );
  else if (p.verdict === 'timeout') body.push(`      <error message="${xml(summary)}" type="timeout">${xml(details(p))}</error>`);
  else if (p.findings.length > 0) body.push(`      <system-out>${xml(details(p))}</system-out>`);
  return body.length === 0 ? `${open}/>` : `${open}>\n${body.join('\n')}\n    </testcase>`;
}

/** How a run that did not get past its first requests is told, by why. */
const REACH_LEADS: Record<Exclude<CheckReport['reach']['status'], 'ok'>, string> = {
  'needs-credentials': 'needs credentials',
  unreachable: 'could not reach the server',
  'no-mcp-endpoint': 'no MCP endpoint at this URL (check the path, for example /mcp)',
};

export function renderJunit(report: CheckReport): string {
  const r = redactedReport(report);
  const suite = `mcp-warden check ${r.target}${r.protocol.used ? ` (${r.protocol.used})` : ''}`;
  const s = r.summary;
  const cases = r.probes.map((p) => testcase(p, suite));
  if (r.reach.status !== 'ok') {
    const message = `${REACH_LEADS[r.reach.status]}: ${r.reach.detail ?? ''}`;
    const challenge = r.reach.challenge ? `WWW-Authenticate: ${r.reach.challenge}` : '';
    cases.push(
      `    <testcase classname="${xml(suite)}" name="reach" time="0.000">\n      <error message="${xml(message)}" type="${r.reach.status}">${xml(challenge)}</error>\n    </testcase>`,
    );
  }
  const errors = s.timeout + (r.reach.status === 'ok' ? 0 : 1);
  const tests = cases.length;
  const attrs = `tests="${tests}" failures="${s.fail}" errors="${errors}" skipped="${s.skip}" time="${seconds(r.durationMs)}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="mcp-warden check" ${attrs}>`,
    `  <testsuite name="${xml(suite)}" ${attrs} timestamp="${xml(r.startedAt.replace(/\.\d+Z$/, ''))}">`,
    '    <properties>',
    `      <property name="target" value="${xml(r.target)}"/>`,
    `      <property name="versions" value="${xml(r.protocol.spoken.join(','))}"/>`,
    `      <property name="exitCode" value="${r.exitCode}"/>`,
    '    </properties>',
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
