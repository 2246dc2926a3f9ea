// `mcp-warden replay CAPTURE`: reads a capture file (the proxy's `capture: { path }`), replays it
// through a policy (src/replay/replay.ts) and prints what the proxy would have flagged, rewritten
// and blocked: a table (text) or the report (json). Exit 1 when the capture cannot be read (all of
// it: what was read before a limit or a broken gzip is still reported), holds no exchange (an
// exchange log given instead is named as such) or the policy does not validate; bad lines in the
// capture are reported, not fatal. Memory stays bounded whatever the
// capture's size: JSON is written as the exchanges come, the text lists the first ones.
import { defaultPolicy } from '../config/compile.ts';
import type { Policy } from '../config/types.ts';
import { Replayer, type ReplayedExchange, type ReplayReport } from '../replay/replay.ts';
import { INPUT_BOUNDS } from '../config/defaults.ts';
import { inputLineBatches, type InputLimits, OVERSIZE, whyUnreadable } from '../report/input.ts';
import { REWRITABLE } from '../rewrite/rewriters.ts';
import { terminalText } from '../util/terminal.ts';
import { policyOrErrors } from './startup-policy.ts';

export interface ReplayCommandOptions {
  policy?: string;
  format: 'text' | 'json';
  /** The input's bounds (INPUT_BOUNDS unless given): `--max-lines`, `--max-ratio`. */
  limits?: Partial<InputLimits>;
}

interface Output {
  write(text: string): unknown;
  once?(event: 'drain', listener: () => void): unknown;
}

/** Rows of each list the text format shows (the table, what would change, the findings); the rest are counted. */
export const TEXT_LISTED = 1000;

/** Replays a capture file (plain or gzip; `-`: stdin) as a stream; `onBatch` runs after each chunk's lines (a writer's backpressure). */
async function replayLines(path: string, replayer: Replayer, limits: InputLimits, onBatch?: () => Promise<void>): Promise<void> {
  for await (const batch of inputLineBatches(path, undefined, limits)) {
    for (const line of batch) {
      if (line === OVERSIZE) replayer.skipped(`a line over ${limits.lineBytes} bytes, skipped unread`);
      else if (typeof line === 'number') replayer.blanks(line);
      else replayer.line(line);
    }
    await onBatch?.();
  }
}

/** Replays a capture file into a report that lists every exchange (the library's and tests' reader: the report is held in memory). */
export async function replayFile(path: string, policy: Policy): Promise<ReplayReport> {
  const replayer = new Replayer(policy);
  await replayLines(path, replayer, INPUT_BOUNDS);
  return replayer.report();
}

/** Writes `text`, waiting for the output to drain when it asks to (a pipe read slowly must not grow memory). */
async function write(out: Output, text: string): Promise<void> {
  if (out.write(text) === false && out.once) await new Promise<void>((resolve) => out.once!('drain', resolve));
}

/** The JSON report written as it is made: each exchange as it is replayed, the totals at the end. */
class JsonReportWriter {
  private pending: string[] = [];
  private started = false;

  constructor(private readonly out: Output) {}

  add(x: ReplayedExchange): void {
    const item = JSON.stringify(x, null, 2).replace(/\n/g, '\n    ');
    this.pending.push(`${this.started || this.pending.length > 0 ? ',\n' : ''}    ${item}`);
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    await write(this.out, `${this.started ? '' : '{\n  "exchanges": [\n'}${text}`);
    this.started = true;
  }

  async end(report: ReplayReport): Promise<void> {
    await this.flush();
    const { exchanges: _listed, ...rest } = report;
    const totals = JSON.stringify(rest, null, 2).slice(1);
    await write(this.out, this.started ? `\n  ],${totals}\n` : `${JSON.stringify({ exchanges: [], ...rest }, null, 2)}\n`);
  }
}

/** What the text format lists, bounded: the first exchanges, the first that would change, the first findings. */
export class ReplayListing {
  readonly exchanges: ReplayedExchange[] = [];
  readonly changed: ReplayedExchange[] = [];
  readonly flagged: Array<{ x: ReplayedExchange; f: ReplayedExchange['findings'][number] }> = [];
  changedTotal = 0;
  flaggedTotal = 0;

  constructor(private readonly max = TEXT_LISTED) {}

  add(x: ReplayedExchange): void {
    if (this.exchanges.length < this.max) this.exchanges.push(x);
    if (x.decision.kind !== 'pass' && this.changedTotal++ < this.max) this.changed.push(x);
    for (const f of x.findings) if (this.flaggedTotal++ < this.max) this.flagged.push({ x, f });
  }

  static of(exchanges: readonly ReplayedExchange[], max = Number.MAX_SAFE_INTEGER): ReplayListing {
    const listing = new ReplayListing(max);
    for (const x of exchanges) listing.add(x);
    return listing;
  }
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
  const limits = { ...INPUT_BOUNDS, ...opts.limits };

  const json = opts.format === 'json' ? new JsonReportWriter(out) : undefined;
  const listing = new ReplayListing();
  const replayer = new Replayer(policy, { keepExchanges: false, onExchange: (x) => (json ? json.add(x) : listing.add(x)) });
  let failed = false;
  try {
    await replayLines(capture, replayer, limits, json ? () => json.flush() : undefined);
  } catch (e) {
    failed = true;
    const read = replayer.report().lines.total;
    err.write(
      `${capture}: cannot read the capture${read > 0 ? ' all' : ''}: ${whyUnreadable(e)}${read > 0 ? ' (what was read is reported)' : ''}\n`,
    );
    if (read === 0) return 1;
  }
  const report = replayer.report();
  if (json) await json.end(report);
  else await write(out, renderReplayText(report, capture, listing));
  const nothing = nothingReplayed(report, capture);
  if (nothing) err.write(`${nothing}\n`);
  return failed || nothing ? 1 : 0;
}

/** Why a run that replayed no exchange is a failure, said so the user knows what to give instead; undefined when it replayed some. */
export function nothingReplayed(report: ReplayReport, capture: string): string | undefined {
  const { exchanges, logRecords, total } = report.lines;
  if (exchanges > 0) return undefined;
  const name = terminalText(clip(capture, 200), true);
  if (logRecords > 0)
    return (
      `${name}: an exchange log (${plural(logRecords, 'log record')}), not a capture: replay reads the file the policy's ` +
      '`capture: { path }` writes (docs/policy.md); for a log, run `mcp-warden report ' +
      `${name}\` (exit 1)`
    );
  return `${name}: no exchange to replay in ${plural(total, 'line')} (exit 1)`;
}

const clip = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
/** A peer's string in a line of the listing: cut, and nothing a terminal would act on. */
const cell = (s: string, max: number): string => terminalText(clip(s, max), true);
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
const idText = (id: ReplayedExchange['id']): string => (typeof id === 'string' ? JSON.stringify(id) : String(id));
const wouldText = (x: ReplayedExchange): string => (x.decision.kind === 'pass' ? '' : x.decision.kind);
const more = (shown: number, total: number, what: string): string[] =>
  total > shown ? [`  … and ${total - shown} more ${what} (--format json lists every one)`] : [];

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

/** The text report; `listing`: what it lists (every exchange of the report unless given). */
export function renderReplayText(report: ReplayReport, capture: string, listing = ReplayListing.of(report.exchanges)): string {
  const { policy, lines, summary } = report;
  const mode =
    policy.mode === 'enforce' ? 'mode enforce' : `mode ${policy.mode}, replayed as enforce: what enforce mode would do with its actions`;
  const out: string[] = [
    `mcp-warden replay ${cell(capture, 200)}`,
    `  policy   ${cell(policy.source, 200)} (${mode})`,
    `  capture  ${plural(lines.total, 'line')}: ${plural(lines.exchanges, 'exchange')} in ${plural(report.sessions, 'session')}, ${plural(lines.bad, 'bad line')}`,
    '',
  ];

  if (listing.exchanges.length === 0) out.push('  No exchanges to replay.');
  else {
    const rows = [['LINE', 'METHOD', 'TOOL', 'ID', 'SESSION', 'VERSION', 'OUTCOME', 'WOULD', 'FINDINGS']];
    for (const x of listing.exchanges) {
      rows.push([
        String(x.line),
        cell(x.method, 40),
        cell(x.tool ?? '', 40),
        cell(idText(x.id), 12),
        x.session === null ? '-' : cell(x.session.slice(0, 8), 8),
        cell(x.protocolVersion ?? '?', 12),
        cell(x.outcome, 24),
        wouldText(x),
        cell(x.findings.map((f) => `${f.rule} (${f.severity}, ${f.action})`).join(', '), 400),
      ]);
    }
    out.push(...table(rows, new Set([0])), ...more(listing.exchanges.length, summary.exchanges, 'exchanges'));
  }

  // `line 7 ` with the line numbers of the whole capture right-aligned.
  const at = (line: number): string => `line ${String(line).padStart(String(lines.total).length)}`;

  if (listing.changed.length > 0) {
    const wheres = listing.changed.map((x) => `${at(x.line)}  ${cell(x.method, 40)}${x.tool ? ` ${cell(x.tool, 40)}` : ''}`);
    const width = Math.max(...wheres.map((w) => w.length));
    out.push('', `  WOULD CHANGE: ${listing.changedTotal}  (what the client would have received instead of the server's answer)`);
    listing.changed.forEach((x, i) => {
      if (x.decision.kind === 'pass') return;
      const status = x.decision.status !== undefined ? `, HTTP ${x.decision.status}` : '';
      out.push(
        `  ${wheres[i]!.padEnd(width)}  ${x.decision.kind} by ${x.decision.rules.join(', ')}${status}`,
        `  ${' '.repeat(width)}  ${cell(x.decision.after, 110)}`,
      );
    });
    out.push(...more(listing.changed.length, listing.changedTotal, 'that would change'));
  }

  if (listing.flagged.length > 0) {
    out.push('', `  FINDINGS: ${listing.flaggedTotal}`);
    for (const { x, f } of listing.flagged)
      out.push(`  ${at(x.line)}  ${f.severity.padEnd(7)}  ${f.rule} [${f.action}]: ${cell(f.message, 400)}`);
    out.push(...more(listing.flagged.length, listing.flaggedTotal, 'findings'));
  }

  if (lines.bad > 0) {
    out.push('', `  BAD LINES: ${lines.bad}  (skipped)`);
    for (const b of report.badLines) out.push(`  ${at(b.line)}  ${cell(b.reason, 110)}`);
    if (report.badLines.length < lines.bad) out.push(`  … and ${lines.bad - report.badLines.length} more`);
  }

  if (report.ruleErrors.length > 0) {
    out.push('', `  RULE ERRORS: ${report.ruleErrors.length}  (a rule threw; it was skipped, as in the proxy)`);
    for (const e of report.ruleErrors) out.push(`  ${at(e.line)}  ${e.rule}: ${cell(e.error, 100)}`);
  }

  const { judged, notJudged } = report.coverage;
  out.push('', `  judged      ${judged.what} (${plural(judged.rules.length, 'rule')})`);
  for (const n of notJudged) out.push(`  not judged  ${n.what} (${plural(n.rules.length, 'rule')}): ${n.why}`);
  out.push('', cell(summaryLine(report), Number.MAX_SAFE_INTEGER), '');
  return out.join('\n');
}
