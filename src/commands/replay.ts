// `mcp-warden replay CAPTURE`: reads a capture file (the proxy's `capture: { path }`), replays it
// through a policy (src/replay/replay.ts) and prints what the proxy would have flagged, rewritten
// and blocked: a table (text) or the report (json). Exit 1 only when the capture cannot be read or
// the policy does not validate; bad lines in the capture are reported, not fatal.
import { defaultPolicy } from '../config/compile.ts';
import type { Policy } from '../config/types.ts';
import { Replayer, type ReplayedExchange, type ReplayReport } from '../replay/replay.ts';
import { inputLines, MAX_LINE, OVERSIZE, whyUnreadable } from '../report/input.ts';
import { REWRITABLE } from '../rewrite/rewriters.ts';
import { policyOrErrors } from './startup-policy.ts';

export interface ReplayCommandOptions {
  policy?: string;
  format: 'text' | 'json';
}

interface Output {
  write(text: string): unknown;
}

/** Replays a capture file (plain or gzip; `-`: stdin) as a stream, line by line: a capture may be large. */
export async function replayFile(path: string, policy: Policy): Promise<ReplayReport> {
  const replayer = new Replayer(policy);
  for await (const line of inputLines(path)) {
    if (line === OVERSIZE) replayer.skipped(`a line over ${MAX_LINE} bytes, skipped unread`);
    else replayer.line(line);
  }
  return replayer.report();
}

/** Runs the command; returns the exit code. */
export async function runReplayCommand(
  capture: string,
  opts: ReplayCommandOptions,
  out: Output = process.stdout,
  err: Output = process.stderr,
): Promise<number> {
  const policy = opts.policy === undefined ? defaultPolicy(REWRITABLE) : await policyOrErrors(opts.policy, err);
  if (!policy) return 1;
  if (opts.policy === undefined) for (const w of policy.warnings) err.write(`warning: ${w}\n`);

  let report: ReplayReport;
  try {
    report = await replayFile(capture, policy);
  } catch (e) {
    err.write(`${capture}: cannot read the capture: ${whyUnreadable(e)}\n`);
    return 1;
  }
  out.write(opts.format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderReplayText(report, capture));
  return 0;
}

const clip = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
const idText = (id: ReplayedExchange['id']): string => (typeof id === 'string' ? JSON.stringify(id) : String(id));
const wouldText = (x: ReplayedExchange): string => (x.decision.kind === 'pass' ? '' : x.decision.kind);

/** One table: a header row and rows of cells, columns padded, the last one left ragged. */
function table(rows: string[][], right: ReadonlySet<number> = new Set()): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0)));
  return rows.map((row) =>
    `  ${row.map((cell, i) => (i === row.length - 1 ? cell : right.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ')}`.trimEnd(),
  );
}

/** `unknown-tool-as-iserror: rewrite 1, leaked-path: log 2` */
function countsByRule(report: ReplayReport): string {
  return report.summary.byRule
    .map(
      (r) =>
        `${r.rule}: ${Object.entries(r.actions)
          .map(([action, n]) => `${action} ${n}`)
          .join(', ')}`,
    )
    .join('; ');
}

/** The summary line: counts of exchanges, findings by rule and action, decisions, bad lines. */
export function summaryLine(report: ReplayReport): string {
  const { summary, lines } = report;
  const byRule = summary.findings > 0 ? ` (${countsByRule(report)})` : '';
  return (
    `summary: ${plural(summary.exchanges, 'exchange')}, ${plural(summary.findings, 'finding')}${byRule}; ` +
    `would rewrite ${summary.decisions.rewrite}, would block ${summary.decisions.block}, pass ${summary.decisions.pass}; ` +
    `${plural(lines.bad, 'bad line')}`
  );
}

export function renderReplayText(report: ReplayReport, capture: string): string {
  const { policy, lines } = report;
  const mode =
    policy.mode === 'enforce' ? 'mode enforce' : `mode ${policy.mode}, replayed as enforce: what enforce mode would do with its actions`;
  const out: string[] = [
    `mcp-warden replay ${capture}`,
    `  policy   ${policy.source} (${mode})`,
    `  capture  ${plural(lines.total, 'line')}: ${plural(lines.exchanges, 'exchange')} in ${plural(report.sessions, 'session')}, ${plural(lines.bad, 'bad line')}`,
    '',
  ];

  if (report.exchanges.length === 0) out.push('  No exchanges to replay.');
  else {
    const rows = [['LINE', 'METHOD', 'TOOL', 'ID', 'SESSION', 'VERSION', 'OUTCOME', 'WOULD', 'FINDINGS']];
    for (const x of report.exchanges) {
      rows.push([
        String(x.line),
        x.method,
        x.tool ?? '',
        clip(idText(x.id), 12),
        x.session === null ? '-' : x.session.slice(0, 8),
        x.protocolVersion ?? '?',
        x.outcome,
        wouldText(x),
        x.findings.map((f) => `${f.rule} (${f.severity}, ${f.action})`).join(', '),
      ]);
    }
    out.push(...table(rows, new Set([0])));
  }

  // `line 7 ` with the line numbers of the whole capture right-aligned.
  const at = (line: number): string => `line ${String(line).padStart(String(lines.total).length)}`;

  const changed = report.exchanges.filter((x) => x.decision.kind !== 'pass');
  if (changed.length > 0) {
    const wheres = changed.map((x) => `${at(x.line)}  ${x.method}${x.tool ? ` ${x.tool}` : ''}`);
    const width = Math.max(...wheres.map((w) => w.length));
    out.push('', `  WOULD CHANGE: ${changed.length}  (what the client would have received instead of the server's answer)`);
    changed.forEach((x, i) => {
      if (x.decision.kind === 'pass') return;
      const status = x.decision.status !== undefined ? `, HTTP ${x.decision.status}` : '';
      out.push(
        `  ${wheres[i]!.padEnd(width)}  ${x.decision.kind} by ${x.decision.rules.join(', ')}${status}`,
        `  ${' '.repeat(width)}  ${clip(x.decision.after, 110)}`,
      );
    });
  }

  const flagged = report.exchanges.flatMap((x) => x.findings.map((f) => ({ x, f })));
  if (flagged.length > 0) {
    out.push('', `  FINDINGS: ${flagged.length}`);
    for (const { x, f } of flagged) out.push(`  ${at(x.line)}  ${f.severity.padEnd(7)}  ${f.rule} [${f.action}]: ${f.message}`);
  }

  if (lines.bad > 0) {
    out.push('', `  BAD LINES: ${lines.bad}  (skipped)`);
    for (const b of report.badLines) out.push(`  ${at(b.line)}  ${clip(b.reason, 110)}`);
    if (report.badLines.length < lines.bad) out.push(`  … and ${lines.bad - report.badLines.length} more`);
  }

  if (report.ruleErrors.length > 0) {
    out.push('', `  RULE ERRORS: ${report.ruleErrors.length}  (a rule threw; it was skipped, as in the proxy)`);
    for (const e of report.ruleErrors) out.push(`  ${at(e.line)}  ${e.rule}: ${clip(e.error, 100)}`);
  }

  const { judged, notJudged } = report.coverage;
  out.push('', `  judged      ${judged.what} (${plural(judged.rules.length, 'rule')})`);
  for (const n of notJudged) out.push(`  not judged  ${n.what} (${plural(n.rules.length, 'rule')}): ${n.why}`);
  out.push('', summaryLine(report), '');
  return out.join('\n');
}
