// The report for people: a header (target, server, versions), one row per probe (probe, expected,
// got, verdict, fix), every finding behind a warn or fail (with its fix and its rule's docs link),
// and the summary line. Colours only when
// asked (the command asks on a TTY).
import { ruleDocs } from '../rules/explain.ts';
import { wrapText } from '../util/wrap.ts';
import { frameworkLine, redactedReport, summaryLine, type CheckReport, type ProbeResult, type Verdict } from './report.ts';

export interface TableOptions {
  color: boolean;
  /** The terminal's columns: every line fitted to them (undefined: lines as long as their text). */
  width?: number;
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
/** The narrowest an expected or got cell becomes on a narrow terminal. */
const MIN_CELL = 12;
/** Where a finding's lines start. */
const FINDING_INDENT = ' '.repeat(10);

/** The widths of a row's cells; `fixBelow`: the fix goes on a line of its own under the row (it does not fit beside it). */
interface RowLayout {
  probe: number;
  expected: number;
  got: number;
  fixBelow: boolean;
}

/** `head` then `text`, wrapped to `width` under where the text starts (one line when no width). */
function fit(head: string, text: string, width: number | undefined): string[] {
  if (width === undefined) return [`${head}${text}`];
  const lines = wrapText(text, width, ' '.repeat(head.length), head.length);
  lines[0] = `${head}${lines[0]}`;
  return lines;
}

/** Cells as wide as before when the terminal allows; narrower expected and got cells, and the fix below its row, when not. */
function layout(probe: number, longestFix: number, width: number | undefined): RowLayout {
  const full = { probe, expected: WIDTH.expected, got: WIDTH.got, fixBelow: false };
  // Two spaces before each of the five columns, seven for the verdict.
  const fixed = 2 + probe + 2 + 2 + 2 + 7;
  if (width === undefined || fixed + full.expected + full.got + 2 + longestFix <= width) return full;
  const room = Math.max(2 * MIN_CELL, width - fixed);
  const expected = Math.max(MIN_CELL, Math.min(WIDTH.expected, Math.floor(room * 0.45)));
  return { probe, expected, got: Math.max(MIN_CELL, Math.min(WIDTH.got, room - expected)), fixBelow: true };
}

/** A cell cut to `max` characters (an ellipsis marks the cut), padded to `width`. */
export function cell(text: string, max: number, width = max): string {
  const cut = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return cut.padEnd(width);
}

export function renderTable(report: CheckReport, opts: TableOptions): string {
  const r = redactedReport(report);
  const paint = (color: keyof typeof ANSI, text: string): string => (opts.color ? `${ANSI[color]}${text}${ANSI.reset}` : text);
  const width = opts.width;
  // A line of the table's own words, wrapped under where its text starts.
  const fitted = (head: string, text: string): string[] => fit(head, text, width);
  const lines: string[] = fitted('', `mcp-warden check ${r.target}`).map((l) => paint('bold', l));
  if (r.server) lines.push(...fitted('  server    ', [r.server.name, r.server.version].filter(Boolean).join(' ')));
  if (r.framework) lines.push(...fitted('  built on  ', frameworkLine(r.framework)));
  const spoken = r.protocol.spoken.length > 0 ? r.protocol.spoken.join(', ') : 'none found';
  lines.push(
    ...fitted('  versions  ', `speaks ${spoken}; probes ran under ${r.protocol.used ?? 'none'} (--protocol ${r.protocol.requested})`),
  );
  if (r.protocol.note) lines.push(...fitted('  note      ', r.protocol.note));
  lines.push('');

  const fixOf = (p: ProbeResult): string => (p.verdict === 'pass' || p.verdict === 'skip' ? '' : (p.fix ?? ''));
  const probeWidth = Math.max(5, ...r.probes.map((p) => Math.min(p.probe.length, WIDTH.probe)));
  const row = layout(probeWidth, Math.max(0, ...r.probes.map((p) => fixOf(p).length)), width);
  const head = `  ${'PROBE'.padEnd(row.probe)}  ${'EXPECTED'.padEnd(row.expected)}  ${'GOT'.padEnd(row.got)}  VERDICT${row.fixBelow ? '' : '  FIX'}`;
  lines.push(paint('dim', head));
  for (const p of r.probes) {
    const verdict = paint(VERDICT_COLOR[p.verdict], p.verdict.padEnd(7));
    const fix = fixOf(p);
    const cells = `  ${cell(p.probe, WIDTH.probe, row.probe)}  ${cell(p.expected, row.expected)}  ${cell(p.got, row.got)}  ${verdict}`;
    if (!row.fixBelow) lines.push(`${cells}  ${fix}`.trimEnd());
    else {
      lines.push(cells.trimEnd());
      if (fix !== '') lines.push(...fitted('    fix: ', fix));
    }
  }

  const flagged = r.probes.filter((p) => p.findings.length > 0);
  if (flagged.length > 0) {
    lines.push('', paint('bold', '  FINDINGS'));
    for (const p of flagged) lines.push(...findingLines(p, paint, width));
  }
  const fixed = r.baseline?.fixed ?? [];
  if (fixed.length > 0) {
    lines.push('', paint('bold', `  FIXED since the baseline (${r.baseline!.file}): no longer found`));
    for (const f of fixed) lines.push(`  ${f.probe}  ${f.rule}  ${f.pointer}`);
  }
  const colour = r.exitCode === 0 ? 'green' : r.exitCode === 1 ? 'red' : 'yellow';
  lines.push('', ...fitted('', summaryLine(r)).map((l) => paint(colour, l)));
  return `${lines.join('\n')}\n`;
}

/** A finding's link to its rule's explanation, whole (a URL cut in two is no link): where it does not fit, the command that prints it. */
function docsLines(rule: string, docs: string, width: number | undefined): string[] {
  const line = `${FINDING_INDENT}docs: ${docs}`;
  return width === undefined || line.length <= width ? [line] : fit(FINDING_INDENT, `explained by: mcp-warden explain ${rule}`, width);
}

function findingLines(p: ProbeResult, paint: (color: keyof typeof ANSI, text: string) => string, width: number | undefined): string[] {
  const out: string[] = [];
  const fitted = (text: string): string[] => fit(FINDING_INDENT, text, width);
  for (const f of p.findings) {
    const severity = paint(f.severity === 'error' ? 'red' : f.severity === 'warning' ? 'yellow' : 'dim', f.severity.padEnd(7));
    const accepted = f.accepted ? paint('dim', '  (accepted by the baseline)') : '';
    out.push('', `  ${severity} ${p.probe}  ${f.rule}${accepted}`, ...fitted(f.message));
    if (f.evidence) out.push(...fitted(`evidence: ${f.evidence}`));
    out.push(...fitted(`fix: ${f.fix}`));
    if (f.frameworkFix) out.push(...fitted(`fix for ${f.frameworkFix}`));
    const docs = ruleDocs(f.rule);
    if (docs) out.push(...docsLines(f.rule, docs, width));
  }
  return out;
}
