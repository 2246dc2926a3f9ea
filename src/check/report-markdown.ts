// The report as Markdown, for a pull-request comment: the summary first, one table row per probe,
// then every finding behind a warn or fail in a collapsed section, its fix linking its rule's docs.
import { ruleDocs } from '../rules/explain.ts';
import { frameworkLine, redactedReport, summaryLine, type CheckReport, type Verdict } from './report.ts';

const ICON: Readonly<Record<Verdict, string>> = { pass: '✅ pass', warn: '⚠️ warn', fail: '❌ fail', timeout: '⏱️ timeout', skip: '⏭️ skip' };

/** Text safe inside a Markdown table cell: no pipes, no line breaks, no raw HTML. */
export function mdCell(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\s*\n\s*/g, ' ');
}

const code = (text: string): string => `\`${text.replace(/`/g, "'")}\``;

export function renderMarkdown(report: CheckReport): string {
  const r = redactedReport(report);
  const lines = [`### mcp-warden check: ${code(r.target)}`, '', `**${mdCell(summaryLine(r))}**`, ''];
  const server = r.server ? `${[r.server.name, r.server.version].filter(Boolean).join(' ')}; ` : '';
  lines.push(
    `${mdCell(server)}speaks ${r.protocol.spoken.map(code).join(', ') || 'no version found'}; probes ran under ${r.protocol.used ? code(r.protocol.used) : 'none'}.`,
  );
  if (r.framework) lines.push('', `Built on ${mdCell(frameworkLine(r.framework))}.`);
  if (r.protocol.note) lines.push('', mdCell(r.protocol.note));
  if (r.reach.challenge) lines.push('', `WWW-Authenticate: ${code(r.reach.challenge)}`);
  if (r.probes.length > 0) {
    lines.push('', '| probe | expected | got | verdict | fix |', '|---|---|---|---|---|');
    for (const p of r.probes) {
      const fix = p.verdict === 'pass' || p.verdict === 'skip' ? '' : (p.fix ?? '');
      lines.push(`| ${code(p.probe)} | ${mdCell(p.expected)} | ${mdCell(p.got)} | ${ICON[p.verdict]} | ${mdCell(fix)} |`);
    }
  }
  const flagged = r.probes.flatMap((p) => p.findings.map((f) => ({ p, f })));
  if (flagged.length > 0) {
    lines.push('', `<details><summary>${flagged.length} finding${flagged.length === 1 ? '' : 's'}</summary>`, '');
    for (const { p, f } of flagged) {
      lines.push(`- **${f.severity}** ${code(p.probe)} ${code(f.rule)}: ${mdCell(f.message)}`);
      if (f.evidence) lines.push(`  - evidence: ${code(f.evidence)}`);
      const docs = ruleDocs(f.rule);
      lines.push(`  - fix: ${mdCell(f.fix)}${docs ? ` ([${f.rule}](${docs}))` : ''}`);
      if (f.frameworkFix) lines.push(`  - fix for ${mdCell(f.frameworkFix)}`);
    }
    lines.push('', '</details>');
  }
  return `${lines.join('\n')}\n`;
}
