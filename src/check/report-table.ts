// The report for people: a header (target, server, versions), one row per probe (probe, expected,
// got, verdict, fix), every finding behind a warn or fail, and the summary line. Colours only when
// asked (the command asks on a TTY).
import { redactedReport, summaryLine, type CheckReport, type ProbeResult, type Verdict } from './report.ts';

export interface TableOptions {
  color: boolean;
}

const ANSI = { red: '\x1b[31m', green: '\x1b[32m', yellow: '\x1b[33m', dim: '\x1b[2m', bold: '\x1b[1m', reset: '\x1b[0m' } as const;
const VERDICT_COLOR: Readonly<Record<Verdict, keyof typeof ANSI>> = {
  pass: 'green',
  warn: 'yellow',
  fail: 'red',
  timeout: 'red',
  skip: 'dim',
};

const WIDTH = { probe: 22, expected: 40, got: 48 } as const;

/** A cell cut to `max` characters (an ellipsis marks the cut), padded to `width`. */
export function cell(text: string, max: number, width = max): string {
  const cut = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return cut.padEnd(width);
}

export function renderTable(report: CheckReport, opts: TableOptions): string {
  const r = redactedReport(report);
  const paint = (color: keyof typeof ANSI, text: string): string => (opts.color ? `${ANSI[color]}${text}${ANSI.reset}` : text);
  const lines: string[] = [paint('bold', `mcp-warden check ${r.target}`)];
  if (r.server) lines.push(`  server    ${[r.server.name, r.server.version].filter(Boolean).join(' ')}`);
  const spoken = r.protocol.spoken.length > 0 ? r.protocol.spoken.join(', ') : 'none found';
  lines.push(`  versions  speaks ${spoken}; probes ran under ${r.protocol.used ?? 'none'} (--protocol ${r.protocol.requested})`);
  if (r.protocol.note) lines.push(`  note      ${r.protocol.note}`);
  lines.push('');

  const widths = { probe: Math.max(5, ...r.probes.map((p) => Math.min(p.probe.length, WIDTH.probe))) };
  const head = `  ${'PROBE'.padEnd(widths.probe)}  ${'EXPECTED'.padEnd(WIDTH.expected)}  ${'GOT'.padEnd(WIDTH.got)}  VERDICT  FIX`;
  lines.push(paint('dim', head));
  for (const p of r.probes) {
    const verdict = paint(VERDICT_COLOR[p.verdict], p.verdict.padEnd(7));
    const fix = p.verdict === 'pass' || p.verdict === 'skip' ? '' : (p.fix ?? '');
    lines.push(
      `  ${cell(p.probe, WIDTH.probe, widths.probe)}  ${cell(p.expected, WIDTH.expected)}  ${cell(p.got, WIDTH.got)}  ${verdict}  ${fix}`.trimEnd(),
    );
  }

  const flagged = r.probes.filter((p) => p.findings.length > 0);
  if (flagged.length > 0) {
    lines.push('', paint('bold', '  FINDINGS'));
    for (const p of flagged) lines.push(...findingLines(p, paint));
  }
  const fixed = r.baseline?.fixed ?? [];
  if (fixed.length > 0) {
    lines.push('', paint('bold', `  FIXED since the baseline (${r.baseline!.file}): no longer found`));
    for (const f of fixed) lines.push(`  ${f.probe}  ${f.rule}  ${f.pointer}`);
  }
  lines.push('', paint(r.exitCode === 0 ? 'green' : r.exitCode === 1 ? 'red' : 'yellow', summaryLine(r)));
  return `${lines.join('\n')}\n`;
}

function findingLines(p: ProbeResult, paint: (color: keyof typeof ANSI, text: string) => string): string[] {
  const out: string[] = [];
  for (const f of p.findings) {
    const severity = paint(f.severity === 'error' ? 'red' : f.severity === 'warning' ? 'yellow' : 'dim', f.severity.padEnd(7));
    const accepted = f.accepted ? paint('dim', '  (accepted by the baseline)') : '';
    out.push('', `  ${severity} ${p.probe}  ${f.rule}${accepted}`, `          ${f.message}`);
    if (f.evidence) out.push(`          evidence: ${f.evidence}`);
    out.push(`          fix: ${f.fix}`);
  }
  return out;
}
